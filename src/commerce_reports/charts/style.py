"""The house look of every chart: a colour-blind-safe palette, money in the configured currency
(its code in the titles, its minor units in the numbers), percent formats, tooltips with the same
names everywhere, titles that say the selection, and the empty chart."""

from __future__ import annotations

from datetime import date
from typing import Any, Final

import altair as alt
import polars as pl

from ..config import current_settings
from ..errors import ValidationError
from ..money import Currency
from .dimensions import DIMENSION_TABLE
from .render import use_offline_renderer
from .selection import Coverage, Selection

__all__ = [
    "ACCENT",
    "BAR",
    "EMPTY_TITLE",
    "GREY",
    "METRIC_LABELS",
    "PALETTE",
    "SEQUENTIAL",
    "aggregate_note",
    "axis",
    "chart_data",
    "chart_title",
    "empty_chart",
    "money_of",
    "number_format",
    "quantity",
    "ranking_tooltips",
    "tip",
    "title_of",
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
    "epc": ("EPC, earnings per click", "currency"),
    "conversion_rate": ("Conversion rate", "percent"),
}
_FORMATS = {"percent": ".1%", "count": ",.0f"}

use_offline_renderer()  # charts in a notebook draw with the Vega shipped in the package, not a CDN's


def money_of(currency: Currency | str | None) -> Currency:
    """The currency money is shown in: `currency` when given (a code or a Currency), else the
    configured one (`COMMERCE_REPORTS_CURRENCY`, commerce-reports.toml, default USD)."""
    return current_settings().currency if currency is None else Currency.of(currency)


def number_format(kind: str, money: Currency, digits: int | None = None) -> str:
    """The d3 format of a figure of `kind` (currency, percent, count)."""
    return money.d3_format(digits) if kind == "currency" else _FORMATS[kind]


def title_of(title: str, kind: str, money: Currency) -> str:
    """A title, with the currency's code when it names money: 'Revenue (EUR)'."""
    return money.label(title) if kind == "currency" else title


def aggregate_note(span: tuple[date, date] | None) -> str:
    """The note under a chart with clicks or EPC: which days the month windows it used cover."""
    if span is None:
        return "Clicks, EPC, conversion: no stored networks report for this range"
    return f"Clicks, EPC, conversion: month windows {span[0]} to {span[1]}, by click date"


def axis(kind: str, title: str, money: Currency, digits: int | None = None) -> alt.Axis:
    return alt.Axis(title=title_of(title, kind, money), format=number_format(kind, money, digits))


def quantity(metric: str, money: Currency, **kwargs: Any) -> alt.X:
    label, kind = METRIC_LABELS[metric]
    return alt.X(f"{metric}:Q", axis=axis(kind, label, money), **kwargs)


def tip(
    field: str, title: str, money: Currency, kind: str = "count", digits: int | None = None
) -> alt.Tooltip:
    return alt.Tooltip(
        f"{field}:Q", title=title_of(title, kind, money), format=number_format(kind, money, digits)
    )


def ranking_tooltips(dimension: str, aggregates: bool, money: Currency) -> list[alt.Tooltip]:
    spec = DIMENSION_TABLE[dimension]
    tips = [alt.Tooltip("key:N", title=spec.label)]
    if spec.detail_label:
        tips.append(alt.Tooltip("detail:N", title=spec.detail_label))
    tips += [
        tip("revenue", "Revenue", money, "currency"),
        tip("order_value", "Order value", money, "currency"),
        tip("orders", "Orders", money),
        tip("returns", "Returns", money),
        tip("return_rate", "Return rate", money, "percent"),
    ]
    if aggregates:
        tips += [
            tip("clicks", "Clicks", money),
            tip("epc", "EPC", money, "currency", money.digits + 1),
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
    sel: Selection, what: str = "", cover: Coverage | None = None, *, width: int = 420, why: str | None = None
) -> alt.Chart:
    """A chart that says there is nothing to draw, for which selection, and `why` when it is known
    (a report the service does not slice so, or one the lake never kept), with what to do."""
    if not isinstance(sel, Selection) or not isinstance(what, str):
        raise ValidationError("selection", f"{sel!r} is not a Selection", "give Selection(...) and a text")
    message = f"No {what} in this selection" if what else "Nothing to show"
    frame = pl.DataFrame({"message": [message], "hint": [why or "Widen the dates or clear a filter"]})
    notes = (why,) if why else ()
    chart: alt.Chart = (
        alt.Chart(frame, title=chart_title(EMPTY_TITLE, sel, cover, *notes))
        .mark_text(fontSize=14, color="#555555")
        .encode(text="message:N", tooltip=[alt.Tooltip("hint:N", title="Try")])
        .properties(width=width, height=80)
    )
    return chart
