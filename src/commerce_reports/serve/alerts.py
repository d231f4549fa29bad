"""The period's alerts on the served dashboard: `cr.alerts()` for the period's days (at most its last
31, as the report shows them), as HTML. The one place the page reads alerts: when alerts gain
drivers and grouped causes, this module is what changes.

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
    )


def alerts_html(report: AlertReport) -> str:
    """The report as the page shows it: a heading with the count, each alert's sentence (what,
    where, how big, since when, against what), and what could not be checked."""
    count = len(report.alerts)
    heading = f"Alerts: {count}" if count else "Alerts: none"
    return f"<h3>{escape(heading)}</h3>{report.to_html()}"
