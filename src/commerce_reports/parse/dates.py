"""The date formats read, written once for both paths: a scalar reader and an Arrow column reader.

Read, to the calendar day:
- ISO dates `2026-11-05`;
- ISO datetimes `2026-11-05T13:45:00Z`, `2026-11-05 13:45`, `2026-11-05T23:30:00-05:00`: the date
  as written (the offset does not move it to another day);
- `2026/11/05` (year first) and `11/05/2026` (month first, as in the US);
- epoch milliseconds, as a JSON number or a digit string of 11 to 13 digits (1970-02-01 to 2286),
  taken as a UTC date. Shorter numbers (epoch seconds, `20261105`) are not guessed at.

An empty string or null is "no date". Anything else, or a day that is not in the calendar
(`2026-02-30`), cannot be typed: the caller keeps the raw value (see `UNPARSED`).
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from .values import UNTYPED, RawNumber, Untyped

__all__ = ["date_array", "read_date"]

# [0-9], not \d: Python's \d also matches other scripts' digits, RE2's (Arrow's) does not.
_ISO = "[0-9]{4}-[0-9]{2}-[0-9]{2}"
_TIME = "[T ][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:[.,][0-9]+)?)?"
_OFFSET = "(?:Z|[+-][0-9]{2}(?::?[0-9]{2})?)"
_ISO_DATETIME = f"{_ISO}(?:{_TIME}{_OFFSET}?)?"  # a date alone, or with a time and maybe an offset
# The other string formats, and how each is rewritten as yyyy-mm-dd.
_REWRITES = (
    ("([0-9]{4})/([0-9]{2})/([0-9]{2})", r"\1-\2-\3"),  # 2026/11/05
    ("([0-9]{2})/([0-9]{2})/([0-9]{4})", r"\3-\1-\2"),  # 11/05/2026
)
_EPOCH_MS = "[0-9]{11,13}"
_EPOCH = date(1970, 1, 1)
_MS_PER_DAY = 86_400_000
_MS_RANGE = range(10**10, 10**13)
_NO_TEXT = pa.scalar(None, pa.string())


def _from_epoch_ms(ms: int) -> date:
    return _EPOCH + timedelta(days=ms // _MS_PER_DAY)


def _iso_text(text: str) -> str | None:
    """The `yyyy-mm-dd` a text in one of the string formats names; None when it is in none."""
    if re.fullmatch(_ISO_DATETIME, text):
        return text[:10]
    for pattern, rewrite in _REWRITES:
        match = re.fullmatch(pattern, text)
        if match:
            return match.expand(rewrite)
    return None


def read_date(value: Any) -> date | Untyped | None:
    """One wire value -> its date, None for "no date", or UNTYPED."""
    if value is None or value == "":
        return None
    if isinstance(value, RawNumber):  # a number with a fraction or an exponent: 1793886300000.0
        value = value.as_float()
        if value is None:
            return UNTYPED
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return _from_epoch_ms(value) if value in _MS_RANGE else UNTYPED
    if not isinstance(value, str):
        return UNTYPED
    if re.fullmatch(_EPOCH_MS, value):
        return _from_epoch_ms(int(value))
    iso = _iso_text(value)
    if iso is None:
        return UNTYPED
    try:
        return date.fromisoformat(iso)
    except ValueError:
        return UNTYPED


def _plain_iso(texts: pa.Array | pa.ChunkedArray) -> bool:
    """Whether every value looks like `yyyy-mm-dd`, so that a strict cast is the one step needed.

    Checked first because a cast that fails costs as much as one that parses every value.
    """
    lengths = pc.min_max(pc.binary_length(texts)).as_py()
    if lengths["min"] is None:
        return True  # no value at all
    if lengths["min"] != 10 or lengths["max"] != 10:
        return False
    dash = pc.equal(pc.utf8_slice_codeunits(texts, 4, 5), "-")
    return bool(pc.all(dash).as_py())


def date_array(texts: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """A column of date texts (nulls and "" allowed) -> date32, null where no date could be read.

    Compare the valid counts of input and output to learn whether any value could not be typed.
    """
    texts = pc.if_else(pc.equal(texts, ""), pa.scalar(None, pa.string()), texts)
    if _plain_iso(texts):
        try:
            return texts.cast(pa.date32())  # the common case: every value a plain ISO date
        except pa.ArrowInvalid:
            pass  # not a calendar day somewhere (2026-02-30): the general reading finds which
    candidate = _iso_texts(texts)  # yyyy-mm-dd, or null
    parsed = pc.strptime(candidate, format="%Y-%m-%d", unit="s", error_is_null=True)
    # strptime rolls a day past the month's end over (02-30 -> 03-02): a real day keeps its numbers
    month = pc.utf8_slice_codeunits(candidate, 5, 7).cast(pa.int64())
    day = pc.utf8_slice_codeunits(candidate, 8, 10).cast(pa.int64())
    real = pc.and_(pc.equal(pc.month(parsed), month), pc.equal(pc.day(parsed), day))
    days = pc.if_else(real, parsed.cast(pa.date32()), pa.scalar(None, pa.date32()))
    if candidate.null_count == texts.null_count:
        return days
    digits = pc.if_else(pc.match_substring_regex(texts, f"^{_EPOCH_MS}$"), texts, _NO_TEXT)
    return pc.coalesce(days, digits.cast(pa.int64()).cast(pa.timestamp("ms")).cast(pa.date32()))


def _iso_texts(texts: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """The `yyyy-mm-dd` each text in a string format names (null for none), format by format."""
    candidate = pc.if_else(
        pc.match_substring_regex(texts, f"^{_ISO_DATETIME}$"), pc.utf8_slice_codeunits(texts, 0, 10), _NO_TEXT
    )
    for pattern, rewrite in _REWRITES:
        if candidate.null_count == texts.null_count:
            break  # every text read already
        rewritten = pc.replace_substring_regex(texts, f"^{pattern}$", rewrite)
        matched = pc.match_substring_regex(texts, f"^{pattern}$")
        candidate = pc.coalesce(candidate, pc.if_else(matched, rewritten, _NO_TEXT))
    return candidate
