"""What the lake records of revisions: when a window stops being revised, and which click days a
ledger day touched (so a sync knows which stored windows the service changed since their copy).

The service counts its aggregates by click date and keeps revising a window after it ends (late
commissions, returns: contract 2.1 rule 4); an `updateDate` day holds the rows that changed that
day, each with its click date. These are the facts, kept in the manifest; the policy that uses
them (when to fetch a window again) is the sync's (`syncing.plan.SettlePolicy`).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, NamedTuple

from ..contract import PartitionKey

__all__ = ["Touched", "WindowState", "revisable_until"]


def revisable_until(key: PartitionKey, revision_days: int) -> datetime:
    """The moment (UTC) until which the service may revise the window `key`: its end plus the
    horizon. A window fetched at or after it is final."""
    return datetime.combine(key.end, time(), UTC) + timedelta(days=revision_days)


class Touched(NamedTuple):
    """What the rows of one `updateDate` day belong to, by click date: the aggregate windows that
    day changed. `click_days` are runs of consecutive click dates (first, last: both included);
    rows without a click date (no click detail: contract 2.1 rule 2) may belong to any click day
    up to `undated_through` (their latest commission date: a click comes before its commission)."""

    click_days: tuple[tuple[date, date], ...] = ()
    undated_through: date | None = None

    @classmethod
    def of(cls, click_dates: Iterable[date], undated_through: date | None = None) -> Touched:
        """The runs of `click_dates` (any order, repeats allowed)."""
        runs: list[tuple[date, date]] = []
        for day in sorted(set(click_dates)):
            if runs and day - runs[-1][1] == timedelta(days=1):
                runs[-1] = (runs[-1][0], day)
            else:
                runs.append((day, day))
        return cls(tuple(runs), undated_through)

    def touches(self, start: date, end: date) -> bool:
        """Whether a row of the day may belong to the window of click days [start, end)."""
        if self.undated_through is not None and start <= self.undated_through:
            return True
        return any(first < end and last >= start for first, last in self.click_days)

    def to_json(self) -> dict[str, Any]:
        return {
            "click_days": [[first.isoformat(), last.isoformat()] for first, last in self.click_days],
            "undated_through": None if self.undated_through is None else self.undated_through.isoformat(),
        }

    @classmethod
    def from_json(cls, data: Any) -> Touched:
        runs = tuple((date.fromisoformat(a), date.fromisoformat(b)) for a, b in data["click_days"])
        undated = data.get("undated_through")
        if undated is not None and not isinstance(undated, str):
            raise TypeError(f"{undated!r} is not a date")
        return cls(runs, None if undated is None else date.fromisoformat(undated))


class WindowState(NamedTuple):
    """An aggregate window as its site's manifest knows it: when its copy was fetched, until when
    the service may revise it, and whether the copy is final (fetched after that)."""

    dataset: str
    slice: str
    grain: str
    start: date
    end: date  # excluded
    fetched_at: datetime
    revisable_until: datetime
    final: bool
