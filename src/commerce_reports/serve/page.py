"""One visitor's page of the served dashboard: the controls, and what they show (Panel widgets).

    Site · Period (last 7 or 28 days, month to date, last month, custom dates) · From · To
    the lake's freshness per site; whether the period's figures are complete and final
    the period against the previous one (revenue, orders, returns, return rate, clicks, EPC, conversion)
    a leaderboard with its change: networks, merchants, links, devices or countries, and its chart;
      a network drilled into shows its merchants and links
    the period's alerts, each saying what, where, how big, since when and against what

Each change is answered off the server's event loop, in a worker of the session's own (with a
cursor of the server's one connection), so no visitor waits for another; a newer change supersedes
an older one still running, and what it shows reaches the browser as one update. Alerts take
longer: they are judged in a process of their own (`alerts.AlertJudge`) and arrive after the
figures. Everything a change shows is read in one generation of the lake (`board.consistent`).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import CancelledError, Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from html import escape
from pathlib import Path
from typing import Any, TypeVar

import panel as pn
import param

from ..alerting import AlertReport, Thresholds
from ..charts.changes import comparison_spec
from ..charts.comparison import Comparison
from ..db import connect
from ..db.readonly import Connection
from ..errors import CommerceReportsError
from ..money import Currency
from ..report.tables import comparison_table, summary_table
from .alerts import AlertJudge, alerts_html
from .board import BOARD_LABELS, BOARDS, Board, BoardName, LakeCache, LakeState, View, consistent, make_board
from .period import PERIOD_LABELS, PERIODS, PeriodName, period_of
from .vega import VegaChart

__all__ = ["ALL_SITES", "DashboardPage", "ServeConfig", "Shared"]

log = logging.getLogger(__name__)

ALL_SITES = ""  # the Site picker's "every site" (Panel's Select needs a value)
_ALERTS_KEPT = 64
T = TypeVar("T")


@dataclass(frozen=True)
class ServeConfig:
    """What every page of one server is built from, resolved once at the entry point: the data
    folder, the currency money is written in, the alerts' thresholds, how many rows a
    leaderboard shows, and the clock (tests give their own)."""

    data_dir: Path
    currency: Currency
    thresholds: Thresholds
    top_n: int = 10
    now: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))


class Shared:
    """What the sessions of one server share: one read-only connection to the lake (each visitor's
    workers read through cursors of it: one DuckDB, one cache of the lake's files, whoever asks),
    the lake state of the current generation, the alerts' judge, and the alerts already judged
    (per generation, hour, site and days), so a second visitor reads them at once."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.lake = LakeCache()
        self.judge = AlertJudge(data_dir)
        self._con: Connection | None = None
        self._alerts: dict[tuple[str, str, str | None, date, date], Future[AlertReport]] = {}
        self._lock = threading.Lock()

    def cursor(self) -> Connection:
        """A cursor of the shared connection (opened on first use), for one worker's queries."""
        with self._lock:
            if self._con is None:
                self._con = connect(self.data_dir)
            return self._con.cursor()

    def close(self) -> None:
        """Close the shared connection (its cursors with it) and end the alerts' judge: the server
        is stopping."""
        self.judge.close()
        with self._lock:
            if self._con is not None:
                self._con.close()
                self._con = None

    def alerts(
        self, key: tuple[str, str, str | None, date, date], judge: Callable[[], Future[AlertReport]]
    ) -> Future[AlertReport]:
        """The report of `key` (generation, hour, site, days), judged (`judge()`) for the first
        visitor to ask; the others asking meanwhile or later share it (judging reads weeks of the
        lake: twice at once would cost twice the time and memory). A failure is not kept."""
        if not key[0]:  # a lake never published: nothing says when it changed
            return judge()
        with self._lock:
            pending = self._alerts.get(key)
            if pending is None:
                if len(self._alerts) >= _ALERTS_KEPT:
                    self._alerts.pop(next(iter(self._alerts)))
                pending = self._alerts[key] = judge()
                pending.add_done_callback(lambda done: self._forget_failed(key, done))
        return pending

    def _forget_failed(self, key: tuple[str, str, str | None, date, date], done: Future[AlertReport]) -> None:
        """Drop the judgment of `key` when it failed or was cancelled: the next visitor asks again."""
        if done.cancelled() or done.exception() is not None:
            with self._lock:
                if self._alerts.get(key) is done:
                    del self._alerts[key]


class _Lane:
    """A worker thread with a cursor of its own on the server's connection, opened in it on first
    use: the session's queries of one kind run there one after another, never on the event loop."""

    def __init__(self, shared: Shared, name: str) -> None:
        self._shared = shared
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=name)
        self._con: Connection | None = None
        self._closed = False

    def connection(self) -> Connection:
        if self._con is None:
            self._con = self._shared.cursor()
        return self._con

    async def run(self, work: Callable[[Connection], T]) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, self._call, work)

    def _call(self, work: Callable[[Connection], T]) -> T:
        if self._closed:  # queued before the lane closed: nobody waits for it any more
            raise CancelledError
        return work(self.connection())

    def close(self) -> None:
        """Stop what runs (a query is interrupted: a visitor who left, or a server stopping, never
        waits for it), then close the connection in the worker and let the worker end."""
        if self._con is not None:
            self._con.interrupt()

        def close_connection() -> None:
            if self._con is not None:
                self._con.close()
                self._con = None

        self._closed = True
        self._pool.submit(close_connection)
        self._pool.shutdown(wait=False)


def _badge(text: str, good: bool) -> str:
    colour = "#0b6e3d" if good else "#8a5300"
    return (
        f'<span style="display:inline-block;padding:1px 8px;margin-right:6px;border-radius:10px;'
        f'border:1px solid {colour};color:{colour};font-size:12px">{escape(text)}</span>'
    )


def status_badges(totals: Comparison) -> str:
    """Whether the period's figures are whole in the lake, and whether the service may still
    revise them (the views' `complete` and `final`)."""
    complete = (
        _badge("complete", True)
        if totals.complete
        else _badge("partial: days missing or not settled yet", False)
    )
    if totals.final is None:
        final = ""
    elif totals.final:
        final = _badge("final", True)
    else:
        final = _badge("may still be revised by the service", False)
    previous = "" if totals.previous_complete else _badge("the previous period is partial", False)
    return f'<div class="cr-status">{complete}{final}{previous}</div>'


@dataclass(frozen=True)
class Choice:
    """The controls' values as the visitor left them; `view` resolves them on the lake."""

    site: str | None
    period: PeriodName
    start: date | None
    end: date | None
    board: BoardName
    network: str | None

    def view(self, lake: LakeState, today: date) -> View:
        """The View these values mean in `lake` (named periods end on the site's last complete
        day); a ValidationError when they contradict each other or name a site the lake lacks."""
        last_day = lake.last_day(self.site, today)
        period = period_of(self.period, last_day=last_day, start=self.start, end=self.end, today=today)
        return View(self.site, period, self.board, self.network)


def view_key(view: View) -> str:
    """A view as one string: what the page marks its answer with (tests wait for it)."""
    period = view.period
    return f"{view.site or '*'}|{period.start}|{period.end}|{view.board}|{view.network or ''}"


class DashboardPage:
    """The widgets of one session and the answers they show; `layout` is what Panel serves, and
    `refresh()` answers the controls (the server calls it once the page has loaded)."""

    def __init__(self, config: ServeConfig, shared: Shared) -> None:
        self.config = config
        self.shared = shared
        self.money = config.currency
        self._figures = _Lane(shared, "cr-figures")
        self._document = pn.state.curdoc  # the session's page: what one update of an answer holds
        self._asked = 0
        self._holding = 0
        self.board: Board | None = None
        self.site = pn.widgets.Select(
            label="Site", options={"All sites": ALL_SITES}, value=ALL_SITES, width=180
        )
        self.period = pn.widgets.Select(
            label="Period", options={PERIOD_LABELS[p]: p for p in PERIODS}, value="last_7", width=170
        )
        self.start = pn.widgets.DatePicker(label="From", width=150)
        self.end = pn.widgets.DatePicker(label="To", width=150)
        self.leaderboard = pn.widgets.RadioButtonGroup(
            label="Leaderboard",
            options={BOARD_LABELS[b]: b for b in BOARDS},
            value="network",
            color="primary",
            variant="outline",
        )
        self.drill = pn.widgets.Select(
            label="Drill into a network", options={"(choose a network)": ""}, width=260
        )
        self.back = pn.widgets.Button(label="◂ All networks", visible=False, width=140)
        self.freshness = pn.pane.HTML(sizing_mode="stretch_width")
        self.status = pn.pane.HTML("<p><i>⏳ Loading…</i></p>", sizing_mode="stretch_width")
        self.totals = pn.pane.HTML(sizing_mode="stretch_width")
        self.heading = pn.pane.HTML(sizing_mode="stretch_width")
        self.tables = pn.pane.HTML(sizing_mode="stretch_width")
        self.chart = VegaChart(sizing_mode="stretch_width", min_height=120)
        self.alerts = pn.pane.HTML(sizing_mode="stretch_width")
        for control in (self.site, self.period, self.start, self.end, self.leaderboard, self.drill):
            control.param.watch(self._changed, "value")
        self.back.on_click(self._undrill)
        title = f"<h2 style='margin:4px 0'>Commerce dashboard</h2><small>amounts in {self.money.code}</small>"
        self.layout = pn.Column(
            pn.pane.HTML(title),
            self.freshness,
            pn.Row(self.site, self.period, self.start, self.end),
            self.status,
            self.totals,
            pn.Row(self.leaderboard),
            pn.Row(self.drill, self.back),
            self.heading,
            self.tables,
            self.chart,
            self.alerts,
            sizing_mode="stretch_width",
            max_width=1200,
        )

    def choice(self) -> Choice:
        """The controls' current values."""
        custom = self.period.value == "custom"
        return Choice(
            self.site.value or None,
            self.period.value,
            self.start.value if custom else None,
            self.end.value if custom else None,
            self.leaderboard.value,
            self.drill.value or None,
        )

    # ------------------------------------------------------------------ events

    @contextmanager
    def _quiet(self) -> Iterator[None]:
        """Set controls without counting it as a visitor's change (the page still shows it)."""
        self._holding += 1
        try:
            yield
        finally:
            self._holding -= 1

    def _changed(self, *events: param.parameterized.Event) -> Any:
        if self._holding:
            return None
        changed = {event.obj for event in events}
        if (self.start in changed or self.end in changed) and self.period.value != "custom":
            with self._quiet():  # a date picked: custom dates
                self.period.value = "custom"
        if self.site in changed or self.leaderboard in changed:
            with self._quiet():
                self.drill.value = ""
        return asyncio.ensure_future(self.refresh())

    def _undrill(self, _event: Any) -> None:
        self.drill.value = ""

    # ------------------------------------------------------------------ answers

    async def refresh(self) -> Board | None:
        """Answer the controls as they are now: the figures first, then the alerts. None when a
        newer change superseded this one, or when the controls contradict each other (the page
        says why)."""
        self._asked += 1
        asked, choice = self._asked, self.choice()
        self.status.object = "<p><i>⏳ Loading…</i></p>"
        try:
            board = await self._figures.run(lambda con: self._answer(con, choice, asked))
        except CommerceReportsError as error:
            if asked == self._asked:
                self.status.object = _error(str(error))
            return None
        if board is None or asked != self._asked:
            return None
        with pn.io.hold(self._document):  # one update of the page, not one per pane
            self._show(board)
            self.alerts.object = "<p><i>⏳ Judging the period's alerts…</i></p>"
        try:
            report = await asyncio.wrap_future(self._judge(board))
        except (CancelledError, asyncio.CancelledError):  # the server is stopping
            return board
        except Exception as error:  # said on the page and in the log; the figures stay shown
            log.warning("the alerts of %s could not be judged: %s", view_key(board.view), error)
            if asked == self._asked:
                self.alerts.object = _error(f"alerts: {error}")
            return board
        if asked == self._asked:
            key = escape(view_key(board.view))
            self.alerts.object = f'<div class="cr-alerts" data-view="{key}">{alerts_html(report)}</div>'
        return board

    def _answer(self, con: Connection, choice: Choice, asked: int) -> Board | None:
        """The board of `choice`, in one generation of the lake (in the figures' worker)."""
        if asked != self._asked:  # superseded while it waited for the worker
            return None
        data_dir = self.config.data_dir

        def work() -> Board:
            lake = self.shared.lake.get(con, data_dir)
            view = choice.view(lake, self.config.now().date())
            totals = self._kept_totals(lake, view)
            return make_board(con, view, lake, top_n=self.config.top_n, totals=totals)

        return consistent(data_dir, work)

    def _kept_totals(self, lake: LakeState, view: View) -> Comparison | None:
        """The totals shown now, when they are this view's in this generation (only the
        leaderboard or the drill changed): they need no query."""
        shown = self.board
        if shown is None or shown.lake is None or not lake.generation:
            return None
        if shown.lake.generation != lake.generation or shown.totals.current != view.selection:
            return None
        return shown.totals

    def _judge(self, board: Board) -> Future[AlertReport]:
        """The alerts of the board's view, judged once per generation (by the server's judge)."""
        view, now = board.view, self.config.now()
        generation = board.lake.generation if board.lake else ""
        return self.shared.alerts(
            # judged again each hour too: the lake's health (a site not synced lately) moves with the clock
            (generation, f"{now:%Y-%m-%dT%H}", view.site, view.period.start, view.period.end),
            lambda: self.shared.judge.submit(
                view, thresholds=self.config.thresholds, currency=self.money, now=now
            ),
        )

    def _show(self, board: Board) -> None:
        view, money = board.view, self.money
        self.board = board
        if board.lake is not None:
            self._show_lake(board.lake)
        with self._quiet():
            self.start.value, self.end.value = view.period.start, view.period.end
        self.status.object = (
            f'<div class="cr-answer" data-view="{escape(view_key(view))}" '
            f'data-generation="{escape(Path(board.lake.generation).name if board.lake else "")}">'
            f"<b>{view.period.start} to {view.period.end}</b> ({view.period.days} days) against "
            f"{board.totals.previous.start} to {board.totals.previous.end} · "
            f"{escape(view.site or 'all sites')} · {board.seconds * 1000:.0f} ms"
            f"{status_badges(board.totals)}</div>"
        )
        self.totals.object = f'<div class="cr-totals">{summary_table(board.totals, money)}</div>'
        drilled = view.network is not None
        self.back.visible = drilled
        self.leaderboard.disabled = drilled
        if drilled:
            self.heading.object = (
                f"<h3 class='cr-drill'>{escape(str(view.network))}: its merchants and links</h3>"
            )
        else:
            self.heading.object = f"<h3>{BOARD_LABELS[view.board]} against the previous period</h3>"
        parts = []
        for by, result in board.boards.items():
            title = f"<h4>{BOARD_LABELS[by]}</h4>" if drilled else ""
            table = comparison_table(result, money)
            parts.append(f'<div class="cr-board" data-board="{by}">{title}{table}</div>')
        self.tables.object = "".join(parts)
        first_by, first = next(iter(board.boards.items()))
        spec = comparison_spec(first, first_by, currency=money)  # Altair's spec: tests/charts checks it
        self.chart.param.update(key=view_key(view), spec=spec)  # the key first: the drawing reads it
        if view.board == "network" and not drilled:
            networks = [str(key) for key in first.frame["key"]]
            with self._quiet():
                self.drill.options = {"(choose a network)": "", **{n: n for n in networks}}
                self.drill.value = ""
        self.drill.visible = view.board == "network"

    def _show_lake(self, lake: LakeState) -> None:
        """The freshness of each site's ledger, and the sites the Site picker offers."""
        now = self.config.now()
        lines = "".join(f"<li>{escape(site.describe(now))}</li>" for site in lake.sites)
        self.freshness.object = f'<ul class="cr-freshness" style="margin:2px 0;color:#555">{lines}</ul>'
        sites = {"All sites": ALL_SITES, **{name: name for name in lake.names}}
        if sites != self.site.options:
            with self._quiet():
                self.site.options = sites

    def close(self) -> None:
        """Close the session's connection (the server calls it when the visitor leaves)."""
        self._figures.close()


def _error(message: str) -> str:
    return f'<p class="cr-error" style="color:#b3261e">{escape(message)}</p>'
