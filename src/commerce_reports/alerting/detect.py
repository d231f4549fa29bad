"""Whether a series changed, judged against its own recent history, for every rule on its metric.

For a day `as_of` and each span of the last 1 to `max_span` days ending on it, the span's figure
is compared with the same span of weekdays in each of the `baseline_weeks` weeks before (so weekly
rhythm cancels out, and ledger days are taken at the same age: see `series.py`); the baseline is
the median of those weeks. Of the spans that clear a rule, the one with the most evidence against
the volume's noise says since when the series changed: evidence is pooled over the days since a
change began, and a span reaching before it dilutes it.

Each metric is judged on a statistic that moves with every order, not with luck, on a log scale:

- counts (orders, clicks, returns; a rate's numerator against its denominator: conversion is
  orders per click) by their Poisson tail (Wilson-Hilferty), which
  stays honest down to zero (a merchant whose commissions stopped);
- money per order by the mean of the logarithms of each order's revenue (the typical order): a
  week's sum of revenue swings with its few largest orders, the typical order does not, and a cut
  commission rate moves every order. Revenue is orders times the typical order, EPC conversion
  times it, each judged on both parts' noise.

How far the span is from the baseline is measured twice, and the smaller score counts (both must
agree a change is out of the ordinary): against the history (how much the weeks move from one to
the next: the median absolute difference of consecutive weeks, which a season's step in the
baseline does not inflate) and against the noise the span's volume implies. A finding clears
its rule's threshold on the figure shown *and* on the judged statistic, `z` on the score, and its
rule's minimum volume expected over the span.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, timedelta

import numpy as np
import polars as pl

from .rules import AlertMetric, Rule
from .thresholds import Thresholds

__all__ = ["MEASURES", "Finding", "findings", "poisson_z", "stacked"]

_MAD_TO_SD = 1.4826  # the median absolute deviation of a normal sample, as a standard deviation
_MEDIAN_EFFICIENCY = np.pi / 2  # a median of n values varies as much as a mean of n / (pi / 2)
RECENT_WEEKS = 4  # the baseline's level: the median of its latest weeks


@dataclass(frozen=True)
class _Measure:
    """How a metric is made of a series' daily parts: the figure shown (`top` / `bottom`), the
    count judged by its Poisson tail (`count`, as a rate of `per` when given), whether the typical
    order's revenue is a factor (`valued`), and the volume a rule's minimum counts."""

    top: str
    bottom: str | None
    count: str | None
    per: str | None
    valued: bool
    volume: str


MEASURES: dict[str, _Measure] = {
    "revenue": _Measure("revenue", None, "orders", None, True, "orders"),
    "orders": _Measure("orders", None, "orders", None, False, "orders"),
    "order_value": _Measure("revenue", "orders", None, None, True, "orders"),
    "clicks": _Measure("clicks", None, "clicks", None, False, "clicks"),
    "epc": _Measure("revenue", "clicks", "orders", "clicks", True, "orders"),
    "conversion_rate": _Measure("orders", "clicks", "orders", "clicks", False, "orders"),
    "returns": _Measure("returns", None, "returns", None, False, "returns"),
}


@dataclass(frozen=True)
class Finding:
    """A series that changed as of `as_of` by `rule`: over `days` days (`since`..`as_of`) its
    figure `value` against the `baseline` (the median of `weeks` weeks), their usual `spread`, the
    relative `change` and the score `z`; `volume` expected over the span (of the rule's volume)
    and the revenue `at_stake` (the baseline's revenue over the span less the span's)."""

    rule: Rule
    site: str
    scope: str
    key: str
    as_of: date
    since: date
    days: int
    value: float
    baseline: float
    spread: float
    change: float
    z: float
    weeks: int
    volume: float
    at_stake: float

    @property
    def metric(self) -> AlertMetric:
        return self.rule.metric


def poisson_z(observed: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """How far `observed` counts are from Poisson means `expected`, as a standard normal score of
    the tail beyond them (negative below): the Wilson-Hilferty form of the Poisson tail through the
    gamma distribution, P(X <= k) = P(Gamma(k + 1) >= mean), good to a few hundredths down to 0."""
    observed = np.maximum(np.asarray(observed, dtype=float), 0.0)
    expected = np.maximum(np.asarray(expected, dtype=float), 1e-9)
    shape = np.where(observed < expected, observed + 1, np.maximum(observed, 1e-9))
    ninth = 1 / (9 * shape)
    score: np.ndarray = -((expected / shape) ** (1 / 3) - (1 - ninth)) / np.sqrt(ninth)
    return score


def _span_sums(values: np.ndarray, span: int) -> np.ndarray:
    """out[s, d] = sum of values[s, d - j, j] for j < span: the span ending on day d of series s,
    each day at the age it has on d (a 2-D array holds no ages: the same value at every age)."""
    days = values.shape[1]
    out = np.zeros(values.shape[:2])
    for j in range(span):
        column = values[:, :, j] if values.ndim == 3 else values
        out[:, j:] += column[:, : days - j]
    out[:, : span - 1] = np.nan  # spans reaching before the first day
    return out


def _covered(mask: np.ndarray, span: int) -> np.ndarray:
    out = mask.copy()
    for j in range(1, span):
        out[:, j:] &= mask[:, : mask.shape[1] - j]
    out[:, : span - 1] = False
    return out


def _step_spread(weeks: np.ndarray) -> np.ndarray:
    """How much a series moves from one week to the next, as a standard deviation: the median
    absolute difference of consecutive weeks (NaN weeks left out), over sqrt(2). A level that
    stepped once inside the baseline (a season's turn) moves one difference, not half the weeks'
    deviations: a step would widen a spread around the median and hide every change after it."""
    steps = np.abs(np.diff(weeks, axis=-1))
    spread: np.ndarray = _MAD_TO_SD * _median(steps) / np.sqrt(2)
    return spread


def _median(values: np.ndarray) -> np.ndarray:
    """The median along the last axis, NaN left out (NaN where all are): np.nanmedian's answer
    without its cost, which dominates when thousands of short series are judged."""
    ordered = np.sort(values, axis=-1)  # NaN sorts last
    count = np.sum(~np.isnan(values), axis=-1)
    low = np.take_along_axis(ordered, (np.maximum(count - 1, 0) // 2)[..., None], axis=-1)[..., 0]
    high = np.take_along_axis(ordered, (np.maximum(count, 1) // 2)[..., None], axis=-1)[..., 0]
    middle: np.ndarray = np.where(count > 0, (low + high) / 2, np.nan)
    return middle


@dataclass(frozen=True)
class _Span:
    """One metric of every series over spans of `span` days ending on the judged days: each array
    is (series, judged days)."""

    value: np.ndarray  # the figure shown
    baseline: np.ndarray  # its median over the weeks
    judged: np.ndarray  # the judged statistic's change (a fraction)
    z: np.ndarray
    evidence: np.ndarray  # the score against the volume's noise alone: where the change began
    spread: np.ndarray  # in the figure's units
    volume: np.ndarray  # expected over the span
    weeks: np.ndarray  # the weeks the baseline is the median of
    history: np.ndarray  # the weeks with data
    at_stake: np.ndarray


def _ratio(values: dict[str, np.ndarray], top: str, bottom: str | None, offset: float = 0.0) -> np.ndarray:
    below = values[bottom] if bottom else np.ones_like(values[top])
    return np.where(below > 0, (values[top] + offset) / np.where(below > 0, below, 1.0), np.nan)


def _judge_span(
    parts: dict[str, np.ndarray],
    covered: np.ndarray,
    days: np.ndarray,
    measure: _Measure,
    span: int,
    weeks: int,
) -> _Span:
    """The figures and scores of one metric of every series over spans of `span` days ending on
    each of `days` (day indices)."""
    whole = _covered(covered, span)
    names = {measure.top, measure.volume, "revenue"} | {
        n for n in (measure.bottom, measure.count, measure.per) if n
    }
    if measure.valued:
        names |= {"orders", "log_value", "log_value_sq"}
    sums = {name: np.where(whole, _span_sums(parts[name], span), np.nan) for name in names}
    back = days[:, None] - 7 * np.arange(1, weeks + 1)[None, :]  # the same span k weeks before
    past = {
        name: np.where(back >= 0, series[:, np.maximum(back, 0)], np.nan) for name, series in sums.items()
    }
    now = {name: series[:, days] for name, series in sums.items()}
    shown_now, shown_past = (
        _ratio(now, measure.top, measure.bottom),
        _ratio(past, measure.top, measure.bottom),
    )
    counted = ~np.isnan(shown_past)
    # a volume follows the season (its level: the latest weeks); a rate keeps every week
    window = RECENT_WEEKS if measure.count and not measure.per else weeks

    def level(values: np.ndarray) -> np.ndarray:
        return _median(values[..., :window])

    parts_of = [
        part(now, {**past, "_counted": np.where(counted, 1.0, np.nan)}, measure, window)
        for part in (_count_part, _value_part)
        if (measure.count if part is _count_part else measure.valued)
    ]
    log_now = sum((p.now for p in parts_of), np.zeros(shown_now.shape))
    log_past = np.where(counted, sum((p.past for p in parts_of), np.zeros(shown_past.shape)), np.nan)
    noise_sd = np.sqrt(np.maximum(sum((p.variance for p in parts_of), np.zeros(shown_now.shape)), 1e-12))
    z_noise = sum((p.shift for p in parts_of), np.zeros(shown_now.shape)) / noise_sd
    history_sd = _step_spread(log_past)
    change = log_now - level(log_past)
    z_history = change / np.maximum(history_sd, 1e-9)
    baseline = level(shown_past)
    return _Span(
        value=shown_now,
        baseline=baseline,
        judged=np.expm1(change),
        z=np.where(np.abs(z_noise) < np.abs(z_history), z_noise, z_history),
        evidence=np.abs(z_noise),
        spread=np.maximum(history_sd, noise_sd) * np.abs(baseline),
        volume=level(past[measure.volume]),
        weeks=np.sum(~np.isnan(log_past[..., :window]), axis=-1),
        history=np.sum(~np.isnan(log_past), axis=-1),
        at_stake=level(past["revenue"]) - now["revenue"],
    )


@dataclass(frozen=True)
class _Part:
    """One factor of a judged statistic: its log now and in each week, how far it moved against
    its own noise (`shift`, on the log scale) and that noise's variance."""

    now: np.ndarray
    past: np.ndarray
    shift: np.ndarray
    variance: np.ndarray


def _count_part(
    now: dict[str, np.ndarray], past: dict[str, np.ndarray], measure: _Measure, window: int
) -> _Part:
    """A count (or a count per unit of `per`) on the log scale; its noise is Poisson at the
    baseline's rate, widened by the baseline's own uncertainty (a median of a few weeks)."""
    assert measure.count is not None
    rates = (_ratio(past, measure.count, measure.per) * past["_counted"])[..., :window]
    weeks = np.maximum(np.sum(~np.isnan(rates), axis=-1), 1)
    expected = _median(rates) * (now[measure.per] if measure.per else 1.0)
    variance = 1 / np.maximum(expected, 0.5) * (1 + _MEDIAN_EFFICIENCY / weeks)
    shift = poisson_z(np.nan_to_num(now[measure.count]), np.nan_to_num(expected)) / np.sqrt(
        1 + _MEDIAN_EFFICIENCY / weeks
    )
    return _Part(
        now=np.log(_ratio(now, measure.count, measure.per, 0.5)),
        past=np.log(_ratio(past, measure.count, measure.per, 0.5)),
        shift=shift * np.sqrt(variance),
        variance=variance,
    )


def _value_part(
    now: dict[str, np.ndarray], past: dict[str, np.ndarray], measure: _Measure, window: int
) -> _Part:
    """The typical order: the mean of the logarithm of each order's revenue; its noise, the
    orders' spread over their number, widened by the baseline's own uncertainty. A span without
    an order has none to judge: the count speaks alone."""
    mean_now = np.where(now["orders"] > 0, now["log_value"] / np.maximum(now["orders"], 1), np.nan)
    mean_past = np.where(past["orders"] > 0, past["log_value"] / np.maximum(past["orders"], 1), np.nan)
    mean_past = mean_past * past["_counted"]
    shift = mean_now - _median(mean_past[..., :window])
    pooled = np.nansum(past["orders"], axis=-1)
    total, squares = np.nansum(past["log_value"], axis=-1), np.nansum(past["log_value_sq"], axis=-1)
    spread_sq = (squares - total**2 / np.maximum(pooled, 1)) / np.maximum(pooled - 1, 1)
    weeks = np.maximum(np.sum(~np.isnan(mean_past[..., :window]), axis=-1), 1)
    known = ~np.isnan(shift)
    return _Part(
        now=np.where(known, mean_now, 0.0),
        past=np.where(known[..., None], mean_past, 0.0),
        shift=np.where(known, shift, 0.0),
        variance=np.where(
            known, spread_sq / np.maximum(now["orders"], 1) * (1 + _MEDIAN_EFFICIENCY / weeks), 0.0
        ),
    )


def findings(
    parts: dict[str, np.ndarray],
    covered: np.ndarray,
    evaluate: np.ndarray,
    first_day: date,
    rules: list[tuple[Rule, np.ndarray]],
    thresholds: Thresholds,
    where: list[tuple[str, str, str]],
) -> Iterator[Finding]:
    """The findings of every series (`where`: site, scope, key of each) for `rules` (all on one
    metric, each with the series it judges) on the days of `evaluate` (series x days): on each
    day, of the spans that clear a rule, the one reaching back to where the change began.
    `parts` holds the daily parts by name, each (series, days, ages) or (series, days); `covered`
    the days each series holds whole."""
    if not rules:
        return
    measure = MEASURES[rules[0][0].metric]
    days = np.flatnonzero(evaluate.any(axis=0))
    if not len(days):
        return
    asked = evaluate[:, days] & covered[:, days]
    found: dict[tuple[int, str, int], list[tuple[Finding, float]]] = {}
    for span in range(1, thresholds.max_span + 1):
        with np.errstate(divide="ignore", invalid="ignore"):
            judged = _judge_span(parts, covered, days, measure, span, thresholds.baseline_weeks)
            base = np.nan_to_num(judged.baseline)
            shown = np.where(base > 0, judged.value / np.where(base > 0, base, 1) - 1, np.nan)
        for rule, chosen in rules:
            assert rule.threshold is not None  # the caller passes active rules
            sign = -1.0 if rule.direction == "drop" else 1.0
            passed = (
                asked
                & chosen[:, None]
                & (judged.history >= thresholds.min_weeks)
                & (np.nan_to_num(judged.volume) >= max(rule.min_volume, 1))
                & (base > 0)
                & (np.nan_to_num(sign * judged.judged, nan=-np.inf) >= rule.threshold)
                & (np.nan_to_num(sign * shown, nan=-np.inf) >= rule.threshold)
                & (np.nan_to_num(sign * judged.z, nan=-np.inf) >= thresholds.z)
            )
            for series, i in zip(*np.nonzero(passed), strict=True):
                on = first_day + timedelta(days=int(days[i]))
                found.setdefault((int(series), rule.name, int(days[i])), []).append(
                    (
                        Finding(
                            rule,
                            site=where[series][0],
                            scope=where[series][1],
                            key=where[series][2],
                            as_of=on,
                            since=on - timedelta(days=span - 1),
                            days=span,
                            value=float(np.nan_to_num(judged.value[series, i])),
                            baseline=float(judged.baseline[series, i]),
                            spread=float(judged.spread[series, i]),
                            change=float(shown[series, i]),
                            z=float(judged.z[series, i]),
                            weeks=int(judged.weeks[series, i]),
                            volume=float(judged.volume[series, i]),
                            at_stake=float(np.nan_to_num(judged.at_stake[series, i])),
                        ),
                        float(judged.evidence[series, i]),
                    )
                )
    yield from (_since_onset(found[key]) for key in sorted(found, key=lambda k: (k[0], k[2], k[1])))


def _since_onset(spans: list[tuple[Finding, float]]) -> Finding:
    """Of the spans ending on one day that clear a rule (each with its score against the volume's
    noise), the one that says best where the change began: the highest score, the likelihood
    ratio's choice of a step's day (a span reaching before the step dilutes it, one starting after
    it holds fewer of its days). The week-to-week history, which a longer span moves less by,
    decides whether a change is out of the ordinary, not where it began."""
    return max(spans, key=lambda found: found[1])[0]


def stacked(
    frame: pl.DataFrame, index: pl.DataFrame, columns: tuple[str, ...], first_day: date, days: int, ages: bool
) -> dict[str, np.ndarray]:
    """Long rows (site, scope, key, day[, age], columns...) as arrays (series, days[, ages]), zero
    where absent; `index` numbers the series (site, scope, key, series)."""
    rows = frame.join(index, on=["site", "scope", "key"])
    day = rows["day"].cast(pl.Int32).to_numpy().astype(np.int64) - (first_day - date(1970, 1, 1)).days
    inside = (day >= 0) & (day < days)
    series = rows["series"].to_numpy()[inside]
    shape = (index.height, days, 7) if ages else (index.height, days)
    out: dict[str, np.ndarray] = {}
    for column in columns:
        grid = np.zeros(shape)
        at = (series, day[inside], rows["age"].to_numpy()[inside]) if ages else (series, day[inside])
        grid[at] = rows[column].to_numpy().astype(float)[inside]
        out[column] = grid
    return out
