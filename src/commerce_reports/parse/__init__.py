"""One response body -> one typed Arrow table in the lake's columns (contract.py); no I/O but memory.

Transactions arrive in the contract's nested shape, the service notes' flat shape or the published
OpenAPI shape (fields.py); all three read into the same columns. Two paths read them:
- fast (fast.py): a clean body of a known shape, read by DuckDB, with a census proving that every
  value of the body landed in a column;
- tolerant (tolerant.py): anything else, row by row, keeping unknown keys and values that could not
  be typed in the `extra` column (extra.py; `_unparsed` holds the raw values, `untyped_rows` counts
  the rows that have them).
Both type values by the same rules (values.py, dates.py), and read a body the fast path takes into
the same table (a property test holds it). A body under 64 KiB (some 70 transactions)
goes straight to the tolerant path: DuckDB takes ~10 ms to plan the fast path's read whatever the
body's size, several times what the tolerant path takes for it. Aggregates: aggregates.py.
"""

from __future__ import annotations

import pyarrow as pa

from ..contract import untyped_rows
from ..errors import MalformedResponseError, ValidationError
from .aggregates import parse_aggregate
from .fast import Declined, read_fast
from .tolerant import read_tolerant

__all__ = ["parse_aggregate", "parse_transactions", "untyped_rows"]

_SMALL_BODY = 64 << 10  # bytes: below this the tolerant path is the quicker one


def parse_transactions(body: bytes, *, strict: bool = False) -> pa.Table:
    """A transactions response body -> a table of TRANSACTION_SCHEMA.

    `strict=True` reads only a body that is exactly one of the known shapes with every value
    typable (the fast path) and raises MalformedResponseError saying what is off otherwise: a check
    that a service still speaks its documented shape. By default such a body is read tolerantly,
    as is any body under 64 KiB.
    """
    if not isinstance(body, bytes | bytearray | memoryview):
        raise ValidationError("body", f"a {type(body).__name__} is not a response body", "pass the bytes")
    body = bytes(body)
    if not body or body.isspace():
        raise MalformedResponseError("transactions body is empty")
    if strict or len(body) >= _SMALL_BODY:
        try:
            return read_fast(body)
        except Declined as why:
            if strict:
                off = f"transactions body is not exactly a known shape: {why}"
                raise MalformedResponseError(off) from None
    return read_tolerant(body)
