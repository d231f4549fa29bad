"""Incidents: a change staged in the sandbox's world, so that alerts can be tried end to end.

An incident has a scope (a site, a network, a device, a country: any of them, all by default),
click days (`from`, and `until` included, or ongoing) and one or more changes, each a percentage:

- `epc=-50%`: each transaction of a click in scope pays half (a cut commission rate): revenue and
  EPC fall by half; clicks, orders and conversion stay (-100% to +900%);
- `conversion=-50%`: each earning click in scope keeps its order with probability 50% (broken
  tracking); with +50% it earns a second one with probability 50%: orders, revenue, conversion
  and EPC move together; clicks stay (-100% to +100%);
- `revenue=-50%`: each click in scope is kept with probability 50%, with its orders (a lost
  placement); with +50% it comes twice with probability 50%: clicks, orders and revenue move
  together; EPC and conversion stay (-100% to +100%).

Written as `commerce-reports sandbox --incident` takes it:

    network=Foxglove Network,from=2026-11-10,epc=-80%
    site=alpha,device=Mobile,country=GB,from=2026-11-01,until=2026-11-07,conversion=-30%

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

# What an incident may change, and the range of each change (as a fraction).
CHANGES: dict[str, tuple[float, float]] = {
    "revenue": (-1.0, 1.0),
    "epc": (-1.0, 9.0),
    "conversion": (-1.0, 1.0),
}
_SCOPE = ("site", "network", "device", "country")
_SYNTAX = (
    "write KEY=VALUE pairs separated by commas: scope (site=, network=, device=, country=), "
    "from=YYYY-MM-DD (required), until=YYYY-MM-DD, and changes revenue=, epc=, conversion= as "
    "percentages, e.g. 'network=Foxglove Network,from=2026-11-10,epc=-80%'"
)


@dataclass(frozen=True)
class Incident:
    """A change of the world over click days `first`..`last` (None: ongoing) for the clicks in
    scope (None: any site, network, device or country). `changes` maps revenue/epc/conversion
    to a fraction: -0.5 is -50%."""

    first: date
    changes: tuple[tuple[str, float], ...]
    last: date | None = None
    site: str | None = None
    network: str | None = None
    device: str | None = None  # a label: Mobile, Desktop, Tablet, Unknown
    country: str | None = None  # ISO alpha-2, upper case

    def __post_init__(self) -> None:
        if not self.changes:
            raise ValidationError("incident", "no change", "give at least one of revenue=, epc=, conversion=")
        for name, fraction in self.changes:
            low, high = CHANGES.get(name, (0.0, -1.0))
            if name not in CHANGES:
                raise ValidationError("incident", f"{name!r} is not a change", f"use {', '.join(CHANGES)}")
            if not low <= fraction <= high or (name == "epc" and fraction == low):
                raise ValidationError(
                    "incident", f"{name}={fraction:+.0%} is out of range", f"give {low:+.0%} to {high:+.0%}"
                )
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
    if incident.network is not None:
        links = catalog.link_frame.filter(pl.col("network") == incident.network)["link"]
        chosen = chosen & pl.col("link").is_in(links.implode())
    if incident.device is not None:
        index = [d or "Unknown" for d in DEVICES].index(incident.device)
        chosen = chosen & (pl.col("device") == index)
    if incident.country is not None:
        chosen = chosen & (pl.col("country") == COUNTRIES.index(incident.country.lower()))
    return frame.select(chosen.alias("in_scope"))["in_scope"]


def _draws(incident: Incident, site: str, day: date, what: str, n: int) -> pl.Series:
    import polars as pl

    from .catalog import derive_seed

    rng = random.Random(derive_seed(str(incident), site, day.isoformat(), what))
    return pl.Series([rng.random() for _ in range(n)], dtype=pl.Float64)


def apply_incidents(
    clicks: pl.DataFrame, versions: pl.DataFrame, catalog: Catalog, day: date, incidents: tuple[Incident, ...]
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """One click day's clicks (with `click_id`) and transaction versions as the incidents change
    them (each with draws of its own, so the ordinary world's draws are untouched)."""
    import polars as pl

    for incident in incidents:
        if not incident.applies(catalog.site, day):
            continue
        for name, fraction in incident.changes:
            if name == "epc":
                versions = versions.with_columns(
                    revenue_cents=pl.when(_in_scope(incident, versions, catalog))
                    .then((pl.col("revenue_cents") * (1 + fraction)).round().cast(pl.Int64))
                    .otherwise(pl.col("revenue_cents"))
                )
            elif name == "revenue":  # clicks lost (or doubled), with their orders
                picked = _picked(incident, catalog, day, clicks, "clicks", fraction)
                twin = {"click_id": pl.col("click_id") + "b"}
                clicks = _resampled(clicks, picked, fraction, twin)
                versions = _resampled(versions, picked, fraction, {**twin, "cid": pl.col("cid") + "8"})
            else:  # orders lost (or doubled): the clicks stay
                earning = versions.select("click_id", "link", "device", "country").unique("click_id")
                picked = _picked(incident, catalog, day, earning, "orders", fraction)
                versions = _resampled(versions, picked, fraction, {"cid": pl.col("cid") + "8"})
    return clicks, versions


def _picked(
    incident: Incident, catalog: Catalog, day: date, units: pl.DataFrame, what: str, fraction: float
) -> pl.Series:
    """The click ids of `units` (clicks, or one row per earning click) in scope that the change
    draws, each with probability |fraction|."""
    units = units.sort("click_id")
    draws = _draws(incident, catalog.site, day, what, units.height)
    return units.filter(_in_scope(incident, units, catalog) & (draws < abs(fraction)))["click_id"]


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
