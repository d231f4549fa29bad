"""Query-string validation of the reporting endpoints: every rule of contract part 4 as a 400.

Each parser turns a query into a typed request or raises `BadRequest` whose message names the
parameter, what is allowed and what was given. The dialects differ in the product filter's name
(contract `partnerProduct`, published `sovrnProduct`) and in unknown parameters: the contract
dialect ignores them; the published one answers 400, so that a client sending a name the published
API does not declare (say `partnerProduct`, which the real service would silently ignore) is
caught in tests instead of storing unfiltered numbers as a filtered slice.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date

from .catalog import COUNTRIES, DEVICE_CODES, PARTNER_PRODUCTS
from .queries import GROUP_COLUMNS, TRUTH_BY, Filters

__all__ = [
    "MAX_WINDOW_DAYS",
    "BadRequest",
    "TransactionsRequest",
    "TruthRequest",
    "WindowRequest",
    "declared_parameters",
    "parse_transactions",
    "parse_truth",
    "parse_window",
]

MAX_WINDOW_DAYS = 31
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_IDS = re.compile(r"[0-9,]+")
_COUNTRY = re.compile(r"[A-Z]{2}")
_PROGRAM_TYPES = ("CPA", "CPC")
_PARTNER_CODES = tuple(code for code, _ in PARTNER_PRODUCTS.values())
# Comma-list filters -> link-frame column; subIds is matched against the CUID (see queries.py).
_LIST_FILTERS = {
    "subIds": "cuid",
    "cuids": "cuid",
    **{
        f"{where}Utm{key.capitalize()}": f"{where}_utm_{key}"
        for where in ("page", "link")
        for key in ("source", "medium", "campaign", "term", "content")
    },
}
_PRODUCT_PARAMS = {"contract": "partnerProduct", "published": "sovrnProduct"}
_TRANSACTION_PARAMS = (
    "clickDate",
    "commissionDate",
    "updateDate",
    "campaignIds",
    "merchantGroupIds",
    "programType",
)
_WINDOW_PARAMS = (
    "clickDateStart",
    "clickDateEnd",
    "campaignIds",
    "merchantGroupIds",
    "programType",
    "deviceType",
    "country",
    *_LIST_FILTERS,
)


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


def declared_parameters(endpoint: str, dialect: str) -> tuple[str, ...]:
    """The query parameters `endpoint` ("transactions", "networks", "merchandise") reads in `dialect`."""
    if endpoint == "transactions":
        return _TRANSACTION_PARAMS
    return (*_WINDOW_PARAMS, _PRODUCT_PARAMS[dialect])


def _checked(
    query: Mapping[str, str], repeated: tuple[str, ...], names: tuple[str, ...], dialect: str
) -> None:
    """Each known parameter given once; in the published dialect no unknown parameter at all."""
    for name in repeated:
        if name in names:
            raise BadRequest(f"{name}: given more than once; give each parameter once")
    if dialect == "contract":
        return
    for name in query:
        if name not in names:
            product = _PRODUCT_PARAMS[dialect]
            hint = (
                f"; the product filter is {product}" if product in names and name.endswith("Product") else ""
            )
            raise BadRequest(
                f"{name}: not a parameter of this endpoint in the {dialect} API{hint};"
                f" parameters: {', '.join(names)}"
            )


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


def _filters(query: Mapping[str, str], product: str | None) -> Filters:
    """The id and program filters (every endpoint), and the click filters of the aggregates.

    `product` names the aggregates' product filter in the dialect; None for transactions.
    """
    links: dict[str, frozenset[object]] = {}
    for name, column in (("campaignIds", "campaign_id"), ("merchantGroupIds", "merchant_group_id")):
        if name in query:
            links[column] = _ids(name, query[name])
    if "programType" in query:
        links["program_type"] = frozenset(
            {_choice("programType", query["programType"], _PROGRAM_TYPES).lower()}
        )
    if product is None:
        return Filters(links)
    if product in query:
        links["partner_code"] = frozenset({_choice(product, query[product], _PARTNER_CODES)})
    for name, column in _LIST_FILTERS.items():
        if name in query:
            values: frozenset[object] = frozenset(query[name].split(","))
            links[column] = links[column] & values if column in links else values
    device = None
    if "deviceType" in query:
        device = DEVICE_CODES.index(_choice("deviceType", query["deviceType"], DEVICE_CODES))
    country = None
    if "country" in query:
        code = query["country"]
        if not _COUNTRY.fullmatch(code):
            raise BadRequest(f"country: expected a two-letter upper-case ISO code like US (got {code!r})")
        country = COUNTRIES.index(code.lower()) if code.lower() in COUNTRIES else -1
    return Filters(links, device, country)


def parse_transactions(
    query: Mapping[str, str], repeated: tuple[str, ...], dialect: str = "contract"
) -> TransactionsRequest:
    _checked(query, repeated, _TRANSACTION_PARAMS, dialect)
    click = _optional_date(query, "clickDate")
    commission = _optional_date(query, "commissionDate")
    update = _optional_date(query, "updateDate")
    if not (click or commission or update):
        raise BadRequest("clickDate, commissionDate, updateDate: give at least one date (yyyy-mm-dd)")
    return TransactionsRequest(click, commission, update, _filters(query, product=None))


def parse_window(
    query: Mapping[str, str], repeated: tuple[str, ...], dialect: str = "contract"
) -> WindowRequest:
    names = declared_parameters("networks", dialect)
    _checked(query, repeated, names, dialect)
    for name in ("clickDateStart", "clickDateEnd"):
        if name not in query:
            raise BadRequest(f"{name}: required (a date yyyy-mm-dd)")
    start = _date("clickDateStart", query["clickDateStart"])
    end = _date("clickDateEnd", query["clickDateEnd"])
    if end <= start:
        raise BadRequest(f"clickDateEnd: must be after clickDateStart (got {start} and {end})")
    if (end - start).days > MAX_WINDOW_DAYS:
        raise BadRequest(
            f"clickDateEnd: at most {MAX_WINDOW_DAYS} days after clickDateStart, the end excluded"
            f" (got {start} to {end}, {(end - start).days} days)"
        )
    return WindowRequest(start, end, _filters(query, product=_PRODUCT_PARAMS[dialect]))


def parse_truth(query: Mapping[str, str], repeated: tuple[str, ...]) -> TruthRequest:
    """The `/_sandbox/truth` query: site, start, end (inclusive), by, group_by=a,b."""
    _checked(query, repeated, ("site", "start", "end", "by", "group_by"), "contract")
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
