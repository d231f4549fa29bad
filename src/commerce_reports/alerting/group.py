"""Alerts grouped under the cause that explains them, from the ledger's transactions.

When 70% of a site's mobile orders vanish, the site, its countries and its networks fall too: one
cause, many alerts. For each alert (a member) and each key with alerts of its own (a candidate
cause), the member's change over its span against the mean of its latest baseline weeks (at the
same age, as the alerts judge it) is split by the candidate's slice:

- the candidate *explains* the member when its slice holds at least half of the member's change
  and moved apart from the rest of the member, relative to their sizes, by at least a third of
  its own move (when mobile orders vanish, Mobile fell 70% and the rest of the site not at all:
  Mobile explains the site; the United States fell as much as the rest: they do not; a link that
  stopped explains its merchant's fall however large a part of the merchant it is), or when it is
  most of the member and holds most of its change (a merchant that is 90% of its network);
- a candidate that holds the whole member (the site holds each network; a merchant, its links)
  explains it unless the member explains the candidate as above (a link that stopped explains its
  merchant's fall; a merchant that stopped explains its links');
- clicks are counted per slice, never per cross of two: a merchant's surge is split by its
  network (it lies wholly in it), and a device's or a country's is explained by the network that
  explains the site's surge (a network whose clicks doubled).

Causes are chosen greedily, the one explaining most alerts first (the narrower on a tie), until
every alert has a group. A group's driver is the factor of revenue that moved its cause most
(clicks, conversion, orders or the typical order's value: a network whose clicks doubled while its
orders held is driven by clicks, not by the conversion that halved with them), its headline the
cause's alert on that factor, and its broadest member's change is decomposed
(`drivers.decompose`) to name the largest contributors.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import date
from typing import TYPE_CHECKING, Any

import polars as pl

from .alert import Alert, AlertGroup
from .detect import RECENT_WEEKS
from .drivers import decompose
from .judge import Judgement
from .series import SCOPE_KEYS, SITE_SCOPE

if TYPE_CHECKING:
    from ..db.readonly import Connection

__all__ = ["group_alerts"]

_MOST, _MOSTLY, _WHOLE, _APART = 0.5, 0.8, 0.95, 0.1
_NARROW = {SITE_SCOPE: 0, "network": 1, "device": 1, "country": 1, "merchant": 2, "link": 3}
_DIMENSIONS = ("device", "country", "network", "merchant", "link")
_BASIS = {
    "revenue": "revenue",
    "order_value": "revenue",
    "epc": "revenue",
    "orders": "orders",
    "conversion_rate": "orders",
    "returns": "returns",
    "clicks": "clicks",
}
_BY_CLICK = frozenset({"epc", "conversion_rate", "clicks"})
_CLICKED = frozenset({SITE_SCOPE, "network", "device", "country", "merchant"})


def group_alerts(con: Connection, judgement: Judgement) -> list[AlertGroup]:
    """The change alerts of `judgement` in groups, the largest revenue at stake first."""
    if not judgement.alerts or judgement.window is None:
        return []
    sites = sorted({alert.site for alert in judgement.alerts})
    rows = _ledger_rows(con, sites, *judgement.window.bounds)
    groups: list[AlertGroup] = []
    for site in sites:
        ledger = _Ledger(
            rows.filter(pl.col("site") == site),
            judgement.clicks.filter(pl.col("site") == site)
            if not judgement.clicks.is_empty()
            else judgement.clicks,
        )
        groups += _groups([a for a in judgement.alerts if a.site == site], ledger)
    return sorted(
        groups, key=lambda g: (-abs(g.explained.at_stake or 0.0), -abs(g.cause.z or 0.0), g.cause.site)
    )


def _ledger_rows(con: Connection, sites: list[str], start: date, end: date) -> pl.DataFrame:
    """The transactions of `sites` committed or clicked in start..end, with each scope's key."""
    keys = ", ".join(
        f"({sql})::VARCHAR AS {scope}" for scope, sql in SCOPE_KEYS.items() if scope != SITE_SCOPE
    )
    names = ", ".join(f"$site_{n}" for n in range(len(sites)))
    params: dict[str, Any] = {"start": start, "end": end, **{f"site_{n}": s for n, s in enumerate(sites)}}
    frame: pl.DataFrame = con.sql(
        f"""SELECT site, commission_date, click_date, first_update_date, update_date,
       publisher_net_revenue::DOUBLE AS revenue, original_revenue::DOUBLE AS original, returned, {keys}
FROM transactions WHERE site IN ({names})
  AND (commission_date BETWEEN $start AND $end OR click_date BETWEEN $start AND $end)""",
        params=params,
    ).pl()
    return frame


@dataclass(frozen=True)
class _Sums:
    """A slice's figure over an alert's span (`now`) and the mean of its baseline weeks (`before`)."""

    now: float
    before: float

    @property
    def change(self) -> float:
        return self.now - self.before


class _Ledger:
    """One site's transactions and clicks, summed over alerts' spans at the ages alerts judge,
    against the mean of the latest `RECENT_WEEKS` weeks (the level alerts judge volumes on). The
    rows of a span are prepared once (which week, known or not, each figure as then known), and
    each total is kept: grouping asks for the same ones many times."""

    def __init__(self, rows: pl.DataFrame, clicks: pl.DataFrame) -> None:
        self.rows, self.clicks = rows, clicks
        self._spans: dict[tuple[date, int, str], pl.DataFrame] = {}
        self._totals: dict[tuple[Alert, str, tuple[tuple[str, str], ...]], _Sums] = {}
        self._networks: dict[str, str] | None = None

    @staticmethod
    def _weeks(alert: Alert, day: str) -> pl.Expr:
        """Per row, which week of the alert's span it falls in (0: the span itself), else null."""
        assert alert.as_of is not None
        offset = (pl.lit(alert.as_of) - pl.col(day)).dt.total_days()
        inside = (offset >= 0) & (offset % 7 < alert.days) & (offset // 7 <= RECENT_WEEKS)
        return pl.when(inside).then(offset // 7)

    def _span(self, alert: Alert) -> pl.DataFrame:
        """The rows of the alert's span and of the same days of the latest weeks, as known then:
        week, revenue, orders and returns per transaction."""
        assert alert.as_of is not None
        day = "click_date" if alert.metric in _BY_CLICK else "commission_date"
        cached = self._spans.get((alert.as_of, alert.days, day))
        if cached is not None:
            return cached
        cutoff = pl.lit(alert.as_of) - pl.duration(days=pl.col("week") * 7)
        framed = self.rows.with_columns(self._weeks(alert, day).alias("week")).filter(
            pl.col("week").is_not_null() & (pl.col("first_update_date") <= cutoff)
        )
        prepared = framed.with_columns(
            revenue=pl.when(pl.col("update_date") <= cutoff)
            .then(pl.col("revenue"))
            .otherwise(pl.col("original")),
            orders=(pl.col("original") > 0).cast(pl.Float64),
            returns=(pl.col("returned") & (pl.col("update_date") <= cutoff)).cast(pl.Float64),
        )
        self._spans[(alert.as_of, alert.days, day)] = prepared
        return prepared

    def sums(
        self, alert: Alert, basis: str, within: Iterable[tuple[str, str]] = (), by: str | None = None
    ) -> pl.DataFrame:
        """`basis` (revenue, orders, returns or clicks) over `alert`'s span and its mean over the
        baseline weeks, of the rows in every slice of `within` ((scope, key) pairs), per key of
        `by` (or in total): columns key, now, before."""
        if basis == "clicks":
            return self._click_sums(alert, within, by)
        frame = self._span(alert).filter(*(_slice(scope, key) for scope, key in within))
        return self._split(frame.with_columns(value=pl.col(basis)), by)

    def _click_sums(self, alert: Alert, within: Iterable[tuple[str, str]], by: str | None) -> pl.DataFrame:
        """Clicks hold one scope per row: a slice of the site, or of its own key."""
        pairs = [(s, k) for s, k in within if s != SITE_SCOPE]
        if len(pairs) > 1 or (by is not None and pairs) or self.clicks.is_empty():
            return pl.DataFrame(schema={"key": pl.String, "now": pl.Float64, "before": pl.Float64})
        scope, key = pairs[0] if pairs else (by or SITE_SCOPE, None)
        frame = self.clicks.filter(pl.col("scope") == scope)
        if key is not None:
            frame = frame.filter(pl.col("key") == key)
        frame = frame.with_columns(self._weeks(alert, "day").alias("week"), value=pl.col("clicks"))
        return self._split(frame.filter(pl.col("week").is_not_null()), "key" if by else None)

    @staticmethod
    def _split(frame: pl.DataFrame, by: str | None) -> pl.DataFrame:
        keys = [pl.col(by).alias("key")] if by else [pl.lit("Total").alias("key")]
        return frame.group_by(keys).agg(
            now=pl.col("value").filter(pl.col("week") == 0).sum().cast(pl.Float64),
            before=(pl.col("value").filter(pl.col("week") > 0).sum() / RECENT_WEEKS).cast(pl.Float64),
        )

    def network_of(self, merchant: str) -> str | None:
        """The network a merchant's transactions go through (the most of them)."""
        if self._networks is None:
            counted = self.rows.group_by("merchant", "network").len().sort("len", descending=True)
            pairs = counted.unique("merchant", keep="first", maintain_order=True).select(
                "merchant", "network"
            )
            self._networks = {str(m): str(n) for m, n in pairs.iter_rows()}
        return self._networks.get(merchant)

    def total(self, alert: Alert, basis: str, within: Iterable[tuple[str, str]]) -> _Sums:
        """`basis` over the alert's span and the mean of its weeks, in the slices of `within`."""
        key = (alert, basis, tuple(within))
        if key not in self._totals:
            frame = self.sums(alert, basis, key[2])
            self._totals[key] = (
                _Sums(float(frame["now"].sum()), float(frame["before"].sum()))
                if frame.height
                else _Sums(0.0, 0.0)
            )
        return self._totals[key]


def _slice(scope: str, key: str) -> pl.Expr:
    return pl.lit(True) if scope == SITE_SCOPE else pl.col(scope) == key


def _basis(alert: Alert, ledger: _Ledger) -> tuple[str, float]:
    """What an alert's change is measured in for grouping, and the direction it moved: a fall of
    EPC or conversion whose revenue or orders held is a surge of clicks."""
    assert alert.metric is not None
    basis = _BASIS[alert.metric]
    sign = -1.0 if (alert.change or 0.0) < 0 else 1.0
    if alert.metric in ("epc", "conversion_rate"):
        held = ledger.total(alert, basis, [(alert.scope, alert.key)])
        if held.before <= 0 or sign * held.change / held.before < 0.1:
            return "clicks", -sign
    return basis, sign


def _relation(cause: tuple[str, str], member: Alert, ledger: _Ledger) -> _Relation | None:
    """How the member's change splits between the cause's slice and the rest of the member, or
    None when it cannot be split by that slice."""
    basis, sign = _basis(member, ledger)
    own = (member.scope, member.key)
    whole = ledger.total(member, basis, [own])
    if whole.before <= 0 or sign * whole.change <= 0:
        return None
    if basis == "clicks" and member.scope != SITE_SCOPE and cause[0] != SITE_SCOPE:
        return _click_relation(cause, member, whole, ledger)
    within = [cause] if member.scope == SITE_SCOPE else [own, cause]
    part = ledger.total(member, basis, within) if cause[0] != SITE_SCOPE else whole
    return _Relation(part, whole)


def _click_relation(cause: tuple[str, str], member: Alert, whole: _Sums, ledger: _Ledger) -> _Relation | None:
    """A member's surge of clicks split by a cause's slice, where the service's counts allow: a
    merchant lies wholly in its network, a network's merchant is a part of it; a device's or a
    country's clicks are never counted per network, so the site's surge speaks for them when the
    cause is a network (networks split a site's clicks whole)."""
    if member.scope == "merchant" and cause[0] == "network" and ledger.network_of(member.key) == cause[1]:
        return _Relation(whole, whole)
    if member.scope == "network" and cause[0] == "merchant" and ledger.network_of(cause[1]) == member.key:
        return _Relation(ledger.total(member, "clicks", [cause]), whole)
    if cause[0] == "network":
        site = replace(member, scope=SITE_SCOPE, key=member.site)
        return _relation(cause, site, ledger) if _basis(site, ledger)[0] == "clicks" else None
    return None


@dataclass(frozen=True)
class _Relation:
    """A member's change (`whole`) and the part of it in a cause's slice (`part`)."""

    part: _Sums
    whole: _Sums

    @property
    def share(self) -> float:
        """The part of the member's change in the cause's slice."""
        return self.part.change / self.whole.change

    @property
    def usual(self) -> float:
        """The cause's slice's usual share of the member."""
        return self.part.before / self.whole.before

    @property
    def singled_out(self) -> bool:
        """The cause's slice holds most of the change and moved apart from the rest of the member
        (relative to their sizes, by at least a third of its own move): Mobile, not the United States,
        in a site whose mobile orders vanished, whatever the season did to both; a link, in its
        merchant, however large a part of it."""
        rest_before = self.whole.before - self.part.before
        if self.share < _MOST or self.part.before <= 0 or rest_before <= 0:
            return False
        moved = self.part.change / self.part.before
        rest = (self.whole.change - self.part.change) / rest_before
        sign = 1.0 if self.whole.change > 0 else -1.0
        apart = sign * (moved - rest) >= max(abs(moved) / 3, _APART)
        # a slice that is most of the member and holds most of its change is its change, whatever
        # the small rest did (a merchant that is 90% of its network)
        return apart or min(self.share, self.usual) >= _MOSTLY


def _explains(cause: tuple[str, str], own: list[Alert], member: Alert, ledger: _Ledger) -> bool:
    """Whether the candidate cause (its key, and its alerts `own`) explains `member`."""
    if (member.scope, member.key) == cause:
        return True
    if member.scope == cause[0] and cause[0] != SITE_SCOPE:
        return False  # two keys of one dimension share no transaction
    relation = _relation(cause, member, ledger)
    if relation is None:
        return False
    if relation.singled_out:
        return True
    if relation.usual < _WHOLE:
        return False
    for alert in own:  # does the member explain any of the cause's own changes?
        back = _relation((member.scope, member.key), alert, ledger)
        if back is not None and back.singled_out:
            return False
    return True


def _groups(alerts: list[Alert], ledger: _Ledger) -> list[AlertGroup]:
    """One site's change alerts in groups, greedily by the cause that explains most."""
    candidates: dict[tuple[str, str], list[Alert]] = {}
    for alert in alerts:
        candidates.setdefault((alert.scope, alert.key), []).append(alert)
    explains = {
        (key, member): _explains(key, candidates[key], member, ledger)
        for key in candidates
        for member in alerts
    }
    left = list(alerts)
    groups = []
    while left:
        best = max(
            (key for key in candidates if any(a in left for a in candidates[key])),
            key=lambda key: (
                sum(explains[(key, m)] for m in left),
                _NARROW[key[0]],
                sum(abs(a.at_stake or 0.0) for a in candidates[key]),
            ),
        )
        members = [m for m in left if explains[(best, m)]]
        left = [m for m in left if not explains[(best, m)]]
        groups.append(_group(best, candidates[best], members, ledger))
    return groups


def _group(cause: tuple[str, str], own: list[Alert], members: list[Alert], ledger: _Ledger) -> AlertGroup:
    """A group: the cause's driver and headline, the broadest member, the cause's share of that
    member's change, and its decomposition."""
    strongest = max(own, key=lambda a: abs(a.z or 0.0))
    driver, driver_change = _driver(strongest, ledger)
    wanted = _HEADLINES.get(driver or "", ())
    headline = min(
        own,
        key=lambda a: (wanted.index(a.metric) if a.metric in wanted else len(wanted), -abs(a.z or 0.0)),
    )
    rest = sorted(
        (m for m in members if m is not headline),
        key=lambda m: (_NARROW[m.scope], (m.scope, m.key) != cause, -abs(m.at_stake or 0.0)),
    )
    broadest = rest[0] if rest and _NARROW[rest[0].scope] < _NARROW[cause[0]] else headline
    share = None
    if broadest is not headline:
        relation = _relation(cause, broadest, ledger)
        share = relation.share if relation else None
    if headline.metric == driver:  # the alert's own figure: one number for one change
        driver_change = headline.change
    return AlertGroup(
        cause=headline,
        driver=driver,
        driver_change=driver_change,
        members=tuple(rest),
        explained=broadest,
        share=share,
        decomposition=_decomposition(broadest, ledger),
    )


_HEADLINES = {
    "clicks": ("clicks", "conversion_rate", "epc", "orders", "revenue"),
    "conversion_rate": ("conversion_rate", "orders", "epc", "revenue"),
    "orders": ("orders", "revenue", "conversion_rate", "epc"),
    "order_value": ("order_value", "revenue", "epc"),
}
"""Which of a cause's alerts heads its group, per driver: the driver's own first."""


def _driver(alert: Alert, ledger: _Ledger) -> tuple[str | None, float | None]:
    """The factor of revenue that moved the alert's key most over its span: clicks when orders
    followed them (or held while clicks moved: clicks that never earn), conversion when orders
    moved and clicks held, orders where no clicks are counted, or the typical order's value; for
    a returns alert, the returns themselves."""
    if alert.metric == "returns":  # returns are no factor of revenue's: they are their own cause
        return "returns", alert.change
    own = [(alert.scope, alert.key)]
    orders, revenue = ledger.total(alert, "orders", own), ledger.total(alert, "revenue", own)
    clicks = ledger.total(alert, "clicks", own) if alert.scope in _CLICKED else None

    def moved(sums: _Sums) -> float:
        return math.log((sums.now + 0.5) / (sums.before + 0.5))

    volume = moved(orders)
    factors: list[tuple[str, float]] = [("orders", volume)]
    if clicks is not None and clicks.before > 0:
        traffic = moved(clicks)
        # orders = clicks x conversion: both factors when orders moved past what clicks explain (a
        # network that lost 45% of its clicks, its orders 46%, was 'revenue per order -8%')
        factors = [("clicks", traffic)]
        if abs(traffic) < abs(volume) - 0.05:
            factors.append(("conversion_rate", volume - traffic))
    if orders.now > 0 and orders.before > 0 and revenue.now > 0 and revenue.before > 0:
        factors.append(
            ("order_value", math.log((revenue.now / orders.now) / (revenue.before / orders.before)))
        )
    name, change = max(factors, key=lambda f: abs(f[1]))  # the volume's on a tie: it comes first
    return (name, math.expm1(change)) if abs(change) > 0.05 else (None, None)


def _decomposition(alert: Alert, ledger: _Ledger) -> pl.DataFrame:
    """The revenue change of the alert's key over its span, by factor and by key of each other
    dimension (clicks where the networks report counts them: a site's networks, devices,
    countries and sliced merchants)."""
    own = [(alert.scope, alert.key)]
    frames = []
    for dimension in ("total", *(d for d in _DIMENSIONS if d != alert.scope)):
        by = None if dimension == "total" else dimension
        revenue = ledger.sums(alert, "revenue", own, by).rename(
            {"now": "revenue", "before": "revenue_previous"}
        )
        orders = ledger.sums(alert, "orders", own, by).rename({"now": "orders", "before": "orders_previous"})
        clicks = ledger.sums(alert, "clicks", own if alert.scope != SITE_SCOPE else (), by)
        clicks = clicks.rename({"now": "clicks", "before": "clicks_previous"})
        joined = revenue.join(orders, on="key", how="full", coalesce=True).join(clicks, on="key", how="left")
        frames.append(joined.with_columns(pl.lit(dimension).alias("dimension")))
    sides = pl.concat(frames, how="diagonal_relaxed").with_columns(
        pl.col("key").cast(pl.String),
        pl.col("revenue", "revenue_previous", "orders", "orders_previous").fill_null(0.0),
    )
    return decompose(sides, top_n=3)
