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

import polars as pl

from ..alerting import Thresholds, alerts, explain
from ..charts.comparison import compare_periods, period_clicks, period_flags
from ..charts.dimensions import DIMENSION_TABLE, Dimension
from ..charts.queries import check_top_n, ranking_frame
from ..charts.selection import Selection, known_sites, resolve
from ..charts.style import money_of
from ..export.parts import OUTPUT_KEY as METADATA_KEY
from ..money import Currency
from .tables import comparison_table, drivers_table, drivers_text, ranking_table, summary_table, summary_text

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


_PARTIAL = " <b style='color:#b3261e'>This period is not complete in the lake: figures are partial.</b>"
_REVISABLE = " The service may still revise these figures (late commissions and returns)."


def title(
    con: Connection,
    selection: Selection,
    *,
    heading: str = "Commerce report",
    now: datetime | None = None,
    currency: Currency | str | None = None,
) -> Section:
    """The report's title: the sites, the period, when it was made, the currency, and how far the
    lake goes; a period the views do not hold complete is said to be partial, one the service may
    still revise, so. Its metadata names the report's files: `<sites>_<start>_<end>`."""
    money = money_of(currency)
    sel, cover = resolve(con, selection)
    sites = _sites(con, sel)
    made = (now or datetime.now(UTC)).astimezone(UTC)
    ((whole, final),) = period_flags(con, [sel], cover)  # the views' own `complete` and `final`
    lake = f"the lake holds {cover.first} to {cover.last}" if cover.first else "the lake holds no day yet"
    partial = _PARTIAL if not whole else _REVISABLE if final is False else ""
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
    """The alerts of the period's own days (at most its last 31), as `commerce-reports alerts
    --as-of <end> --days <days>` gives them: what changed that matters and why, grouped by cause,
    which days each measure could be judged on, and whether the lake is healthy."""
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
        progress=False,  # a section of the report, whose run says what it does
    )
    heading = "Alerts" if found.alerts else "Alerts: none"
    html = f"<h2>{heading}</h2>{found.to_html()}"
    return Section("alerts", html, found.describe(), {"count": len(found.alerts)})


def summary(con: Connection, selection: Selection, *, currency: Currency | str | None = None) -> Section:
    """The period against the previous one of the same length, in total (revenue, orders, returns,
    return rate, clicks, EPC and conversion, each with its change), then what drove revenue's
    change: its factors and its largest contributors (`cr.explain`)."""
    money = money_of(currency)
    result = compare_periods(con, selection)
    drivers = explain(con, result.current, top_n=3)
    html = (
        f"<h2>This period against the previous one</h2>{summary_table(result, money)}"
        f"{drivers_table(drivers, money)}"
    )
    text = "\n".join([summary_text(result, money), *drivers_text(drivers, money)])
    return Section("summary", html, text, {"complete": result.complete})


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
    """The `top_n` keys of a dimension (links, merchants, networks, ...) by revenue, with their
    figures, all of the period: clicks, EPC and conversion only where the lake counts the clicks
    of exactly these days (EPC and conversion over the same revenue and orders)."""
    check_top_n(top_n)
    money = money_of(currency)
    sel, _ = resolve(con, selection)
    frame = ranking_frame(con, dimension, sel, top_n=top_n)
    label = DIMENSION_TABLE[dimension].label
    note = ""
    if DIMENSION_TABLE[dimension].aggregated:
        frame, note = _with_period_clicks(con, sel, dimension, frame)
    table = ranking_table(frame, dimension, money, note)
    html = f"<h3>Top {frame.height} {label.lower()}s by revenue</h3>{table}"
    return Section(
        "top", html, f"top {label.lower()}s: {', '.join(map(str, frame['key'].head(3)))}", {"by": dimension}
    )


def _with_period_clicks(
    con: Connection, sel: Selection, dimension: Dimension, frame: pl.DataFrame
) -> tuple[pl.DataFrame, str]:
    """A ranking with the clicks of exactly its period (none where the lake cannot say), and the
    note that says where they come from."""
    clicks, why = period_clicks(con, sel, dimension)
    frame = frame.drop("clicks", "epc", "conversion_rate")
    if clicks is None:
        return frame.with_columns(
            clicks=pl.lit(None, pl.Float64),
            epc=pl.lit(None, pl.Float64),
            conversion_rate=pl.lit(None, pl.Float64),
        ), f"Clicks, EPC and conversion are left out: {why}."
    counted = pl.when(pl.col("clicks") > 0).then(pl.col("clicks"))
    joined = frame.with_columns(pl.col("key").cast(pl.String)).join(clicks, on="key", how="left")
    return joined.with_columns(
        epc=pl.col("revenue").cast(pl.Float64) / counted, conversion_rate=pl.col("orders") / counted
    ), f"Clicks of {sel.start} to {sel.end}; EPC and conversion are the revenue and orders above over them."
