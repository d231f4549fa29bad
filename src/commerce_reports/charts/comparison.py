"""A period against the one before it, of the same length: what a Monday report is read for.

    from commerce_reports.charts import compare, comparison_chart
    compare(con, site="alpha", start="2026-11-16", end="2026-11-22")               # the total
    compare(con, site="alpha", start="2026-11-16", end="2026-11-22", by="network")  # per network
    comparison_chart(con, site="alpha", start="2026-11-16", end="2026-11-22", by="device")

Transaction figures (revenue, orders, returns, return rate) count commission days exactly (revenue
stays DECIMAL in the frame; the chart hands Vega floats). Clicks come from the service's
aggregates, as the `network_clicks` rollup keeps them (a few files, where the networks report has
one per window): the daily windows when the lake holds one for every day of both periods (`sync
--grain day`), else the month windows when both periods are whole calendar months; otherwise they
are left empty and the comparison says why. EPC and conversion rate are the same
period's revenue and orders over its clicks: one revenue basis in every row, so clicks x EPC is the
revenue beside it (the service's own EPC counts revenue by click date, which a recent period has not
fully earned yet). A period the lake does not cover whole is marked (`complete`), and so is one the
service may still revise where the views say so (`final`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date, timedelta
from typing import TYPE_CHECKING, Any

import polars as pl

from ..contract import MONEY_SCALE, MONEY_SUM
from ..errors import ValidationError
from ..params import FIRST_DAY
from .dimensions import Dimension
from .queries import (
    aggregate_slice,
    check_dimension,
    check_top_n,
    columns_of,
    fetch_frame,
    totals_side,
    transaction_side,
)
from .selection import Coverage, Selection, as_selection, resolve

if TYPE_CHECKING:
    from ..db.readonly import Connection

__all__ = [
    "COMPARED",
    "Comparison",
    "compare",
    "compare_periods",
    "comparisons",
    "period_clicks",
    "period_flags",
    "previous_period",
]

COMPARED = ("revenue", "orders", "returns", "return_rate", "clicks", "epc", "conversion_rate")
"""The figures compared: each has `<name>`, `<name>_previous` and `<name>_change` columns."""
TOTAL = "Total"
_COUNTS = {"orders", "returns", "clicks"}


def _type_of(column: str) -> pl.DataType:
    """A comparison column's type: revenue exact (the views' DECIMAL), counts whole, the rest (rates,
    EPC, changes) floats."""
    figure = column.removesuffix("_previous")
    if figure == "revenue":
        return pl.Decimal(38, MONEY_SCALE)
    return pl.Int64() if figure in _COUNTS else pl.Float64()


@dataclass(frozen=True)
class Comparison:
    """Two periods and their figures: `frame` (one row per key, `TOTAL` without a dimension),
    whether each period is covered whole by the lake (`complete`, `previous_complete`) and final
    (None: the views do not say), the grain of the windows EPC and conversion came from ('day',
    'month', or '' with `aggregate_note` saying why there are none), and notes for readers."""

    current: Selection
    previous: Selection
    frame: pl.DataFrame
    complete: bool
    previous_complete: bool
    final: bool | None
    aggregates: str
    aggregate_note: str
    notes: tuple[str, ...]


def previous_period(sel: Selection) -> Selection:
    """The period just before `sel`'s (a resolved selection), of the same length: the same number
    of calendar months before a period of whole months (October against September), else the same
    number of days (a week against the week before)."""
    start, end = sel.bounds
    if _whole_months(start, end):  # counted in months from year 0: the same months before
        month = 2 * (start.year * 12 + start.month - 1) - (end.year * 12 + end.month - 1) - 1
        first = date(month // 12, month % 12 + 1, 1) if month >= 12 else date.min
    else:
        first = start - timedelta(days=min(sel.days, (start - date.min).days))
    if first < FIRST_DAY:
        raise ValidationError(
            "start",
            f"the period before {start} to {end} would begin before {FIRST_DAY}: there is nothing to "
            "compare it with",
            "give a shorter or a later period",
        )
    return replace(sel, start=first, end=start - timedelta(days=1))


def _whole_months(start: date, end: date) -> bool:
    return start.day == 1 and (end + timedelta(days=1)).day == 1


def _per_period(con: Connection, queries: Sequence[tuple[str, dict[str, Any]]]) -> list[pl.DataFrame]:
    """The result of each query (SQL and its parameters), asked in one statement: each statement
    binds the views and crosses into DuckDB again, the part of a small query that costs most."""
    parts, params = [], {}
    for number, (sql, own) in enumerate(queries):
        renamed = re.sub(r"\$(\w+)", rf"$\1_{number}", sql)  # every period binds $start, $end, ...
        parts.append(f"SELECT {number} AS period, * FROM ({renamed})")
        params.update({f"{name}_{number}": value for name, value in own.items()})
    frame = fetch_frame(con, " UNION ALL ".join(parts), params)
    return [frame.filter(pl.col("period") == number).drop("period") for number in range(len(queries))]


def _ledger(dimension: Dimension | None, sel: Selection) -> tuple[str, dict[str, Any]]:
    """SQL (and parameters): key, revenue, orders, returns of one period."""
    if dimension is not None:
        sql, params = transaction_side(dimension, sel, detail=False)
    else:
        totals, params = totals_side(sel)
        sql = f"SELECT '{TOTAL}' AS key, * FROM ({totals})"
    ledger = f"""SELECT key::VARCHAR AS key, coalesce(revenue, 0)::{MONEY_SUM} AS revenue,
       coalesce(orders, 0)::BIGINT AS orders, coalesce(returns, 0)::BIGINT AS returns
FROM ({sql}) WHERE orders IS NOT NULL AND orders > 0"""
    return ledger, params


def _aggregate_source(con: Connection, condition: str, periods: list[Selection]) -> tuple[str, str] | None:
    """The grain whose windows answer every period whole ('day' or 'month') and its window
    condition, or None when neither does."""
    first, last = periods[-1].bounds[0], periods[0].bounds[1]
    params: dict[str, Any] = {"first": first, "last": last}
    site = periods[0].site_clause(params)
    scope = f" AND {site}" if site else ""
    # Every day's clicks are in once the day has ended; whether a period is whole (its windows
    # settled, its ledger days stored) is said apart, by the views' `complete` (see `period_flags`).
    rows = con.execute(
        f"""SELECT site, slice, count(DISTINCT window_start) FROM network_clicks
WHERE grain = 'day' AND {condition} AND window_start BETWEEN $first AND $last
  AND fetched_at >= window_end::TIMESTAMPTZ{scope}
GROUP BY ALL""",
        params,
    ).fetchall()
    days = (last - first).days + 1
    if rows and all(count == days for _, _, count in rows):
        return "day", "grain = 'day'"
    if all(_whole_months(*p.bounds) for p in periods):
        return "month", "grain = 'month'"
    return None


def _aggregates(key: str, condition: str, grain: str, sel: Selection) -> tuple[str, dict[str, Any]]:
    """SQL (and parameters): key, clicks of one period from windows of `grain`."""
    start, end = sel.bounds
    params: dict[str, Any] = {"start": start, "end": end}
    clauses = [f"grain = '{grain}'", condition, "window_start >= $start", "window_end <= $end + 1"]
    clauses += sel.network_clauses(params)
    sql = (
        f"SELECT ({key})::VARCHAR AS key, sum(clicks)::DOUBLE AS clicks "
        f"FROM network_clicks WHERE {' AND '.join(clauses)} GROUP BY 1"
    )
    return sql, params


def period_clicks(
    con: Connection, sel: Selection, by: Dimension | None = None
) -> tuple[pl.DataFrame | None, str]:
    """The clicks of exactly the selection's period (a resolved one) per key of `by` (`Total`
    without), from the daily windows when the lake holds one for each of its days, else the month
    windows of a period of whole months; (None, why) when neither answers it."""
    chosen = aggregate_slice(by or "network", sel)
    if chosen is None:
        return None, "the service does not count clicks this way"
    source = _aggregate_source(con, chosen[1], [sel])
    if source is None:
        return None, (
            "the service counts clicks by month, and the lake holds no daily windows for every day of "
            f"{sel.start} to {sel.end} (`commerce-reports sync --grain day` stores them)"
        )
    key = chosen[0] if by is not None else f"'{TOTAL}'"
    return _per_period(con, [_aggregates(key, chosen[1], source[0], sel)])[0], ""


def _period_frame(ledger: pl.DataFrame, aggregates: pl.DataFrame | None) -> pl.DataFrame:
    """One period's figures; EPC and conversion over the period's own revenue and orders."""
    frame = ledger.with_columns(return_rate=pl.col("returns") / pl.col("orders"))
    if aggregates is None:
        return frame.with_columns(
            clicks=pl.lit(None, pl.Float64),
            epc=pl.lit(None, pl.Float64),
            conversion_rate=pl.lit(None, pl.Float64),
        )
    both = frame.join(aggregates, on="key", how="full", coalesce=True)
    clicks = pl.when(pl.col("clicks") > 0).then(pl.col("clicks"))
    return both.with_columns(
        pl.col("revenue").fill_null(0),
        pl.col("orders").fill_null(0),
        pl.col("returns").fill_null(0),
    ).with_columns(
        epc=pl.col("revenue").cast(pl.Float64) / clicks,
        conversion_rate=pl.col("orders").cast(pl.Float64) / clicks,
    )


def period_flags(
    con: Connection, periods: Sequence[Selection], cover: Coverage
) -> list[tuple[bool, bool | None]]:
    """(complete, final) of each period (of one site choice): the lake holds every day of it whole
    (the views' `complete` column where they have it, else the ledger's days), and the service will
    no longer revise it (the views' `final` column; None where they have none). One statement."""
    held = [cover.holds(period) for period in periods]
    columns = columns_of(con, "daily_performance")
    wanted = [c for c in ("complete", "final") if c in columns]
    if not wanted:
        return [(complete, None) for complete in held]
    first, last = min(p.bounds[0] for p in periods), max(p.bounds[1] for p in periods)
    where, params = replace(periods[0], start=first, end=last).where("day", filters=False)
    cells = []
    for number, period in enumerate(periods):
        params[f"start_{number}"], params[f"end_{number}"] = period.bounds
        within = f"day BETWEEN $start_{number} AND $end_{number}"
        cells += [f"coalesce(bool_and({c}) FILTER (WHERE {within}), false)" for c in wanted]
    row = con.execute(f"SELECT {', '.join(cells)} FROM daily_performance WHERE {where}", params).fetchall()[0]
    flags = []
    for number, complete in enumerate(held):
        said = dict(zip(wanted, row[number * len(wanted) : (number + 1) * len(wanted)], strict=True))
        final = bool(said["final"]) if "final" in said else None
        flags.append((complete and bool(said.get("complete", True)), final))
    return flags


def compare_periods(
    con: Connection,
    selection: Selection | None = None,
    *,
    by: Dimension | None = None,
    top_n: int = 15,
    cover: Coverage | None = None,
    **where: Any,
) -> Comparison:
    """The selection's period against the previous one of the same length, in total (`by` None)
    or per key of a dimension (the `top_n` keys by current revenue, then by previous revenue).
    `cover`: the lake's coverage of the selection's sites, when already known (a served dashboard
    keeps it until the lake changes; finding it reads every ledger day)."""
    return comparisons(con, [(as_selection(selection, **where), by)], top_n=top_n, cover=cover)[0]


def comparisons(
    con: Connection,
    asked: Sequence[tuple[Selection, Dimension | None]],
    *,
    top_n: int = 15,
    cover: Coverage | None = None,
) -> list[Comparison]:
    """`compare_periods` of each (selection, dimension) asked, together: the totals and a
    leaderboard, or a network's merchants and links. The selections cover the same sites and days
    (they differ in their filters), so they share their periods' flags and the clicks' source, and
    all of them take four statements: each statement binds the views and crosses into DuckDB again,
    which is most of what a small query costs."""
    bys = _checked(asked, top_n, cover)
    first, cover = resolve(con, asked[0][0], cover)
    pairs = _pairs(asked, first)
    chosen = [aggregate_slice(by or "network", sel) for (sel, _), by in zip(pairs, bys, strict=True)]
    conditions = dict.fromkeys(c[1] for c in chosen if c is not None)  # each slice's once
    sources = {condition: _aggregate_source(con, condition, list(pairs[0])) for condition in conditions}
    ledgers = _per_period(con, [_ledger(by, p) for pair, by in zip(pairs, bys, strict=True) for p in pair])
    counted = _period_clicks(con, pairs, bys, chosen, sources)
    flags = period_flags(con, pairs[0], cover)
    answers = []
    for number, (pair, slice_of) in enumerate(zip(pairs, chosen, strict=True)):
        frames = [
            _period_frame(ledgers[2 * number + side], counted.get(2 * number + side)) for side in (0, 1)
        ]
        source = sources[slice_of[1]] if slice_of is not None else None
        answers.append(_comparison(pair, frames, slice_of, source, flags, top_n))
    return answers


def _checked(
    asked: Sequence[tuple[Selection, Dimension | None]], top_n: int, cover: Coverage | None
) -> list[Dimension | None]:
    """The dimension of each (selection, dimension) asked, once `comparisons`' arguments are
    checked (a ValidationError says which is wrong)."""
    check_top_n(top_n)
    if cover is not None and not isinstance(cover, Coverage):
        raise ValidationError(
            "cover", f"{cover!r} is not a Coverage", "give charts.coverage(con, sites) or None"
        )
    if not asked or not all(isinstance(sel, Selection) for sel, _ in asked):
        raise ValidationError("asked", f"{asked!r} is not a list of (Selection, dimension)", "give one")
    return [by if by is None else check_dimension(by) for _, by in asked]


def _pairs(
    asked: Sequence[tuple[Selection, Dimension | None]], first: Selection
) -> list[tuple[Selection, Selection]]:
    """Each selection asked, its open dates closed as `first`'s (the first one, resolved), and the
    period before it; a ValidationError when one covers other sites or days than the first."""
    sels = [replace(sel, start=sel.start or first.start, end=sel.end or first.end) for sel, _ in asked]
    if any((sel.sites, sel.bounds) != (first.sites, first.bounds) for sel in sels):
        raise ValidationError("asked", "holds selections of other sites or days", "compare those apart")
    return [(sel, previous_period(sel)) for sel in sels]


def _period_clicks(
    con: Connection,
    pairs: list[tuple[Selection, Selection]],
    bys: list[Dimension | None],
    chosen: list[tuple[str, str] | None],
    sources: dict[str, tuple[str, str] | None],
) -> dict[int, pl.DataFrame]:
    """The clicks of each period (numbered two per pair: the period, then the one before) whose
    dimension the service aggregates and whose windows answer it, in one statement."""
    clicks: dict[int, tuple[str, dict[str, Any]]] = {}
    for number, (pair, by, slice_of) in enumerate(zip(pairs, bys, chosen, strict=True)):
        source = sources[slice_of[1]] if slice_of is not None else None
        if slice_of is None or source is None:
            continue
        key = slice_of[0] if by is not None else f"'{TOTAL}'"
        for side, period in enumerate(pair):
            clicks[2 * number + side] = _aggregates(key, slice_of[1], source[0], period)
    if not clicks:
        return {}
    return dict(zip(clicks, _per_period(con, list(clicks.values())), strict=True))


def _comparison(
    pair: tuple[Selection, Selection],
    frames: list[pl.DataFrame],
    chosen: tuple[str, str] | None,
    source: tuple[str, str] | None,
    flags: list[tuple[bool, bool | None]],
    top_n: int,
) -> Comparison:
    """The comparison of a period (`pair`: it and the one before) from each one's figures."""
    sel, before = pair
    notes: list[str] = []
    aggregate_note = ""
    if chosen is None:
        aggregate_note = "Clicks, EPC and conversion rate: the service does not aggregate clicks this way"
    elif source is None:
        aggregate_note = (
            "Clicks, EPC and conversion rate: the service counts clicks by month, and the lake holds no "
            "daily windows for every day of both periods (`commerce-reports sync --grain day` stores them)"
        )
    now, then = frames
    suffixed = then.rename({c: f"{c}_previous" for c in then.columns if c != "key"})
    frame = now.join(suffixed, on="key", how="full", coalesce=True)
    counted = ("revenue", "orders", "returns")  # a key of one period only had none in the other
    frame = frame.with_columns(pl.col(*counted, *(f"{c}_previous" for c in counted)).fill_null(0))
    frame = frame.with_columns(
        *(
            (
                pl.col(m).cast(pl.Float64)
                / pl.when(pl.col(f"{m}_previous") > 0).then(pl.col(f"{m}_previous").cast(pl.Float64))
                - 1
            ).alias(f"{m}_change")
            for m in COMPARED
        )
    )
    ordered = [c for m in COMPARED for c in (m, f"{m}_previous", f"{m}_change")]
    frame = (
        frame.select("key", *ordered)
        .sort(["revenue", "revenue_previous", "key"], descending=[True, True, False], nulls_last=True)
        .head(top_n)
        .with_columns(pl.col(c).cast(_type_of(c)) for c in ordered)
    )
    (complete, final), (previous_complete, _) = flags
    if not complete:
        notes.append(f"{sel.start} to {sel.end} is not complete in the lake: its figures are partial")
    if not previous_complete:
        notes.append(f"{before.start} to {before.end} is not complete in the lake: the comparison is partial")
    if final is False:
        notes.append("the service may still revise these figures (late commissions and returns)")
    return Comparison(
        sel,
        before,
        frame,
        complete,
        previous_complete,
        final,
        source[0] if source else "",
        aggregate_note,
        tuple(notes),
    )


def compare(
    con: Connection,
    selection: Selection | None = None,
    *,
    by: Dimension | None = None,
    top_n: int = 15,
    **where: Any,
) -> pl.DataFrame:
    """The period against the previous one of the same length, as a frame: `key` (`Total`, or each
    of the `top_n` keys of `by`), then for revenue, orders, returns, return_rate, clicks, epc and
    conversion_rate the value, `<name>_previous` and `<name>_change` (a fraction: -0.25 is -25%;
    null when the previous value is zero or negative, which no ratio compares with: returns can
    make a small merchant's week negative, and its recovery is no fall), then `complete` and
    `previous_complete`: whether the lake holds the period, and the previous one, whole (as the
    views' `complete` column says). A previous period the lake holds only in part (one that began
    before the lake's first day) reads as growth: its rows say so rather than leave it unmarked.
    `selection`, or its fields as keywords (`site=`, `start=`, `end=`, ...), says the period."""
    result = compare_periods(con, selection, by=by, top_n=top_n, **where)
    return result.frame.with_columns(
        complete=pl.lit(result.complete, pl.Boolean),
        previous_complete=pl.lit(result.previous_complete, pl.Boolean),
    )
