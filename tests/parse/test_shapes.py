"""Nested, flat and published bodies read into the same columns, on the fast path, with nothing in extra."""

from __future__ import annotations

from datetime import date
from typing import Any

import orjson
import pyarrow as pa
import pytest

from commerce_reports.contract import TRANSACTION_SCHEMA
from commerce_reports.errors import MalformedResponseError
from commerce_reports.parse import parse_transactions
from tests.factories import body, flat, nested, published
from tests.published_schema import validate_response

TRANSACTIONS = "/v1/reports/transactions"


def nested_like_published(n: int) -> dict[str, Any]:
    return nested(n, commission={"revenueId": str(1000 + n)})


def test_nested_shape_reads_into_typed_snake_case_columns() -> None:
    table = parse_transactions(body([nested(1)]), strict=True)
    assert table.schema == TRANSACTION_SCHEMA
    row = table.to_pylist()[0]
    assert row["account_id"] == 7 and row["commission_id"] == "c1" and row["revenue_id"] == "r1"
    assert row["commission_date"] == date(2026, 11, 2) and row["click_date"] == date(2026, 11, 1)
    assert row["publisher_net_revenue"] == 6.25 and row["program_type"] == "cpa"
    assert row["link_utm_source"] == "link-utmSource" and row["page_utm_content"] == "page-utmContent"
    assert row["link_url"] == "https://shop.example/kettle" and row["device"] == "Mobile"
    assert row["network"] == "Net A" and row["merchant_group_id"] == 42
    assert row["products"] == [
        {"product_id": "p1", "product_name": "Kettle", "price": 60.25, "quantity": 2.0}
    ]
    assert row["extra"] is None


def test_published_body_validates_and_reads_into_the_same_columns_as_nested() -> None:
    data = body([published(n) for n in range(3)])
    validate_response(TRANSACTIONS, 200, orjson.loads(data), strict=True)
    from_published = parse_transactions(data, strict=True)
    from_nested = parse_transactions(body([nested_like_published(n) for n in range(3)]), strict=True)
    assert from_published.equals(from_nested)
    assert from_published["revenue_id"].to_pylist() == ["1000", "1001", "1002"]


def test_flat_shape_of_the_notes_reads_into_the_same_columns_as_nested() -> None:
    from_flat = parse_transactions(body([flat(1), flat(2)]), strict=True)
    assert from_flat.equals(parse_transactions(body([nested(1), nested(2)]), strict=True))


def test_every_published_field_lands_in_a_column() -> None:
    row = published(
        7,
        revenueId=12345,
        clickSid="sid-7",
        affProduct="RAL",
        affProductSubType="carousel",
        deviceType="TBL",
        destinationUrl="https://shop.example/lamp",
        networkName="Net B",
        publisherRevenue=1.5,
    )
    validate_response(TRANSACTIONS, 200, {"transactions": [row]}, strict=True)
    for path in ("fast", "tolerant"):
        data = body([row]) if path == "fast" else body([row], nextPage=None)  # an envelope key: tolerant
        stored = parse_transactions(data).to_pylist()[0]
        assert stored["revenue_id"] == "12345" and stored["click_id"] == "sid-7", path
        assert stored["partner_product"] == "Link API" and stored["partner_product_sub_type"] == "carousel"
        assert stored["device"] == "Tablet" and stored["link_url"] == "https://shop.example/lamp"
        assert stored["network"] == "Net B" and stored["publisher_net_revenue"] == 1.5
        assert stored["products"] == [
            {"product_id": "p1", "product_name": "Kettle", "price": 60.25, "quantity": 2.0}
        ]
        if path == "fast":
            assert stored["extra"] is None
        else:
            assert orjson.loads(stored["extra"]) == {"_envelope": {"nextPage": None}}
        filled = [name for name, value in stored.items() if value is None and name != "extra"]
        assert filled == [], f"{path}: published fields left these columns empty: {filled}"


def test_published_row_without_click_detail_reads_empty_strings_and_unknown_codes_as_null() -> None:
    bare = published(
        1,
        clickSid="",
        clickDate="",
        cuid="",
        destinationUrl="",
        pageUrl="",
        country="",
        affProduct="UNK",
        deviceType="UKN",
        linkUtmInfo=dict.fromkeys(("utmSource", "utmMedium", "utmCampaign", "utmTerm", "utmContent"), ""),
        merchandise=[],
    )
    row = parse_transactions(body([bare]), strict=True).to_pylist()[0]
    assert row["click_id"] is None and row["click_date"] is None and row["link_url"] is None
    assert row["device"] is None and row["partner_product"] == "Unknown" and row["link_utm_source"] is None
    assert row["products"] == []


@pytest.mark.parametrize(
    "number, stored",
    [(12345, "12345"), (12345.0, "12345"), (2.5, "2.5"), (9007199254740993, "9007199254740993")],
)
def test_a_numeric_revenue_id_is_stored_as_its_digits(number: float, stored: str) -> None:
    fast = parse_transactions(body([published(1, revenueId=number)]))
    tolerant = parse_transactions(body([published(1, revenueId=number)], meta=1))
    assert fast["revenue_id"].to_pylist() == tolerant["revenue_id"].to_pylist() == [stored]


def test_codes_become_words_and_words_stay() -> None:
    rows = [
        published(n, affProduct=code, deviceType=device)
        for n, (code, device) in enumerate(
            [("WRA", "DSK"), ("ORG", "MBL"), ("TXT", "TBL"), ("Link", "Mobile")]
        )
    ]
    table = parse_transactions(body(rows), strict=True)
    assert table["partner_product"].to_pylist() == ["Link", "JavaScript", "In-text", "Link"]
    assert table["device"].to_pylist() == ["Desktop", "Mobile", "Tablet", "Mobile"]


def test_device_type_inside_the_nested_click_group_is_read() -> None:
    row = nested(1)
    del row["click"]["device"]
    row["click"]["deviceType"] = "DSK"
    assert parse_transactions(body([row]), strict=True)["device"].to_pylist() == ["Desktop"]


def test_two_keys_for_one_column_that_disagree_keep_the_second_in_extra() -> None:
    row = published(1, clickId="other-id")  # clickSid is k1
    with pytest.raises(MalformedResponseError, match="click_id"):
        parse_transactions(body([row]), strict=True)
    table = parse_transactions(body([row]))
    assert table["click_id"].to_pylist() == ["other-id"]  # the notes' name comes first
    assert orjson.loads(table["extra"][0].as_py()) == {"clickSid": "k1"}
    agreeing = published(1, clickId="k1")
    assert parse_transactions(body([agreeing]), strict=True)["click_id"].to_pylist() == ["k1"]


def test_pretty_printed_bodies_take_the_fast_path_too() -> None:
    rows = [published(n) for n in range(3)]
    pretty = orjson.dumps({"transactions": rows}, option=orjson.OPT_INDENT_2)
    assert parse_transactions(pretty, strict=True).equals(parse_transactions(body(rows), strict=True))


def test_elements_with_different_key_orders_take_the_fast_path() -> None:
    rows = [published(n) for n in range(4)]
    rows[2] = dict(reversed(list(rows[2].items())))
    assert parse_transactions(body(rows), strict=True).equals(parse_transactions(body(rows), strict=False))


def test_zero_transactions_is_an_empty_typed_table() -> None:
    for data in (b'{"transactions": []}', b'{ "transactions" : [ ] }\n'):
        table = parse_transactions(data, strict=True)
        assert table.num_rows == 0 and table.schema == TRANSACTION_SCHEMA


def test_a_big_body_reads_the_same_on_both_paths() -> None:
    rows = [published(n, deviceType=("DSK", "MBL", "UKN")[n % 3]) for n in range(3000)]
    fast = parse_transactions(body(rows), strict=True)
    assert fast.num_rows == 3000 and isinstance(fast, pa.Table)
    assert fast.equals(
        parse_transactions(body(rows, page=1))
        .drop_columns("extra")
        .append_column("extra", pa.nulls(3000, pa.string()))
    )


def test_the_parse_package_exports_exactly_its_public_api() -> None:
    from commerce_reports import contract, parse

    assert sorted(parse.__all__) == ["parse_aggregate", "parse_transactions", "untyped_rows"]
    assert contract.UNPARSED == "_unparsed"
    for name in parse.__all__:
        assert (getattr(parse, name).__doc__ or "").strip(), name
