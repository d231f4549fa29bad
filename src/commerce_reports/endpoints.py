"""The reporting endpoints, declared once as data: what each one takes, on each dialect's wire.

For each endpoint: its path, its date parameters and their span rule, every filter with its kind
and its wire name per dialect, what a 404 means, and the pace it keeps. The client, the parameter
validation (`params`), the sandbox (both dialects) and the tests read this table; nothing else
lists a parameter. A filter a dialect does not name is one that dialect does not take: the client
refuses to send it and the sandbox answers 400, because the real service silently ignores what it
does not know (a "filtered" slice would store unfiltered numbers).

    networks = ENDPOINTS["networks"]
    networks.parameters("published")      # every query parameter, as the published API names it
    networks.wire("published", {"partnerProduct": "WRA"})   # -> {"sovrnProduct": "WRA"}

The dialects: `contract` is the service contract's (`service-contract.md`; the fourteen list
filters it leaves unnamed are named as the service's reference pages name them), `published` is
the vendor's OpenAPI file (`reports-openapi.json`), which calls the product filter `sovrnProduct`.
This module sits on the ground floor: it imports only `errors`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal, NamedTuple, Self

from .errors import ValidationError

__all__ = [
    "DATE_FIELDS",
    "DIALECTS",
    "ENDPOINTS",
    "FILTERS",
    "MAX_WINDOW_DAYS",
    "PACE_KEYS",
    "SERVICE_CHECK",
    "DateField",
    "DeviceType",
    "Dialect",
    "Endpoint",
    "Filter",
    "FilterKind",
    "OneDay",
    "PartnerProduct",
    "ProgramType",
    "Window",
]

Dialect = Literal["contract", "published"]
DIALECTS: tuple[Dialect, ...] = ("contract", "published")

DateField = Literal["updateDate", "commissionDate", "clickDate"]
DATE_FIELDS: tuple[DateField, ...] = ("updateDate", "commissionDate", "clickDate")
MAX_WINDOW_DAYS = 31  # the contract's range limit per aggregate request ("subject to increase")


# ---------------------------------------------------------------- codes (contract 2.5) ----


class Code(StrEnum):
    """A filter's codes (contract 2.5). A code is found by itself or by its word form, in any case
    (`DeviceType("Mobile")` is `DeviceType.MBL`); anything else is a ValidationError listing them."""

    @classmethod
    def words(cls) -> Mapping[str, str]:
        """Code -> the word form transactions carry, for the codes that have one."""
        return {}

    @property
    def label(self) -> str:
        """The word form transactions carry (the code itself where there is none)."""
        return self.words().get(self.value, self.value)

    @classmethod
    def checked(cls, value: object, parameter: str) -> Self:
        """The member whose code or word form `value` is, in any case; else a ValidationError
        naming `parameter` and listing the codes."""
        if isinstance(value, cls):
            return value
        if isinstance(value, str):
            text = value.strip()
            for member in cls:
                if text.upper() == member.value or text.lower() == member.label.lower():
                    return member
        allowed = ", ".join(f"{m.value} ({m.label})" if m.label != m.value else m.value for m in cls)
        raise ValidationError(parameter, f"{value!r} is not a known code", f"expected one of {allowed}")

    @classmethod
    def _missing_(cls, value: object) -> Self:
        return cls.checked(value, cls.__name__)


class ProgramType(Code):
    """Program-type filter codes: cost per action, cost per click (transactions carry them lower-case)."""

    CPA = "CPA"
    CPC = "CPC"


class PartnerProduct(Code):
    """Partner-product filter codes (contract 2.5); `label` is the word form in transactions."""

    WRA = "WRA"
    ORG = "ORG"
    RAC = "RAC"
    RAL = "RAL"
    CUP = "CUP"
    TPA = "TPA"
    PCR = "PCR"
    TXT = "TXT"
    SHG = "SHG"
    PRF = "PRF"
    INS = "INS"
    UNK = "UNK"

    @classmethod
    def words(cls) -> Mapping[str, str]:
        return _PARTNER_PRODUCT_WORDS


_PARTNER_PRODUCT_WORDS = {
    "WRA": "Link",
    "ORG": "JavaScript",
    "RAC": "Click API",
    "RAL": "Link API",
    "CUP": "Coupon API",
    "TPA": "Product API",
    "PCR": "Price Comparison",
    "TXT": "In-text",
    "SHG": "Shopping Galleries",
    "PRF": "Product Feed",
    "INS": "Insert",
    "UNK": "Unknown",
}


class DeviceType(Code):
    """Device filter codes; `label` is the word form transactions carry."""

    DSK = "DSK"
    MBL = "MBL"
    TBL = "TBL"
    UKN = "UKN"

    @classmethod
    def words(cls) -> Mapping[str, str]:
        return _DEVICE_WORDS


_DEVICE_WORDS = {"DSK": "Desktop", "MBL": "Mobile", "TBL": "Tablet", "UKN": "Unknown"}


# ---------------------------------------------------------------- filters ----

# ids: comma-separated whole numbers > 0 (`^[0-9,]+$`); code: one of `codes`; country: a two-letter
# upper-case ISO code (`^[A-Z]{2}$`); strings: comma-separated text values.
FilterKind = Literal["ids", "code", "country", "strings"]


@dataclass(frozen=True)
class Filter:
    """One request filter: its Python keyword, its name in the lake, its kind, its wire names.

    `param` names it in slice names and manifests (the contract's name, stable whatever the
    dialect); `wire` names it on each dialect's wire, and a dialect missing from `wire` does not
    take it. `codes` lists the values of a `code` filter.
    """

    name: str
    param: str
    kind: FilterKind
    wire: Mapping[Dialect, str]
    codes: type[Code] | None = None

    def __post_init__(self) -> None:
        if (self.kind == "code") != (self.codes is not None):
            raise ValidationError(self.name, "a code filter, and only one, lists its codes")


def _declare(
    name: str,
    param: str,
    kind: FilterKind,
    codes: type[Code] | None = None,
    **renamed: str | None,
) -> Filter:
    """A filter named `param` on every dialect's wire, except where `renamed` names it otherwise
    (`published="sovrnProduct"`) or not at all (`published=None`)."""
    wire = {dialect: renamed.get(dialect, param) for dialect in DIALECTS}
    return Filter(name, param, kind, {d: w for d, w in wire.items() if w is not None}, codes)


_UTM_PARTS = ("source", "medium", "campaign", "term", "content")

# Every filter, in the contract's order (the order of the lake's filter columns).
FILTERS: tuple[Filter, ...] = (
    _declare("campaign_ids", "campaignIds", "ids"),
    _declare("merchant_group_ids", "merchantGroupIds", "ids"),
    _declare("program_type", "programType", "code", ProgramType),
    _declare("partner_product", "partnerProduct", "code", PartnerProduct, published="sovrnProduct"),
    _declare("device_type", "deviceType", "code", DeviceType),
    _declare("country", "country", "country"),
    _declare("sub_ids", "subIds", "strings"),
    _declare("cuids", "cuids", "strings"),
    *(
        _declare(f"{where}_utm_{part}", f"{where}Utm{part.capitalize()}", "strings")
        for where in ("page", "link")
        for part in _UTM_PARTS
    ),
)
_BY_NAME = {f.name: f for f in FILTERS}


# ---------------------------------------------------------------- dates and spans ----


class OneDay(NamedTuple):
    """Each date parameter names one whole day; at least one is given, and a row must match all
    that are given. A period takes one request per day."""

    dates: tuple[str, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return self.dates

    @property
    def required(self) -> tuple[str, ...]:
        return ()


class Window(NamedTuple):
    """Two required dates: `start` included, `end` excluded, at most `max_days` days apart (a whole
    month is the first of the month to the first of the next; one day D is D to D+1)."""

    start: str
    end: str
    max_days: int = MAX_WINDOW_DAYS

    @property
    def names(self) -> tuple[str, ...]:
        return (self.start, self.end)

    @property
    def required(self) -> tuple[str, ...]:
        return (self.start, self.end)


# ---------------------------------------------------------------- endpoints ----


@dataclass(frozen=True)
class Endpoint:
    """One reporting endpoint (GET, JSON answer).

    `not_found` says what a 404 means: "no rows" (an aggregate with nothing in the window) or
    "error" (a transactions 404 is no answer of the reporting API: a wrong address). `pace` is the
    key of the pace it keeps: requests to endpoints of one key are spaced by that key's interval.
    """

    name: str
    path: str
    span: OneDay | Window
    filters: tuple[Filter, ...]
    not_found: Literal["no rows", "error"]
    pace: str
    _by_param: dict[str, Filter] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_param", {f.param: f for f in self.filters})

    def takes(self, dialect: Dialect) -> tuple[Filter, ...]:
        """The filters `dialect` declares for this endpoint, in the declared order."""
        return tuple(f for f in self.filters if dialect in f.wire)

    def parameters(self, dialect: Dialect) -> tuple[str, ...]:
        """Every query parameter of this endpoint as `dialect` names it: the dates, then the filters."""
        return (*self.span.names, *(f.wire[dialect] for f in self.takes(dialect)))

    def wire(self, dialect: Dialect, params: Mapping[str, str]) -> dict[str, str]:
        """`params` (dates and filters named as the lake names them) as `dialect` names them on the
        wire. A filter this endpoint does not take, or that `dialect` does not declare for it, is a
        ValidationError: the service would ignore it and answer unfiltered numbers."""
        sent: dict[str, str] = {}
        for param, value in params.items():
            if param in self.span.names:
                sent[param] = value
                continue
            declared = self._by_param.get(param)
            if declared is None:
                raise ValidationError(
                    param,
                    f"is not a parameter of {self.name}",
                    f"its parameters are {', '.join(self.parameters('contract'))}",
                )
            if dialect not in declared.wire:
                raise ValidationError(
                    declared.name,
                    f"the {dialect} API does not declare this filter for {self.name} (nothing was sent)",
                    f"it takes {', '.join(f.name for f in self.takes(dialect))}",
                )
            sent[declared.wire[dialect]] = value
        return sent


_WINDOW = Window("clickDateStart", "clickDateEnd")
_TRANSACTION_FILTERS = tuple(_BY_NAME[n] for n in ("campaign_ids", "merchant_group_ids", "program_type"))

ENDPOINTS: Mapping[str, Endpoint] = {
    "transactions": Endpoint(
        "transactions",
        "/v1/reports/transactions",
        OneDay(DATE_FIELDS),
        _TRANSACTION_FILTERS,
        not_found="error",
        pace="transactions",
    ),
    "networks": Endpoint(
        "networks", "/v1/reports/networks", _WINDOW, FILTERS, not_found="no rows", pace="networks"
    ),
    "merchandise": Endpoint(
        "merchandise", "/v1/reports/merchandise", _WINDOW, FILTERS, not_found="no rows", pace="merchandise"
    ),
}
# The endpoint asked once to check that an address answers as the reporting API (a day of it answers
# 200, 400 or 401 there): a request like any other of its lane, in a turn of its pace.
SERVICE_CHECK = ENDPOINTS["transactions"]
# The keys of COMMERCE_REPORTS_PACE: one interval per key, shared by the endpoints that name it.
PACE_KEYS: tuple[str, ...] = tuple(dict.fromkeys(e.pace for e in ENDPOINTS.values()))
