"""`alerts()`: what changed that matters, per site and per network, device and country, and whether
the lake itself is healthy (synced recently, no partition failing sync after sync).

    import commerce_reports as cr
    report = cr.alerts(days=7)          # the last week, on the thresholds of commerce-reports.toml
    print(report.describe())            # one line per alert: what, where, how big, since, baseline
    report.frame()                      # the same as a polars frame
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from html import escape
from pathlib import Path
from typing import Any, Literal

import duckdb
import numpy as np
import polars as pl

from ..charts.dimensions import DIMENSION_TABLE
from ..charts.selection import Selection, check_connection, resolve
from ..config import Settings
from ..contract import lake_root
from ..errors import LakeError, ValidationError
from ..lake import Manifest, load_failures
from ..money import Currency
from .detect import Finding, dense, findings
from .series import SITE_SCOPE, click_series, daily_coverage, ledger_series
from .thresholds import AlertMetric, Thresholds

__all__ = ["Alert", "AlertReport", "alerts"]

_LEDGER: tuple[AlertMetric, ...] = ("revenue", "return_rate")
_AGGREGATE: tuple[AlertMetric, ...] = ("epc", "conversion_rate")
_NAMES = {
    "revenue": "revenue",
    "epc": "EPC",
    "conversion_rate": "conversion rate",
    "return_rate": "return rate",
}
_MONEY = {"revenue", "epc"}


@dataclass(frozen=True)
class Alert:
    """One alert. `kind` "change": a series (`metric` of `scope` `key` on `site`) moved to `value`
    over `days` days from `since` to `as_of`, a `change` from its `baseline` (the median of `weeks`
    weeks of the same weekdays, usual `spread` around it), `z` spreads away. "stale": the site was
    last synced at `since`. "failing": partitions failed in several syncs in a row (`detail`)."""

    kind: Literal["change", "stale", "failing"]
    site: str
    scope: str = SITE_SCOPE
    key: str = ""
    metric: AlertMetric | None = None
    value: float | None = None
    baseline: float | None = None
    spread: float | None = None
    change: float | None = None
    since: date | None = None
    as_of: date | None = None
    days: int = 0
    weeks: int = 0
    z: float | None = None
    detail: str = ""

    @property
    def where(self) -> str:
        """'alpha', or 'alpha · network Foxglove Network'."""
        if self.scope == SITE_SCOPE:
            return self.site
        return f"{self.site} · {DIMENSION_TABLE[self.scope].label.lower()} {self.key}"

    def describe(self, currency: Currency | str | None = None) -> str:
        """One sentence: what, where, how big, since when, against what baseline."""
        if self.kind != "change" or self.metric is None:
            return f"{self.where}: {self.detail}"
        money = Currency.of(currency)
        value, base = _figure(self.metric, self.value, money), _figure(self.metric, self.baseline, money)
        spread = _figure(self.metric, self.spread, money)
        change = self.change or 0.0
        direction = "down" if change < 0 else "up"
        span = "on" if self.days == 1 else f"over the {self.days} days from"
        until = "" if self.days == 1 else f" to {self.as_of}"
        return (
            f"{self.where}: {_NAMES[self.metric]} {value} {span} {self.since}{until}, {direction} "
            f"{abs(change):.0%} from {base} (the median of the same weekdays in the {self.weeks} weeks "
            f"before; usual spread ±{spread})"
        )


def _figure(metric: str, value: float | None, money: Currency) -> str:
    if value is None:
        return "–"
    if metric in _MONEY:
        return money.format(value, digits=money.digits + 1 if metric == "epc" else None)
    return f"{value:.2%}"


@dataclass(frozen=True)
class AlertReport:
    """Alerts of one evaluation: `alerts` (health first, then changes, largest first), the days
    evaluated per site (`evaluated`), how many series were judged, what could not be checked and
    why (`unchecked`), and the thresholds and currency used."""

    alerts: tuple[Alert, ...]
    evaluated: dict[str, tuple[date, date]]
    series: int
    unchecked: tuple[str, ...]
    thresholds: Thresholds
    currency: Currency = field(default_factory=Currency.of)

    @property
    def exit_code(self) -> int:
        """What `commerce-reports alerts` exits with: 0 with no alert, 3 with alerts (for cron)."""
        return 3 if self.alerts else 0

    def lines(self) -> list[str]:
        """The alerts, one sentence each."""
        return [alert.describe(self.currency) for alert in self.alerts]

    def summary(self) -> str:
        """One line: how many alerts, over which days, how many series judged."""
        days = "; ".join(
            f"{site} {first} to {last}" for site, (first, last) in sorted(self.evaluated.items())
        )
        count = f"{len(self.alerts)} alert{'s' if len(self.alerts) != 1 else ''}"
        return f"{count} ({self.series} series judged on {days or 'no complete days'})"

    def describe(self) -> str:
        """The summary, the alerts, then what could not be checked."""
        text = [self.summary(), *(f"- {line}" for line in self.lines())]
        text += [f"not checked: {note}" for note in self.unchecked]
        return "\n".join(text)

    def frame(self) -> pl.DataFrame:
        """The alerts as a frame (one row each; money in the report's currency)."""
        rows = [{**_row(alert), "message": alert.describe(self.currency)} for alert in self.alerts]
        return pl.DataFrame(rows, schema=_SCHEMA)

    def to_html(self) -> str:
        """The alerts as an HTML block (what the report and the mail show at the top)."""
        if not self.alerts:
            items = "<p>No alert: nothing moved beyond its usual range.</p>"
        else:
            items = "<ul>" + "".join(f"<li>{escape(line)}</li>" for line in self.lines()) + "</ul>"
        notes = "".join(f"<p><small>Not checked: {escape(n)}</small></p>" for n in self.unchecked)
        return f'<div class="commerce-alerts"><p>{escape(self.summary())}</p>{items}{notes}</div>'

    def _repr_html_(self) -> str:
        return self.to_html()

    def __repr__(self) -> str:
        return self.describe()


_SCHEMA = {
    "kind": pl.String,
    "site": pl.String,
    "scope": pl.String,
    "key": pl.String,
    "metric": pl.String,
    "value": pl.Float64,
    "baseline": pl.Float64,
    "change": pl.Float64,
    "since": pl.Date,
    "as_of": pl.Date,
    "days": pl.Int64,
    "weeks": pl.Int64,
    "z": pl.Float64,
    "message": pl.String,
}


def _row(alert: Alert) -> dict[str, Any]:
    return {name: getattr(alert, name) for name in _SCHEMA if name != "message"}


def alerts(
    con: duckdb.DuckDBPyConnection | None = None,
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
    settings = Settings.from_env() if thresholds is None or currency is None or data_dir is None else None
    limits = thresholds or Thresholds.from_table(settings.project.get("alerts") if settings else None)
    money = (
        Currency.of(currency) if currency is not None else (settings.currency if settings else Currency.of())
    )
    folder = Path(data_dir) if data_dir is not None else (settings.data_dir if settings else Path("data"))
    moment = now or datetime.now(UTC)
    if moment.tzinfo is None:
        raise ValidationError("now", "must be timezone-aware", "give datetime.now(UTC) or similar")
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
    found: list[Alert] = [*_health(folder, chosen.sites, limits, moment)]
    complete = daily_coverage(con, chosen)
    unchecked = [f"{s}: no complete ledger day in the lake yet" for s in chosen.sites if s not in complete]
    last_day = Selection(end=as_of).end
    evaluated = {
        s: (end - timedelta(days=days - 1), end)
        for s, (first, last) in complete.items()
        if (end := min(last, last_day) if last_day else last) >= first
    }
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
    con: duckdb.DuckDBPyConnection,
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
    history = {s: (evaluated[s][1] - complete[s][0]).days + 1 for s in evaluated}
    short = [s for s, n in history.items() if n < 7 * limits.min_weeks + 1]
    if short:
        notes.append(
            f"{', '.join(short)}: fewer than {limits.min_weeks} weeks of history before the days evaluated "
            "(nothing is judged without a baseline)"
        )
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
        parts = dense(rows, ("revenue", "revenue_sq", "orders", "returns"), first, days, ages=True)
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
        orders = dense(
            earned.get((site, scope, key), empty), ("revenue", "revenue_sq", "orders"), first, days, ages=True
        )
        parts.update(revenue=orders["revenue"], revenue_sq=orders["revenue_sq"], actions=orders["orders"])
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


def _health(folder: Path, sites: tuple[str, ...], limits: Thresholds, now: datetime) -> list[Alert]:
    """A site not synced for longer than `stale_hours`, and partitions failing sync after sync."""
    root = lake_root(folder)
    stored = sorted(p.name.removeprefix("site=") for p in root.glob("site=*") if p.is_dir())
    out: list[Alert] = []
    for site in [s for s in stored if not sites or s in sites]:
        try:
            manifest = Manifest.load(folder, site)
        except LakeError as error:
            out.append(Alert("stale", site, detail=f"{error}"))
            continue
        fetched = [entry.fetched_at for entry in manifest]
        if fetched:
            last = max(fetched)
            age = now - last
            if age > timedelta(hours=limits.stale_hours):
                out.append(
                    Alert(
                        "stale",
                        site,
                        since=last.date(),
                        detail=f"the lake was last synced {_ago(age)} ago ({last:%Y-%m-%d %H:%M} UTC), "
                        f"more than {limits.stale_hours:g} hours: figures and alerts miss what came since",
                    )
                )
        failing = [r for r in load_failures(folder, site).values() if r.count >= limits.failing_syncs]
        if failing:
            failing.sort(key=lambda r: (-r.count, r.relpath))
            listed = "; ".join(f"{r.what} ({r.count} syncs: {r.reason})" for r in failing[:5])
            more = f"; and {len(failing) - 5} more" if len(failing) > 5 else ""
            out.append(
                Alert(
                    "failing",
                    site,
                    since=min(r.first for r in failing).date(),
                    detail=f"{len(failing)} partition{'s' if len(failing) != 1 else ''} failed in "
                    f"{limits.failing_syncs} or more syncs in a row: {listed}{more}",
                )
            )
    return out


def _ago(age: timedelta) -> str:
    hours = age.total_seconds() / 3600
    return f"{hours:.0f} hours" if hours < 48 else f"{hours / 24:.1f} days"
