"""Which days each measure can be judged on, and the change alerts of every series on them.

A site's days asked are the `days` up to `as_of` (default: its last complete ledger day). The
ledger's measures (revenue, orders, revenue per order, returns) are judged on those the lake
holds whole (every updateDate day stored after it ended) with `min_weeks` of history before them;
the clicks' (clicks, EPC, conversion) on those of them whose clicks are counted too (a daily window
of the networks report fetched after its day ended), so each measure is judged as early as its
data allows, and the days it could not be are said, with why.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, timedelta
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from ..charts.selection import Selection
from .alert import Alert, JudgedDays
from .detect import Finding, findings, stacked
from .rules import CLICK_METRICS
from .series import LEDGER_PARTS, SITE_SCOPE, click_series, daily_coverage, ledger_series
from .thresholds import Thresholds

if TYPE_CHECKING:
    from ..db.readonly import Connection

__all__ = ["CLICK_MEASURES", "LEDGER_MEASURES", "Judgement", "judge"]

LEDGER_MEASURES = ("revenue", "orders", "order_value", "returns")
CLICK_MEASURES = ("clicks", "epc", "conversion_rate")
_BUSY_SHARE = 0.5  # a key is read when it held half the volume its least demanding rule needs


@dataclass(frozen=True)
class Judgement:
    """The change alerts of an evaluation, the days judged, how many series, notes on what was not
    checked, the days read (`window`) and the click series read (for the explanations)."""

    alerts: list[Alert]
    judged: list[JudgedDays]
    series: int
    notes: list[str]
    window: Selection | None
    clicks: pl.DataFrame


@dataclass(frozen=True)
class _Days:
    """A site's days: the ledger's first stored day, the days judged per family (None: none)."""

    first: date
    ledger: tuple[date, date] | None
    clicks: tuple[date, date] | None


def judge(
    con: Connection, sites: Iterable[str], days: int, as_of: date | None, limits: Thresholds
) -> Judgement:
    """The change alerts of `sites` (empty: every site) over the `days` up to `as_of`."""
    chosen = list(sites)
    complete = daily_coverage(con, Selection(site=chosen or None))
    notes = [f"{s}: no complete ledger day in the lake yet" for s in chosen if s not in complete]
    asked = {s: _asked(last, days, as_of) for s, (_, last) in complete.items()}
    history = timedelta(weeks=limits.min_weeks)
    ledger_days = {s: _within(asked[s], first + history, last) for s, (first, last) in complete.items()}
    reading = [d for d in ledger_days.values() if d is not None]
    if not reading:
        judged = [_judged(s, LEDGER_MEASURES, None, asked[s], complete[s], limits) for s in complete]
        return Judgement([], judged, 0, notes, None, pl.DataFrame())
    reach = timedelta(days=7 * limits.baseline_weeks + limits.max_span)
    start = min(first for first, _ in reading) - reach
    end = max(last for _, last in asked.values())
    window = Selection(site=[s for s, d in ledger_days.items() if d], start=start, end=end)
    clicks, coverage = click_series(con, window)
    counted = _clicks_through(coverage)
    plan = {
        s: _Days(complete[s][0], d, _within(d, d[0], counted.get(s, d[0] - timedelta(days=1))) if d else None)
        for s, d in ledger_days.items()
    }
    judged = []
    for site in complete:
        judged.append(_judged(site, LEDGER_MEASURES, plan[site].ledger, asked[site], complete[site], limits))
        if plan[site].ledger:
            judged.append(_clicks_judged(site, plan[site], counted.get(site), clicks.is_empty()))
    found, series = _changes(con, window, plan, clicks, coverage, limits)
    return Judgement(found, judged, series, notes, window, clicks)


def _asked(last: date, days: int, as_of: date | None) -> tuple[date, date]:
    end = as_of or last
    return end - timedelta(days=days - 1), end


def _within(days: tuple[date, date] | None, first: date, last: date) -> tuple[date, date] | None:
    if days is None:
        return None
    start, end = max(days[0], first), min(days[1], last)
    return (start, end) if start <= end else None


def _judged(
    site: str,
    measures: tuple[str, ...],
    days: tuple[date, date] | None,
    asked: tuple[date, date],
    complete: tuple[date, date],
    limits: Thresholds,
) -> JudgedDays:
    """The ledger's days of a site, and why any day asked was left out."""
    notes = []
    history = complete[0] + timedelta(weeks=limits.min_weeks)
    if asked[0] < history:
        notes.append(f"days before {history} have fewer than {limits.min_weeks} weeks of history before them")
    if asked[1] > complete[1]:
        notes.append(f"{_range(complete[1] + timedelta(days=1), asked[1])}: not stored whole in the lake yet")
    first, last = days or (None, None)
    return JudgedDays(site, measures, first, last, "; ".join(notes))


def _clicks_judged(site: str, days: _Days, counted: date | None, no_windows: bool) -> JudgedDays:
    """The clicks' days of a site, and why any of the ledger's days was left out."""
    assert days.ledger is not None
    if counted is None:
        why = (
            "the lake holds no daily windows of the networks report, the only source of clicks per day "
            "(`commerce-reports sync --grain day` stores them)"
            if no_windows
            else "no daily window of the networks report fetched after its day ended covers them"
        )
        return JudgedDays(site, CLICK_MEASURES, None, None, note=f"{_range(*days.ledger)}: {why}")
    note = ""
    if days.clicks is None or days.clicks[1] < days.ledger[1]:
        left = days.clicks[1] + timedelta(days=1) if days.clicks else days.ledger[0]
        note = (
            f"{_range(left, days.ledger[1])}: their clicks are not counted yet (the networks report's "
            f"daily window is counted once fetched after its day ended; counted through {counted})"
        )
    first, last = days.clicks or (None, None)
    return JudgedDays(site, CLICK_MEASURES, first, last, note)


def _range(first: date, last: date) -> str:
    return str(first) if first == last else f"{first} to {last}"


def _clicks_through(coverage: pl.DataFrame) -> dict[str, date]:
    """Per site, the last day whose clicks (the unfiltered slice's window) are counted."""
    if coverage.is_empty():
        return {}
    site = coverage.filter(pl.col("scope") == SITE_SCOPE).group_by("site").agg(pl.col("day").max())
    return {str(row["site"]): row["day"] for row in site.iter_rows(named=True)}


def _busy_floors(limits: Thresholds, scopes: Iterable[str], days: int, clicks: bool) -> dict[str, int]:
    """Per scope with an active rule, the orders a key needs over `days` days to be read at all."""
    floors: dict[str, int] = {}
    for rule in limits.active:
        if (rule.metric in CLICK_METRICS) != clicks:
            continue
        for scope in set(rule.scopes) & set(scopes):
            need = rule.min_volume * days / 7 * _BUSY_SHARE if rule.volume == "orders" else 0
            floors[scope] = min(floors.get(scope, int(need)), int(need))
    return floors


def _changes(
    con: Connection,
    window: Selection,
    plan: dict[str, _Days],
    clicks: pl.DataFrame,
    coverage: pl.DataFrame,
    limits: Thresholds,
) -> tuple[list[Alert], int]:
    """The change alerts of every series, and the number of series judged."""
    first, last = window.bounds
    span = (last - first).days + 1
    scopes = {s for rule in limits.active for s in rule.scopes}
    ledger = ledger_series(con, window, min_orders=_busy_floors(limits, scopes, span, clicks=False))
    by_click = ledger_series(con, window, "click_date", _busy_floors(limits, scopes, span, clicks=True))
    found: list[Finding] = []
    judged = 0
    for family, rows in (("ledger", ledger), ("clicks", clicks)):
        index = _index(rows, plan, family)
        if index.is_empty():
            continue
        stored = {site: (d.first, d.ledger[1]) if d.ledger else None for site, d in plan.items()}
        covered = _site_masks(index, stored, first, span)
        if family == "ledger":
            parts = stacked(ledger, index, LEDGER_PARTS, first, span, ages=True)
        else:
            parts = stacked(by_click, index, LEDGER_PARTS, first, span, ages=True)
            parts.update(stacked(clicks, index, ("clicks",), first, span, ages=False))
            covered &= _held(coverage, index, first, span)
        evaluate = _site_masks(index, {site: getattr(d, family) for site, d in plan.items()}, first, span)
        where = [(str(r["site"]), str(r["scope"]), str(r["key"])) for r in index.iter_rows(named=True)]
        scopes_of = index["scope"].to_numpy()
        judged += index.height
        for metric in LEDGER_MEASURES if family == "ledger" else CLICK_MEASURES:
            rules = [
                (rule, np.isin(scopes_of, rule.scopes)) for rule in limits.active if rule.metric == metric
            ]
            found += findings(parts, covered, evaluate, first, rules, limits, where)
    return _alerts(found), judged


def _index(rows: pl.DataFrame, plan: dict[str, _Days], family: str) -> pl.DataFrame:
    """The series of `rows` whose site judges `family`, numbered (site, scope, key, series)."""
    if rows.is_empty():
        return pl.DataFrame(
            schema={"site": pl.String, "scope": pl.String, "key": pl.String, "series": pl.Int64}
        )
    judging = [site for site, days in plan.items() if getattr(days, family) is not None]
    keys = rows.select("site", "scope", "key").unique().filter(pl.col("site").is_in(judging))
    return (
        keys.sort("site", "scope", "key")
        .with_row_index("series")
        .with_columns(pl.col("series").cast(pl.Int64))
    )


def _site_masks(
    index: pl.DataFrame, ranges: dict[str, tuple[date, date] | None], first: date, span: int
) -> np.ndarray:
    """(series, days): each series' site's range of days (None: none) as a mask."""
    masks = {
        site: _mask(first, span, *days) if days else np.zeros(span, dtype=bool)
        for site, days in ranges.items()
    }
    return np.stack([masks[str(site)] for site in index["site"].to_list()])


def _held(coverage: pl.DataFrame, index: pl.DataFrame, first: date, span: int) -> np.ndarray:
    """(series, days): the days whose window (the series' slice) the lake holds, fetched after it."""
    held = np.zeros((index.height, span), dtype=bool)
    rows = coverage.join(index, on=["site", "scope", "key"])
    day = rows["day"].cast(pl.Int32).to_numpy().astype(np.int64) - (first - date(1970, 1, 1)).days
    inside = (day >= 0) & (day < span)
    held[rows["series"].to_numpy()[inside], day[inside]] = True
    return held


def _mask(first: date, days: int, start: date, end: date) -> np.ndarray:
    index = np.arange(days)
    return (index >= (start - first).days) & (index <= (end - first).days)


def _alerts(found: list[Finding]) -> list[Alert]:
    """One alert per series and rule: its latest finding, with that finding's own span. Where two
    rules judge one series' metric in one direction, the one with the higher threshold speaks."""
    latest: dict[tuple[str, str, str, str], Finding] = {}
    for finding in found:
        key = (finding.site, finding.scope, finding.key, finding.rule.name)
        if key not in latest or finding.as_of >= latest[key].as_of:
            latest[key] = finding
    strongest: dict[tuple[str, str, str, str, str], Finding] = {}
    for finding in latest.values():
        same = (finding.site, finding.scope, finding.key, finding.rule.metric, finding.rule.direction)
        known = strongest.get(same)
        if known is None or (finding.rule.threshold or 0.0) > (known.rule.threshold or 0.0):
            strongest[same] = finding
    return [Alert("change", **{name: getattr(f, name) for name in _FROM_FINDING}) for f in strongest.values()]


_FROM_FINDING: tuple[str, ...] = (
    *("site", "scope", "key", "rule", "value", "baseline", "spread"),
    *("change", "since", "as_of", "days", "weeks", "z", "at_stake"),
)
"""The fields an alert takes from its finding, as they are."""
