"""The served dashboard's period picker: named periods resolved on the lake's last complete day, or
two dates, each compared with the period before it (`charts.comparison.previous_period`).

    period_of("last_7", last_day=date(2026, 11, 26))       # 2026-11-20 .. 2026-11-26
    period_of("last_month", last_day=date(2026, 11, 26))   # 2026-10-01 .. 2026-10-31

Plain Python: no query, no widget; the page and the tests call it alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any, Literal, get_args

from ..errors import ValidationError
from ..params import as_date, as_days

__all__ = ["PERIODS", "PERIOD_LABELS", "Period", "PeriodName", "last_complete_day", "period_of"]

PeriodName = Literal["last_7", "last_28", "month_to_date", "last_month", "custom"]
PERIODS: tuple[PeriodName, ...] = get_args(PeriodName)
PERIOD_LABELS: dict[PeriodName, str] = {
    "last_7": "Last 7 days",
    "last_28": "Last 28 days",
    "month_to_date": "Month to date",
    "last_month": "Last month",
    "custom": "Custom dates",
}


@dataclass(frozen=True)
class Period:
    """Commission days `start`..`end` (both included), as the picker named them (`name`)."""

    name: PeriodName
    start: date
    end: date

    @property
    def days(self) -> int:
        return (self.end - self.start).days + 1


def last_complete_day(last_stored: date | None, partial: date | None, today: date) -> date:
    """The last ledger day a named period ends on: the lake's last stored day, or the one before
    when that day is still being filled (`partial`); with nothing stored, yesterday."""
    if last_stored is None:
        return today - timedelta(days=1)
    return last_stored - timedelta(days=1) if partial == last_stored else last_stored


def period_of(
    name: Any,
    *,
    last_day: date,
    start: date | str | None = None,
    end: date | str | None = None,
    today: date | None = None,
) -> Period:
    """The days of period `name` ending on `last_day` (the lake's last complete day); `custom`
    takes `start` and `end` (both included) instead, the end not after `today` when given (a
    future day has no figures: it would read as a day of none)."""
    if name not in PERIODS:
        raise ValidationError("period", f"{name!r} is not a period", f"use one of {', '.join(PERIODS)}")
    if not isinstance(last_day, date):
        raise ValidationError("last_day", f"{last_day!r} is not a date", "give a datetime.date")
    if name == "custom":
        if start is None or end is None:
            raise ValidationError("period", "custom dates need a start and an end", "pick both dates")
        first, last = as_date(start, "start"), as_date(end, "end")
        as_days(first, last, today)
        return Period("custom", first, last)
    if name == "last_7":
        return Period(name, last_day - timedelta(days=6), last_day)
    if name == "last_28":
        return Period(name, last_day - timedelta(days=27), last_day)
    if name == "month_to_date":
        return Period(name, last_day.replace(day=1), last_day)
    # the last whole month ending by last_day (the month of last_day itself when it is its last day)
    month_end = (last_day + timedelta(days=1)).replace(day=1) - timedelta(days=1)
    return Period(name, month_end.replace(day=1), month_end)
