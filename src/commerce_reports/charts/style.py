"""The house look of every chart: a colour-blind-safe palette, currency and percent formats,
tooltips with the same names everywhere, titles that say the selection, and the empty chart."""

from __future__ import annotations

from datetime import date
from typing import Any, Final

import altair as alt
import polars as pl

from ..errors import ValidationError
from .selection import Coverage, Selection

__all__ = [
    "ACCENT",
    "BAR",
    "DIMENSION_LABELS",
    "EMPTY_TITLE",
    "FORMATS",
    "GREY",
    "METRIC_LABELS",
    "PALETTE",
    "SEQUENTIAL",
    "aggregate_note",
    "axis",
    "chart_data",
    "chart_title",
    "empty_chart",
    "quantity",
    "ranking_tooltips",
    "tip",
]

EMPTY_TITLE = "No data for this selection"
# Okabe & Ito's colour-blind-safe palette (the house theme uses the same order).
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
BAR, ACCENT, GREY = PALETTE[0], PALETTE[5], "#dcdcdc"
SEQUENTIAL: Final = "blues"

METRIC_LABELS: dict[str, tuple[str, str]] = {
    "revenue": ("Revenue", "currency"),
    "orders": ("Orders", "count"),
    "order_value": ("Order value", "currency"),
    "returns": ("Returns", "count"),
    "return_rate": ("Return rate", "percent"),
    "clicks": ("Clicks", "count"),
    "epc": ("EPC (earnings per click)", "currency"),
    "conversion_rate": ("Conversion rate", "percent"),
}
FORMATS = {"currency": "$,.2f", "percent": ".1%", "count": ",.0f"}
DIMENSION_LABELS = {
    "link": "Link",
    "device": "Device",
    "country": "Country",
    "network": "Network",
    "product": "Product",
}


def aggregate_note(span: tuple[date, date] | None) -> str:
    """The note under a chart with clicks or EPC: which days the month windows it used cover."""
    if span is None:
        return "Clicks, EPC, conversion: no stored networks report for this range"
    return f"Clicks, EPC, conversion: month windows {span[0]} to {span[1]}, by click date"


def axis(kind: str, title: str) -> alt.Axis:
    return alt.Axis(title=title, format=FORMATS[kind])


def quantity(metric: str, **kwargs: Any) -> alt.X:
    label, kind = METRIC_LABELS[metric]
    return alt.X(f"{metric}:Q", axis=axis(kind, label), **kwargs)


def tip(field: str, title: str, kind: str = "count") -> alt.Tooltip:
    return alt.Tooltip(f"{field}:Q", title=title, format=FORMATS[kind])


def ranking_tooltips(dimension: str, aggregates: bool) -> list[alt.Tooltip]:
    tips = [alt.Tooltip("key:N", title=DIMENSION_LABELS.get(dimension, dimension.title()))]
    if dimension in ("link", "product"):
        tips.append(alt.Tooltip("detail:N", title="Page" if dimension == "link" else "Merchant"))
    tips += [
        tip("revenue", "Revenue", "currency"),
        tip("order_value", "Order value", "currency"),
        tip("orders", "Orders"),
        tip("returns", "Returns"),
        tip("return_rate", "Return rate", "percent"),
    ]
    if aggregates:
        tips += [
            tip("clicks", "Clicks"),
            alt.Tooltip("epc:Q", title="EPC", format="$,.3f"),
            alt.Tooltip("conversion_rate:Q", title="Conversion rate", format=".2%"),
        ]
    return tips


def chart_data(frame: pl.DataFrame) -> pl.DataFrame:
    """`frame` as a chart takes it: money (DECIMAL in the views) as Float64, the one type Vega
    draws. Frames and tables keep the exact amounts; only what is drawn is a float."""
    decimals = [name for name, kind in frame.schema.items() if kind.is_decimal()]
    return frame.with_columns(pl.col(decimals).cast(pl.Float64)) if decimals else frame


def chart_title(text: str, sel: Selection, cover: Coverage | None, *notes: str) -> alt.TitleParams:
    """The title, and a subtitle with the days the chart really covers (`cover`) and `notes`."""
    said = cover.describe(sel) if cover is not None else sel.describe()
    return alt.TitleParams(text, subtitle=[said, *notes], anchor="start")


def empty_chart(
    sel: Selection, what: str = "", cover: Coverage | None = None, *, width: int = 420
) -> alt.Chart:
    """A chart that says there is nothing to draw, and for which selection."""
    if not isinstance(sel, Selection) or not isinstance(what, str):
        raise ValidationError("selection", f"{sel!r} is not a Selection", "give Selection(...) and a text")
    message = f"No {what} in this selection" if what else "Nothing to show"
    frame = pl.DataFrame({"message": [message], "hint": ["Widen the dates or clear a filter"]})
    chart: alt.Chart = (
        alt.Chart(frame, title=chart_title(EMPTY_TITLE, sel, cover))
        .mark_text(fontSize=14, color="#555555")
        .encode(text="message:N", tooltip=[alt.Tooltip("hint:N", title="Try")])
        .properties(width=width, height=80)
    )
    return chart
