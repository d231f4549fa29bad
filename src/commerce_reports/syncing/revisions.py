"""The ledger as a signal: which stored aggregate windows the service changed since they were fetched.

The service aggregates by click date, and a click's transaction keeps changing after the click's
window has ended: its commission arrives days later, a return weeks later (contract 2.1 rule 4).
The ledger (the `updateDate` days) sees each change on the day it happens, and each stored day
records the click days its rows belong to (`lake.Touched`). A window whose copy was fetched at F
has *changed* when a ledger day that ends after F was fetched after F and touches the window's
click days: the ledger's copy may hold a change the window's copy lacks.

A day stored before touches were recorded touches every window (it cannot say which).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, time
from typing import NamedTuple

from ..contract import PartitionKey
from ..lake import Entry, Manifest, Touched

__all__ = ["LedgerSignal"]


class _Day(NamedTuple):
    """A stored `updateDate` day: when it was fetched, when it ends, what it touched."""

    fetched_at: datetime
    ends_at: datetime
    touched: Touched | None


class LedgerSignal:
    """The stored `updateDate` days of a site, latest fetched first, asked about windows."""

    def __init__(self, entries: Iterable[Entry]) -> None:
        days = [
            _Day(e.fetched_at, datetime.combine(e.key.end, time(), UTC), e.touched)
            for e in entries
            if e.key.dataset == "transactions" and e.key.by == "updateDate"
        ]
        self._days = sorted(days, key=lambda d: d.fetched_at, reverse=True)

    @classmethod
    def of(cls, manifest: Manifest) -> LedgerSignal:
        return cls(manifest)

    def changed(self, window: PartitionKey, fetched_at: datetime) -> bool:
        """Whether the ledger shows the window `window` changed after its copy of `fetched_at`."""
        for day in self._days:
            if day.fetched_at <= fetched_at:
                return False  # this day and every later one in the list were seen by the window
            if day.ends_at > fetched_at and (
                day.touched is None or day.touched.touches(window.start, window.end)
            ):
                return True
        return False
