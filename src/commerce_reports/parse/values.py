"""How one wire value becomes one stored value: the rules both parsing paths obey.

Each reader returns the typed value, None for "not known" (null, a missing key, an empty string),
or UNTYPED when the value is there but cannot be typed (revenue "lots"): the caller then keeps the
raw value in `extra` under `UNPARSED` and the row stays.
- text: a string as sent; a number as its text (12345 -> "12345", 12345.0 -> "12345", 2.5 -> "2.5").
- number: a finite JSON number, or a string holding one in JSON's spelling ("12.5", "-3e2").
- money: the same, read exactly from its text as a decimal of at most 4 places and 14 digits before
  the point (DECIMAL(18,4)); anything else (0.12345, 1e400) is UNTYPED, never rounded.
- integer: a number with no fraction, within the int64 range.
Booleans, objects and arrays are none of these; nor are NaN, Infinity and -Infinity, which some
servers write although JSON has no such values: `load_json` reads them, so that they stay untyped.
"""

from __future__ import annotations

import decimal
import gc
import json
import math
import re
from decimal import Decimal
from enum import Enum
from typing import Any, Final

import orjson

from ..contract import MONEY_PRECISION, MONEY_SCALE
from ..errors import MalformedResponseError

__all__ = [
    "UNTYPED",
    "RawNumber",
    "Untyped",
    "dump_json",
    "load_json",
    "number_text",
    "read_integer",
    "read_money",
    "read_number",
    "read_text",
]


class Untyped(Enum):
    """The marker of a value that was present but could not be typed."""

    UNTYPED = "untyped"


UNTYPED: Final = Untyped.UNTYPED
_JSON_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_INT64 = range(-(2**63), 2**63)
_CENT_FRACTION = Decimal(1).scaleb(-MONEY_SCALE)  # 0.0001
_MONEY_LIMIT = Decimal(10) ** (MONEY_PRECISION - MONEY_SCALE)
# Exact: a quantize that would round, or a number beyond the context, raises instead.
_EXACT = decimal.Context(prec=MONEY_PRECISION + 2, traps=[decimal.Inexact, decimal.InvalidOperation])
_LONE_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")  # a UTF-16 half written as an escape


class RawNumber(str):
    """A JSON number with a fraction or an exponent (or NaN, Infinity, -Infinity), as the text it was
    sent as: `load_json` keeps such numbers so, and each kind of value reads it by its own rule
    (money exactly, from the text; a plain number as the nearest float)."""

    __slots__ = ()

    def as_float(self) -> float | None:
        """The nearest float, or None for a text that is not a finite JSON number."""
        if not _JSON_NUMBER.fullmatch(self):
            return None
        number = float(self)
        return number if math.isfinite(number) else None


def load_json(body: bytes, what: str) -> Any:
    """Decode a body, keeping fractional numbers as their text (`RawNumber`); a truncated or invalid
    one is a MalformedResponseError naming `what`."""
    gc.disable()  # decoding builds many small objects: the collector only slows it down
    try:
        payload = json.loads(body, parse_float=RawNumber, parse_constant=RawNumber)
    except (ValueError, RecursionError) as error:  # RecursionError: nested past the decoder's depth
        raise MalformedResponseError(
            f"{what} body is not valid JSON ({str(error)[:200]}); it may have been cut short",
        ) from None
    finally:
        gc.enable()
    if _LONE_SURROGATE.search(body):
        try:
            dump_json(payload)
        except orjson.JSONEncodeError:
            raise MalformedResponseError(
                f"{what} body is not valid JSON (a string holds half of a UTF-16 surrogate pair)"
            ) from None
    return payload


def _raw(value: Any) -> Any:
    if isinstance(value, RawNumber):
        return orjson.Fragment(value.encode()) if value.as_float() is not None else str(value)
    if isinstance(value, Decimal):
        return orjson.Fragment(str(value).encode())
    raise TypeError(f"{type(value).__name__} is not JSON")


def dump_json(value: Any) -> bytes:
    """JSON of a decoded value; numbers kept as text go out as they came, except those no JSON reader
    takes (NaN, the infinities, 1e400), which go out as strings of their text."""
    return orjson.dumps(value, default=_raw, option=orjson.OPT_PASSTHROUGH_SUBCLASS)


def number_text(value: float) -> str:
    """A float as text the way DuckDB writes it too: shortest round trip, no trailing `.0`."""
    text = repr(value)
    return text[:-2] if text.endswith(".0") else text


def read_text(value: Any) -> str | Untyped | None:
    if value is None or value == "":
        return None
    if isinstance(value, RawNumber):
        number = value.as_float()
        return UNTYPED if number is None else number_text(number)
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return UNTYPED
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return number_text(value) if math.isfinite(value) else UNTYPED
    return UNTYPED


def read_number(value: Any) -> float | Untyped | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return UNTYPED
    if isinstance(value, int | float):
        try:
            number = float(value)
        except OverflowError:  # an integer of hundreds of digits
            return UNTYPED
    elif isinstance(value, str) and _JSON_NUMBER.fullmatch(value):
        number = float(value)
    else:
        return UNTYPED
    return number if math.isfinite(number) else UNTYPED


def read_money(value: Any) -> Decimal | Untyped | None:
    """A money value read exactly (see the module's rules), as a Decimal of scale 4."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return UNTYPED
    if isinstance(value, str):
        if not _JSON_NUMBER.fullmatch(value):
            return UNTYPED
        amount = Decimal(value)
    elif isinstance(value, int | Decimal):
        amount = Decimal(value)
    elif isinstance(value, float):
        amount = Decimal(repr(value))  # a float handed in from Python: the number its text says
    else:
        return UNTYPED
    try:
        exact = amount.quantize(_CENT_FRACTION, context=_EXACT)
    except decimal.DecimalException:  # more than 4 places, beyond any precision, or not finite
        return UNTYPED
    return exact if abs(exact) < _MONEY_LIMIT else UNTYPED


def read_integer(value: Any) -> int | Untyped | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value if value in _INT64 else UNTYPED
    if isinstance(value, str) and not isinstance(value, RawNumber) and re.fullmatch(r"-?[0-9]+", value):
        return read_integer(int(value))
    number = read_number(value)
    if isinstance(number, float):
        return int(number) if number.is_integer() and int(number) in _INT64 else UNTYPED
    return number
