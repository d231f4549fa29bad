"""Typed request parameters: validated before anything is sent, with messages that say what is allowed.

Dates are `datetime.date` (or ISO strings), id lists are ints, codes are enums. A lower-case country
is upper-cased; a partner product or device may be given by code (`"MBL"`) or word (`"Mobile"`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, fields
from datetime import UTC, date, datetime, timedelta
from numbers import Integral
from typing import Any, Literal

from .endpoints import (
    DATE_FIELDS,
    ENDPOINTS,
    FILTERS,
    MAX_WINDOW_DAYS,
    DateField,
    DeviceType,
    Filter,
    PartnerProduct,
    ProgramType,
)
from .errors import ValidationError

__all__ = [
    "DATE_FIELDS",
    "FILTER_NAMES",
    "MAX_WINDOW_DAYS",
    "DateField",
    "DeviceType",
    "Filters",
    "Grain",
    "PartnerProduct",
    "ProgramType",
    "aggregate_windows",
    "as_bool",
    "as_date",
    "check_window",
    "day_range",
    "transaction_params",
]

Grain = Literal["day", "month"]


def as_bool(value: Any, parameter: str) -> bool:
    """`value` when it is True or False; else a ValidationError naming `parameter` (a string such
    as "no" is true to Python, and would do what it says not to)."""
    if not isinstance(value, bool):
        raise ValidationError(parameter, f"{value!r:.60} is not a bool", "give True or False")
    return value


# The days the toolkit takes: from the epoch the service's times count from, to a year whose
# windows and comparisons (a day less a period, a month's end) stay within Python's dates.
FIRST_DAY, LAST_DAY = date(1970, 1, 1), date(8999, 12, 31)


def as_date(value: Any, parameter: str = "date") -> date:
    """A `date` from a date, datetime or `YYYY-MM-DD` string, from 1970 to 8999 (`FIRST_DAY`,
    `LAST_DAY`; year 1 less a week overflowed where it was used); anything else is a
    ValidationError. A datetime with a time zone is the day it is in UTC, the service's days and
    the toolkit's today (21:00 in New York on the 20th is the 21st); a naive one is the day it
    names."""
    day = _day_of(value, parameter)
    if not FIRST_DAY <= day <= LAST_DAY:
        raise ValidationError(
            parameter, f"{day} is not a day of the service's data", f"give a day from {FIRST_DAY} on"
        )
    return day


def _day_of(value: Any, parameter: str) -> date:
    if isinstance(value, datetime):
        try:
            day = value.astimezone(UTC).date() if value.tzinfo is not None else value.date()
        except (TypeError, ValueError, OverflowError):
            day = None
        if type(day) is not date:  # pandas' NaT: a datetime that holds no time
            raise ValidationError(parameter, f"{value!r} is no day", "give a date, e.g. '2026-02-01'")
        return day
    if isinstance(value, date):
        return value
    if isinstance(value, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", value.strip()):
        try:
            return date.fromisoformat(value.strip())
        except ValueError:
            raise ValidationError(parameter, f"{value!r} is not a real calendar date") from None
    raise ValidationError(parameter, f"{value!r} is not a date", "give a datetime.date or 'YYYY-MM-DD'")


def as_days(start: Any, end: Any, today: date | None = None) -> tuple[date | None, date | None]:
    """`start` and `end` as dates (None stays None: not given), the first not after the last
    (both are included), and with `today`, the last not after it (reports exist up to today);
    anything else is a ValidationError naming which."""
    first = None if start is None else as_date(start, "start")
    last = None if end is None else as_date(end, "end")
    if today is not None and last is not None and last > today:
        raise ValidationError("end", f"{last} is after today ({today})", "reports exist up to today")
    if first is not None and last is not None and first > last:
        raise ValidationError("start", f"{first} is after end {last}", "give start <= end (both included)")
    return first, last


def _many(parameter: str, value: Any, what: str) -> list[Any]:
    """A single value or a list/tuple/set of values, as a list; anything else is a ValidationError."""
    if isinstance(value, str | Integral):
        return [value]
    if isinstance(value, bytes | bytearray | Mapping) or not isinstance(value, Iterable):
        raise ValidationError(
            parameter, f"{value!r} is not {what} or a list of them", f"give {what}s in a list"
        )
    return list(value)


def _ids(parameter: str, value: Any) -> tuple[int, ...]:
    if value is None:
        return ()
    ids: list[int] = []
    for item in _many(parameter, value, "an id"):
        if isinstance(item, bool) or not isinstance(item, str | Integral):
            raise ValidationError(parameter, f"{item!r} is not an id", "ids are whole numbers > 0")
        if isinstance(item, str):
            parts = item.split(",")
            if not all(re.fullmatch(r"\d+", p.strip()) for p in parts):
                raise ValidationError(parameter, f"{item!r} is not an id", "ids are whole numbers > 0")
            ids.extend(int(p) for p in parts)
        else:
            ids.append(int(item))
    for number in ids:
        if number <= 0:
            raise ValidationError(
                parameter, f"id {number} is not greater than 0", "ids are whole numbers > 0"
            )
    return tuple(sorted(set(ids)))


def _strings(parameter: str, value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    items = _many(parameter, value, "a string")
    for item in items:
        if not isinstance(item, str) or not item.strip() or "," in item or not _encodable(item):
            raise ValidationError(
                parameter,
                f"{item!r} is not a usable value",
                "each value is a non-empty string without commas",
            )
    return tuple(sorted({item.strip() for item in items}))


def _encodable(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:  # a lone surrogate: it cannot be sent, nor name a folder
        return False
    return True


def _country(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not re.fullmatch(r"[A-Za-z]{2}", value.strip()):
        raise ValidationError(
            "country", f"{value!r} is not a country code", "give a two-letter ISO code like 'US'"
        )
    code = value.strip().upper()
    import pycountry  # loads its tables on first use only: most runs never filter by country

    if pycountry.countries.get(alpha_2=code) is None:
        raise ValidationError(
            "country",
            f"{value!r} is not an ISO 3166 country (a request for it would return nothing)",
            "give an assigned two-letter code like 'US', 'GB' or 'DE'",
        )
    return code


# Python keyword -> the lake's name of the filter, in the contract's order (the declaration's).
_PARAM_NAMES = {f.name: f.param for f in FILTERS}
_SCALAR_FILTERS = tuple(f.name for f in FILTERS if f.kind in ("code", "country"))
FILTER_NAMES: tuple[str, ...] = tuple(_PARAM_NAMES)


def _normalised(declared: Filter, value: Any) -> Any:
    """A filter's value checked and normalised by its declared kind (None and () mean "not set")."""
    if declared.kind == "ids":
        return _ids(declared.name, value)
    if declared.kind == "strings":
        return _strings(declared.name, value)
    if declared.kind == "country":
        return _country(value)
    if value is None or declared.codes is None:
        return None
    return declared.codes.checked(value, declared.name)


@dataclass(frozen=True)
class Filters:
    """The filters of a networks or merchandise request; a slice of the lake is one Filters value.

    Lists are stored sorted and de-duplicated, so equal filter sets compare (and hash) equal.
    """

    campaign_ids: tuple[int, ...] = ()
    merchant_group_ids: tuple[int, ...] = ()
    program_type: ProgramType | None = None
    partner_product: PartnerProduct | None = None
    device_type: DeviceType | None = None
    country: str | None = None
    sub_ids: tuple[str, ...] = ()
    cuids: tuple[str, ...] = ()
    page_utm_source: tuple[str, ...] = ()
    page_utm_medium: tuple[str, ...] = ()
    page_utm_campaign: tuple[str, ...] = ()
    page_utm_term: tuple[str, ...] = ()
    page_utm_content: tuple[str, ...] = ()
    link_utm_source: tuple[str, ...] = ()
    link_utm_medium: tuple[str, ...] = ()
    link_utm_campaign: tuple[str, ...] = ()
    link_utm_term: tuple[str, ...] = ()
    link_utm_content: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for declared in FILTERS:
            object.__setattr__(self, declared.name, _normalised(declared, getattr(self, declared.name)))

    @classmethod
    def of(cls, filters: Filters | None = None, **kwargs: Any) -> Filters:
        """Filters from keyword arguments (merged over `filters`); unknown names are an error."""
        if filters is not None and not isinstance(filters, Filters):
            raise ValidationError(
                "filters", f"{filters!r} is not a Filters value", "give Filters(...) or None"
            )
        unknown = sorted(set(kwargs) - set(_PARAM_NAMES))
        if unknown:
            raise ValidationError(unknown[0], "is not a filter", f"filters are {', '.join(_PARAM_NAMES)}")
        base = {f.name: getattr(filters, f.name) for f in fields(cls)} if filters else {}
        base.update({k: v for k, v in kwargs.items() if v is not None})
        return cls(**base)

    def items(self) -> Iterator[tuple[str, str]]:
        """(service parameter, value) for every filter that is set, in the contract's order."""
        for name, param in _PARAM_NAMES.items():
            value = getattr(self, name)
            if value is None or value == ():
                continue
            yield param, ",".join(str(v) for v in value) if isinstance(value, tuple) else str(value)

    def to_params(self) -> dict[str, str]:
        return dict(self.items())

    def as_columns(self) -> dict[str, str | None]:
        """snake_case name -> value (comma-joined lists; None when not filtered), for storage."""
        params = self.to_params()
        return {name: params.get(param) for name, param in _PARAM_NAMES.items()}

    @property
    def canonical(self) -> str:
        """A stable name for this filter set: `all`, or e.g. `country=US&deviceType=MBL`.

        Inside values, `%`, `&`, `=` and `,` are percent-encoded, so any value round-trips through
        `from_canonical`; values without them read as they are (the common case never changes).
        """
        parts = []
        for name, param in sorted(_PARAM_NAMES.items(), key=lambda item: item[1]):
            value = getattr(self, name)
            if value is None or value == ():
                continue
            values = value if isinstance(value, tuple) else (value,)
            parts.append(f"{param}={','.join(_escape(str(v)) for v in values)}")
        return "&".join(parts) or "all"

    @classmethod
    def from_canonical(cls, text: str) -> Filters:
        """The filter set named by `canonical` (a ValidationError for a name no filter set has)."""
        if not isinstance(text, str) or not text:
            raise ValidationError("slice", f"{text!r} is not a slice name", "give 'all' or e.g. 'country=US'")
        if text == "all":
            return cls()
        by_param = {param: name for name, param in _PARAM_NAMES.items()}
        values: dict[str, Any] = {}
        for part in text.split("&"):
            param, _, value = part.partition("=")
            if param not in by_param or by_param[param] in values:
                raise ValidationError(
                    "slice",
                    f"{param!r} is not a filter (or is repeated)",
                    f"filters are {', '.join(by_param)}",
                )
            name = by_param[param]
            values[name] = (
                _unescape(value) if name in _SCALAR_FILTERS else [_unescape(v) for v in value.split(",")]
            )
        return cls(**values)

    @classmethod
    def from_params(cls, params: Mapping[str, str]) -> Filters:
        """The filter set of service query parameters (as `to_params` gives them)."""
        by_param = {param: name for name, param in _PARAM_NAMES.items()}
        values: dict[str, Any] = {}
        for param, value in params.items():
            if param not in by_param or not isinstance(value, str):
                raise ValidationError("params", f"{param!r}={value!r} is not a filter parameter")
            name = by_param[param]
            values[name] = value if name in _SCALAR_FILTERS else value.split(",")
        return cls(**values)


_ESCAPES = {"%": "%25", "&": "%26", "=": "%3D", ",": "%2C"}
_ESCAPED = "(?i)%(25|26|3D|2C)"  # compiled by `re` on first use: few keys are escaped


def _escape(value: str) -> str:
    return "".join(_ESCAPES.get(char, char) for char in value)


def _unescape(text: str) -> str:
    return re.sub(_ESCAPED, lambda match: chr(int(match.group(1), 16)), text)


def transaction_params(
    *,
    click_date: Any = None,
    commission_date: Any = None,
    update_date: Any = None,
    **filters: Any,
) -> dict[str, str]:
    """Validated query parameters of a transactions request (one day per date given), filtered by
    the filters the declaration lists for transactions (campaign_ids, merchant_group_ids, program_type)."""
    params: dict[str, str] = {}
    for name, param, value in (
        ("click_date", "clickDate", click_date),
        ("commission_date", "commissionDate", commission_date),
        ("update_date", "updateDate", update_date),
    ):
        if value is not None:
            params[param] = as_date(value, name).isoformat()
    if not params:
        raise ValidationError(
            "date", "no date given", "give at least one of click_date, commission_date, update_date"
        )
    taken = [spec.name for spec in ENDPOINTS["transactions"].filters]
    for name in filters:
        if name not in taken:
            raise ValidationError(
                name, "is not a filter of transactions", f"its filters are {', '.join(taken)}"
            )
    return {**params, **Filters.of(**filters).to_params()}


def check_window(start: Any, end: Any) -> tuple[date, date]:
    """Validate an aggregate window: `end` is excluded, after `start`, at most 31 days on."""
    first, stop = as_date(start, "start"), as_date(end, "end")
    if stop <= first:
        raise ValidationError(
            "end",
            f"{stop} is not after start {first}",
            "the end is excluded: a single day D is start=D, end=D+1",
        )
    if (stop - first).days > MAX_WINDOW_DAYS:
        raise ValidationError(
            "end",
            f"the window {first}..{stop} spans {(stop - first).days} days",
            f"at most {MAX_WINDOW_DAYS} days per request; split it with aggregate_windows()",
        )
    return first, stop


def day_range(start: Any, end: Any) -> list[date]:
    """Every day from `start` to `end`, both included (one transactions request each)."""
    first, last = as_date(start, "start"), as_date(end, "end")
    if last < first:
        raise ValidationError("end", f"{last} is before start {first}", "give end >= start (both included)")
    return [first + timedelta(days=n) for n in range((last - first).days + 1)]


def aggregate_windows(start: Any, end: Any, grain: Grain | None = None) -> list[tuple[date, date]]:
    """Split the days `start`..`end` (both included) into request windows, each end excluded.

    `grain="day"`: one window per day. `grain="month"`: calendar months, the first and last cut to
    the range. `None`: as few windows of at most 31 days as possible.
    """
    days = day_range(start, end)
    first, stop = days[0], days[-1] + timedelta(days=1)
    if grain == "day":
        return [(d, d + timedelta(days=1)) for d in days]
    windows: list[tuple[date, date]] = []
    cursor = first
    while cursor < stop:
        if grain == "month":
            step = date(cursor.year + cursor.month // 12, cursor.month % 12 + 1, 1)  # the next month's first
        elif grain is None:
            step = cursor + timedelta(days=MAX_WINDOW_DAYS)
        else:
            raise ValidationError("grain", f"{grain!r} is not a grain", "use 'day', 'month' or None")
        windows.append((cursor, min(step, stop)))
        cursor = min(step, stop)
    return windows
