"""Networks and merchandise bodies -> AGGREGATE_SCHEMAS tables, stamped with window and filters.

Both dialects send the same envelope, `{"data": [...], "totals": {...}}` (service notes; the
published `NetworkResponseModel` and `MerchandiseResponseModel`). Clicks and actions are numbers
that may carry fractions; revenue, sales and EPC are money (exact decimals). Values are typed by the
rules of values.py; what no column holds goes to `extra` as for transactions (extra.py). The
`totals` object is kept as the service sent it, as JSON text in the `totals` column of every row
(the `report_totals` view sets it beside the rows' sums).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from typing import Any

import pyarrow as pa

from ..contract import AGGREGATE_SCHEMAS
from ..errors import MalformedResponseError, ValidationError
from ..params import Filters, as_date
from .extra import encode_extra, leftovers
from .values import UNTYPED, dump_json, load_json, read_integer, read_money, read_number, read_text

__all__ = ["parse_aggregate"]

_Reader = Callable[[Any], Any]
# Wire key -> (stored column, reader), per endpoint.
_METRICS: dict[str, dict[str, tuple[str, _Reader]]] = {
    "networks": {
        "networkName": ("network_name", read_text),
        "revenue": ("revenue", read_money),
        "clicks": ("clicks", read_number),
        "sales": ("sales", read_money),
        "actions": ("actions", read_number),
        "conversionRate": ("conversion_rate", read_number),
        "epc": ("epc", read_money),
    },
    "merchandise": {
        "productName": ("product_name", read_text),
        "merchantGroupName": ("merchant_group_name", read_text),
        "merchantGroupId": ("merchant_group_id", read_integer),
        "revenue": ("revenue", read_money),
        "sales": ("sales", read_money),
        "actions": ("actions", read_number),
    },
}
# Key of the totals object -> (stored column, reader), per endpoint: the totals set beside the rows' sums.
_TOTALS: dict[str, dict[str, tuple[str, _Reader]]] = {
    "networks": {
        "revenueTotal": ("total_revenue", read_money),
        "clicksTotal": ("total_clicks", read_number),
        "salesTotal": ("total_sales", read_money),
        "actionsTotal": ("total_actions", read_number),
    },
    "merchandise": {
        "revenueTotal": ("total_revenue", read_money),
        "salesTotal": ("total_sales", read_money),
        "actionsTotal": ("total_actions", read_number),
    },
}
_STAMPS = ("extra", "window_start", "window_end", *Filters().as_columns())
for _endpoint, _metrics in _METRICS.items():
    _names = [c for c, _ in _metrics.values()] + ["totals"] + [c for c, _ in _TOTALS[_endpoint].values()]
    if _names + list(_STAMPS) != AGGREGATE_SCHEMAS[_endpoint].names:
        raise ImportError(f"parse.aggregates no longer matches contract.AGGREGATE_SCHEMAS[{_endpoint!r}]")


def _checked(endpoint: Any, body: Any, filters: Any) -> Filters:
    if endpoint not in _METRICS:
        raise ValidationError(
            "endpoint", f"{endpoint!r} is not an aggregate", "use 'networks' or 'merchandise'"
        )
    if body is not None and not isinstance(body, bytes | bytearray | memoryview):
        raise ValidationError(
            "body", f"a {type(body).__name__} is not a response body", "pass bytes, or None for a 404"
        )
    if filters is not None and not isinstance(filters, Filters):
        raise ValidationError(
            "filters", f"a {type(filters).__name__} is not a Filters", "pass Filters(...) or None"
        )
    return filters or Filters()


def _rows(endpoint: str, body: bytes) -> tuple[list[dict[str, Any]], Any, dict[str, Any]]:
    """The rows, the totals and any other envelope keys of a body."""
    payload = load_json(body, endpoint)
    if not isinstance(payload, dict) or not isinstance(payload.get("data"), list):
        found = sorted(payload) if isinstance(payload, dict) else type(payload).__name__
        raise MalformedResponseError(f"{endpoint} body has no 'data' array (found: {found})")
    for row in payload["data"]:
        if not isinstance(row, dict):
            raise MalformedResponseError(f"a {endpoint} row is a {type(row).__name__}, not an object")
    envelope = {key: value for key, value in payload.items() if key not in ("data", "totals")}
    return payload["data"], payload.get("totals"), envelope


def _totals(endpoint: str, totals: Any, n: int) -> dict[str, list[Any]]:
    """The totals columns of `n` rows: the object as sent, and its typed totals (NULL when absent or
    untypable: the object keeps the raw value)."""
    found = totals if isinstance(totals, dict) else {}
    typed = {}
    for key, (column, read) in _TOTALS[endpoint].items():
        value = read(found.get(key))
        typed[column] = [None if value is UNTYPED else value] * n
    return {"totals": [None if totals is None else dump_json(totals).decode()] * n, **typed}


def parse_aggregate(
    endpoint: str, body: bytes | None, start: date, end: date, filters: Filters | None = None
) -> pa.Table:
    """A networks or merchandise body -> a typed table, stamped with its window and filters.

    `body=None` stands for a 404 (the service's way of saying the window has no rows).
    Raises ValidationError for bad arguments and MalformedResponseError for a body that is not
    the envelope above.
    """
    chosen = _checked(endpoint, body, filters)
    first, stop = as_date(start, "start"), as_date(end, "end")
    rows, totals, envelope = _rows(endpoint, bytes(body)) if body is not None else ([], None, {})
    metrics = _METRICS[endpoint]
    columns: dict[str, list[Any]] = {column: [] for column, _ in metrics.values()}
    extras: list[str | None] = []
    for row in rows:
        unparsed: dict[str, Any] = {}
        for key, (column, read) in metrics.items():
            raw = row.pop(key, None)
            value = read(raw)
            if value is UNTYPED:
                unparsed[column] = raw
                value = None
            columns[column].append(value)
        extras.append(encode_extra(leftovers(row), unparsed, envelope))
    schema = AGGREGATE_SCHEMAS[endpoint]
    n = len(rows)
    stamp = chosen.as_columns()
    values: dict[str, Any] = {
        **columns,
        **_totals(endpoint, totals, n),
        "extra": extras,
        "window_start": [first] * n,
        "window_end": [stop] * n,
    }
    values |= {name: [stamp[name]] * n for name in stamp}
    arrays = [pa.array(values[field.name], field.type) for field in schema]
    return pa.Table.from_arrays(arrays, schema=schema)
