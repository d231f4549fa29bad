"""Whether a series changed, judged against its own recent history.

For a day `as_of` and each span of the last 1 to `max_span` days ending on it, the span's value
(revenue, EPC, conversion rate or return rate over those days) is compared with the same span of
weekdays in each of the `baseline_weeks` weeks before (so weekly rhythm cancels out, and ledger
days are taken at the same age: see `series.py`). The baseline is the median of those weeks.

How far the span is from it is measured twice, and the smaller score counts (both must agree a
change is out of the ordinary):

- against the history: (value - baseline) / spread, the spread being the weeks' median absolute
  deviation scaled to a standard deviation;
- against the noise its volume implies: a count (returns among orders, orders among clicks) on the
  Poisson square-root scale, 2 (sqrt(observed) - sqrt(expected)), which stays honest on small
  counts; a sum of order amounts (revenue, and the revenue of EPC) by the square root of the
  baseline's sum of squared amounts, so that a week without its usual few large orders is noise.

A change is an alert when it clears both the relative threshold of its metric and `z`, on enough
volume; the span that clears them by most says since when the series changed.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, timedelta

import numpy as np
import polars as pl

from .thresholds import AlertMetric, Thresholds

__all__ = ["Finding", "findings"]

_MAD_TO_SD = 1.4826  # the median absolute deviation of a normal sample, as a standard deviation


@dataclass(frozen=True)
class _Parts:
    """How a metric is made of a series' daily parts: the numerator shown and the one judged (money:
    each order capped, see `series.ledger_series`), the denominator (None: the value is the sum),
    the volume its minimum counts, and its noise: None for a count (Poisson), else the column of
    the judged amounts' squares."""

    shown: str
    judged: str
    denominator: str | None
    volume: str
    squares: str | None


_PARTS: dict[str, _Parts] = {
    "revenue": _Parts("revenue", "revenue_capped", None, "orders", "revenue_capped_sq"),
    "return_rate": _Parts("returns", "returns", "orders", "returns", None),
    "epc": _Parts("revenue", "revenue_capped", "clicks", "actions", "revenue_capped_sq"),
    "conversion_rate": _Parts("actions", "actions", "clicks", "actions", None),
}


@dataclass(frozen=True)
class Finding:
    """A series that changed as of `as_of`: over `days` days (`since`..`as_of`) its value against
    the baseline (median of `weeks` weeks), their usual spread, the relative change and the score."""

    site: str
    scope: str
    key: str
    metric: AlertMetric
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


def _span_sums(values: np.ndarray, span: int) -> np.ndarray:
    """out[d] = sum of values[d - j, j] for j < span: the span ending on day d, each day at the age
    it has on d (a 1-D array holds no ages: the same value at every age)."""
    days = values.shape[0]
    out = np.zeros(days)
    for j in range(span):
        column = values[:, j] if values.ndim == 2 else values
        out[j:] += column[: days - j]
    out[: span - 1] = np.nan  # spans reaching before the first day
    return out


def _weeks_before(series: np.ndarray, weeks: int) -> np.ndarray:
    """out[d, k - 1] = series[d - 7k] for k = 1..weeks (NaN before the first day)."""
    days = len(series)
    out = np.full((days, weeks), np.nan)
    for k in range(1, weeks + 1):
        out[7 * k :, k - 1] = series[: days - 7 * k]
    return out


def _median_rows(values: np.ndarray) -> np.ndarray:
    """The median of each row, NaN left out (every row holds at least one number): np.nanmedian's
    answer without its cost, which dominates when thousands of short series are judged."""
    ordered = np.sort(values, axis=1)  # NaN sorts last
    count = np.sum(~np.isnan(values), axis=1)
    rows = np.arange(len(values))
    middle: np.ndarray = (ordered[rows, (count - 1) // 2] + ordered[rows, count // 2]) / 2
    return middle


def _covered(mask: np.ndarray, span: int) -> np.ndarray:
    out = mask.copy()
    for j in range(1, span):
        out[j:] &= mask[: len(mask) - j]
    out[: span - 1] = False
    return out


def findings(
    frames: dict[str, np.ndarray],
    covered: np.ndarray,
    first_day: date,
    evaluate: np.ndarray,
    metric: AlertMetric,
    thresholds: Thresholds,
    where: tuple[str, str, str],
) -> Iterator[Finding]:
    """The findings of one series (`where`: site, scope, key) and metric on each day of `evaluate`
    (a boolean array over the days). `frames` holds its daily parts by name, each (days, ages) or
    (days,); `covered` the days the lake holds whole."""
    drop, rise = thresholds.drops[metric], thresholds.rises[metric]
    if drop is None and rise is None:
        return
    parts = _PARTS[metric]
    minimum = {
        "orders": thresholds.min_orders,
        "actions": thresholds.min_actions,
        "returns": thresholds.min_returns,
    }[parts.volume]
    days, weeks = len(covered), thresholds.baseline_weeks
    best: dict[int, Finding] = {}
    for span in range(1, thresholds.max_span + 1):
        bottom = _span_sums(frames[parts.denominator], span) if parts.denominator else np.ones(days)
        whole = _covered(covered, span) & (bottom > 0)
        sums = {"shown": frames[parts.shown], "top": frames[parts.judged], "volume": frames[parts.volume]}
        if parts.squares:
            sums["squares"] = frames[parts.squares]
        spans = {name: np.where(whole, _span_sums(series, span), np.nan) for name, series in sums.items()}
        below = np.where(whole, bottom, 1.0)
        spans["value"], spans["judged"] = spans["shown"] / below, spans["top"] / below
        history = {name: _weeks_before(series, weeks) for name, series in spans.items()}
        counted = np.sum(~np.isnan(history["judged"]), axis=1)
        usable = evaluate & whole & (counted >= thresholds.min_weeks)
        if not usable.any():
            continue
        rows = np.flatnonzero(usable)
        shown_base = _median_rows(history["value"][rows])
        baseline = _median_rows(history["judged"][rows])
        expected = _median_rows(history["volume"][rows])
        judged = (baseline > 0) & (shown_base > 0) & (expected >= max(minimum, 1))
        safe, safe_shown = np.where(judged, baseline, 1.0), np.where(judged, shown_base, 1.0)
        current = spans["judged"][rows]
        change = current / safe - 1
        shown_change = spans["value"][rows] / safe_shown - 1
        mad = _MAD_TO_SD * _median_rows(np.abs(history["judged"][rows] - baseline[:, None]))
        z_history = (current - safe) / np.where(mad > 0, mad, 1e-12)  # no spread at all: far out
        if parts.squares is None:  # a count: Poisson on the square-root scale, expected at the baseline rate
            chance = safe * bottom[rows]
            z_noise = 2 * (np.sqrt(np.maximum(spans["top"][rows], 0)) - np.sqrt(chance))
            relative_noise = 1 / np.sqrt(np.maximum(chance, 1e-9))
        else:  # a sum of amounts: its relative noise is sqrt(sum of squares) / sum, at the baseline
            typical = _median_rows(history["top"][rows])
            squares = np.sqrt(np.maximum(_median_rows(history["squares"][rows]), 0))
            relative_noise = squares / np.where(typical > 0, typical, np.inf)
            z_noise = change / np.maximum(relative_noise, 1e-9)
        z = np.where(np.abs(z_noise) < np.abs(z_history), z_noise, z_history)
        spread = np.maximum(mad / safe, relative_noise) * safe_shown  # as a share, on the shown baseline
        fell = (
            np.zeros(len(rows), bool)
            if drop is None
            else ((change <= -drop) & (shown_change <= -drop) & (z <= -thresholds.z))
        )
        grew = (
            np.zeros(len(rows), bool)
            if rise is None
            else ((change >= rise) & (shown_change >= rise) & (z >= thresholds.z))
        )
        for i in np.flatnonzero(judged & (fell | grew)):
            d = int(rows[i])
            if d in best and abs(best[d].z) >= abs(float(z[i])):
                continue
            on = first_day + timedelta(days=d)
            best[d] = Finding(
                *where,
                metric=metric,
                as_of=on,
                since=on - timedelta(days=span - 1),
                days=span,
                value=float(spans["value"][d]),
                baseline=float(shown_base[i]),
                spread=float(spread[i]),
                change=float(shown_change[i]),
                z=float(z[i]),
                weeks=int(counted[d]),
                volume=float(spans["volume"][d]),
            )
    yield from (best[d] for d in sorted(best))


def dense(
    frame: pl.DataFrame, columns: tuple[str, ...], first_day: date, days: int, ages: bool
) -> dict[str, np.ndarray]:
    """A series' rows (day[, age], columns...) as arrays over the days (and ages), zero where absent."""
    out: dict[str, np.ndarray] = {}
    index = np.array([(d - first_day).days for d in frame["day"].to_list()], dtype=np.int64)
    inside = (index >= 0) & (index < days)
    for column in columns:
        values = frame[column].to_numpy().astype(float)
        grid = np.zeros((days, 7) if ages else days)
        if ages:
            grid[index[inside], frame["age"].to_numpy()[inside]] = values[inside]
        else:
            grid[index[inside]] = values[inside]
        out[column] = grid
    return out
