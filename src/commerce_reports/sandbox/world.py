"""Seeded synthetic history: every click, transaction and return of a site, one click day at a time.

A click day is generated whole (all 24 hours) from a seed derived from (seed, site, day), so it is
the same whatever the clock says; the clock only decides what is visible (`ts <= now`). A click day
holds its clicks and every transaction version they lead to, even those dated days later:

- a transaction's first version has update time = commission time >= click time (by at most
  `LAG_DAYS`);
- a few percent of CPA transactions are returned 1-30 days after the commission, either as a
  second version of the same commissionId with lower revenue (networks marked "adjust") or as a new
  transaction with negative revenue dated the return day (networks marked "separate").

Times are UTC epoch seconds, days are days since 1970-01-01, money is integer cents.
"""

from __future__ import annotations

import itertools
import random
import threading
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from functools import cache, lru_cache
from typing import TYPE_CHECKING

import polars as pl

from .catalog import (
    COUNTRIES,
    COUNTRY_CUM,
    DEVICE_WEIGHTS,
    NETWORKS,
    RETURN_RATE,
    Catalog,
    Product,
    build_catalog,
    derive_seed,
)
from .incidents import Incident, apply_incidents

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "HORIZON_DAYS",
    "LAG_DAYS",
    "RETURN_DAYS",
    "ClickDay",
    "World",
    "current_state",
    "day_number",
    "epoch",
    "generate_day",
]

EARN_RATE = 0.04  # share of clicks that earn a transaction
NO_DETAIL_RATE = 0.03  # transactions served without click detail (contract 2.1 rule 2)
LAG_DAYS = 10  # longest click -> commission delay
RETURN_DAYS = 30  # longest commission -> return delay
HORIZON_DAYS = LAG_DAYS + RETURN_DAYS + 1  # an event dated D comes from a click day in [D - HORIZON, D]

_DAY = 86_400
_EPOCH = date(1970, 1, 1)
_HOURLY = (2, 1, 1, 1, 1, 2, 3, 5, 6, 7, 7, 7, 8, 8, 7, 7, 7, 8, 9, 10, 10, 9, 6, 4)
# One draw per click picks its second of the day, and one its (device, country) pair.
_SECOND_CUM = tuple(itertools.accumulate(_HOURLY[s // 3600] for s in range(_DAY)))
_PLACE_CUM = tuple(
    itertools.accumulate(
        d * (c - (COUNTRY_CUM[i - 1] if i else 0.0))
        for d in DEVICE_WEIGHTS
        for i, c in enumerate(COUNTRY_CUM)
    )
)
_WEEKDAY = (1.0, 1.02, 1.0, 0.98, 0.95, 0.92, 1.08)  # Monday first
_MONTH = (0.85, 0.85, 0.95, 0.95, 1.0, 0.95, 0.95, 0.95, 0.95, 1.0, 1.35, 1.45)

_CLICK_SCHEMA = pl.Schema({"ts": pl.Int64, "link": pl.Int32, "device": pl.Int8, "country": pl.Int16})
_ITEM = pl.Struct(
    {
        "product_id": pl.String,
        "product_name": pl.String,
        "price_cents": pl.Int64,
        "quantity": pl.Int64,
    }
)
_VERSION_SCHEMA = pl.Schema(
    {
        "cid": pl.String(),
        "version": pl.Int8(),
        "click_id": pl.String(),
        "click_ts": pl.Int64(),
        "commission_ts": pl.Int64(),
        "update_ts": pl.Int64(),
        "click_day": pl.Int32(),
        "commission_day": pl.Int32(),
        "update_day": pl.Int32(),
        "link": pl.Int32(),
        "device": pl.Int8(),
        "country": pl.Int16(),
        "order_cents": pl.Int64(),
        "revenue_cents": pl.Int64(),
        "is_return": pl.Boolean(),  # a return: adjusted down, or a separate negative transaction
        "detail": pl.Boolean(),  # click detail is served
        "items": pl.List(_ITEM),
    }
)


def day_number(d: date) -> int:
    return (d - _EPOCH).days


def epoch(moment: datetime) -> int:
    return int(moment.timestamp())


def rhythm(d: date) -> float:
    """Traffic factor of a day: weekday and season (November and December are busiest)."""
    return _WEEKDAY[d.weekday()] * _MONTH[d.month - 1]


@dataclass(frozen=True)
class ClickDay:
    """Everything caused by the clicks of one day: the clicks and all transaction versions."""

    clicks: pl.DataFrame
    versions: pl.DataFrame


class _Builder:
    """Draws the transactions of one click day (a helper so the rows build up in one place)."""

    def __init__(self, catalog: Catalog, day: date, rng: random.Random) -> None:
        self.catalog = catalog
        self.rng = rng
        self.prefix = _prefix(catalog, day)
        self.rows: list[dict[str, object]] = []

    def add(self, seq: int, click_ts: int, link: int, device: int, country: int) -> None:
        rng = self.rng
        merchant = self.catalog.merchants[self.catalog.links[link].merchant]
        click = {
            "click_id": f"ck{self.prefix}{seq:06d}",
            "click_ts": click_ts,
            "click_day": click_ts // _DAY,
            "link": link,
            "device": device,
            "country": country,
            "detail": rng.random() >= NO_DETAIL_RATE,
        }
        cid = f"{self.prefix}{len(self.rows):05d}"
        if merchant.program == "cpc":
            revenue = max(1, round(merchant.cpc_cents * rng.uniform(0.8, 1.2)))
            self._row(click, cid, 0, click_ts, click_ts, 0, revenue, [])
            return
        commission_ts = click_ts + self._lag()
        items: list[tuple[Product, int]] = []
        if merchant.products and rng.random() < 0.75:
            for product in rng.sample(merchant.products, rng.choice((1, 1, 1, 2, 2, 3))):
                items.append((product, rng.choice((1, 1, 1, 1, 2, 3))))
            order = sum(product.price_cents * quantity for product, quantity in items)
        else:
            order = max(199, round(merchant.avg_order_cents * rng.lognormvariate(0, 0.5)))
        revenue = max(1, round(order * merchant.rate))
        self._row(click, cid, 0, commission_ts, commission_ts, order, revenue, items)
        if rng.random() >= RETURN_RATE:
            return
        return_ts = commission_ts + rng.randint(_DAY, RETURN_DAYS * _DAY)
        if NETWORKS[merchant.network] == "adjust":
            kept = rng.choice((0.0, 0.0, rng.uniform(0.2, 0.8), -rng.uniform(0.1, 0.3)))
            order, revenue = round(order * max(kept, 0.0)), round(revenue * kept)
            self._row(click, cid, 1, commission_ts, return_ts, order, revenue, items, True)
        else:
            share = rng.choice((1.0, 1.0, rng.uniform(0.3, 0.9)))
            order, revenue = -round(order * share), -max(1, round(revenue * share))
            self._row(click, f"{cid}9", 0, return_ts, return_ts, order, revenue, items, True)

    def _lag(self) -> int:
        """Seconds from click to commission: mostly within hours, a tail of up to `LAG_DAYS`."""
        draw = self.rng.random()
        if draw < 0.65:
            return self.rng.randint(60, 3 * 3600)
        if draw < 0.9:
            return self.rng.randint(3 * 3600, 2 * _DAY)
        return self.rng.randint(2 * _DAY, LAG_DAYS * _DAY)

    def _row(
        self,
        click: dict[str, object],
        cid: str,
        version: int,
        commission_ts: int,
        update_ts: int,
        order: int,
        revenue: int,
        items: list[tuple[Product, int]],
        is_return: bool = False,
    ) -> None:
        self.rows.append(
            {
                **click,
                "cid": cid,
                "version": version,
                "commission_ts": commission_ts,
                "update_ts": update_ts,
                "commission_day": commission_ts // _DAY,
                "update_day": update_ts // _DAY,
                "order_cents": order,
                "revenue_cents": revenue,
                "is_return": is_return,
                "items": [
                    {
                        "product_id": p.product_id,
                        "product_name": p.name,
                        "price_cents": p.price_cents,
                        "quantity": q,
                    }
                    for p, q in items
                ],
            }
        )


def _prefix(catalog: Catalog, day: date) -> str:
    """What the ids of a site's click day start with (click `ck<prefix><n>` is the day's n-th click)."""
    return f"{derive_seed(catalog.site) % 900 + 100}{day:%y%m%d}"


def _with_incidents(day: ClickDay, catalog: Catalog, on: date, incidents: tuple[Incident, ...]) -> ClickDay:
    """The click day as the incidents change it (the clicks numbered as their ids say)."""
    ids = pl.lit(f"ck{_prefix(catalog, on)}") + pl.int_range(pl.len()).cast(pl.String).str.zfill(6)
    clicks, versions = apply_incidents(
        day.clicks.with_columns(click_id=ids), day.versions, catalog, on, incidents
    )
    return ClickDay(clicks.drop("click_id").sort("ts"), versions)


@cache
def _weights() -> tuple[np.ndarray, np.ndarray]:
    """`_SECOND_CUM` and `_PLACE_CUM` as numpy arrays, made on first use: numpy loads in a process
    that generates a day, not in every one that imports the sandbox."""
    import numpy as np

    return np.asarray(_SECOND_CUM, dtype=np.float64), np.asarray(_PLACE_CUM, dtype=np.float64)


def _draws(rng: random.Random, cum_weights: np.ndarray, k: int) -> np.ndarray:
    """`rng.choices(range(len(cum_weights)), cum_weights=cum_weights, k=k)` draw for draw, leaving
    `rng` in the same state, five times faster (they were most of a day's generation): numpy's
    MT19937 is Python's generator and makes its doubles from the same two words, so it takes over
    `rng`'s state, draws the `k` doubles and hands the state back; `searchsorted` is `bisect_right`."""
    import numpy as np

    version, words, gauss = rng.getstate()
    bits = np.random.MT19937()
    key = np.array(words[:-1], dtype=np.uint32)
    bits.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": words[-1]}}
    doubles = np.random.Generator(bits).random(k)
    after = bits.state["state"]
    rng.setstate((version, (*after["key"].tolist(), int(after["pos"])), gauss))
    picks: np.ndarray = np.searchsorted(cum_weights[:-1], doubles * cum_weights[-1], side="right")
    return picks


def generate_day(catalog: Catalog, seed: int, day: date, transactions_per_day: int) -> ClickDay:
    """All clicks of `day` for one site and the transaction versions they cause."""
    rng = random.Random(derive_seed(seed, catalog.site, day.isoformat()))
    mean = transactions_per_day / EARN_RATE * rhythm(day)
    n = max(0, round(rng.gauss(mean, mean * 0.08)))
    start = day_number(day) * _DAY
    import numpy as np

    second_cum, place_cum = _weights()
    seconds = np.sort(_draws(rng, second_cum, n))
    links = _draws(rng, np.asarray(catalog.link_cum, dtype=np.float64), n)
    places = _draws(rng, place_cum, n)
    columns = {
        "ts": seconds + start,
        "link": links,
        "device": places // len(COUNTRIES),
        "country": places % len(COUNTRIES),
    }
    clicks = pl.DataFrame(columns, schema=_CLICK_SCHEMA)
    ts, link, device, country = (column.tolist() for column in columns.values())
    earning = max(0, min(n, round(rng.gauss(n * EARN_RATE, (n * EARN_RATE) ** 0.5))))
    builder = _Builder(catalog, day, rng)
    for i in sorted(rng.sample(range(n), earning)):
        builder.add(i, ts[i], link[i], device[i], country[i])
    versions = pl.DataFrame(builder.rows, schema=_VERSION_SCHEMA)
    return ClickDay(clicks, versions)


@lru_cache(maxsize=32)
def _catalog(seed: int, site: str) -> Catalog:
    return build_catalog(seed, site)


# Days are pure functions of their key, so every sandbox of the process shares one cache (an
# incident is part of the key of the days it changes only: the others are the ordinary world's).
# 1,024 days (both sites of a sandbox over 17 months, or several sandboxes of a test run) hold at
# most ~120 MB at 200 transactions a day (~230 MB at the default 400).
@lru_cache(maxsize=1024)
def _cached_day(
    seed: int, site: str, day: date, transactions_per_day: int, incidents: tuple[Incident, ...]
) -> ClickDay:
    if incidents:
        return _with_incidents(
            _cached_day(seed, site, day, transactions_per_day, ()), _catalog(seed, site), day, incidents
        )
    return generate_day(_catalog(seed, site), seed, day, transactions_per_day)


# One day is generated once: the requests of a sync's lanes ask for the same days at the same time,
# and each would build its own copy (pure Python, so one at a time gives up no parallelism).
_generating = threading.Lock()


class World:
    """The history of every site under one seed, generated lazily and cached per (site, day), as
    the `incidents` (none: the ordinary world) change it."""

    def __init__(
        self,
        seed: int,
        sites: tuple[str, ...],
        first_day: date,
        transactions_per_day: int,
        incidents: tuple[Incident, ...] = (),
    ) -> None:
        self.seed = seed
        self.first_day = first_day
        self.transactions_per_day = transactions_per_day
        self.sites = sites
        self.incidents = incidents

    def _click_day(self, site: str, day: date) -> ClickDay:
        changing = tuple(i for i in self.incidents if i.applies(site, day))
        with _generating:
            return _cached_day(self.seed, site, day, self.transactions_per_day, changing)

    def catalog(self, site: str) -> Catalog:
        if site not in self.sites:
            raise KeyError(f"unknown sandbox site {site!r}; sites are {', '.join(self.sites)}")
        return _catalog(self.seed, site)

    def _days(self, site: str, first: date, last: date, now: datetime) -> list[ClickDay]:
        first = max(first, self.first_day)
        last = min(last, now.date())
        return [self._click_day(site, first + timedelta(n)) for n in range((last - first).days + 1)]

    def clicks(self, site: str, first: date, last: date, now: datetime) -> pl.DataFrame:
        """Clicks of click days `first`..`last` (inclusive) that happened by `now`."""
        frames = [d.clicks for d in self._days(site, first, last, now)]
        if not frames:
            return pl.DataFrame(schema=_CLICK_SCHEMA)
        return pl.concat(frames).filter(pl.col("ts") <= epoch(now))

    def versions(self, site: str, first: date, last: date, now: datetime) -> pl.DataFrame:
        """Transaction versions from click days `first`..`last` that exist by `now`."""
        frames = [d.versions for d in self._days(site, first, last, now)]
        if not frames:
            return pl.DataFrame(schema=_VERSION_SCHEMA)
        return pl.concat(frames).filter(pl.col("update_ts") <= epoch(now))


def current_state(versions: pl.DataFrame) -> pl.DataFrame:
    """The latest version of each transaction among `versions` (already limited to `now`)."""
    return versions.sort("cid", "version").unique(subset="cid", keep="last", maintain_order=True)
