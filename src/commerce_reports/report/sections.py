"""The sections of the report notebook, each a display object: its HTML, a plain-text twin, and
output metadata naming the part it is (`{"commerce-reports": {"part": "title", ...}}`). An export
reads those parts from the executed notebook: the title names the files after the resolved period
and sites, and the title, summary and alerts make the body of the report's mail.

    from commerce_reports import report
    report.title(con, selection)
    report.alerts_section(con, selection)
    report.summary(con, selection)
    report.comparison(con, selection, "network")
    report.top_table(con, selection, "merchant")
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from html import escape
from typing import TYPE_CHECKING, Any

from ..alerting import Thresholds, alerts
from ..charts.compare import compare_periods
from ..charts.dimensions import DIMENSION_TABLE, Dimension
from ..charts.queries import aggregate_span, check_top_n, ranking_frame
from ..charts.selection import Selection, known_sites, resolve
from ..charts.style import aggregate_note, money_of
from ..export.parts import OUTPUT_KEY as METADATA_KEY
from ..money import Currency
from .tables import comparison_table, ranking_table, summary_table

if TYPE_CHECKING:
    from ..db.readonly import Connection

__all__ = ["METADATA_KEY", "Section", "alerts_section", "comparison", "summary", "title", "top_table"]


@dataclass(frozen=True)
class Section:
    """One part of the report, shown as HTML (plain text where HTML is not shown)."""

    part: str
    html: str
    text: str
    extra: dict[str, Any] = field(default_factory=dict)

    def _repr_mimebundle_(
        self, include: Any = None, exclude: Any = None
    ) -> tuple[dict[str, str], dict[str, Any]]:
        data = {"text/html": self.html, "text/plain": self.text}
        return data, {METADATA_KEY: {"part": self.part, **self.extra}}


def _sites(con: Connection, sel: Selection) -> list[str]:
    return list(sel.sites) or known_sites(con)


def title(
    con: Connection,
    selection: Selection,
    *,
    heading: str = "Commerce report",
    now: datetime | None = None,
    currency: Currency | str | None = None,
) -> Section:
    """The report's title: the sites, the period, when it was made, the currency, and how far the
    lake goes (a period beyond the last stored day is said to be partial). Its metadata names the
    report's files: `<sites>_<start>_<end>`."""
    money = money_of(currency)
    sel, cover = resolve(con, selection)
    sites = _sites(con, sel)
    made = (now or datetime.now(UTC)).astimezone(UTC)
    whole = cover.holds(sel)
    lake = f"the lake holds {cover.first} to {cover.last}" if cover.first else "the lake holds no day yet"
    partial = (
        ""
        if whole
        else " <b style='color:#b3261e'>This period is not complete in the lake: figures are partial.</b>"
    )
    filters = "".join(f" · {name} {escape(value)}" for name, value in sel.filters().items())
    html = (
        f"<h1 style='margin-bottom:2px'>{escape(heading)}: {escape(', '.join(sites))}</h1>"
        f"<p style='font-size:15px;margin:2px 0'><b>{sel.start} to {sel.end}</b> "
        f"({sel.days} days){filters}</p>"
        f"<p style='color:#555;margin:2px 0'>Generated {made:%Y-%m-%d %H:%M} UTC · amounts in {money.code} · "
        f"{lake}.{partial}</p>"
    )
    text = f"{heading}: {', '.join(sites)}, {sel.start} to {sel.end} (generated {made:%Y-%m-%d %H:%M} UTC)"
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", f"{'-'.join(sites)}_{sel.start}_{sel.end}")[:160]
    return Section(
        "title", html, text, {"name": name, "start": str(sel.start), "end": str(sel.end), "sites": sites}
    )


def alerts_section(
    con: Connection,
    selection: Selection,
    *,
    thresholds: Thresholds | None = None,
    currency: Currency | str | None = None,
    now: datetime | None = None,
) -> Section:
    """The alerts of the period's days (at most its last 31), as `commerce-reports alerts` gives
    them for the same days: what changed that matters, and whether the lake is healthy."""
    sel, _ = resolve(con, selection)
    money = money_of(currency)
    found = alerts(
        con,
        site=list(sel.sites) or None,
        days=min(sel.days, 31),
        as_of=sel.end,
        thresholds=thresholds,
        currency=money,
        now=now,
    )
    heading = "Alerts" if found.alerts else "Alerts: none"
    html = f"<h2>{heading}</h2>{found.to_html()}"
    return Section("alerts", html, found.describe(), {"count": len(found.alerts)})


def summary(con: Connection, selection: Selection, *, currency: Currency | str | None = None) -> Section:
    """The period against the previous one of the same length, in total: revenue, orders, returns,
    return rate, clicks, EPC and conversion, each with its change."""
    money = money_of(currency)
    result = compare_periods(con, selection)
    html = f"<h2>This period against the previous one</h2>{summary_table(result, money)}"
    row = result.frame.row(0, named=True) if not result.frame.is_empty() else None
    text = (
        f"revenue {money.format(row['revenue'])} ({_percent(row['revenue_change'])}), "
        f"orders {row['orders']:,} ({_percent(row['orders_change'])}), returns {row['returns']:,}"
        if row
        else "no transactions in either period"
    )
    return Section("summary", html, text, {"complete": result.complete})


def _percent(change: float | None) -> str:
    return "–" if change is None else f"{change:+.1%}"


def comparison(
    con: Connection,
    selection: Selection,
    by: Dimension,
    *,
    top_n: int = 10,
    currency: Currency | str | None = None,
) -> Section:
    """Per key of `by` (network, device, country, ...), the period against the previous one."""
    money = money_of(currency)
    result = compare_periods(con, selection, by=by, top_n=top_n)
    label = DIMENSION_TABLE[by].label
    html = f"<h3>By {label.lower()}</h3>{comparison_table(result, money)}"
    return Section("comparison", html, f"{label}: {result.frame.height} rows", {"by": by})


def top_table(
    con: Connection,
    selection: Selection,
    dimension: Dimension,
    *,
    top_n: int = 10,
    currency: Currency | str | None = None,
) -> Section:
    """The `top_n` keys of a dimension (links, merchants, networks, ...) by revenue, with their figures."""
    check_top_n(top_n)
    money = money_of(currency)
    sel, _ = resolve(con, selection)
    frame = ranking_frame(con, dimension, sel, top_n=top_n)
    label = DIMENSION_TABLE[dimension].label
    note = aggregate_note(aggregate_span(con, sel)) if DIMENSION_TABLE[dimension].aggregated else ""
    table = ranking_table(frame, dimension, money, note)
    html = f"<h3>Top {frame.height} {label.lower()}s by revenue</h3>{table}"
    return Section(
        "top", html, f"top {label.lower()}s: {', '.join(map(str, frame['key'].head(3)))}", {"by": dimension}
    )
