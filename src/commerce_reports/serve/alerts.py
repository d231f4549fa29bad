"""The period's alerts on the served dashboard: `cr.alerts()` for the period's days (at most its last
31, as the report shows them), as HTML, grouped by cause. The one place the page reads alerts.

Judging alerts reads weeks of daily series (seconds on a large lake), so the page asks for them
after the figures are shown, and keeps each answer for its generation of the lake.
"""

from __future__ import annotations

from datetime import datetime
from html import escape
from pathlib import Path

from ..alerting import AlertReport, Thresholds, alerts
from ..db.readonly import Connection
from ..money import Currency
from .board import View

__all__ = ["ALERT_DAYS", "alerts_html", "period_alerts"]

ALERT_DAYS = 31
"""The most days of a period judged (as the report does): a year's period judges its last month."""


def period_alerts(
    con: Connection,
    view: View,
    *,
    data_dir: Path,
    thresholds: Thresholds,
    currency: Currency,
    now: datetime | None = None,
) -> AlertReport:
    """The alerts of the view's site (every site: None) over the last days of its period, up to
    its last day, and the lake's health."""
    return alerts(
        con,
        site=view.site,
        days=min(view.period.days, ALERT_DAYS),
        as_of=view.period.end,
        thresholds=thresholds,
        currency=currency,
        data_dir=data_dir,
        now=now,
        progress=False,  # a visitor's page: the server's log is no place for each judgement
    )


def alerts_html(report: AlertReport) -> str:
    """The report as the page shows it: a heading with the count (and the causes they come from),
    each cause's sentence (what, where, how big, over which days, against what) with why and the
    alerts it explains under it, and what could not be judged. A page that lays them out itself
    reads `report.groups` or `report.to_dict()`."""
    count, causes = len(report.alerts), len(report.groups)
    heading = f"Alerts: {count}" if count else "Alerts: none"
    if 0 < causes < count - len(report.health):
        heading += f" from {causes} cause{'s' if causes != 1 else ''}"
    return f"<h3>{escape(heading)}</h3>{report.to_html()}"
