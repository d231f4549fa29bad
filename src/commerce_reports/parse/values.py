"""How one wire value becomes one stored value: the rules both parsing paths obey.

Each reader returns the typed value, None for "not known" (null, a missing key, an empty string),
or UNTYPED when the value is there but cannot be typed (revenue "lots"): the caller then keeps the
raw value in `extra` under `UNPARSED` and the row stays.
- text: a string as sent; a number as its text (12345 -> "12345", 12345.0 -> "12345", 2.5 -> "2.5").
- number: a JSON number, or a string holding one in JSON's spelling ("12.5", "-3e2").
- integer: a number with no fraction, within the int64 range.
Booleans, objects and arrays are none of these.
"""

from __future__ import annotations

import gc
import re
from enum import Enum
from typing import Any, Final

import orjson

from ..errors import MalformedResponseError

__all__ = ["UNTYPED", "Untyped", "load_json", "number_text", "read_integer", "read_number", "read_text"]


class Untyped(Enum):
    """The marker of a value that was present but could not be typed."""

    UNTYPED = "untyped"


UNTYPED: Final = Untyped.UNTYPED
_JSON_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_INT64 = range(-(2**63), 2**63)


def load_json(body: bytes, what: str) -> Any:
    """Decode a body; a truncated or invalid one is a MalformedResponseError naming `what`."""
    gc.disable()  # orjson builds many small objects: the collector only slows it down
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError as error:
        raise MalformedResponseError(
            f"{what} body is not valid JSON ({error}); it may have been cut short",
        ) from None
    finally:
        gc.enable()


def number_text(value: float) -> str:
    """A float as text the way DuckDB writes it too: shortest round trip, no trailing `.0`."""
    text = repr(value)
    return text[:-2] if text.endswith(".0") else text


def read_text(value: Any) -> str | Untyped | None:
    if value is None or value == "":
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return UNTYPED
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return number_text(value)
    return UNTYPED


def read_number(value: Any) -> float | Untyped | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return UNTYPED
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str) and _JSON_NUMBER.fullmatch(value):
        return float(value)
    return UNTYPED


def read_integer(value: Any) -> int | Untyped | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value if value in _INT64 else UNTYPED
    if isinstance(value, str) and re.fullmatch(r"-?[0-9]+", value):
        return read_integer(int(value))
    number = read_number(value)
    if isinstance(number, float):
        return int(number) if number.is_integer() and int(number) in _INT64 else UNTYPED
    return number
