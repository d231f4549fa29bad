"""The chart of a comparison (`comparison.py`): per key, a metric in the previous period and this
one, joined by a line and labelled with its change. Apart from the comparison itself so that what
only compares (the alerts' drivers, the report's tables) never imports Altair.

    from commerce_reports.charts import comparison_chart
    comparison_chart(con, site="alpha", start="2026-11-16", end="2026-11-22", by="device")
"""

from __future__ import annotations

import functools
import json
from typing import TYPE_CHECKING, Any

import altair as alt
import polars as pl

from ..errors import ValidationError
from ..money import Currency
from .comparison import COMPARED, Comparison, compare_periods
from .dimensions import DIMENSION_TABLE, Dimension
from .queries import check_dimension
from .selection import Selection
from .style import (
    ACCENT,
    BAR,
    GREY,
    METRIC_LABELS,
    chart_data,
    chart_title,
    empty_chart,
    money_of,
    number_format,
    title_of,
)

if TYPE_CHECKING:
    from ..db.readonly import Connection

__all__ = ["comparison_chart", "comparison_chart_of", "comparison_spec"]


def comparison_chart(
    con: Connection,
    selection: Selection | None = None,
    *,
    by: Dimension = "network",
    metric: str = "revenue",
    top_n: int = 10,
    currency: Currency | str | None = None,
    **where: Any,
) -> alt.LayerChart | alt.Chart:
    """Per key of `by`: `metric` in the previous period (grey) and this one (a dot, blue when up,
    orange when down), joined by a line, each labelled with its change."""
    if metric not in COMPARED:
        raise ValidationError("metric", f"{metric!r} is not compared", f"use one of {', '.join(COMPARED)}")
    money = money_of(currency)
    result = compare_periods(con, selection, by=by, top_n=top_n, **where)
    return comparison_chart_of(result, by, metric=metric, currency=money)


def comparison_chart_of(
    result: Comparison,
    by: Dimension,
    *,
    metric: str = "revenue",
    currency: Currency | str | None = None,
) -> alt.LayerChart | alt.Chart:
    """`comparison_chart` of a comparison already made (`compare_periods(..., by=by)`): what a
    page that shows the figures and their chart draws without asking the lake twice."""
    money = _check_chart(result, by, metric, currency)
    frame = _drawn(result, metric)
    if frame is None:
        return _nothing_to_compare(result, metric)
    return alt.LayerChart(
        data=chart_data(frame),
        layer=_layers(by, metric, money),
        title=_title(result, by, metric),
        width=_WIDTH,
        height=alt.Step(_STEP),
    )


def comparison_spec(
    result: Comparison,
    by: Dimension,
    *,
    metric: str = "revenue",
    currency: Currency | str | None = None,
) -> dict[str, Any]:
    """The Vega-Lite spec of `comparison_chart_of` (its `to_dict()`, the data under another name),
    built without Altair: the layers are made once per dimension, metric and currency (Altair takes
    tens of milliseconds to build and convert them), then each comparison adds its title and rows.
    What a served page sends at every answer."""
    money = _check_chart(result, by, metric, currency)
    frame = _drawn(result, metric)
    if frame is None:
        return _nothing_to_compare(result, metric).to_dict(validate=False)
    spec: dict[str, Any] = json.loads(_template(by, metric, money))  # a copy of its own
    spec["title"] = _title(result, by, metric).to_dict(validate=False)
    spec["datasets"] = {_DATA: chart_data(frame).to_dicts()}
    return spec


def _nothing_to_compare(result: Comparison, metric: str) -> alt.Chart:
    return empty_chart(result.current, f"{METRIC_LABELS[metric][0].lower()} to compare")


def _check_chart(result: Comparison, by: Dimension, metric: str, currency: Currency | str | None) -> Currency:
    """The currency of a comparison's chart, once its arguments are checked."""
    if not isinstance(result, Comparison):
        raise ValidationError("result", f"{result!r} is not a Comparison", "give compare_periods(...)")
    check_dimension(by)
    if metric not in COMPARED:
        raise ValidationError("metric", f"{metric!r} is not compared", f"use one of {', '.join(COMPARED)}")
    return money_of(currency)


_WIDTH, _STEP = 460, 22
_DATA = "comparison"  # the rows' name in `comparison_spec`


def _drawn(result: Comparison, metric: str) -> pl.DataFrame | None:
    """The rows the chart of `metric` draws (None: none has it in either period): the key, both
    periods' figures and the change, with the rank, direction and label of each change."""
    frame = result.frame.filter(pl.col(metric).is_not_null() | pl.col(f"{metric}_previous").is_not_null())
    if frame.is_empty():
        return None
    return frame.with_columns(
        rank=pl.int_range(pl.len()),
        percent=(pl.col(f"{metric}_change") * 100).round(0).cast(pl.Int64),
        up=pl.col(metric).fill_null(0) >= pl.col(f"{metric}_previous").fill_null(0),
        label_at=pl.max_horizontal(metric, f"{metric}_previous"),
    ).with_columns(
        change_label=pl.when(pl.col("percent").is_null())
        .then(pl.lit("new"))  # nothing the period before
        .when(pl.col("percent") > 0)
        .then(pl.format("+{}%", pl.col("percent")))
        .otherwise(pl.format("{}%", pl.col("percent")))
    )


@functools.lru_cache(maxsize=64)
def _template(by: Dimension, metric: str, money: Currency) -> str:
    """The spec of a comparison's chart without its title and rows, as JSON: what Altair makes of
    the layers, once."""
    layers = _layers(by, metric, money)
    chart = alt.LayerChart(data=alt.NamedData(_DATA), layer=layers, width=_WIDTH, height=alt.Step(_STEP))
    return json.dumps(chart.to_dict(validate=False))


def _layers(by: Dimension, metric: str, money: Currency) -> list[alt.Chart]:
    """The chart's layers: the line from the previous period's figure to this one's, both as dots,
    and the change as a label. Nothing in them depends on the periods (the title says their dates):
    a served page keeps a chart drawn and gives it each answer's rows and title."""
    label, kind = METRIC_LABELS[metric]
    fmt = number_format(kind, money)
    y = alt.Y("key:N", sort=alt.EncodingSortField("rank"), title=None, axis=alt.Axis(labelLimit=220))
    axis_title = title_of(label, kind, money)
    tips = [
        alt.Tooltip("key:N", title=DIMENSION_TABLE[by].label),
        alt.Tooltip(f"{metric}:Q", title=f"{axis_title}, this period", format=fmt),
        alt.Tooltip(f"{metric}_previous:Q", title=f"{axis_title}, previous period", format=fmt),
        alt.Tooltip(f"{metric}_change:Q", title="Change", format="+.1%"),
    ]
    # Channels as objects and the data on the layer chart, not on each layer: the same spec as
    # shorthand strings on layers of their own, 4x faster (Altair parses a string channel against
    # its schema, and copies each layer's data deeply).
    up = alt.ColorValue(ACCENT, condition={"test": "datum.up", "value": BAR})
    base = alt.Chart().encode(y, tips)
    line = base.mark_rule(color=GREY, strokeWidth=2).encode(
        alt.X(f"{metric}_previous:Q", axis=alt.Axis(title=axis_title, format=fmt)), alt.X2(metric)
    )
    before = base.mark_point(color="#888888", filled=True, size=50).encode(alt.X(f"{metric}_previous:Q"))
    after = base.mark_point(filled=True, size=90).encode(alt.X(f"{metric}:Q"), up)
    text = base.mark_text(align="left", dx=8, fontSize=11).encode(
        alt.X("label_at:Q"), alt.Text("change_label:N"), up
    )
    return [line, before, after, text]


def _title(result: Comparison, by: Dimension, metric: str) -> alt.TitleParams:
    """The chart's title: what it compares, the periods, and the comparison's notes."""
    sel, label = result.current, METRIC_LABELS[metric][0]
    notes = [
        f"Grey: {result.previous.start} to {result.previous.end}; dot: {sel.start} to {sel.end}",
        *result.notes,
    ]
    if metric in ("clicks", "epc", "conversion_rate") and result.aggregate_note:
        notes.append(result.aggregate_note)
    return chart_title(
        f"{label} by {DIMENSION_TABLE[by].label.lower()}, against the previous {sel.days} days",
        sel,
        None,
        *notes,
    )
