"""Typed request parameters: validated before anything is sent, with messages that say what is allowed.

Dates are `datetime.date` (or ISO strings), id lists are ints, codes are enums. A lower-case country
is upper-cased; a partner product or device may be given by code (`"MBL"`) or word (`"Mobile"`).
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Iterator
from dataclasses import dataclass, fields
from datetime import date, datetime, timedelta
from enum import StrEnum
from typing import Any, Literal

from .errors import ValidationError

__all__ = [
    "MAX_WINDOW_DAYS",
    "DateField",
    "DeviceType",
    "Filters",
    "Grain",
    "PartnerProduct",
    "ProgramType",
    "aggregate_windows",
    "as_date",
    "check_window",
    "day_range",
    "transaction_params",
]

MAX_WINDOW_DAYS = 31
Grain = Literal["day", "month"]
DateField = Literal["updateDate", "commissionDate", "clickDate"]
DATE_FIELDS: tuple[DateField, ...] = ("updateDate", "commissionDate", "clickDate")


class ProgramType(StrEnum):
    """Program-type filter codes: cost per action, cost per click (transactions carry them lower-case)."""

    CPA = "CPA"
    CPC = "CPC"


class PartnerProduct(StrEnum):
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

    @property
    def label(self) -> str:
        return _PARTNER_PRODUCT_LABELS[self]


_PARTNER_PRODUCT_LABELS = {
    PartnerProduct.WRA: "Link",
    PartnerProduct.ORG: "JavaScript",
    PartnerProduct.RAC: "Click API",
    PartnerProduct.RAL: "Link API",
    PartnerProduct.CUP: "Coupon API",
    PartnerProduct.TPA: "Product API",
    PartnerProduct.PCR: "Price Comparison",
    PartnerProduct.TXT: "In-text",
    PartnerProduct.SHG: "Shopping Galleries",
    PartnerProduct.PRF: "Product Feed",
    PartnerProduct.INS: "Insert",
    PartnerProduct.UNK: "Unknown",
}


class DeviceType(StrEnum):
    """Device filter codes; `label` is the word form transactions carry."""

    DSK = "DSK"
    MBL = "MBL"
    TBL = "TBL"
    UKN = "UKN"

    @property
    def label(self) -> str:
        return {"DSK": "Desktop", "MBL": "Mobile", "TBL": "Tablet", "UKN": "Unknown"}[self.value]


def _enum(kind: type[StrEnum], parameter: str, value: Any, labels: dict[str, str]) -> Any:
    if isinstance(value, kind):
        return value
    if isinstance(value, str):
        text = value.strip()
        for member in kind:
            if text.upper() == member.value or text.lower() == labels.get(member.value, "").lower():
                return member
    allowed = ", ".join(f"{m.value} ({labels[m.value]})" if m.value in labels else m.value for m in kind)
    raise ValidationError(parameter, f"{value!r} is not a known code", f"expected one of {allowed}")


def as_date(value: Any, parameter: str = "date") -> date:
    """A `date` from a date, datetime or `YYYY-MM-DD` string; anything else is a ValidationError."""
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    if isinstance(value, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", value.strip()):
        try:
            return date.fromisoformat(value.strip())
        except ValueError:
            raise ValidationError(parameter, f"{value!r} is not a real calendar date") from None
    raise ValidationError(parameter, f"{value!r} is not a date", "give a datetime.date or 'YYYY-MM-DD'")


def _ids(parameter: str, value: Any) -> tuple[int, ...]:
    if value is None:
        return ()
    if isinstance(value, int | str):
        value = [value]
    ids: list[int] = []
    for item in value:
        if isinstance(item, bool) or not isinstance(item, int | str):
            raise ValidationError(parameter, f"{item!r} is not an id", "ids are whole numbers > 0")
        if isinstance(item, str):
            parts = item.split(",")
            if not all(re.fullmatch(r"\d+", p.strip()) for p in parts):
                raise ValidationError(parameter, f"{item!r} is not an id", "ids are whole numbers > 0")
            ids.extend(int(p) for p in parts)
        else:
            ids.append(item)
    for number in ids:
        if number <= 0:
            raise ValidationError(
                parameter, f"id {number} is not greater than 0", "ids are whole numbers > 0"
            )
    return tuple(sorted(set(ids)))


def _strings(parameter: str, value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    items = list(value)
    for item in items:
        if not isinstance(item, str) or not item.strip() or "," in item:
            raise ValidationError(
                parameter,
                f"{item!r} is not a usable value",
                "each value is a non-empty string without commas",
            )
    return tuple(sorted({item.strip() for item in items}))


def _country(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not re.fullmatch(r"[A-Za-z]{2}", value.strip()):
        raise ValidationError(
            "country", f"{value!r} is not a country code", "give a two-letter ISO code like 'US'"
        )
    return value.strip().upper()


# Python name -> service parameter name, in the contract's order.
_PARAM_NAMES = {
    "campaign_ids": "campaignIds",
    "merchant_group_ids": "merchantGroupIds",
    "program_type": "programType",
    "partner_product": "partnerProduct",
    "device_type": "deviceType",
    "country": "country",
    "sub_ids": "subIds",
    "cuids": "cuids",
    "page_utm_source": "pageUtmSource",
    "page_utm_medium": "pageUtmMedium",
    "page_utm_campaign": "pageUtmCampaign",
    "page_utm_term": "pageUtmTerm",
    "page_utm_content": "pageUtmContent",
    "link_utm_source": "linkUtmSource",
    "link_utm_medium": "linkUtmMedium",
    "link_utm_campaign": "linkUtmCampaign",
    "link_utm_term": "linkUtmTerm",
    "link_utm_content": "linkUtmContent",
}


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
        normalise = object.__setattr__
        normalise(self, "campaign_ids", _ids("campaign_ids", self.campaign_ids))
        normalise(self, "merchant_group_ids", _ids("merchant_group_ids", self.merchant_group_ids))
        if self.program_type is not None:
            normalise(self, "program_type", _enum(ProgramType, "program_type", self.program_type, {}))
        if self.partner_product is not None:
            normalise(
                self,
                "partner_product",
                _enum(PartnerProduct, "partner_product", self.partner_product, _labels(PartnerProduct)),
            )
        if self.device_type is not None:
            normalise(
                self,
                "device_type",
                _enum(DeviceType, "device_type", self.device_type, _labels(DeviceType)),
            )
        normalise(self, "country", _country(self.country))
        for name in _PARAM_NAMES:
            if name not in _SCALAR_FILTERS and name not in ("campaign_ids", "merchant_group_ids"):
                normalise(self, name, _strings(name, getattr(self, name)))

    @classmethod
    def of(cls, filters: Filters | None = None, **kwargs: Any) -> Filters:
        """Filters from keyword arguments (merged over `filters`); unknown names are an error."""
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
        """A stable, path-safe name for this filter set: `all` or e.g. `country=US&deviceType=MBL`."""
        return "&".join(f"{k}={v}" for k, v in sorted(self.items())) or "all"

    @classmethod
    def from_canonical(cls, text: str) -> Filters:
        if text == "all":
            return cls()
        by_param = {param: name for name, param in _PARAM_NAMES.items()}
        values: dict[str, Any] = {}
        for part in text.split("&"):
            param, _, value = part.partition("=")
            if param not in by_param:
                raise ValidationError(
                    "slice", f"{param!r} is not a filter", f"filters are {', '.join(by_param)}"
                )
            name = by_param[param]
            values[name] = value if name in _SCALAR_FILTERS else value.split(",")
        return cls(**values)


_SCALAR_FILTERS = ("program_type", "partner_product", "device_type", "country")
FILTER_NAMES: tuple[str, ...] = tuple(_PARAM_NAMES)


def _labels(kind: type[PartnerProduct] | type[DeviceType]) -> dict[str, str]:
    return {m.value: m.label for m in kind}


def transaction_params(
    *,
    click_date: Any = None,
    commission_date: Any = None,
    update_date: Any = None,
    campaign_ids: Any = None,
    merchant_group_ids: Any = None,
    program_type: Any = None,
) -> dict[str, str]:
    """Validated query parameters of a transactions request (one day per date given)."""
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
    if ids := _ids("campaign_ids", campaign_ids):
        params["campaignIds"] = ",".join(map(str, ids))
    if ids := _ids("merchant_group_ids", merchant_group_ids):
        params["merchantGroupIds"] = ",".join(map(str, ids))
    if program_type is not None:
        params["programType"] = _enum(ProgramType, "program_type", program_type, {}).value
    return params


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
            month_end = date(cursor.year, cursor.month, calendar.monthrange(cursor.year, cursor.month)[1])
            step = month_end + timedelta(days=1)
        elif grain is None:
            step = cursor + timedelta(days=MAX_WINDOW_DAYS)
        else:
            raise ValidationError("grain", f"{grain!r} is not a grain", "use 'day', 'month' or None")
        windows.append((cursor, min(step, stop)))
        cursor = min(step, stop)
    return windows
