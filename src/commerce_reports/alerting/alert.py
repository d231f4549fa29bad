"""What an alert is and how it reads: one `Alert` per change or health problem, and the
`AlertReport` of one evaluation (its lines, a frame, an HTML block, the exit code)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from html import escape
from typing import Any, Literal

import polars as pl

from ..charts.dimensions import DIMENSION_TABLE
from ..charts.figures import figure
from ..money import Currency
from .series import SITE_SCOPE
from .thresholds import AlertMetric, Thresholds

__all__ = ["Alert", "AlertReport"]

_NAMES = {
    "revenue": "revenue",
    "epc": "EPC",
    "conversion_rate": "conversion rate",
    "return_rate": "return rate",
}


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
        value, base = figure(self.metric, self.value, money), figure(self.metric, self.baseline, money)
        spread = figure(self.metric, self.spread, money)
        change = self.change or 0.0
        direction = "down" if change < 0 else "up"
        span = "on" if self.days == 1 else f"over the {self.days} days from"
        until = "" if self.days == 1 else f" to {self.as_of}"
        return (
            f"{self.where}: {_NAMES[self.metric]} {value} {span} {self.since}{until}, {direction} "
            f"{abs(change):.0%} from {base} (the median of the same weekdays in the {self.weeks} weeks "
            f"before; usual spread ±{spread})"
        )


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
