"""Query-string validation of the reporting endpoints: every rule of contract part 4 as a 400.

What each endpoint takes, in each dialect, is read from the declaration
(`commerce_reports.endpoints`, the contract's part of the house); what each filter restricts in
the sandbox's world is this module's own table (`WORLD`). Each parser turns a query into a typed
request or raises `BadRequest` whose message names the parameter, what is allowed and what was
given. A parameter the dialect does not declare is a 400 in both dialects: the real service
silently ignores it, so a client that sent one would store unfiltered numbers as a filtered slice;
here its mistake shows.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date

from ..endpoints import ENDPOINTS, Dialect, Filter, Window
from .catalog import COUNTRIES, DEVICE_CODES
from .queries import GROUP_COLUMNS, TRUTH_BY, Filters

__all__ = [
    "WORLD",
    "BadRequest",
    "TransactionsRequest",
    "TruthRequest",
    "WindowRequest",
    "parse_transactions",
    "parse_truth",
    "parse_window",
]

_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_IDS = re.compile(r"[0-9,]+")
_COUNTRY = re.compile(r"[A-Z]{2}")
_UTM = tuple(
    f"{where}_utm_{part}"
    for where in ("page", "link")
    for part in ("source", "medium", "campaign", "term", "content")
)
# What each declared filter restricts in the world: a column of the link frame (`catalog.py`), or the
# click's "device" or "country". The sandbox knows no sub id apart from the CUID, so `sub_ids`
# matches the CUID too. A filter declared without a row here is refused with a 400 that says so.
WORLD: dict[str, str] = {
    "campaign_ids": "campaign_id",
    "merchant_group_ids": "merchant_group_id",
    "program_type": "program_code",
    "partner_product": "partner_code",
    "device_type": "device",
    "country": "country",
    "sub_ids": "cuid",
    "cuids": "cuid",
    **{name: name for name in _UTM},
}


class BadRequest(Exception):
    """A request the service answers with 400; the message is served as is."""


@dataclass(frozen=True)
class TransactionsRequest:
    click: date | None
    commission: date | None
    update: date | None
    filters: Filters


@dataclass(frozen=True)
class WindowRequest:
    start: date  # inclusive
    end: date  # exclusive
    filters: Filters


@dataclass(frozen=True)
class TruthRequest:
    site: str
    start: date
    end: date  # inclusive
    by: str
    group_by: tuple[str, ...]


def _checked(
    query: Mapping[str, str],
    repeated: tuple[str, ...],
    names: tuple[str, ...],
    where: str,
    filters: tuple[Filter, ...] = (),
) -> None:
    """Each parameter given once, and only the `names` declared for `where`."""
    for name in repeated:
        if name in names:
            raise BadRequest(f"{name}: given more than once; give each parameter once")
    for name in query:
        if name not in names:
            hint = next(
                (
                    f"; this API calls that filter {ours[0]}"
                    for spec in filters
                    if name in spec.wire.values() and (ours := [w for w in spec.wire.values() if w in names])
                ),
                "",
            )
            raise BadRequest(f"{name}: not a parameter of {where}{hint}; parameters: {', '.join(names)}")


def _date(name: str, value: str) -> date:
    if not _DATE.fullmatch(value):
        raise BadRequest(f"{name}: expected a date yyyy-mm-dd (got {value!r})")
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise BadRequest(f"{name}: {value} is not a calendar date") from None


def _optional_date(query: Mapping[str, str], name: str) -> date | None:
    return _date(name, query[name]) if name in query else None


def _ids(name: str, value: str) -> frozenset[object]:
    items = value.split(",")
    if not _IDS.fullmatch(value) or "" in items or any(int(item) == 0 for item in items):
        raise BadRequest(f"{name}: expected comma-separated ids, digits only, each above 0 (got {value!r})")
    return frozenset(int(item) for item in items)


def _choice(name: str, value: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise BadRequest(f"{name}: expected one of {', '.join(allowed)} (got {value!r})")
    return value


def _values(spec: Filter, name: str, value: str) -> frozenset[object]:
    """The values of one filter parameter (`name` on this wire), checked by the filter's kind."""
    if spec.kind == "ids":
        return _ids(name, value)
    if spec.kind == "strings":
        return frozenset(value.split(","))
    if spec.kind == "country":
        if not _COUNTRY.fullmatch(value):
            raise BadRequest(f"{name}: expected a two-letter upper-case ISO code like US (got {value!r})")
        return frozenset({value})
    assert spec.codes is not None, "a code filter declares its codes"
    return frozenset({_choice(name, value, tuple(code.value for code in spec.codes))})


def _filters(query: Mapping[str, str], declared: tuple[Filter, ...], dialect: Dialect) -> Filters:
    """The filters of `query` that `declared` names in `dialect`, as what they restrict in the world."""
    links: dict[str, frozenset[object]] = {}
    device = country = None
    for spec in declared:
        name = spec.wire.get(dialect)
        if name is None or name not in query:
            continue
        values = _values(spec, name, query[name])
        where = WORLD.get(spec.name)
        if where is None:
            raise BadRequest(f"{name}: the sandbox does not know what this filter restricts in its world")
        one = str(next(iter(values)))
        if where == "device":
            device = DEVICE_CODES.index(one) if one in DEVICE_CODES else -1
        elif where == "country":
            country = COUNTRIES.index(one.lower()) if one.lower() in COUNTRIES else -1
        else:
            links[where] = links[where] & values if where in links else values
    return Filters(links, device, country)


def parse_transactions(
    query: Mapping[str, str], repeated: tuple[str, ...], dialect: Dialect = "contract"
) -> TransactionsRequest:
    declared = ENDPOINTS["transactions"]
    where = f"transactions in the {dialect} API"
    _checked(query, repeated, declared.parameters(dialect), where, declared.filters)
    click = _optional_date(query, "clickDate")
    commission = _optional_date(query, "commissionDate")
    update = _optional_date(query, "updateDate")
    if not (click or commission or update):
        dates = ", ".join(declared.span.names)
        raise BadRequest(f"{dates}: give at least one date (yyyy-mm-dd)")
    return TransactionsRequest(click, commission, update, _filters(query, declared.filters, dialect))


def parse_window(
    endpoint: str, query: Mapping[str, str], repeated: tuple[str, ...], dialect: Dialect = "contract"
) -> WindowRequest:
    """A networks or merchandise query: its window (the end excluded, at most the declared days)."""
    declared = ENDPOINTS[endpoint]
    window = declared.span
    assert isinstance(window, Window), "the aggregates are declared with a window"
    where = f"{endpoint} in the {dialect} API"
    _checked(query, repeated, declared.parameters(dialect), where, declared.filters)
    for name in window.required:
        if name not in query:
            raise BadRequest(f"{name}: required (a date yyyy-mm-dd)")
    start = _date(window.start, query[window.start])
    end = _date(window.end, query[window.end])
    if end <= start:
        raise BadRequest(f"{window.end}: must be after {window.start} (got {start} and {end})")
    if (end - start).days > window.max_days:
        raise BadRequest(
            f"{window.end}: at most {window.max_days} days after {window.start}, the end excluded"
            f" (got {start} to {end}, {(end - start).days} days)"
        )
    return WindowRequest(start, end, _filters(query, declared.filters, dialect))


def parse_truth(query: Mapping[str, str], repeated: tuple[str, ...]) -> TruthRequest:
    """The `/_sandbox/truth` query: site, start, end (inclusive), by, group_by=a,b."""
    _checked(query, repeated, ("site", "start", "end", "by", "group_by"), "/_sandbox/truth")
    for name in ("site", "start", "end"):
        if not query.get(name):
            raise BadRequest(f"{name}: required")
    by = _choice("by", query.get("by", "commission_date"), TRUTH_BY)
    group_by = tuple(g for g in query.get("group_by", "").split(",") if g)
    for group in group_by:
        _choice("group_by", group, GROUP_COLUMNS)
    return TruthRequest(
        query["site"], _date("start", query["start"]), _date("end", query["end"]), by, group_by
    )
