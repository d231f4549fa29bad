"""The tolerant path: any transactions body, row by row, keeping everything no column holds.

It reads what the fast path declines: unknown keys, values of unexpected kinds, shapes mixed in
one body (each row is read in its own shape: nested when a group has a value), another envelope.
It types values by the same rules (values.py, dates.py), so on a body both paths can read they
give the same table. What no column holds goes to the row's `extra` (JSON): unknown keys where the
service put them, the raw value of anything that could not be typed under `_unparsed`, other
envelope keys under `_envelope` (extra.py). A null is the same as a missing key, as on the fast path.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyarrow as pa

from ..contract import TRANSACTION_SCHEMA
from ..errors import MalformedResponseError
from .dates import read_date
from .extra import encode_extra, leftovers
from .fields import CODE_WORDS, FIELDS, GROUPS, PRODUCT_ITEM, Kind, Path, Shape
from .values import UNTYPED, load_json, read_integer, read_money, read_number, read_text

__all__ = ["read_tolerant"]


def _read_words(kind: Kind) -> Callable[[Any], Any]:
    words = CODE_WORDS[kind]

    def read(value: Any) -> Any:
        text = read_text(value)
        return words.get(text, text) if isinstance(text, str) else text

    return read


def _read_products(value: Any) -> Any:
    if value is None or value == "":
        return None
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        return UNTYPED
    items = [
        {column: _READERS[kind](item.get(key)) for key, (column, kind) in PRODUCT_ITEM.items()}
        for item in value
    ]
    return UNTYPED if any(UNTYPED in item.values() for item in items) else items


_READERS: dict[Kind, Callable[[Any], Any]] = {
    Kind.TEXT: read_text,
    Kind.ID: read_text,
    Kind.NUMBER: read_number,
    Kind.MONEY: read_money,
    Kind.INTEGER: read_integer,
    Kind.DATE: read_date,
    Kind.PRODUCT: _read_words(Kind.PRODUCT),
    Kind.DEVICE: _read_words(Kind.DEVICE),
    Kind.PRODUCTS: _read_products,
}
# Per shape, each column's reader and keys; a row is read in the shape it is written in.
_Plan = tuple[tuple[str, Kind, Callable[[Any], Any], tuple[Path, ...]], ...]
_PLANS: dict[Shape, _Plan] = {
    shape: tuple((f.column, f.kind, _READERS[f.kind], f.paths(shape)) for f in FIELDS)
    for shape in ("nested", "flat")
}
_MISSING = object()


def _take(row: dict[str, Any], path: Path) -> Any:
    """Pop `path` out of `row` (so that what is left is unknown); _MISSING when it is not there."""
    node: Any = row
    for key in path[:-1]:
        node = node.get(key)
        if not isinstance(node, dict):
            return _MISSING
    return node.pop(path[-1], _MISSING)


def _put(row: dict[str, Any], path: Path, value: Any) -> None:
    node = row
    for key in path[:-1]:
        child = node.get(key)
        if not isinstance(child, dict):
            child = node[key] = {}
        node = child
    node[path[-1]] = value


def _unknown_item_keys(path: Path, raw: list[Any], row: dict[str, Any]) -> None:
    """Put the unknown keys of bought items back, item by item, under the key they came from."""
    unknown = [{k: v for k, v in item.items() if k not in PRODUCT_ITEM and v is not None} for item in raw]
    if any(unknown):
        _put(row, path, unknown)


def _read_field(
    column: str,
    kind: Kind,
    read: Callable[[Any], Any],
    paths: tuple[Path, ...],
    row: dict[str, Any],
    unparsed: dict[str, Any],
) -> Any:
    """The column's value; the first present key wins, one that disagrees stays in the row."""
    chosen: Any = None
    for path in paths:
        raw = _take(row, path)
        if raw is _MISSING or raw is None or raw == "":
            continue
        value = read(raw)
        if column in unparsed or chosen is not None:
            if value is UNTYPED or value != chosen:
                _put(row, path, raw)  # a second key for the column, saying something else
            continue
        if value is UNTYPED:
            unparsed[column] = raw
            continue
        chosen = value
        if kind is Kind.PRODUCTS:
            _unknown_item_keys(path, raw, row)
    return chosen


def read_tolerant(body: bytes) -> pa.Table:
    """Any transactions body (object with a `transactions` array) -> TRANSACTION_SCHEMA."""
    payload = load_json(body, "transactions")
    if not isinstance(payload, dict) or not isinstance(payload.get("transactions"), list):
        found = sorted(payload) if isinstance(payload, dict) else type(payload).__name__
        raise MalformedResponseError(f"transactions body has no 'transactions' array (found: {found})")
    envelope = {key: value for key, value in payload.items() if key != "transactions"}
    columns: dict[str, list[Any]] = {field.column: [] for field in FIELDS}
    extras: list[str | None] = []
    for row in payload["transactions"]:
        if not isinstance(row, dict):
            raise MalformedResponseError(f"a transaction is a {type(row).__name__}, not an object")
        unparsed: dict[str, Any] = {}
        plan = _PLANS["nested" if any(row.get(group) is not None for group in GROUPS) else "flat"]
        for column, kind, read, paths in plan:
            columns[column].append(_read_field(column, kind, read, paths, row, unparsed))
        extras.append(encode_extra(leftovers(row), unparsed, envelope))
    arrays = [
        pa.array(columns[field.column], TRANSACTION_SCHEMA.field(field.column).type) for field in FIELDS
    ]
    return pa.Table.from_arrays([*arrays, pa.array(extras, pa.string())], schema=TRANSACTION_SCHEMA)
