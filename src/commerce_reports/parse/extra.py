"""The `extra` column: what the service sent that no column holds, as JSON, and how to count it.

A row's `extra` is null, or a JSON object with
- the keys no column reads, where the service put them (`{"click": {"pageTitle": "..."}}`);
- `_unparsed` (`contract.UNPARSED`), first when present: the raw values that could not be typed,
  by column (`{"_unparsed": {"commission_date": "yesterday", "order_value": "lots"}}`). The row is
  kept with nulls in those columns; `untyped_rows` counts such rows so that the lake can store the
  partition as not settled and name it in the sync summary;
- `_envelope`: keys of the response envelope beside the rows (`{"_envelope": {"nextPage": 2}}`).
A key the service itself named `_unparsed` or `_envelope` is kept as `__unparsed` / `__envelope`.
"""

from __future__ import annotations

from typing import Any

from ..contract import UNPARSED
from .values import dump_json

__all__ = ["ENVELOPE", "encode_extra", "leftovers"]

ENVELOPE = "_envelope"


def leftovers(node: dict[str, Any]) -> dict[str, Any]:
    """What is left of a row once the columns took their keys: nulls and emptied objects dropped."""
    left: dict[str, Any] = {}
    for key, value in node.items():
        if isinstance(value, dict):
            value = leftovers(value)
            if not value:
                continue
        if value is not None:
            left[key] = value
    return left


def encode_extra(left: dict[str, Any], unparsed: dict[str, Any], envelope: dict[str, Any]) -> str | None:
    """A row's `extra` as stored (None when there is nothing to keep)."""
    reserved = {UNPARSED: unparsed, ENVELOPE: envelope}
    for name in reserved:
        if name in left:
            free = "_" + name
            while free in left or free in reserved:
                free = "_" + free
            left[free] = left.pop(name)
    extra = {name: value for name, value in reserved.items() if value} | left
    return dump_json(extra).decode() if extra else None
