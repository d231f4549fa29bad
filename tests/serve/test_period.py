"""The period picker's named periods, resolved on the lake's last complete day (no lake, no widget)."""

from __future__ import annotations

from datetime import date

import pytest

from commerce_reports.errors import ValidationError
from commerce_reports.serve.period import PERIODS, last_complete_day, period_of

LAST = date(2026, 11, 26)  # a Thursday, not a month's last day


@pytest.mark.parametrize(
    ("name", "start", "end"),
    [
        ("last_7", date(2026, 11, 20), LAST),
        ("last_28", date(2026, 10, 30), LAST),
        ("month_to_date", date(2026, 11, 1), LAST),
        (
            "last_month",
            date(2026, 10, 1),
            date(2026, 10, 31),
        ),  # the last whole month, compared month to month
    ],
)
def test_a_named_period_ends_on_the_last_complete_day(name: str, start: date, end: date) -> None:
    period = period_of(name, last_day=LAST)
    assert (period.start, period.end, period.name) == (start, end, name)
    assert period.days == (end - start).days + 1


def test_last_month_is_the_month_that_ends_on_the_last_day_when_it_is_whole() -> None:
    november = period_of("last_month", last_day=date(2026, 11, 30))
    assert (november.start, november.end) == (date(2026, 11, 1), date(2026, 11, 30))
    january = period_of("last_month", last_day=date(2027, 1, 3))
    assert (january.start, january.end) == (date(2026, 12, 1), date(2026, 12, 31))


def test_custom_dates_are_checked_and_every_period_is_declared() -> None:
    custom = period_of("custom", last_day=LAST, start="2026-09-01", end=date(2026, 9, 30))
    assert (custom.start, custom.end, custom.days) == (date(2026, 9, 1), date(2026, 9, 30), 30)
    with pytest.raises(ValidationError, match="after end"):
        period_of("custom", last_day=LAST, start="2026-10-02", end="2026-10-01")
    with pytest.raises(ValidationError, match=r"2026-11-28 is after today \(2026-11-27\)"):
        period_of("custom", last_day=LAST, start="2026-11-20", end="2026-11-28", today=date(2026, 11, 27))
    with pytest.raises(ValidationError, match="a start and an end"):
        period_of("custom", last_day=LAST, start="2026-10-02")
    with pytest.raises(ValidationError, match="use one of last_7"):
        period_of("yesterday", last_day=LAST)
    for name in PERIODS:  # every declared period resolves (custom with its dates)
        assert period_of(name, last_day=LAST, start=LAST, end=LAST).end <= LAST


def test_a_day_still_being_filled_is_left_out_of_named_periods() -> None:
    today = date(2026, 11, 27)
    assert last_complete_day(date(2026, 11, 27), date(2026, 11, 27), today) == date(2026, 11, 26)
    assert last_complete_day(date(2026, 11, 26), None, today) == date(2026, 11, 26)
    assert last_complete_day(None, None, today) == date(2026, 11, 26)  # nothing stored: yesterday
