"""HTML tables of the report's figures: readable in a notebook, an exported page, a mail client and
on paper. Styles are inline (mail clients drop style sheets); money is written by `Currency`, every
name is escaped, a change is coloured by whether it is good news (a return rate going up is not).
"""

from __future__ import annotations

from html import escape
from typing import Any

import polars as pl

from ..alerting.drivers import contributors
from ..charts.comparison import Comparison
from ..charts.dimensions import DIMENSION_TABLE
from ..charts.figures import figure
from ..money import Currency

__all__ = [
    "change_cell",
    "comparison_table",
    "drivers_table",
    "drivers_text",
    "figure",
    "ranking_table",
    "summary_table",
    "summary_text",
]

_TABLE = "border-collapse:collapse;font-size:13px;margin:6px 0 14px 0"
_CELL = "padding:3px 8px;border-bottom:1px solid #e4e4e4;text-align:right;white-space:nowrap"
_HEAD = "padding:3px 8px;border-bottom:2px solid #999;text-align:right;white-space:nowrap"
_GOOD, _BAD, _QUIET = "#0b6e3d", "#b3261e", "#777777"
_LABELS = {
    "revenue": "Revenue",
    "orders": "Orders",
    "returns": "Returns",
    "return_rate": "Return rate",
    "clicks": "Clicks",
    "epc": "EPC",
    "conversion_rate": "Conversion",
}
_WORSE_WHEN_UP = {"returns", "return_rate"}


def change_cell(metric: str, change: float | None) -> str:
    """A table cell with a change in percent, green when good news and red when bad."""
    if change is None:
        return f'<td style="{_CELL};color:{_QUIET}">–</td>'
    good = (change >= 0) != (metric in _WORSE_WHEN_UP)
    colour = _QUIET if abs(change) < 0.005 else (_GOOD if good else _BAD)
    arrow = "▲" if change > 0 else ("▼" if change < 0 else "")
    return f'<td style="{_CELL};color:{colour}">{arrow}&nbsp;{change:+.1%}</td>'


def _period(label: str, start: object, end: object, whole: bool) -> str:
    mark = "" if whole else ' <span style="color:#b3261e">(partial)</span>'
    return f"{label}<br><small>{start} to {end}</small>{mark}"


def summary_table(result: Comparison, money: Currency, metrics: tuple[str, ...] = tuple(_LABELS)) -> str:
    """The total of both periods: one row per figure, with the period's value, the previous one and
    the change; a period the lake does not hold whole says '(partial)'."""
    if result.frame.is_empty():
        return "<p>No transactions in either period.</p>"
    row = result.frame.row(0, named=True)
    metrics = tuple(m for m in metrics if row[m] is not None or row[f"{m}_previous"] is not None)
    now, then = result.current, result.previous
    head = (
        f'<tr><th style="{_HEAD};text-align:left"></th>'
        f'<th style="{_HEAD}">{_period("This period", now.start, now.end, result.complete)}</th>'
        f'<th style="{_HEAD}">{_period("Previous", then.start, then.end, result.previous_complete)}</th>'
        f'<th style="{_HEAD}">Change</th></tr>'
    )
    body = "".join(
        f'<tr><td style="{_CELL};text-align:left">{_LABELS[m]}</td>'
        f'<td style="{_CELL}"><b>{figure(m, row[m], money)}</b></td>'
        f'<td style="{_CELL}">{figure(m, row[f"{m}_previous"], money)}</td>'
        f"{change_cell(m, row[f'{m}_change'])}</tr>"
        for m in metrics
    )
    notes = (*result.notes, result.aggregate_note) if result.aggregate_note else result.notes
    if any(m in metrics for m in ("epc", "conversion_rate")):
        notes = (*notes, _EPC_NOTE)
    return f'<table style="{_TABLE}">{head}{body}</table>{_notes(notes)}'


_EPC_NOTE = "EPC and conversion: each period's revenue and orders over its clicks (clicks × EPC = revenue)."


def summary_text(result: Comparison, money: Currency) -> str:
    """The summary table as plain text, one aligned row per figure (what a mail's text part shows)."""
    if result.frame.is_empty():
        return "No transactions in either period."
    row = result.frame.row(0, named=True)
    now, then = result.current, result.previous
    heads = ("", f"{now.start} to {now.end}", f"{then.start} to {then.end}", "change")
    rows = [
        (
            _LABELS[m],
            figure(m, row[m], money),
            figure(m, row[f"{m}_previous"], money),
            _change(row[f"{m}_change"]),
        )
        for m in _LABELS
        if row[m] is not None or row[f"{m}_previous"] is not None
    ]
    widths = [max(len(r[i]) for r in (heads, *rows)) for i in range(4)]
    lines = [
        "  ".join(
            cell.ljust(width) if i == 0 else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(r, widths, strict=True))
        )
        for r in (heads, *rows)
    ]
    lines += [f"note: {note}" for note in (*result.notes, result.aggregate_note) if note]
    return "\n".join(lines)


def _change(change: float | None) -> str:
    return "–" if change is None else f"{change:+.1%}"


_FACTOR_LABELS = {
    "clicks": "clicks",
    "conversion_rate": "conversion",
    "orders": "orders",
    "order_value": "revenue per order",
}


def _factors(total: dict[str, Any], money: Currency) -> str:
    """The change by factor, each in `money`: 'clicks +120.00, conversion -1,430.50, ...'."""
    parts = [
        f"{label} {money.format(total[column])}"
        for label, column in (
            ("clicks", "clicks_effect"),
            ("conversion", "conversion_effect"),
            ("orders", "orders_effect"),
            ("revenue per order", "order_value_effect"),
        )
        if total[column] is not None and not (label == "orders" and total["clicks_effect"] is not None)
    ]
    return ", ".join(parts)


def _moved(row: dict[str, Any]) -> str:
    """'conversion -64%': the factor that moved a key most, and by how much."""
    driver, change = row["driver"], row["driver_change"]
    return f"{_FACTOR_LABELS[driver]} {change:+.0%}" if driver and change is not None else ""


def _contributor(row: dict[str, Any], money: Currency) -> str:
    share = f"{row['share']:.0%} of the change" if row["share"] is not None else ""
    detail = ", ".join(x for x in (share, _moved(row)) if x)
    return f"{row['dimension']} {row['key']} {money.format(row['contribution'])}" + (
        f" ({detail})" if detail else ""
    )


def drivers_text(frame: pl.DataFrame, money: Currency, limit: int = 5) -> list[str]:
    """What moved revenue, as lines: its change split by factor, then its largest contributors."""
    total = frame.filter(pl.col("dimension") == "total")
    if total.is_empty() or total["contribution"][0] == 0:
        return []
    row = total.row(0, named=True)
    top = contributors(frame, limit=limit)
    lines = [f"What moved revenue ({money.format(row['contribution'])}): {_factors(row, money)}"]
    if not top.is_empty():
        lines.append(
            "Largest contributors: " + "; ".join(_contributor(r, money) for r in top.iter_rows(named=True))
        )
    return lines


def drivers_table(frame: pl.DataFrame, money: Currency, limit: int = 6) -> str:
    """What moved revenue (`cr.explain`): the change split by factor, then a table of its largest
    contributors (dimension, key, revenue of both periods, contribution, share, what moved it)."""
    total = frame.filter(pl.col("dimension") == "total")
    if total.is_empty() or total["contribution"][0] == 0:
        return ""
    row = total.row(0, named=True)
    head = "".join(
        f'<th style="{_HEAD}{";text-align:left" if n < 2 else ""}">{h}</th>'
        for n, h in enumerate(("", "", "Revenue", "Previous", "Contribution", "Share", "Moved by"))
    )
    body = []
    for key in contributors(frame, limit=limit).iter_rows(named=True):
        moved = _moved(key) or "–"
        body.append(
            f'<tr><td style="{_CELL};text-align:left">{escape(DIMENSION_TABLE[key["dimension"]].label)}</td>'
            f'<td style="{_CELL};text-align:left;white-space:normal;max-width:360px">'
            f"{escape(str(key['key']))}</td>"
            f'<td style="{_CELL}">{money.format(key["revenue"])}</td>'
            f'<td style="{_CELL}">{money.format(key["revenue_previous"])}</td>'
            f'<td style="{_CELL}">{money.format(key["contribution"])}</td>'
            f'<td style="{_CELL}">{key["share"]:.0%}</td><td style="{_CELL}">{escape(moved)}</td></tr>'
        )
    heading = (
        f"<p style='margin:8px 0 2px 0'><b>What moved revenue ({money.format(row['contribution'])})</b>: "
        f"{escape(_factors(row, money))}</p>"
    )
    table = f'<table style="{_TABLE}"><tr>{head}</tr>{"".join(body)}</table>' if body else ""
    return heading + table


def comparison_table(
    result: Comparison,
    money: Currency,
    metrics: tuple[str, ...] = ("revenue", "orders", "returns", "epc", "conversion_rate"),
) -> str:
    """One row per key: each figure of this period (the previous one below it, small) and its
    change. Figures the lake cannot give for these periods (EPC without daily clicks) are left out."""
    frame = result.frame
    if frame.is_empty():
        return "<p>No transactions in either period.</p>"
    shown = [m for m in metrics if frame[m].is_not_null().any() or frame[f"{m}_previous"].is_not_null().any()]
    head = (
        '<tr><th style="'
        + _HEAD
        + ';text-align:left"></th>'
        + "".join(f'<th style="{_HEAD}">{_LABELS[m]}</th><th style="{_HEAD}">Change</th>' for m in shown)
    )
    rows = []
    for row in frame.iter_rows(named=True):
        cells = "".join(
            f'<td style="{_CELL}">{figure(m, row[m], money)}<br>'
            f'<small style="color:{_QUIET}">{figure(m, row[f"{m}_previous"], money)}</small></td>'
            f"{change_cell(m, row[f'{m}_change'])}"
            for m in shown
        )
        rows.append(f'<tr><td style="{_CELL};text-align:left">{escape(str(row["key"]))}</td>{cells}</tr>')
    partial = "" if result.complete and result.previous_complete else " (a period is partial)"
    caption = (
        f'<caption style="caption-side:bottom;text-align:left;color:{_QUIET};font-size:12px">'
        f"Each cell: {result.current.start} to {result.current.end}, and below it {result.previous.start} to "
        f"{result.previous.end}{partial}</caption>"
    )
    return f'<table style="{_TABLE}">{caption}{head}</tr>{"".join(rows)}</table>{_notes(result.notes)}'


def ranking_table(frame: pl.DataFrame, dimension: str, money: Currency, note: str = "") -> str:
    """A ranking (`ranking_frame`) as a table: rank, key, its detail (a link's page, a merchant's
    network), revenue, orders, returns, return rate, and clicks, EPC and conversion where known
    (`note` says which windows those come from)."""
    if frame.is_empty():
        return "<p>No transactions in this period.</p>"
    spec = DIMENSION_TABLE[dimension]
    metrics = ["revenue", "orders", "returns", "return_rate"]
    if frame["clicks"].is_not_null().any():
        metrics += ["clicks", "epc", "conversion_rate"]
    detail = spec.detail_label
    head = (
        f'<tr><th style="{_HEAD}">#</th><th style="{_HEAD};text-align:left">{spec.label}</th>'
        + (f'<th style="{_HEAD};text-align:left">{detail}</th>' if detail else "")
        + "".join(f'<th style="{_HEAD}">{_LABELS[m]}</th>' for m in metrics)
        + "</tr>"
    )
    rows = []
    for row in frame.iter_rows(named=True):
        wide = f"{_CELL};text-align:left;white-space:normal;max-width:420px"
        name = f'<td style="{wide}">{escape(str(row["key"]))}</td>'
        extra = (
            f'<td style="{_CELL};text-align:left;white-space:normal;max-width:300px;color:{_QUIET}">'
            f"{escape(str(row['detail'] or ''))}</td>"
            if detail
            else ""
        )
        figures = "".join(f'<td style="{_CELL}">{figure(m, row[m], money)}</td>' for m in metrics)
        rows.append(f'<tr><td style="{_CELL}">{row["rank"]}</td>{name}{extra}{figures}</tr>')
    shown_note = _notes((note,)) if note and "clicks" in metrics else ""
    return f'<table style="{_TABLE}">{head}{"".join(rows)}</table>{shown_note}'


def _notes(notes: tuple[str, ...]) -> str:
    return "".join(f'<p style="color:{_QUIET};font-size:12px;margin:2px 0">{escape(n)}</p>' for n in notes)
