"""`alerts()`: what changed that matters, per site and per network, device and country, and whether
the lake itself is healthy (synced recently, no partition failing sync after sync).

    import commerce_reports as cr
    report = cr.alerts(days=7)          # the last week, on the thresholds of commerce-reports.toml
    print(report.describe())            # one line per alert: what, where, how big, since, baseline
    report.frame()                      # the same as a polars frame
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from ..charts.selection import Selection, check_connection, resolve
from ..config import current_settings
from ..errors import ValidationError
from ..money import Currency
from .alert import Alert, AlertReport
from .detect import Finding, dense, findings
from .health import health_alerts
from .series import click_series, daily_coverage, ledger_series
from .thresholds import AlertMetric, Thresholds

if TYPE_CHECKING:
    from ..db.readonly import Connection

__all__ = ["alerts"]

_LEDGER: tuple[AlertMetric, ...] = ("revenue", "return_rate")
_AGGREGATE: tuple[AlertMetric, ...] = ("epc", "conversion_rate")
_LEDGER_PARTS = ("revenue", "revenue_capped", "revenue_capped_sq", "orders", "returns")


def alerts(
    con: Connection | None = None,
    *,
    site: str | Iterable[str] | None = None,
    days: int = 7,
    as_of: date | str | None = None,
    thresholds: Thresholds | None = None,
    currency: Currency | str | None = None,
    data_dir: str | Path | None = None,
    now: datetime | None = None,
) -> AlertReport:
    """The alerts of the last `days` complete days (each judged as the last day of spans of 1 to 7
    days) up to `as_of` (default: each site's last complete ledger day), for `site` (default: all).

    `con` defaults to `connect(data_dir)`; `thresholds` and `currency` to the configured ones
    (`[alerts]` and `currency` in commerce-reports.toml, `COMMERCE_REPORTS_CURRENCY`); `now` (the
    clock the lake's freshness is judged on) to the current time."""
    if isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= 3660:
        raise ValidationError("days", f"{days!r} is not a count of days", "give 1 or more, e.g. 7")
    if thresholds is not None and not isinstance(thresholds, Thresholds):
        raise ValidationError(
            "thresholds", f"{thresholds!r} is not Thresholds", "give Thresholds(...) or None"
        )
    if data_dir is not None and (not isinstance(data_dir, str | Path) or not str(data_dir).strip()):
        raise ValidationError("data_dir", f"{data_dir!r} is not a folder path", "give a str or Path, or None")
    if now is not None and (not isinstance(now, datetime) or now.tzinfo is None):
        raise ValidationError("now", f"{now!r} is not an aware datetime", "give datetime.now(UTC) or similar")
    # what was not handed in comes from the process's settings (resolved once, kept)
    limits = thresholds or Thresholds.from_table(current_settings().alerts)
    money = Currency.of(currency) if currency is not None else current_settings().currency
    folder = Path(data_dir) if data_dir is not None else current_settings().data_dir
    moment = now or datetime.now(UTC)
    if con is None:
        from ..db import connect

        with connect(folder) as own:
            return alerts(
                own,
                site=site,
                days=days,
                as_of=as_of,
                thresholds=limits,
                currency=money,
                data_dir=folder,
                now=now,
            )
    check_connection(con)
    chosen, _ = resolve(con, Selection(site=site))  # a site the lake does not hold is an error
    found: list[Alert] = [*health_alerts(folder, chosen.sites, limits, moment)]
    complete = daily_coverage(con, chosen)
    unchecked = [f"{s}: no complete ledger day in the lake yet" for s in chosen.sites if s not in complete]
    last_day = Selection(end=as_of).end
    # The days judged: the last `days` up to `as_of`, from the first with `min_weeks` weeks before it.
    evaluated = {
        s: (max(end - timedelta(days=days - 1), first + timedelta(weeks=limits.min_weeks)), end)
        for s, (first, last) in complete.items()
        if (end := min(last, last_day) if last_day else last) >= first + timedelta(weeks=limits.min_weeks)
    }
    unchecked += [
        f"{s}: fewer than {limits.min_weeks} weeks of history (a baseline) before {as_of or 'its last day'}: "
        "nothing judged yet"
        for s in complete
        if s not in evaluated
    ]
    if not evaluated:
        return AlertReport(tuple(found), {}, 0, tuple(unchecked), limits, money)
    reach = 7 * limits.baseline_weeks + limits.max_span
    start = min(first for first, _ in evaluated.values()) - timedelta(days=reach)
    end = max(last for _, last in evaluated.values())
    window = Selection(site=list(evaluated), start=start, end=end)
    changes, judged, notes = _changes(con, window, evaluated, complete, limits)
    found += sorted(changes, key=lambda a: (a.site, -abs(a.z or 0.0)))
    return AlertReport(tuple(found), evaluated, judged, tuple(unchecked + notes), limits, money)


def _changes(
    con: Connection,
    window: Selection,
    evaluated: dict[str, tuple[date, date]],
    complete: dict[str, tuple[date, date]],
    limits: Thresholds,
) -> tuple[list[Alert], int, list[str]]:
    """The change alerts of every series, the number of series judged, and what was not checked."""
    first, last = window.bounds
    days = (last - first).days + 1
    ledger = ledger_series(con, window)
    by_click = ledger_series(con, window, "click_date")
    clicks, coverage = click_series(con, window)
    notes: list[str] = []
    if clicks.is_empty():
        notes.append(
            "EPC and conversion rate: the lake holds no daily windows of the networks report, the "
            "only source of clicks per day (`commerce-reports sync --grain day` stores them)"
        )
    out: list[Alert] = []
    judged = 0
    for (site, scope, key), rows in ledger.group_by("site", "scope", "key"):
        ledger_first, _ = complete[str(site)]
        covered = _day_mask(first, days, ledger_first, evaluated[str(site)][1])
        parts = dense(rows, _LEDGER_PARTS, first, days, ages=True)
        judged += 1
        out += _alerts_of(
            parts, covered, first, days, evaluated[str(site)], _LEDGER, limits, (site, scope, key)
        )
    held = coverage.group_by("site", "scope", "key").agg(pl.col("day"))
    days_of = {(r["site"], r["scope"], r["key"]): r["day"] for r in held.iter_rows(named=True)}
    earned = {tuple(k): rows for k, rows in by_click.group_by("site", "scope", "key")}
    empty = by_click.clear()
    for (site, scope, key), rows in clicks.group_by("site", "scope", "key"):
        ledger_first, _ = complete[str(site)]
        covered = np.zeros(days, dtype=bool)
        for day in days_of.get((site, scope, key), []):
            if max(first, ledger_first) <= day <= last:
                covered[(day - first).days] = True
        parts = dense(rows, ("clicks",), first, days, ages=False)
        orders = dense(earned.get((site, scope, key), empty), _LEDGER_PARTS, first, days, ages=True)
        parts.update(
            {name: orders[name] for name in _LEDGER_PARTS if name != "orders"}, actions=orders["orders"]
        )
        judged += 1
        out += _alerts_of(
            parts, covered, first, days, evaluated[str(site)], _AGGREGATE, limits, (site, scope, key)
        )
    return out, judged, notes


def _day_mask(first: date, days: int, start: date, end: date) -> np.ndarray:
    index = np.arange(days)
    return (index >= (start - first).days) & (index <= (end - first).days)


def _alerts_of(
    parts: dict[str, np.ndarray],
    covered: np.ndarray,
    first: date,
    days: int,
    evaluated: tuple[date, date],
    metrics: tuple[AlertMetric, ...],
    limits: Thresholds,
    where: tuple[Any, Any, Any],
) -> list[Alert]:
    """One alert per metric of a series that changed on any evaluated day: the latest finding,
    since the earliest day any of its findings reaches back to."""
    evaluate = _day_mask(first, days, *evaluated)
    labels = (str(where[0]), str(where[1]), str(where[2]))
    out = []
    for metric in metrics:
        found = list(findings(parts, covered, first, evaluate, metric, limits, labels))
        if found:
            out.append(_alert(found[-1], min(f.since for f in found)))
    return out


def _alert(finding: Finding, since: date) -> Alert:
    return Alert(
        "change",
        finding.site,
        finding.scope,
        finding.key,
        finding.metric,
        finding.value,
        finding.baseline,
        finding.spread,
        finding.change,
        since,
        finding.as_of,
        (finding.as_of - since).days + 1,
        finding.weeks,
        finding.z,
    )
