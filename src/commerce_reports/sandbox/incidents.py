"""Incidents: a change staged in the sandbox's world, so that alerts can be tried end to end.

An incident has a scope (a site, a network, a merchant, a link, a device, a country: any of them,
all by default), click days (`from`, and `until` included, or ongoing) and one or more changes, each
a percentage:

- `epc=-50%`: each transaction of a click in scope pays half (a cut commission rate): revenue and
  EPC fall by half; clicks, orders and conversion stay (-100% to +900%);
- `conversion=-50%`: each earning click in scope keeps its order with probability 50% (broken
  tracking); with +50% it earns a second one with probability 50%: orders, revenue, conversion
  and EPC move together; clicks stay (-100% to +100%);
- `revenue=-50%`: each click in scope is kept with probability 50%, with its orders (a lost
  placement); with +50% it comes twice with probability 50%: clicks, orders and revenue move
  together; EPC and conversion stay (-100% to +100%);
- `clicks=+100%`: each click in scope brings one more that never earns (bots, a double-counting
  tracker): clicks double, orders and revenue stay, EPC and conversion halve (up to +900%);
- `returns=+300%`: four times as many of the orders in scope are returned (a faulty product, a
  reversal of fraud): each CPA order not returned already is returned with the probability that
  makes it so, 1 to 3 days after its commission, as its network reports returns (up to +900%).

A merchant that stops paying is `merchant=<name or group id>,conversion=-100%` (its clicks go on,
its commissions stop); a link that stops converting is `link=<url>,conversion=-100%`.

Written as `commerce-reports sandbox --incident` takes it:

    network=Foxglove Network,from=2026-11-10,epc=-80%
    site=alpha,device=Mobile,country=GB,from=2026-11-01,until=2026-11-07,conversion=-30%
    merchant=Acorn Home,from=2026-11-10,conversion=-100%

The world applies an incident to each click day it generates, after the day is drawn, so that every
endpoint (transactions, networks, merchandise, the ground truth) sees the same changed world, and
the days outside it are those of the ordinary world, draw for draw.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING

from ..errors import ValidationError

if TYPE_CHECKING:  # the world's side loads polars; writing and checking an incident does not
    import polars as pl

    from .catalog import Catalog

__all__ = ["CHANGES", "Incident", "apply_incidents"]

# What an incident may change, and the range of each change (as a fraction); a change at a bound
# of `OPEN_BELOW` is refused (an order paying nothing, or no click or return added, is no change).
CHANGES: dict[str, tuple[float, float]] = {
    "revenue": (-1.0, 1.0),
    "epc": (-1.0, 9.0),
    "conversion": (-1.0, 1.0),
    "clicks": (0.0, 9.0),
    "returns": (0.0, 9.0),
}
OPEN_BELOW = frozenset({"epc", "clicks", "returns"})
_SCOPE = ("site", "network", "merchant", "link", "device", "country")
_SYNTAX = (
    "write KEY=VALUE pairs separated by commas: scope (site=, network=, merchant=, link=, device=, "
    "country=), from=YYYY-MM-DD (required), until=YYYY-MM-DD, and changes revenue=, epc=, "
    "conversion=, clicks=, returns= as percentages, e.g. 'network=Foxglove Network,from=2026-11-10,epc=-80%'"
)
_RETURN_LAG_DAYS = (1, 3)  # an incident's extra returns: this many days after their commission


@dataclass(frozen=True)
class Incident:
    """A change of the world over click days `first`..`last` (None: ongoing) for the clicks in
    scope (None: any site, network, merchant, link, device or country). `changes` maps revenue,
    epc, conversion, clicks or returns to a fraction: -0.5 is -50%. `merchant` is a merchant
    group's name or id, `link` a link's URL (checked against the world by `SandboxConfig`)."""

    first: date
    changes: tuple[tuple[str, float], ...]
    last: date | None = None
    site: str | None = None
    network: str | None = None
    merchant: str | None = None
    link: str | None = None
    device: str | None = None  # a label: Mobile, Desktop, Tablet, Unknown
    country: str | None = None  # ISO alpha-2, upper case

    def __post_init__(self) -> None:
        if not self.changes:
            raise ValidationError("incident", "no change", f"give at least one of {', '.join(CHANGES)}")
        for name, fraction in self.changes:
            low, high = CHANGES.get(name, (0.0, -1.0))
            if name not in CHANGES:
                raise ValidationError("incident", f"{name!r} is not a change", f"use {', '.join(CHANGES)}")
            if not low <= fraction <= high or (name in OPEN_BELOW and fraction == low):
                span = (  # (-100% epc: nothing left to halve)
                    f"more than {low:+.0%}, up to {high:+.0%}"
                    if name in OPEN_BELOW
                    else f"{low:+.0%} to {high:+.0%}"
                )
                raise ValidationError("incident", f"{name}={fraction:+.0%} is out of range", f"give {span}")
        from .catalog import COUNTRIES, DEVICES

        if self.last is not None and self.last < self.first:
            raise ValidationError("incident", f"until {self.last} is before from {self.first}", "swap them")
        if self.device is not None and self.device not in {d or "Unknown" for d in DEVICES}:
            raise ValidationError(
                "incident", f"device {self.device!r} is unknown", "use Mobile, Desktop, Tablet"
            )
        if self.country is not None and self.country.lower() not in COUNTRIES:
            raise ValidationError(
                "incident",
                f"country {self.country!r} is not in the sandbox",
                "give an ISO alpha-2 code, e.g. GB",
            )

    @classmethod
    def parse(cls, text: str) -> Incident:
        """An incident from its written form (see the module docstring), or a ValidationError."""
        if not isinstance(text, str) or not text.strip():
            raise ValidationError("incident", f"{text!r} is empty", _SYNTAX)
        fields: dict[str, str] = {}
        for part in text.split(","):
            name, sep, value = part.partition("=")
            name, value = name.strip().lower(), value.strip()
            if not sep or not value or name in fields:
                raise ValidationError("incident", f"{part.strip()!r} is not one KEY=VALUE pair", _SYNTAX)
            fields[name] = value
        unknown = sorted(set(fields) - {*_SCOPE, "from", "until", *CHANGES})
        if unknown:
            raise ValidationError("incident", f"{unknown[0]!r} is not a key (in {text!r})", _SYNTAX)
        if "from" not in fields:
            raise ValidationError("incident", f"from= is missing (in {text!r})", _SYNTAX)
        return cls(
            first=_day(fields["from"]),
            last=_day(fields["until"]) if "until" in fields else None,
            changes=tuple((name, _percent(name, fields[name])) for name in CHANGES if name in fields),
            site=fields.get("site"),
            network=fields.get("network"),
            merchant=fields.get("merchant"),
            link=fields.get("link"),
            device=_device(fields["device"]) if "device" in fields else None,
            country=fields["country"].upper() if "country" in fields else None,
        )

    def __str__(self) -> str:
        scope = [f"{name}={getattr(self, name)}" for name in _SCOPE if getattr(self, name)]
        days = [f"from={self.first}"] + ([f"until={self.last}"] if self.last else [])
        return ",".join([*scope, *days, *(f"{n}={f * 100:+g}%" for n, f in self.changes)])

    def applies(self, site: str, day: date) -> bool:
        """True when the incident may change `site`'s click day `day`."""
        return (self.site in (None, site)) and self.first <= day and (self.last is None or day <= self.last)


def _day(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise ValidationError("incident", f"{text!r} is not a date", "write YYYY-MM-DD") from None


def _percent(name: str, text: str) -> float:
    try:
        return float(text.removesuffix("%").strip()) / 100
    except ValueError:
        raise ValidationError("incident", f"{name}={text!r} is not a percentage", "write e.g. -50%") from None


def _device(text: str) -> str:
    from .catalog import DEVICE_CODES, DEVICES

    for label, code in zip(DEVICES, DEVICE_CODES, strict=True):
        if text.lower() in ((label or "Unknown").lower(), code.lower()):
            return label or "Unknown"
    raise ValidationError("incident", f"device {text!r} is unknown", "use Mobile, Desktop, Tablet or Unknown")


def _in_scope(incident: Incident, frame: pl.DataFrame, catalog: Catalog) -> pl.Series:
    """Which rows (clicks or transaction versions) of `frame` the incident's scope holds."""
    import polars as pl

    from .catalog import COUNTRIES, DEVICES

    chosen = pl.lit(True)
    links = catalog.link_frame
    if incident.network is not None:
        links = links.filter(pl.col("network") == incident.network)
    if incident.merchant is not None:
        links = links.filter(
            (pl.col("merchant_group_name") == incident.merchant)
            | (pl.col("merchant_group_id").cast(pl.String) == incident.merchant)
        )
    if incident.link is not None:
        links = links.filter(pl.col("link_url") == incident.link)
    if links.height < catalog.link_frame.height:
        chosen = chosen & pl.col("link").is_in(links["link"].implode())
    if incident.device is not None:
        index = [d or "Unknown" for d in DEVICES].index(incident.device)
        chosen = chosen & (pl.col("device") == index)
    if incident.country is not None:
        chosen = chosen & (pl.col("country") == COUNTRIES.index(incident.country.lower()))
    return frame.select(chosen.alias("in_scope"))["in_scope"]


@dataclass(frozen=True)
class _Staging:
    """An incident being applied to one click day of one site (its catalog)."""

    incident: Incident
    catalog: Catalog
    day: date

    def draws(self, what: str, n: int) -> pl.Series:
        """`n` uniform draws of the incident's own for `what` on this site and day (the ordinary
        world's draws are untouched)."""
        import polars as pl

        from .catalog import derive_seed

        seed = derive_seed(str(self.incident), self.catalog.site, self.day.isoformat(), what)
        rng = random.Random(seed)
        return pl.Series([rng.random() for _ in range(n)], dtype=pl.Float64)

    def scoped(self, frame: pl.DataFrame) -> pl.Series:
        """Which rows of `frame` (clicks or transaction versions) the incident's scope holds."""
        return _in_scope(self.incident, frame, self.catalog)


def apply_incidents(
    clicks: pl.DataFrame, versions: pl.DataFrame, catalog: Catalog, day: date, incidents: tuple[Incident, ...]
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """One click day's clicks (with `click_id`) and transaction versions as the incidents change
    them (each with draws of its own, so the ordinary world's draws are untouched)."""
    for incident in incidents:
        if not incident.applies(catalog.site, day):
            continue
        for name, fraction in incident.changes:
            clicks, versions = _CHANGERS[name](_Staging(incident, catalog, day), clicks, versions, fraction)
    return clicks, versions


_Frames = tuple["pl.DataFrame", "pl.DataFrame"]


def _paid(at: _Staging, clicks: pl.DataFrame, versions: pl.DataFrame, fraction: float) -> _Frames:
    """Each transaction in scope pays `fraction` more (or less): a changed commission rate."""
    import polars as pl

    changed = pl.when(at.scoped(versions)).then(
        (pl.col("revenue_cents") * (1 + fraction)).round().cast(pl.Int64)
    )
    return clicks, versions.with_columns(revenue_cents=changed.otherwise(pl.col("revenue_cents")))


def _visits(at: _Staging, clicks: pl.DataFrame, versions: pl.DataFrame, fraction: float) -> _Frames:
    """Clicks lost (or doubled) with their orders: a lost (or a new) placement."""
    import polars as pl

    picked = _picked(at, clicks, "clicks", fraction)
    twin = {"click_id": pl.col("click_id") + "b"}
    clicks = _resampled(clicks, picked, fraction, twin)
    return clicks, _resampled(versions, picked, fraction, {**twin, "cid": pl.col("cid") + "8"})


def _orders(at: _Staging, clicks: pl.DataFrame, versions: pl.DataFrame, fraction: float) -> _Frames:
    """Orders lost (or doubled), the clicks staying: broken tracking, a paused programme."""
    import polars as pl

    earning = versions.select("click_id", "link", "device", "country").unique("click_id")
    picked = _picked(at, earning, "orders", fraction)
    return clicks, _resampled(versions, picked, fraction, {"cid": pl.col("cid") + "8"})


def _idle_clicks(at: _Staging, clicks: pl.DataFrame, versions: pl.DataFrame, fraction: float) -> _Frames:
    """Clicks that never earn added: each click in scope brings `int(fraction)` more, and one more
    with probability `fraction % 1` (ids of their own; orders and revenue stay)."""
    import polars as pl

    ordered = clicks.sort("click_id")
    scoped = ordered.filter(at.scoped(ordered))
    whole, part = int(fraction), fraction - int(fraction)
    extra = [scoped.with_columns(click_id=pl.col("click_id") + f"c{n}") for n in range(whole)]
    if part > 0:
        draws = at.draws("idle clicks", scoped.height)
        extra.append(scoped.filter(draws < part).with_columns(click_id=pl.col("click_id") + f"c{whole}"))
    return pl.concat([clicks, *extra]), versions


def _returned(at: _Staging, clicks: pl.DataFrame, versions: pl.DataFrame, fraction: float) -> _Frames:
    """More returns: each CPA order in scope not returned yet is returned with the probability
    that makes `1 + fraction` times the ordinary share, `_RETURN_LAG_DAYS` after its commission, as
    its network reports returns (a lowered second version, or a separate negative transaction)."""
    import polars as pl

    from .catalog import NETWORKS, RETURN_RATE

    returned = versions.filter(pl.col("is_return"))["click_id"]
    orders = (
        versions.filter((pl.col("version") == 0) & ~pl.col("is_return"))
        .filter(~pl.col("click_id").is_in(returned.implode()))
        .join(at.catalog.link_frame.select("link", "network", "program_type"), on="link")
        .filter(pl.col("program_type") == "cpa")
        .sort("cid")
    )
    orders = orders.filter(at.scoped(orders))
    chance = min(1.0, fraction * RETURN_RATE / (1 - RETURN_RATE))
    draws = at.draws("returns", orders.height)
    low, high = _RETURN_LAG_DAYS
    lags = at.draws("return lags", orders.height) * (high - low) + low
    picked = orders.filter(draws < chance).with_columns(
        update_ts=pl.col("commission_ts") + (lags.filter(draws < chance) * 86_400).cast(pl.Int64),
        is_return=pl.lit(True),
    )
    adjusted = pl.col("network").replace_strict(NETWORKS, return_dtype=pl.String) == "adjust"
    lowered = picked.filter(adjusted).with_columns(
        version=pl.lit(1, pl.Int8), order_cents=pl.lit(0, pl.Int64), revenue_cents=pl.lit(0, pl.Int64)
    )
    separate = picked.filter(~adjusted).with_columns(
        cid=pl.col("cid") + "9",
        commission_ts=pl.col("update_ts"),
        order_cents=-pl.col("order_cents"),
        revenue_cents=-pl.col("revenue_cents"),
    )
    new = pl.concat([lowered, separate]).with_columns(
        commission_day=(pl.col("commission_ts") // 86_400).cast(pl.Int32),
        update_day=(pl.col("update_ts") // 86_400).cast(pl.Int32),
    )
    return clicks, pl.concat([versions, new.select(versions.columns)])


_CHANGERS = {
    "epc": _paid,
    "revenue": _visits,
    "conversion": _orders,
    "clicks": _idle_clicks,
    "returns": _returned,
}


def _picked(at: _Staging, units: pl.DataFrame, what: str, fraction: float) -> pl.Series:
    """The click ids of `units` (clicks, or one row per earning click) in scope that the change
    draws, each with probability |fraction|."""
    units = units.sort("click_id")
    draws = at.draws(what, units.height)
    return units.filter(at.scoped(units) & (draws < abs(fraction)))["click_id"]


def _resampled(
    frame: pl.DataFrame, picked: pl.Series, fraction: float, twin: dict[str, pl.Expr]
) -> pl.DataFrame:
    """`frame` without the rows of the picked clicks (a fall), or with a twin of each (a rise:
    `twin` gives it ids of its own)."""
    import polars as pl

    chosen = pl.col("click_id").is_in(picked.implode())
    if fraction < 0:
        return frame.filter(~chosen)
    return pl.concat([frame, frame.filter(chosen).with_columns(**twin)])
