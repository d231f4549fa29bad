"""What the served dashboard shows, computed without a browser on a real sandbox lake: the totals to
the cent, every leaderboard, a drill into a network, one generation per answer, and two visitors
answered side by side."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from dataclasses import replace
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from commerce_reports.alerting import Thresholds
from commerce_reports.charts.changes import comparison_chart_of
from commerce_reports.db import connect
from commerce_reports.db.readonly import Connection
from commerce_reports.errors import LakeError, ValidationError
from commerce_reports.money import Currency
from commerce_reports.serve import board as board_module
from commerce_reports.serve.board import BOARDS, DRILLED, View, consistent, lake_state, make_board
from commerce_reports.serve.period import period_of
from tests.waiting import wait_for

from .conftest import NOW

LAST_DAY = NOW.date().replace(day=9)  # the lake's last stored day (NOW's) is still being filled


@pytest.fixture(scope="module")
def con(served_lake: Path) -> Iterator[Connection]:
    with connect(served_lake) as connection:
        yield connection


def _ledger(con: Connection, site: str | None, start: date, end: date, extra: str = "") -> Decimal:
    where = "commission_date BETWEEN $start AND $end" + (" AND site = $site" if site else "") + extra
    params: dict[str, object] = {"start": start, "end": end, **({"site": site} if site else {})}
    value = con.execute(
        f"SELECT sum(publisher_net_revenue) FROM transactions WHERE {where}", params
    ).fetchall()
    return Decimal(value[0][0])


def test_the_lake_state_knows_each_sites_ledger_and_where_periods_end(
    con: Connection, served_lake: Path
) -> None:
    lake = lake_state(con, served_lake)
    assert lake.names == ("alpha", "beta")
    assert lake.generation.startswith(str(served_lake / "views"))  # a published generation
    both = lake.cover(None)
    assert both.last == NOW.date() and both.partial == NOW.date()  # fetched at noon: still filling
    assert lake.last_day(None, NOW.date()) == LAST_DAY
    assert lake.last_day("alpha", NOW.date()) == LAST_DAY
    with pytest.raises(ValidationError, match="'gamma' is not in the lake"):
        lake.cover("gamma")


@pytest.mark.parametrize("site", [None, "alpha"])
def test_the_totals_are_the_ledgers_to_the_cent(con: Connection, served_lake: Path, site: str | None) -> None:
    lake = lake_state(con, served_lake)
    view = View(site, period_of("last_7", last_day=LAST_DAY))
    board = make_board(con, view, lake)
    row = board.totals.frame.row(0, named=True)
    previous = board.totals.previous
    assert row["revenue"] == _ledger(con, site, view.period.start, view.period.end)
    assert row["revenue_previous"] == _ledger(con, site, previous.bounds[0], previous.bounds[1])
    assert (previous.bounds[1] - previous.bounds[0]).days == 6  # as long as the period, just before it
    assert board.totals.complete is False  # its last days were fetched before they settled
    settled = make_board(
        con, View(site, period_of("custom", last_day=LAST_DAY, start="2026-03-01", end="2026-03-07")), lake
    )
    assert settled.totals.complete is True and settled.totals.final is False  # whole, but still revisable


@pytest.mark.parametrize("by", BOARDS)
def test_every_leaderboard_answers_with_its_change_and_draws(
    con: Connection, served_lake: Path, by: str
) -> None:
    lake = lake_state(con, served_lake)
    view = View("beta", period_of("last_28", last_day=LAST_DAY), by)  # type: ignore[arg-type]
    board = make_board(con, view, lake, top_n=5)
    frame = board.boards[view.board].frame
    assert 0 < frame.height <= 5 and list(board.boards) == [by]
    assert {"revenue", "revenue_previous", "revenue_change"} <= set(frame.columns)
    assert frame["revenue"].dtype.is_decimal()  # exact, as the views keep it
    spec = comparison_chart_of(board.boards[view.board], view.board, currency="EUR").to_dict()  # validated
    assert "Revenue (EUR)" in str(spec)


def test_a_drill_into_a_network_shows_its_merchants_and_links(con: Connection, served_lake: Path) -> None:
    lake = lake_state(con, served_lake)
    period = period_of("last_28", last_day=LAST_DAY)
    networks = make_board(con, View("alpha", period), lake, top_n=200).boards["network"].frame
    top = str(networks["key"][0])
    drilled = make_board(con, View("alpha", period, network=top), lake, top_n=200)
    assert tuple(drilled.boards) == DRILLED
    network_revenue = networks.filter(networks["key"] == top)["revenue"][0]
    for by in DRILLED:  # every merchant and link of the network, and nothing else: they add up to it
        assert drilled.boards[by].frame["revenue"].sum() == network_revenue
    assert network_revenue == _ledger(
        con, "alpha", period.start, period.end, " AND network = $network".replace("$network", f"'{top}'")
    )


def test_a_leaderboard_change_reuses_the_totals_shown(con: Connection, served_lake: Path) -> None:
    lake = lake_state(con, served_lake)
    view = View("alpha", period_of("last_7", last_day=LAST_DAY))
    first = make_board(con, view, lake)
    merchants = make_board(con, replace(view, board="merchant"), lake, totals=first.totals)
    assert merchants.totals is first.totals and list(merchants.boards) == ["merchant"]
    with pytest.raises(ValidationError, match="not the totals of this view"):
        make_board(con, View("beta", view.period), lake, totals=first.totals)


def test_values_a_control_never_offered_are_refused(con: Connection, served_lake: Path) -> None:
    """What a forged websocket message could put in a control: refused before any query runs."""
    from commerce_reports.serve.page import Choice

    lake = lake_state(con, served_lake)
    for forged, said in (
        (Choice("alpha'; --", "last_7", None, None, "network", None), "is not in the lake"),
        (Choice(None, "forever", None, None, "network", None), "is not a period"),  # type: ignore[arg-type]
        (Choice(None, "last_7", None, None, "everything", None), "is not a leaderboard"),  # type: ignore[arg-type]
        (Choice(None, "custom", NOW.date(), NOW.date() + timedelta(days=1), "network", None), "after today"),
    ):
        with pytest.raises(ValidationError, match=said):
            forged.view(lake, NOW.date())


def test_a_board_is_read_again_when_a_sync_publishes_while_it_is_read(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    seen = iter(["g1", "g2", "g2", "g2"])  # before and after the first read, then the second's
    monkeypatch.setattr(board_module, "generation", lambda _folder: next(seen))
    reads: list[int] = []
    assert consistent(tmp_path, lambda: reads.append(1) or len(reads)) == 2
    moving = iter(range(100))  # a new generation at every look
    monkeypatch.setattr(board_module, "generation", lambda _folder: str(next(moving)))
    with pytest.raises(LakeError, match="changed during each of 5 attempts"):
        consistent(tmp_path, lambda: None)


def test_one_visitor_waiting_on_the_lake_does_not_hold_another(
    served_lake: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each page answers in a worker of its own: while the first visitor's answer is held inside its
    worker, the second visitor's page is answered."""
    from commerce_reports.serve import page as page_module
    from commerce_reports.serve.page import DashboardPage, ServeConfig, Shared

    held, release = threading.Event(), threading.Event()
    real = page_module.make_board

    def make(con: Connection, view: View, *args: object, **kwargs: object) -> object:
        if view.site == "alpha":
            held.set()
            assert release.wait(60), "the test never released the first visitor"
        return real(con, view, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(page_module, "make_board", make)
    config = ServeConfig(served_lake, Currency.of("USD"), Thresholds(), now=lambda: NOW)
    shared = Shared(served_lake)

    async def visit() -> tuple[object, object]:
        first, second = DashboardPage(config, shared), DashboardPage(config, shared)
        first.site.options = second.site.options = {"All sites": "", "alpha": "alpha", "beta": "beta"}
        first.site.value, second.site.value = "alpha", "beta"
        slow = asyncio.ensure_future(first.refresh())
        await asyncio.get_running_loop().run_in_executor(None, held.wait, 60)
        quick = await second.refresh()  # answered while the first is still held
        release.set()
        answered = await slow
        first.close()
        second.close()
        shared.close()
        return quick, answered

    quick, answered = asyncio.run(visit())
    assert quick is not None and answered is not None
    assert quick.view.site == "beta" and answered.view.site == "alpha"  # type: ignore[attr-defined]


def test_visitors_asking_the_same_alerts_share_one_judgment_and_a_failed_one_is_asked_again(
    tmp_path: Path,
) -> None:
    from commerce_reports.serve.page import Shared

    shared = Shared(tmp_path)
    judged: list[Future[Any]] = []

    def judge() -> Future[Any]:
        judged.append(Future())
        return judged[-1]

    key = ("generation-1", "2026-03-10T12", "alpha", date(2026, 3, 1), date(2026, 3, 7))
    answers: list[Future[Any]] = []
    visitors = [threading.Thread(target=lambda: answers.append(shared.alerts(key, judge))) for _ in range(3)]
    for visitor in visitors:
        visitor.start()
    for visitor in visitors:
        visitor.join(60)
    assert len(judged) == 1 and all(answer is judged[0] for answer in answers)
    judged[0].set_result("the report")
    assert shared.alerts(key, judge).result() == "the report" and len(judged) == 1  # kept
    other = ("generation-1", "2026-03-10T12", "beta", date(2026, 3, 1), date(2026, 3, 7))
    shared.alerts(other, judge).set_exception(RuntimeError("the judge's process died"))
    assert shared.alerts(other, judge) is judged[-1] and len(judged) == 3  # a failure is not kept
    shared.close()


def test_the_judge_judges_in_a_process_of_its_own_and_ends_it_on_close(served_lake: Path) -> None:
    """The alerts the page shows, judged by the server's judge: the same as `period_alerts` in
    this process, from processes of the judge's own, each gone once it has judged or the judge
    is closed."""
    from commerce_reports.serve.alerts import AlertJudge, period_alerts

    before, threads = _children(), set(threading.enumerate())
    judge = AlertJudge(served_lake)
    view = View("alpha", period_of("last_7", last_day=LAST_DAY))
    money = Currency.of("USD")
    pending = judge.submit(view, thresholds=Thresholds(), currency=money, now=NOW)
    wait_for(lambda: bool(_children() - before), "the judge's process started")
    report = pending.result(timeout=300)
    with connect(served_lake) as con:
        here = period_alerts(
            con, view, data_dir=served_lake, thresholds=Thresholds(), currency=money, now=NOW
        )
    assert report.to_dict() == here.to_dict()
    # nothing is left running once the judgment is given: a pool replacing its worker after each
    # task would start an idle one at once, and a stopping server's exit would wait for it
    wait_for(lambda: not _children() - before, "the judge's process ended once it had judged")
    wait_for(lambda: set(threading.enumerate()) <= threads, "the judge's threads ended once it had judged")
    judge.submit(view, thresholds=Thresholds(), currency=money, now=NOW)
    wait_for(lambda: bool(_children() - before), "the next judgment's process started")
    judge.close()  # while it judges (or still starts): not waited for
    wait_for(lambda: not _children() - before, "the judge's processes ended")


def _children() -> set[int]:
    """The worker processes this one spawned that still run (a zombie has ended: only its wait is
    left; multiprocessing's resource tracker stays until this process ends)."""
    running = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            spawned = b"spawn_main" in (stat.parent / "cmdline").read_bytes()
        except (OSError, IndexError):
            continue
        if spawned and int(fields[1]) == os.getpid() and fields[0] not in ("Z", "X"):
            running.add(int(stat.parent.name))
    return running
