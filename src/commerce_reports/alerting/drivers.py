"""Why revenue changed: a change split into its factors and its largest contributors.

    import commerce_reports as cr
    cr.explain(con, site="alpha", start="2026-11-16", end="2026-11-22")   # against the week before

Revenue is clicks x conversion (orders per click) x order value (revenue per order), or orders x
order value where the service counts no clicks. The change of each key (the total, each network,
device, country, merchant) is split into one effect per factor by the logarithmic mean Divisia
index (LMDI: an effect is the change's logarithmic mean times the log-ratio of its factor), so the
effects add up to the change exactly, whatever their order. A key's contribution is its own change;
its share, that contribution over the total's change: "Mobile: conversion -70%, 81% of the drop".
A key with nothing in one period (new, or gone) or with revenue below zero moves only by orders.

The same split explains an alert's group (`group.py`), where the previous period is the mean of the
baseline weeks at the same age instead of the period before.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from decimal import ROUND_HALF_UP, Decimal
from typing import TYPE_CHECKING, Any

import polars as pl

from ..charts.comparison import compare_periods
from ..charts.dimensions import DIMENSIONS, Dimension
from ..charts.queries import check_top_n
from ..charts.selection import Selection
from ..contract import MONEY_SCALE
from ..errors import ValidationError

if TYPE_CHECKING:
    from ..db.readonly import Connection

__all__ = ["EXPLAINED_BY", "FACTORS", "OTHERS", "SCHEMA", "contributors", "decompose", "explain"]

EXPLAINED_BY: tuple[Dimension, ...] = ("device", "country", "network", "merchant")
"""The dimensions a change is explained by, unless told otherwise."""
FACTORS = ("clicks", "conversion_rate", "orders", "order_value")
"""The factors of revenue: clicks x conversion = orders; orders x order value = revenue."""
TOTAL = "Total"
OTHERS = "(other keys)"
_MONEY = pl.Decimal(38, MONEY_SCALE)
_UNIT = Decimal(1).scaleb(-MONEY_SCALE)
SCHEMA: dict[str, pl.DataType] = {
    "dimension": pl.String(),
    "key": pl.String(),
    "revenue": _MONEY,
    "revenue_previous": _MONEY,
    "contribution": _MONEY,
    "share": pl.Float64(),
    "orders": pl.Float64(),
    "orders_previous": pl.Float64(),
    "clicks": pl.Float64(),
    "clicks_previous": pl.Float64(),
    "clicks_effect": _MONEY,
    "conversion_effect": _MONEY,
    "orders_effect": _MONEY,
    "order_value_effect": _MONEY,
    "driver": pl.String(),
    "driver_change": pl.Float64(),
}
"""The columns of a decomposition, one row per key (`dimension` "total" first): the revenue of
both periods, the key's `contribution` to the change (its own change) and `share` of the total's;
orders and clicks (counts as floats: an alert's baseline is a mean of weeks; clicks null where the
service counts none); the contribution split by factor (`orders_effect` = clicks + conversion
effects; the effects and `order_value_effect` add up to the contribution exactly); the `driver`,
the factor that moved the key most in the direction of its change, and that factor's own change."""


def explain(
    con: Connection,
    selection: Selection | None = None,
    *,
    by: Iterable[Dimension] = EXPLAINED_BY,
    top_n: int = 5,
    **where: Any,
) -> pl.DataFrame:
    """Why revenue changed between the selection's period and the previous one of the same length
    (`compare`'s periods): the total's factors, then per dimension of `by` the `top_n` keys that
    moved it most (in the direction of the change first) and one row for the other keys, so each
    dimension's contributions add up to the total's change. See `SCHEMA` for the columns."""
    chosen = _dimensions(by)
    check_top_n(top_n)
    total = compare_periods(con, selection, **where)
    frames = [_sides(total.frame, "total")]
    for dimension in chosen:
        frames.append(_sides(compare_periods(con, total.current, by=dimension, top_n=200).frame, dimension))
    return decompose(pl.concat(frames), top_n=top_n)


def _dimensions(by: Iterable[Dimension] | str) -> list[Dimension]:
    chosen = [by] if isinstance(by, str) else list(by) if isinstance(by, Iterable) else None
    if chosen is None or not all(isinstance(d, str) and d in DIMENSIONS for d in chosen):
        raise ValidationError(
            "by", f"{by!r} is not a list of dimensions", f"give some of {', '.join(DIMENSIONS)}"
        )
    return list(dict.fromkeys(chosen))  # type: ignore[arg-type]


def _sides(frame: pl.DataFrame, dimension: str) -> pl.DataFrame:
    """A comparison frame as the two periods' sides a decomposition reads."""
    return frame.select(
        pl.lit(dimension).alias("dimension"),
        pl.col("key").cast(pl.String),
        pl.col("revenue").cast(pl.Float64),
        pl.col("revenue_previous").cast(pl.Float64),
        pl.col("orders").cast(pl.Float64),
        pl.col("orders_previous").cast(pl.Float64),
        pl.col("clicks").cast(pl.Float64),
        pl.col("clicks_previous").cast(pl.Float64),
    )


def decompose(sides: pl.DataFrame, *, top_n: int | None = None) -> pl.DataFrame:
    """The decomposition (`SCHEMA`) of `sides`: per dimension and key, revenue, orders and clicks
    of both periods (`<name>` and `<name>_previous`; clicks null where unknown), the "total" row
    first. With `top_n`, each dimension keeps its `top_n` largest contributors in the direction of
    the total's change (then against it) and one `(other keys)` row for the rest."""
    total = sides.filter(pl.col("dimension") == "total")
    change = float(total["revenue"].sum() or 0.0) - float(total["revenue_previous"].sum() or 0.0)
    rows: list[dict[str, Any]] = []
    for dimension in dict.fromkeys(sides["dimension"].to_list()):
        part = sides.filter(pl.col("dimension") == dimension)
        if top_n is not None and dimension != "total":
            part = _top(part, change, top_n, total)
        rows += [_split(row, change) for row in part.iter_rows(named=True)]
    return pl.DataFrame(rows, schema=SCHEMA)


def _top(part: pl.DataFrame, change: float, top_n: int, total: pl.DataFrame) -> pl.DataFrame:
    """The keys that moved most in the direction of `change` (then against it), and the rest in
    one row whose revenue and orders make the dimension add up to the total."""
    sign = -1.0 if change < 0 else 1.0
    ordered = part.with_columns(moved=(pl.col("revenue") - pl.col("revenue_previous")) * sign).sort(
        ["moved", "key"], descending=[True, False]
    )
    kept = ordered.head(top_n).drop("moved")
    if total.height == 0:
        return kept
    rest: dict[str, Any] = {"dimension": part["dimension"][0], "key": OTHERS}
    for column in ("revenue", "revenue_previous", "orders", "orders_previous"):
        rest[column] = float(total[column].sum() or 0.0) - float(kept[column].sum() or 0.0)
    rest["clicks"] = rest["clicks_previous"] = None
    if all(abs(rest[c]) < 1e-9 for c in ("revenue", "revenue_previous", "orders", "orders_previous")):
        return kept
    return pl.concat([kept, pl.DataFrame([rest], schema=kept.schema)])


def _log_mean(a: float, b: float) -> float:
    """The logarithmic mean of two positive numbers: (a - b) / (ln a - ln b), or a when equal."""
    return a if math.isclose(a, b, rel_tol=1e-12) else (a - b) / (math.log(a) - math.log(b))


def _split(row: dict[str, Any], total_change: float) -> dict[str, Any]:
    """One key's decomposition row: its contribution split into factor effects (LMDI)."""
    now, before = row["revenue"] or 0.0, row["revenue_previous"] or 0.0
    orders, orders_before = row["orders"] or 0.0, row["orders_previous"] or 0.0
    clicks, clicks_before = row["clicks"], row["clicks_previous"]
    contribution = now - before
    exact = _cents(now) - _cents(before)
    ratios: dict[str, float] = {}
    if min(now, before, orders, orders_before) > 0:
        ratios["order_value"] = (now / orders) / (before / orders_before)
        if clicks and clicks_before:
            ratios["clicks"] = clicks / clicks_before
            ratios["conversion_rate"] = (orders / clicks) / (orders_before / clicks_before)
        else:
            ratios["orders"] = orders / orders_before
        weight = _log_mean(now, before)
        effects = {factor: weight * math.log(ratio) for factor, ratio in ratios.items()}
    else:  # new, gone, or below zero: the orders moved it
        effects = {"orders": contribution}
    money = _exact(effects, exact)
    driver = (
        max(effects, key=lambda f: effects[f] * (1 if contribution >= 0 else -1)) if contribution else None
    )
    out: dict[str, Any] = {
        "dimension": row["dimension"],
        "key": row["key"],
        "revenue": _cents(now),
        "revenue_previous": _cents(before),
        "contribution": exact,
        "share": contribution / total_change if total_change else None,
        "orders": orders,
        "orders_previous": orders_before,
        "clicks": clicks,
        "clicks_previous": clicks_before,
        "clicks_effect": money.get("clicks"),
        "conversion_effect": money.get("conversion_rate"),
        "orders_effect": money.get("orders", _sum(money, "clicks", "conversion_rate")),
        "order_value_effect": money.get("order_value"),
        "driver": driver,
        "driver_change": (ratios[driver] - 1 if driver in ratios else (-1.0 if now <= 0 else None))
        if driver
        else None,
    }
    return out


def _cents(value: float) -> Decimal:
    return Decimal(repr(float(value))).quantize(_UNIT, rounding=ROUND_HALF_UP)


def _exact(effects: dict[str, float], contribution: Decimal) -> dict[str, Decimal]:
    """The effects as exact amounts that add up to the contribution to the last digit (the
    rounding left on the largest)."""
    money = {factor: _cents(effect) for factor, effect in effects.items()}
    if money:
        largest = max(money, key=lambda f: abs(effects[f]))
        money[largest] += contribution - sum(money.values(), Decimal(0))
    return money


def _sum(money: dict[str, Decimal], *factors: str) -> Decimal | None:
    parts = [money[f] for f in factors if f in money]
    return sum(parts, Decimal(0)) if parts else None


def contributors(
    frame: pl.DataFrame, dimensions: Sequence[str] | None = None, limit: int = 3
) -> pl.DataFrame:
    """The keys of a decomposition that explain most of the total's change, largest share first
    (the total and the `(other keys)` rows left out)."""
    keys = frame.filter((pl.col("dimension") != "total") & (pl.col("key") != OTHERS) & (pl.col("share") > 0))
    if dimensions is not None:
        keys = keys.filter(pl.col("dimension").is_in(list(dimensions)))
    return keys.sort(["share", "dimension", "key"], descending=[True, False, False]).head(limit)
