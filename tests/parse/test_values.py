"""Dates in every format read, untypable values kept raw and counted, numbers typed alike on both paths."""

from __future__ import annotations

from datetime import date
from typing import Any

import orjson
import pyarrow as pa
import pytest

from commerce_reports.contract import UNPARSED
from commerce_reports.errors import MalformedResponseError, ValidationError
from commerce_reports.parse import parse_transactions, untyped_rows
from commerce_reports.parse.dates import date_array, read_date
from commerce_reports.parse.values import UNTYPED
from tests.factories import body, nested, published

DAY = date(2026, 11, 5)
READABLE: list[tuple[Any, date]] = [
    ("2026-11-05", DAY),
    ("2026-11-05T13:45:00Z", DAY),
    ("2026-11-05T23:30:00-05:00", DAY),  # the date as written, not moved to UTC
    ("2026-11-05T00:15:00+0200", DAY),
    ("2026-11-05 13:45", DAY),
    ("2026-11-05T13:45:00.123Z", DAY),
    ("2026/11/05", DAY),
    ("11/05/2026", DAY),
    ("1793886300000", DAY),  # 2026-11-05T13:45:00Z in epoch milliseconds
    (1793886300000, DAY),
    ("1793923199999", DAY),  # the day's last millisecond (UTC)
]
UNREADABLE: list[Any] = [
    "yesterday",
    "2026-02-30",
    "02/30/2026",
    "13/05/2026",
    "2026-11-5",
    " 2026-11-05",
    "20261105",
    "1793886300",
    "2026-11-05T25",
    "05.11.2026",
    True,
    1.5,
    "١٢/٠٥/٢٠٢٦",
]


@pytest.mark.parametrize("value, expected", READABLE)
def test_each_date_format_reads_on_both_paths(value: Any, expected: date) -> None:
    assert read_date(value) == expected
    if isinstance(value, str):
        assert date_array(pa.array([value, None, ""])).to_pylist() == [expected, None, None]
    row = published(1, commissionDate=value)
    fast = parse_transactions(
        body([row]), strict=isinstance(value, str)
    )  # a number is not the published type
    tolerant = parse_transactions(body([row], page=1))
    assert fast["commission_date"].to_pylist() == tolerant["commission_date"].to_pylist() == [expected]


@pytest.mark.parametrize("value", UNREADABLE)
def test_a_date_in_no_known_format_is_kept_raw_and_counted(value: Any) -> None:
    assert read_date(value) is UNTYPED
    if isinstance(value, str):
        assert date_array(pa.array([value])).to_pylist() == [None]
    table = parse_transactions(body([nested(1), nested(2, commission={"updateDate": value})]))
    assert table.num_rows == 2 and table["update_date"].to_pylist() == [date(2026, 11, 3), None]
    assert orjson.loads(table["extra"][1].as_py()) == {UNPARSED: {"update_date": value}}
    assert untyped_rows(table) == 1


def test_mixed_date_formats_in_one_body_take_the_fast_path() -> None:
    rows = [published(n, clickDate=value) for n, (value, _) in enumerate(READABLE) if isinstance(value, str)]
    table = parse_transactions(body(rows), strict=True)
    assert set(table["click_date"].to_pylist()) == {DAY}


def test_untypable_values_keep_their_row_and_their_raw_value() -> None:
    rows = [
        nested(1),
        nested(2, commission={"publisherNetRevenue": "lots", "commissionDate": "yesterday"}),
        nested(3, account={"accountId": 7.5}),
    ]
    with pytest.raises(MalformedResponseError, match="not exactly a known shape"):
        parse_transactions(body(rows), strict=True)
    table = parse_transactions(body(rows))
    assert table["commission_id"].to_pylist() == ["c1", "c2", "c3"]
    assert table["publisher_net_revenue"].to_pylist() == [6.25, None, 6.25]
    assert table["account_id"].to_pylist() == [7, 7, None]
    extras = [orjson.loads(e) if e else None for e in table["extra"].to_pylist()]
    assert extras == [
        None,
        {UNPARSED: {"commission_date": "yesterday", "publisher_net_revenue": "lots"}},
        {UNPARSED: {"account_id": 7.5}},
    ]
    assert untyped_rows(table) == 2


def test_untyped_rows_reads_only_the_parsers_own_key() -> None:
    row = nested(1, click={"pageTitle": 'a "_unparsed" look-alike'})
    row["_unparsed"] = {"sent": "by the service"}
    table = parse_transactions(body([row]))
    extra = orjson.loads(table["extra"][0].as_py())
    assert extra == {
        "click": {"pageTitle": 'a "_unparsed" look-alike'},
        "__unparsed": {"sent": "by the service"},
    }
    assert untyped_rows(table) == 0
    assert untyped_rows(pa.table({"x": [1]})) == 0  # a file from before `extra` existed
    with pytest.raises(ValidationError):
        untyped_rows([{"extra": None}])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "key, value, stored",
    [
        ("orderValue", "12.5", 12.5),  # a number in a string
        ("orderValue", 7, 7.0),
        ("orderValue", "", None),
        ("orderValue", " 5", None),  # not JSON's spelling of a number
        ("accountId", 7.0, 7),
        ("accountId", "7", 7),
        ("accountId", True, None),
        ("campaignName", 12, "12"),
        ("campaignName", {"a": 1}, None),
    ],
)
def test_numbers_and_texts_type_alike_on_both_paths(key: str, value: Any, stored: Any) -> None:
    row = published(1, **{key: value})
    column = {"orderValue": "order_value", "accountId": "account_id", "campaignName": "campaign_name"}[key]
    fast = parse_transactions(body([row]))[column].to_pylist()
    tolerant = parse_transactions(body([row], page=1))[column].to_pylist()
    assert fast == tolerant == [stored]


def test_a_bought_item_that_cannot_be_typed_keeps_the_items_raw() -> None:
    items = [{"productId": "p1", "productName": "Kettle", "price": "cheap", "quantity": 1}]
    table = parse_transactions(body([published(1, merchandise=items)]))
    assert table["products"].to_pylist() == [None]
    assert orjson.loads(table["extra"][0].as_py()) == {UNPARSED: {"products": items}}
    assert untyped_rows(table) == 1
