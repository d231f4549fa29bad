"""Networks and merchandise bodies of both dialects -> the stored aggregate columns, nothing dropped."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any

import orjson
import pyarrow as pa
import pytest

from commerce_reports.contract import AGGREGATE_SCHEMAS, UNPARSED
from commerce_reports.errors import MalformedResponseError, ValidationError
from commerce_reports.params import Filters
from commerce_reports.parse import parse_aggregate, untyped_rows
from tests.factories import networks_body
from tests.published_schema import validate_response

NOV, DEC = date(2026, 11, 1), date(2026, 12, 1)
PUBLISHED_NETWORKS = {
    "data": [
        {
            "networkName": "Net A",
            "revenue": 10.5,
            "clicks": 100.5,
            "sales": 210.0,
            "actions": 2.5,
            "conversionRate": 0.02,
            "epc": 0.105,
        },
    ],
    "totals": {
        "networkNameTotal": 1,
        "revenueTotal": 10.5,
        "clicksTotal": 100.5,
        "salesTotal": 210.0,
        "actionsTotal": 2.5,
        "conversionRateTotal": 0.02,
        "epcTotal": 0.105,
    },
}


def test_networks_body_becomes_a_table_stamped_with_window_and_filters() -> None:
    filters = Filters(device_type="MBL", country="us")
    table = parse_aggregate("networks", networks_body(), NOV, DEC, filters)
    assert table.schema.remove_metadata() == AGGREGATE_SCHEMAS["networks"]
    row = table.to_pylist()[0]
    assert row["network_name"] == "Net A" and row["clicks"] == 100 and row["epc"] == Decimal("0.105")
    assert row["window_start"] == NOV and row["window_end"] == DEC
    assert row["device_type"] == "MBL" and row["country"] == "US" and row["program_type"] is None
    assert table["totals"].to_pylist() == ['{"revenueTotal":10.5}']  # as sent, on every row


def test_a_published_networks_body_keeps_fractional_clicks_and_actions() -> None:
    validate_response("/v1/reports/networks", 200, PUBLISHED_NETWORKS, strict=True)
    table = parse_aggregate("networks", orjson.dumps(PUBLISHED_NETWORKS), NOV, DEC)
    row = table.to_pylist()[0]
    assert row["clicks"] == 100.5 and row["actions"] == 2.5 and row["extra"] is None
    assert table["clicks"].type == pa.float64()


def test_a_404_is_an_empty_aggregate_with_the_full_schema() -> None:
    table = parse_aggregate("merchandise", None, date(2026, 1, 1), date(2026, 1, 2))
    assert table.num_rows == 0 and table.schema == AGGREGATE_SCHEMAS["merchandise"]


def _merchandise(**changes: Any) -> bytes:
    row = {
        "productName": "Kettle",
        "merchantGroupId": 42,
        "merchantGroupName": "Kettle Co",
        "revenue": 3.5,
        "sales": 70,
        "actions": 1,
    }
    return orjson.dumps({"data": [{**row, **changes}], "totals": {"revenueTotal": 3.5}})


def test_aggregate_unknown_fields_and_envelope_keys_are_kept() -> None:
    body = orjson.loads(_merchandise(currency="USD", note=None))
    body["page"] = 1
    table = parse_aggregate("merchandise", orjson.dumps(body), NOV, DEC)
    assert orjson.loads(table["extra"][0].as_py()) == {"_envelope": {"page": 1}, "currency": "USD"}
    assert table["sales"].type == pa.decimal128(18, 4) and untyped_rows(table) == 0


def test_aggregate_values_that_cannot_be_typed_keep_their_row_and_are_counted() -> None:
    table = parse_aggregate("merchandise", _merchandise(revenue="lots", merchantGroupId=4.5), NOV, DEC)
    assert table.num_rows == 1 and table["revenue"][0].as_py() is None
    assert orjson.loads(table["extra"][0].as_py()) == {
        UNPARSED: {"merchant_group_id": 4.5, "revenue": "lots"}
    }
    assert untyped_rows(table) == 1


def test_aggregate_money_is_exact_and_what_does_not_fit_stays_untyped() -> None:
    """Money is read from its text (0.1 is 0.1000, 12 digits and 4 places are kept); more places,
    an infinite or unspellable amount is NULL with its raw text in extra, never a rounded value;
    the totals keep the service's own spelling."""
    rows = [
        b'{"productName": "a", "revenue": 0.1, "sales": 123456789012.3456, "actions": 1}',
        b'{"productName": "b", "revenue": 0.12345, "sales": 1e400, "actions": -Infinity}',
        b'{"productName": "c", "revenue": "12,50", "sales": NaN, "actions": 2}',
    ]
    body = b'{"data": [' + b", ".join(rows) + b'], "totals": {"revenueTotal": 0.10, "salesTotal": 1e400}}'
    table = parse_aggregate("merchandise", body, NOV, DEC)
    assert table["revenue"].to_pylist() == [Decimal("0.1"), None, None]
    assert table["sales"].to_pylist() == [Decimal("123456789012.3456"), None, None]
    assert table["actions"].to_pylist() == [1, None, 2]
    assert [orjson.loads(e)[UNPARSED] for e in table["extra"].to_pylist()[1:]] == [
        {"revenue": 0.12345, "sales": "1e400", "actions": "-Infinity"},
        {"revenue": "12,50", "sales": "NaN"},
    ]
    assert '"revenue":0.12345' in table["extra"][1].as_py()  # the raw text, not a float's
    assert untyped_rows(table) == 2
    assert table["totals"][0].as_py() == '{"revenueTotal":0.10,"salesTotal":"1e400"}'
    assert table["total_revenue"].to_pylist() == [Decimal("0.1")] * 3  # typed, beside the rows' sums
    assert table["total_sales"].to_pylist() == [None] * 3 and table["total_actions"][0].as_py() is None


@pytest.mark.parametrize("broken", [b'{"rows": []}', b'{"data": [1]}', b"<html>", b'{"data": [', b"[]"])
def test_bad_aggregate_bodies_raise_malformed_response(broken: bytes) -> None:
    with pytest.raises(MalformedResponseError):
        parse_aggregate("networks", broken, NOV, DEC)


@pytest.mark.parametrize(
    "arguments",
    [
        ("clicks", b'{"data": []}', NOV, DEC, None),
        ("networks", '{"data": []}', NOV, DEC, None),
        ("networks", b'{"data": []}', "November", DEC, None),
        ("networks", b'{"data": []}', NOV, DEC, {"country": "US"}),
    ],
)
def test_bad_arguments_are_validation_errors(arguments: tuple[Any, ...]) -> None:
    with pytest.raises(ValidationError):
        parse_aggregate(*arguments)
