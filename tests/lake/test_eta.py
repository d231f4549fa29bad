"""A sync says how it goes and how long it takes: progress lines, and an ETA from learned costs."""

from __future__ import annotations

import json
import logging
import os
import time
from datetime import date, timedelta
from pathlib import Path

import pytest

from commerce_reports.api import load_transactions, plan_sync
from commerce_reports.contract import PartitionKey
from commerce_reports.errors import ValidationError
from commerce_reports.params import Filters
from commerce_reports.sandbox.runner import RunningSandbox
from commerce_reports.syncing import CostBook, Expected, PlannedRequest, SyncPlan
from commerce_reports.syncing.costs import DEFAULT_COSTS, KEEP_SYNCS, default_cost_dir, default_finish, shares
from commerce_reports.syncing.progress import Progress
from tests.conftest import FakeClock
from tests.lake.conftest import options_for, profiles

SANDBOX = "sandbox contract"


def a_plan(days: int, months: int, pace: float = 0.0, costs: dict[str, Expected] | None = None) -> SyncPlan:
    """Site alpha: `days` ledger days and `months` networks windows, with `costs` per endpoint."""
    first = date(2026, 1, 1)
    requests = [
        PlannedRequest("alpha", PartitionKey.transactions(first + timedelta(days=n)), "missing")
        for n in range(days)
    ] + [
        PlannedRequest("alpha", PartitionKey.aggregate("networks", month, Filters(), "month"), "missing")
        for month in (date(2020 + n // 12, n % 12 + 1, 1) for n in range(months))
    ]
    plan = SyncPlan(requests, {"transactions": pace, "networks": pace})
    plan.costs = {("alpha", endpoint): cost for endpoint, cost in (costs or {}).items()}
    return plan


def test_progress_lines_are_throttled_estimate_the_time_left_and_always_end_with_the_last() -> None:
    plan = a_plan(20, 10, costs={"transactions": Expected(1.0), "networks": Expected(2.0)})
    plan.finish = Expected(4.0)
    clock, lines = FakeClock(), []
    progress = Progress(plan, False, lines.append, clock)
    ledger = [r for r in plan.requests if r.key.dataset == "transactions"]
    windows = [r for r in plan.requests if r.key.dataset == "networks"]
    # nothing done yet: the plan's lanes (networks 10 x 2 s is the longest), then the end work
    assert progress.time_left(clock.time()) == pytest.approx(20.0 + 4.0)
    for request in ledger[:4]:  # 13% done, but within 2 s of the start: no line yet
        clock.sleep(0.4)
        progress.advance(request, 10)
    assert lines == []
    clock.sleep(1.0)
    progress.advance(ledger[4], 10)  # 2.6 s, 5/30 done: a line
    assert lines == ["  5/30 requests, 50 rows stored, 3 s elapsed, about 21 s left"]
    # ledger: 4 requests in the 2.2 s since its first, with 2 of the plan's (1 s): 0.7 s each, 15
    # left: 10.5 s; networks has done none: its plan (20 s) less the 2.6 s elapsed = 17.4 s, the
    # longest; then 4 s of end work
    assert progress.time_left(clock.time()) == pytest.approx(17.4 + 4.0)
    clock.sleep(5.0)
    progress.advance(windows[0], 1)  # one more (3%): not enough for a line...
    assert len(lines) == 1
    clock.sleep(30.0)
    progress.advance(windows[1], 1)  # ...until 30 s have passed since the last line
    assert len(lines) == 2 and lines[1].startswith("  7/30 requests, 52 rows stored, 38 s elapsed, about ")
    # ledger, silent for 35 s: (37.2 s since its 5th last + 2 x 1 s) / (4 + 2) = 6.53 s each, 15
    # left: 98 s, longer than networks' (30 s + 2 x 2 s) / (1 + 2) x 8 left = 90.7 s; then 4 s
    assert progress.time_left(clock.time()) == pytest.approx(37.2 / 6 * 15 + 2 / 6 * 15 + 4.0)
    assert lines[1].endswith("about 2 min left")
    for request in ledger[5:] + windows[2:]:  # the rest at once: only the last line is said
        progress.advance(request, 2)
    progress.close()
    assert lines[2:] == ["  30/30 requests, 98 rows stored in 38 s"]


def test_a_sync_waiting_on_an_answer_still_says_a_line_every_30_s() -> None:
    # a server that stalled a body left 5 minutes without a word: lines came only as requests ended
    plan = a_plan(3, 0)
    clock, lines = FakeClock(), []
    progress = Progress(plan, False, lines.append, clock)
    progress.advance(plan.requests[0], 4)
    clock.sleep(29.0)
    progress.tick()
    assert lines == []
    clock.sleep(2.0)
    progress.tick()
    progress.tick()  # (once per heartbeat)
    assert lines == [
        "  1/3 requests, 4 rows stored, 31 s elapsed; no answer for 31 s: waiting on the service"
    ]
    clock.sleep(30.0)
    progress.tick()
    assert (
        lines[1] == "  1/3 requests, 4 rows stored, 61 s elapsed; no answer for 61 s: waiting on the service"
    )


def test_a_stopped_sync_says_where_it_stopped_and_failures_count_as_done() -> None:
    plan = a_plan(10, 0)
    clock, lines = FakeClock(), []
    progress = Progress(plan, False, lines.append, clock)
    clock.sleep(3.0)
    progress.fail(plan.requests[0])
    progress.advance(plan.requests[1], 7)
    progress.close()
    assert lines == [
        "  1/10 requests (1 failed), 0 rows stored, 3 s elapsed, about 0 s left",
        "  2/10 requests (1 failed), 7 rows stored; stopped after 3 s",
    ]


def test_without_say_a_scheduled_run_logs_a_line_per_request(caplog: pytest.LogCaptureFixture) -> None:
    plan = a_plan(2, 0)
    progress = Progress(plan, False, None, FakeClock())
    with caplog.at_level(logging.INFO, logger="commerce_reports.syncing.progress"):
        for request in plan.requests:
            progress.advance(request, 3)
        progress.close()
    assert [r.getMessage() for r in caplog.records] == [
        "alpha transactions updateDate=2026-01-01: 3 rows (1/2)",
        "alpha transactions updateDate=2026-01-02: 3 rows (2/2)",
    ]


def test_the_eta_counts_the_pace_or_each_requests_cost_whichever_is_longer_in_each_lane() -> None:
    plan = a_plan(10, 5, pace=60.0, costs={"transactions": Expected(2.0, 40), "networks": Expected(80.0, 12)})
    plan.finish = Expected(5.0, 1)
    assert plan.pace_floor == pytest.approx(9 * 60.5)
    assert plan.lane_seconds("alpha", "transactions") == pytest.approx(9 * 60.5 + 2.0)
    assert plan.lane_seconds("alpha", "networks") == pytest.approx(5 * 80.0)
    assert plan.work_seconds == pytest.approx(10 * 2.0 + 5 * 80.0)
    assert plan.eta_seconds == pytest.approx(9 * 60.5 + 2.0 + 5.0)  # the paced lane decides
    text = plan.describe()
    assert text.startswith("15 requests (0 partitions in range stored and current), ETA 9 min:")
    assert "  alpha        networks          5 requests (5 missing), 7 min: a pace of 60 s, ~80 s of" in text
    assert text.endswith(
        "  the longest lane (alpha transactions): 9 min, then rollups and catalog: 5 s; "
        "the pace alone: 9 min (costs learned from 52 earlier requests)"
    )
    fresh = a_plan(10, 5, costs={"transactions": Expected(2.0), "networks": Expected(1.0)})
    assert fresh.describe().endswith("(first sync: costs estimated)")
    mixed = a_plan(10, 5, costs={"transactions": Expected(2.0, 3), "networks": Expected(1.0)})
    assert mixed.describe().endswith("(costs learned, except networks: estimated)")
    sandbox = a_plan(10, 5, pace=0.05, costs={"transactions": Expected(1.0), "networks": Expected(2.0)})
    assert sandbox.eta_seconds == pytest.approx(20.0)  # both lanes share the machine: its work decides
    said = "the requests' work on this machine (the lanes share it): 20 s; the pace alone: 1 s"
    assert said in sandbox.describe()
    assert a_plan(3, 0, pace=60.0).eta_seconds == pytest.approx(2 * 60.5)  # no costs: the pace floor


def test_shares_split_each_moment_among_the_requests_busy_at_it() -> None:
    assert shares([(0.0, 4.0), (2.0, 6.0), (7.0, 8.0), (9.0, 9.0)]) == [3.0, 3.0, 1.0, 0.0]
    assert shares([]) == []


def test_costs_are_learned_read_back_kept_for_a_few_syncs_and_pruned(tmp_path: Path) -> None:
    book = CostBook(tmp_path)
    assert book.expected(SANDBOX, "transactions") == Expected(DEFAULT_COSTS["sandbox"]["transactions"])
    remote = "https://api.example.com contract"
    assert book.expected(remote, "networks") == Expected(DEFAULT_COSTS["service"]["networks"])
    with pytest.raises(ValidationError, match="one of transactions, networks, merchandise"):
        book.expected(remote, "clicks")
    book.record(SANDBOX, {"transactions": [0.2, 0.4], "networks": [0.0, 0.0]})  # all zero: nothing learned
    again = CostBook(tmp_path)
    assert again.expected(SANDBOX, "transactions") == Expected(pytest.approx(0.3), 2)
    assert again.expected(SANDBOX, "networks").learned_from == 0
    for n in range(KEEP_SYNCS):
        again.record(SANDBOX, {"transactions": [1.0] * (n + 1)})
    assert CostBook(tmp_path).expected(SANDBOX, "transactions") == Expected(1.0, 15)  # the oldest sync went
    assert book.finish(100) == Expected(default_finish(100))
    book.record_finish(100, 3 * default_finish(100))
    assert CostBook(tmp_path).finish(200) == Expected(pytest.approx(3 * default_finish(200)), 1)
    old = tmp_path / "0123456789abcdef0123.json"
    old.write_text("{}")
    os.utime(old, (time.time() - 40 * 86400,) * 2)
    CostBook(tmp_path)
    assert not old.exists() and len(list(tmp_path.glob("*.json"))) == 2  # the used ones stay


@pytest.mark.parametrize("content", ["{not json", '{"transactions": [[1, "slow"]]}', "[1, 2]"])
def test_a_damaged_cost_file_is_ignored_with_a_warning(
    tmp_path: Path, content: str, caplog: pytest.LogCaptureFixture
) -> None:
    book = CostBook(tmp_path)
    book.record(SANDBOX, {"transactions": [0.5]})
    (state,) = tmp_path.glob("*.json")
    state.write_text(content)
    with caplog.at_level(logging.WARNING):
        fresh = CostBook(tmp_path)
        assert fresh.expected(SANDBOX, "transactions").learned_from == 0
        assert fresh.expected(SANDBOX, "networks").learned_from == 0  # read once, said once
    assert [r.getMessage().startswith("ignoring the request costs in ") for r in caplog.records] == [True]
    fresh.record(SANDBOX, {"transactions": [0.7]})  # and the next sync writes a good one
    assert CostBook(tmp_path).expected(SANDBOX, "transactions") == Expected(0.7, 1)


def test_a_sync_keeps_what_its_requests_cost_and_the_next_plan_counts_it(
    running: RunningSandbox, tmp_path: Path
) -> None:
    start = running.sandbox.now.date() - timedelta(days=2)
    options = options_for(running)
    sites, folder = profiles(running), tmp_path / "data"
    kwargs = {"sites": sites, "data_dir": folder, "networks": [], "merchandise": []}
    assert plan_sync(start, options=options, **kwargs).describe().endswith("(first sync: costs estimated)")
    # a loader syncs what it lacks as a sync does (without the end work, which a sync adds)
    frame = load_transactions(start, running.sandbox.now.date(), site=sites, data_dir=folder, options=options)
    assert frame.height > 0
    after = plan_sync(start, options=options, refresh=True, **kwargs)
    learned = after.costs[("alpha", "transactions")]
    assert learned.learned_from == 6 and learned.seconds > 0
    assert after.describe().endswith("(costs learned from 6 earlier requests)")  # both lanes' six
    written = "".join(p.name + p.read_text() for p in default_cost_dir().iterdir())
    assert json.loads(next(default_cost_dir().glob("*.json")).read_text())
    for secret in ("sandbox-alpha-key", "sandbox-beta-key", running.base_url, "sandbox"):
        assert secret not in written
