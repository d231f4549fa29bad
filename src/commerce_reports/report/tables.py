"""HTML tables of the report's figures: readable in a notebook, an exported page, a mail client and
on paper. Styles are inline (mail clients drop style sheets); money is written by `Currency`, every
name is escaped, a change is coloured by whether it is good news (a return rate going up is not).
"""

from __future__ import annotations

from html import escape

import polars as pl

from ..charts.compare import Comparison
from ..charts.dimensions import DIMENSION_TABLE
from ..charts.figures import figure
from ..money import Currency

__all__ = ["change_cell", "comparison_table", "figure", "ranking_table", "summary_table"]

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
    return f'<table style="{_TABLE}">{head}{body}</table>{_notes(notes)}'


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
