"""One body -> one typed table: both shapes, nothing dropped, both parsing paths agree."""

from __future__ import annotations

from datetime import date

import orjson
import pyarrow as pa
import pytest

from commerce_reports import parse
from commerce_reports.contract import TRANSACTION_SCHEMA
from commerce_reports.errors import MalformedResponseError
from commerce_reports.params import Filters
from commerce_reports.parse import parse_aggregate, parse_transactions
from tests.factories import body, flat, nested, networks_body


def test_nested_shape_reads_into_typed_snake_case_columns() -> None:
    table = parse_transactions(body([nested(1)]))
    assert table.schema == TRANSACTION_SCHEMA
    row = table.to_pylist()[0]
    assert row["account_id"] == 7 and row["commission_id"] == "c1"
    assert row["commission_date"] == date(2026, 11, 2) and row["click_date"] == date(2026, 11, 1)
    assert row["publisher_net_revenue"] == 6.25 and row["program_type"] == "cpa"
    assert row["link_utm_source"] == "link-utmSource" and row["page_utm_content"] == "page-utmContent"
    assert row["link_url"] == "https://shop.example/kettle" and row["device"] == "Mobile"
    assert row["network"] == "Net A" and row["merchant_group_id"] == 42
    assert row["products"] == [
        {"product_id": "p1", "product_name": "Kettle", "price": 60.25, "quantity": 2.0}
    ]
    assert row["extra"] is None


def test_flat_shape_reads_into_the_same_columns_as_nested() -> None:
    from_nested = parse_transactions(body([nested(1), nested(2)]))
    from_flat = parse_transactions(body([flat(1), flat(2)]))
    assert from_flat.equals(from_nested)


def test_flat_device_codes_become_words_and_unknown_becomes_null() -> None:
    rows = [flat(1), flat(2), flat(3)]
    rows[1]["deviceType"] = "DSK"
    rows[2]["deviceType"] = "UKN"
    assert parse_transactions(body(rows))["device"].to_pylist() == ["Mobile", "Desktop", None]


def test_missing_and_empty_click_detail_reads_as_null() -> None:
    bare = nested(1)
    bare["click"] = {"clickId": "", "clickDate": "", "cuid": ""}
    del bare["product"]
    absent = nested(2)
    del absent["click"]
    table = parse_transactions(body([bare, absent]))
    for column in ("click_id", "click_date", "cuid", "link_url", "device", "country", "link_utm_source"):
        assert table[column].to_pylist() == [None, None], column
    assert table["products"].to_pylist() == [
        None,
        [{"product_id": "p1", "product_name": "Kettle", "price": 60.25, "quantity": 2.0}],
    ]


def test_empty_product_array_stays_an_empty_list() -> None:
    assert parse_transactions(body([nested(1, product=[])]))["products"].to_pylist() == [[]]


@pytest.mark.parametrize(
    "mutate, expected",
    [
        (lambda r: r.update(newTopLevel={"a": 1}), {"newTopLevel": {"a": 1}}),
        (lambda r: r["click"].update(pageTitle="Best kettles"), {"click": {"pageTitle": "Best kettles"}}),
        (lambda r: r["product"][0].update(sku="K-1"), {"product": [{"sku": "K-1"}]}),
        (lambda r: r["click"]["linkUtmInfo"].update(utmId="x"), {"click": {"linkUtmInfo": {"utmId": "x"}}}),
    ],
)
def test_unknown_fields_are_kept_in_extra_not_dropped(mutate, expected) -> None:  # type: ignore[no-untyped-def]
    rows = [nested(1), nested(2)]
    mutate(rows[1])
    table = parse_transactions(body(rows))
    assert table["extra"][0].as_py() is None
    assert orjson.loads(table["extra"][1].as_py()) == expected
    assert table["commission_id"].to_pylist() == ["c1", "c2"]


def test_values_that_cannot_be_typed_are_kept_raw_in_extra() -> None:
    row = nested(1, commission={"orderValue": "n/a"})
    table = parse_transactions(body([row]))
    assert table["order_value"][0].as_py() is None
    assert orjson.loads(table["extra"][0].as_py()) == {"_unparsed": {"order_value": "n/a"}}


def test_another_envelope_key_is_kept() -> None:
    table = parse_transactions(body([nested(1)], nextPage=None, meta={"count": 1}))
    assert orjson.loads(table["extra"][0].as_py())["_envelope"] == {"nextPage": None, "meta": {"count": 1}}


def test_fast_path_is_taken_for_a_clean_body_and_refused_when_keys_are_unknown() -> None:
    clean = body([nested(i) for i in range(50)])
    assert parse._fast_transactions(clean) is not None
    rows = [nested(i) for i in range(50)]
    rows[49]["merchant"]["tier"] = "gold"
    assert parse._fast_transactions(body(rows)) is None


def test_fast_and_tolerant_paths_agree_on_a_mixed_body() -> None:
    rows = [nested(i) for i in range(30)]
    rows[3]["click"]["device"] = None
    rows[4]["click"]["cuid"] = ""
    rows[5]["product"] = []
    del rows[6]["click"]["device"]
    rows[7]["commission"]["publisherNetRevenue"] = -6.25
    data = body(rows)
    fast = parse._fast_transactions(data)
    assert fast is not None
    assert fast.equals(parse._tolerant_transactions(data))
    pretty = orjson.dumps({"transactions": rows}, option=orjson.OPT_INDENT_2)
    assert parse_transactions(pretty).equals(fast)


@pytest.mark.parametrize("broken", [b'{"transactions": [{"account": {', b"<html>oops</html>", b"[]", b"   "])
def test_truncated_or_malformed_bodies_raise_malformed_response(broken: bytes) -> None:
    with pytest.raises(MalformedResponseError):
        parse_transactions(broken)


def test_zero_transactions_is_an_empty_typed_table() -> None:
    table = parse_transactions(b'{"transactions": []}')
    assert table.num_rows == 0 and table.schema == TRANSACTION_SCHEMA


def test_networks_body_becomes_a_table_stamped_with_window_and_filters() -> None:
    filters = Filters(device_type="MBL", country="us")
    table = parse_aggregate("networks", networks_body(), date(2026, 11, 1), date(2026, 12, 1), filters)
    row = table.to_pylist()[0]
    assert row["network_name"] == "Net A" and row["clicks"] == 100 and row["epc"] == 0.105
    assert row["window_start"] == date(2026, 11, 1) and row["window_end"] == date(2026, 12, 1)
    assert row["device_type"] == "MBL" and row["country"] == "US" and row["program_type"] is None
    assert orjson.loads(table.schema.metadata[b"totals"]) == {"revenueTotal": 10.5}


def test_a_404_is_an_empty_aggregate_with_the_full_schema() -> None:
    table = parse_aggregate("merchandise", None, date(2026, 1, 1), date(2026, 1, 2))
    assert table.num_rows == 0
    assert {"product_name", "merchant_group_id", "revenue", "window_start", "link_utm_content"} <= set(
        table.column_names
    )


def test_aggregate_unknown_fields_are_kept_and_bad_envelopes_refused() -> None:
    rows = [
        {
            "productName": "Kettle",
            "merchantGroupId": 42,
            "merchantGroupName": "Kettle Co",
            "revenue": 3.5,
            "sales": 70,
            "actions": 1,
            "currency": "USD",
        }
    ]
    table = parse_aggregate("merchandise", orjson.dumps({"data": rows}), date(2026, 1, 1), date(2026, 1, 2))
    assert table["extra"].to_pylist() == ['{"currency":"USD"}']
    assert table["sales"].type == pa.float64()
    with pytest.raises(MalformedResponseError):
        parse_aggregate("networks", b'{"rows": []}', date(2026, 1, 1), date(2026, 1, 2))
