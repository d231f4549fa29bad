"""What the served dashboard shows for one visitor's choice, computed in one state of the lake.

    lake = lake_state(con, data_dir)                  # once per published generation
    view = View(site="alpha", period=period_of("last_7", last_day=lake.last_day("alpha")))
    board = make_board(con, view, lake)               # the totals and the leaderboard asked for
    board = consistent(data_dir, lambda: ...)         # the same, never straddling two syncs

A board holds the period against the previous one (`charts.comparison.compare_periods`: revenue
exact, `complete` and `final` per period), the leaderboard of the dimension shown (networks,
merchants, links, devices or countries) or, drilled into a network, its merchants and links.

Every statement binds its views to the generation of the lake published last (`db/published.py`),
so no query sees a half-written sync; `consistent` runs a board's statements again when a sync
published a new generation while they ran, so a page never mixes two.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, Literal, TypeVar, get_args

from ..charts.comparison import Comparison, comparisons
from ..charts.selection import Coverage, Selection, check_connection, site_coverages
from ..db.published import published_reading
from ..db.readonly import Connection
from ..errors import LakeError, ValidationError
from .period import Period, last_complete_day

__all__ = [
    "BOARDS",
    "BOARD_LABELS",
    "DRILLED",
    "Board",
    "BoardName",
    "LakeCache",
    "LakeState",
    "SiteFreshness",
    "View",
    "consistent",
    "generation",
    "lake_state",
    "make_board",
]

BoardName = Literal["network", "merchant", "link", "device", "country"]
BOARDS: tuple[BoardName, ...] = get_args(BoardName)
BOARD_LABELS: dict[BoardName, str] = {
    "network": "Networks",
    "merchant": "Merchants",
    "link": "Links",
    "device": "Devices",
    "country": "Countries",
}
DRILLED: tuple[BoardName, ...] = ("merchant", "link")
"""What a drill into one network shows: its merchants and its links."""
_ATTEMPTS = 5
T = TypeVar("T")


def generation(data_dir: Path) -> str:
    """The generation of the lake the views read now ('' for a lake never published: its
    statements read the files as they are)."""
    reading = published_reading(data_dir)
    return str(reading.root) if reading is not None else ""


def consistent(data_dir: Path, work: Callable[[], T]) -> T:
    """`work()`'s result, from statements that all read one generation of the lake: run again
    when a sync published another while it ran (generations only move forward, so the same one
    before and after means the same one throughout)."""
    for _ in range(_ATTEMPTS):
        before = generation(data_dir)
        result = work()
        if generation(data_dir) == before:
            return result
    raise LakeError(
        f"the lake at {data_dir} changed during each of {_ATTEMPTS} attempts to read it: "
        "reload the page when the sync is done"
    )


@dataclass(frozen=True)
class SiteFreshness:
    """One site's ledger in the lake: its first and last stored days, and when the last one was
    fetched (a day fetched before it ended is still partial)."""

    site: str
    cover: Coverage

    def describe(self, now: datetime) -> str:
        """'alpha: ledger 2026-08-29 to 2026-11-26, fetched 2026-11-27 05:02 UTC (3 h ago)'."""
        cover = self.cover
        if cover.last is None:
            return f"{self.site}: nothing stored yet (run `commerce-reports sync`)"
        text = f"{self.site}: ledger {cover.first} to {cover.last}"
        if cover.fetched_at is not None:
            fetched = cover.fetched_at.astimezone(UTC)
            text += f", fetched {fetched:%Y-%m-%d %H:%M} UTC ({_age(now - fetched)} ago)"
        if cover.partial is not None:
            text += f"; {cover.partial} is still being filled"
        return text


def _age(age: Any) -> str:
    seconds = max(0, int(age.total_seconds()))
    if seconds < 3600:
        return f"{seconds // 60} min"
    if seconds < 2 * 86400:
        return f"{seconds // 3600} h"
    return f"{seconds // 86400} days"


@dataclass(frozen=True)
class LakeState:
    """What a session knows of one generation of the lake: its id, the sites it holds and each
    one's ledger. Found once per generation (it reads every ledger day), kept between clicks."""

    generation: str
    sites: tuple[SiteFreshness, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(s.site for s in self.sites)

    def cover(self, site: str | None) -> Coverage:
        """The ledger of one site, or of every site (None): the coverage a Selection resolves on."""
        chosen = [s.cover for s in self.sites if site is None or s.site == site]
        if site is not None and not chosen:
            raise ValidationError(
                "site", f"{site!r} is not in the lake", f"use one of {', '.join(self.names)}"
            )
        return Coverage.combined(chosen)

    def last_day(self, site: str | None, today: date) -> date:
        """The last complete ledger day of `site` (None: every site): where named periods end."""
        cover = self.cover(site)
        return last_complete_day(cover.last, cover.partial, today)


def lake_state(con: Connection, data_dir: Path) -> LakeState:
    """The sites of the lake and their ledgers, as the generation current now holds them."""
    check_connection(con)

    def read() -> LakeState:
        sites = tuple(SiteFreshness(site, cover) for site, cover in site_coverages(con).items())
        return LakeState(generation(data_dir), sites)

    return consistent(data_dir, read)


@dataclass(frozen=True)
class View:
    """What a visitor chose: a site (None: every site), a period, the leaderboard shown, and the
    network drilled into (None: none)."""

    site: str | None
    period: Period
    board: BoardName = "network"
    network: str | None = None

    def __post_init__(self) -> None:
        if self.board not in BOARDS:
            raise ValidationError(
                "board", f"{self.board!r} is not a leaderboard", f"use one of {', '.join(BOARDS)}"
            )
        if not isinstance(self.period, Period):
            raise ValidationError("period", f"{self.period!r} is not a Period", "give period_of(...)")

    @property
    def selection(self) -> Selection:
        return Selection(site=self.site, start=self.period.start, end=self.period.end)


@dataclass(frozen=True)
class Board:
    """One answer: the view, the totals against the previous period, the leaderboards (one, or a
    drilled network's merchants and links), the lake's state it was read in, how long it took."""

    view: View
    totals: Comparison
    boards: dict[BoardName, Comparison] = field(default_factory=dict)
    lake: LakeState | None = None
    seconds: float = 0.0


def make_board(
    con: Connection, view: View, lake: LakeState, *, top_n: int = 10, totals: Comparison | None = None
) -> Board:
    """The totals and leaderboards of `view`, in the lake state `lake` (its coverage is reused:
    no query reads every ledger day again). `totals`: the view's totals when already known (a
    leaderboard changed, or a drill, in the same period and generation)."""
    check_connection(con)
    if not isinstance(view, View):
        raise ValidationError("view", f"{view!r} is not a View", "give View(site, period, ...)")
    if totals is not None and (not isinstance(totals, Comparison) or totals.current != view.selection):
        raise ValidationError("totals", "are not the totals of this view", "give None, or the board's totals")
    started = time.perf_counter()
    sel = view.selection
    shown = DRILLED if view.network is not None else (view.board,)
    asked: list[tuple[Selection, BoardName | None]] = [
        (replace(sel, network=view.network), by) for by in shown
    ]
    if totals is None:
        asked.insert(0, (sel, None))
    answers = comparisons(con, asked, top_n=top_n, cover=lake.cover(view.site))  # together: 4 statements
    totals = totals or answers.pop(0)
    boards = dict(zip(shown, answers, strict=True))
    return Board(view, totals, boards, lake, time.perf_counter() - started)


class LakeCache:
    """The lake state of the generation current now, shared by the sessions of one server: found
    once per generation, by whoever asks first while the others wait for it (it reads every ledger
    day); a lake never published is read at every ask."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._state: LakeState | None = None

    def get(self, con: Connection, data_dir: Path) -> LakeState:
        with self._lock:
            kept = self._state
            if kept is None or not kept.generation or kept.generation != generation(data_dir):
                kept = self._state = lake_state(con, data_dir)
            return kept
