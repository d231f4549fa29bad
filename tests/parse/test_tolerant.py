"""Nothing is dropped: unknown keys land in extra, odd bodies read tolerantly, both paths agree."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from commerce_reports.errors import MalformedResponseError, ValidationError
from commerce_reports.parse import parse_transactions
from commerce_reports.parse.tolerant import read_tolerant
from tests.factories import body, nested, published


@pytest.mark.parametrize(
    "mutate, expected",
    [
        (lambda r: r.update(newTopLevel={"a": 1}), {"newTopLevel": {"a": 1}}),
        (lambda r: r["click"].update(pageTitle="Best kettles"), {"click": {"pageTitle": "Best kettles"}}),
        (lambda r: r["product"][0].update(sku="K-1"), {"product": [{"sku": "K-1"}]}),
        (lambda r: r["click"]["linkUtmInfo"].update(utmId="x"), {"click": {"linkUtmInfo": {"utmId": "x"}}}),
        (lambda r: r["merchant"].update(tier=0), {"merchant": {"tier": 0}}),
        (lambda r: r.update(flags=[]), {"flags": []}),
        (lambda r: r["click"].update(pageTitle=""), {"click": {"pageTitle": ""}}),
    ],
)
def test_unknown_fields_are_kept_in_extra_not_dropped(
    mutate: Callable[[dict[str, Any]], None], expected: dict[str, Any]
) -> None:
    rows = [nested(1), nested(2)]
    mutate(rows[1])
    with pytest.raises(MalformedResponseError, match="do not hold every value"):
        parse_transactions(body(rows), strict=True)
    table = parse_transactions(body(rows))
    assert table["extra"][0].as_py() is None
    assert orjson.loads(table["extra"][1].as_py()) == expected
    assert table["commission_id"].to_pylist() == ["c1", "c2"]


def test_an_unknown_key_in_a_published_item_is_kept_under_merchandise() -> None:
    row = published(1)
    row["merchandise"][0]["sku"] = "K-1"
    table = parse_transactions(body([row]))
    assert orjson.loads(table["extra"][0].as_py()) == {"merchandise": [{"sku": "K-1"}]}
    assert table["products"][0].as_py()[0]["product_id"] == "p1"


def test_a_null_is_the_same_as_a_missing_key() -> None:
    row = nested(1, merchant={"tier": None}, click={"device": None})
    table = parse_transactions(body([row]), strict=True)
    assert table["extra"][0].as_py() is None and table["device"][0].as_py() is None
    assert read_tolerant(body([row])).equals(table)


def test_another_envelope_key_is_kept() -> None:
    table = parse_transactions(body([nested(1)], nextPage=None, meta={"count": 1}))
    assert orjson.loads(table["extra"][0].as_py()) == {"_envelope": {"nextPage": None, "meta": {"count": 1}}}


def test_mixed_shapes_in_one_body_read_tolerantly() -> None:
    table = parse_transactions(body([nested(1, commission={"revenueId": "1001"}), published(1)]))
    assert table["extra"].null_count == 2
    first, second = table.to_pylist()
    assert first == second


@pytest.mark.parametrize(
    "broken",
    [
        b'{"transactions": [{"account": {',
        b"<html>oops</html>",
        b"[]",
        b"   ",
        b'{"rows": []}',
        b'{"transactions": [1, 2]}',
        b'{"transactions": {"a": 1}}',
    ],
)
def test_truncated_or_malformed_bodies_raise_malformed_response(broken: bytes) -> None:
    for strict in (False, True):
        with pytest.raises(MalformedResponseError):
            parse_transactions(broken, strict=strict)


def test_a_body_that_is_not_bytes_is_a_validation_error() -> None:
    with pytest.raises(ValidationError, match="body"):
        parse_transactions("{}")  # type: ignore[arg-type]


# Values of every kind the fields might meet; the fast path must give the tolerant path's table or decline.
_ODD = st.one_of(
    st.none(),
    st.just(""),
    st.booleans(),
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(["2026-11-05", "11/05/2026", "2026/11/05", "1793886300000", "2026-11-05T01:00:00Z"]),
    st.sampled_from(["MBL", "UKN", "WRA", "Mobile", "lots", "7", "7.5", "-3e2"]),
    st.text(max_size=8),
    st.builds(list),
    st.builds(dict),
)
_KEYS = st.sampled_from(
    [*sorted(published(0)), "clickId", "device", "product", "publisherNetRevenue", "extraKey"]
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(changes=st.lists(st.tuples(st.integers(0, 3), _KEYS, _ODD), max_size=4))
def test_both_paths_give_the_same_table_whatever_the_values(changes: list[tuple[int, str, Any]]) -> None:
    rows = [published(n) for n in range(4)]
    for index, key, value in changes:
        rows[index][key] = value
    data = body(rows)
    assert parse_transactions(data).equals(read_tolerant(data))


def test_quotes_and_colons_inside_values_never_hide_a_key() -> None:
    tricky = published(1, campaignName='say "x": y', pageUrl='https://x.example/?q="a":"b"')
    table = parse_transactions(body([tricky]))
    assert table["campaign_name"].to_pylist() == ['say "x": y'] and table["extra"][0].as_py() is None
    spaced = (
        body([published(1)])
        .replace(b'"campaignName":', b'"campaignName" :')
        .replace(b'"cuid":', b'"tier" : 1, "cuid":')
    )
    table = parse_transactions(spaced)
    assert orjson.loads(table["extra"][0].as_py()) == {"tier": 1} and table["cuid"].to_pylist() == [
        "reader-1"
    ]


def test_a_null_group_key_does_not_make_a_flat_row_nested() -> None:
    row = published(1, product=None, click=None)
    assert parse_transactions(body([row]), strict=True).equals(read_tolerant(body([row])))


def test_an_empty_string_in_a_bought_item_is_null_on_both_paths() -> None:
    row = published(1, merchandise=[{"productId": "", "productName": "Kettle", "price": 1.5, "quantity": 1}])
    table = parse_transactions(body([row]), strict=True)
    assert table["products"].to_pylist() == [
        [{"product_id": None, "product_name": "Kettle", "price": 1.5, "quantity": 1.0}]
    ]
    assert table.equals(read_tolerant(body([row])))
