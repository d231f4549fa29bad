"""Syncs against the sandbox: exactly the planned requests, then none; current and correct."""

from __future__ import annotations

import shutil
import signal
import threading
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from commerce_reports.api import (
    SyncOptions,
    invalidate,
    load_merchandise,
    load_networks,
    load_transactions,
    plan_sync,
    status,
    sync,
    window_rows,
)
from commerce_reports.config import DIALECTS
from commerce_reports.contract import PartitionKey
from commerce_reports.db import connect
from commerce_reports.errors import ValidationError
from commerce_reports.lake.manifest import Manifest
from commerce_reports.lake.store import StoredFile
from commerce_reports.sandbox import FaultConfig, run_sandbox
from commerce_reports.sandbox.runner import RunningSandbox
from commerce_reports.syncing import SyncPlan, SyncResult
from commerce_reports.syncing import run as run_module
from commerce_reports.waits import Signal
from tests.conftest import FakeClock
from tests.lake.conftest import (
    START,
    assert_every_field_is_read,
    assert_matches_ground_truth,
    options_for,
    profiles,
    small_config,
)
from tests.lakes import isolated
from tests.waiting import wait_for


def served(running: RunningSandbox) -> list[tuple[str | None, str, tuple[tuple[str, str], ...]]]:
    return [(r.site, r.endpoint, tuple(sorted(r.params.items()))) for r in running.sandbox.request_log]


@dataclass(frozen=True)
class FirstSync:
    """A first sync of 90 days of both sites, then a second one right after it, and what each saw."""

    data_dir: Path
    running: RunningSandbox  # its server is stopped: for ground truth and the config only
    plan: SyncPlan
    first: SyncResult
    log: list[tuple[str | None, str, tuple[tuple[str, str], ...]]]  # what the first sync asked
    second: SyncResult
    served_in_all: int  # requests served after both syncs


@pytest.fixture(
    scope="module",
    params=[pytest.param(d, marks=pytest.mark.xdist_group(f"first-sync-{d}")) for d in DIALECTS],
)
def first_sync(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> FirstSync:
    """One first sync per dialect for the tests that read it (they share a worker: one group)."""
    data_dir = tmp_path_factory.mktemp(f"first-sync-{request.param}")
    with isolated(tmp_path_factory.mktemp("cache")):
        with run_sandbox(small_config(dialect=request.param)) as running:
            options = options_for(running)
            plan = plan_sync(START, sites=profiles(running), data_dir=data_dir, options=options)
            first = sync(START, sites=profiles(running), data_dir=data_dir, options=options)
            log = served(running)
            second = sync(START, sites=profiles(running), data_dir=data_dir, options=options)
            return FirstSync(data_dir, running, plan, first, log, second, len(served(running)))


def test_a_sync_makes_exactly_the_planned_requests_then_none(first_sync: FirstSync) -> None:
    plan, first, log, second = first_sync.plan, first_sync.first, first_sync.log, first_sync.second
    # 90 updateDate days + 4 months x (5 networks slices + 1 merchandise) per site
    assert len(plan.requests) == 2 * (90 + 4 * 6)
    assert not first.failed and len(first.stored) == len(plan.requests)
    assert len(log) == len(plan.requests) and len(set(log)) == len(log)  # nothing asked twice
    assert {
        (r.site, r.key.params().get("updateDate")) for r in plan.requests if r.key.dataset == "transactions"
    } == {
        (site, endpoint_params[0][1]) for site, endpoint, endpoint_params in log if endpoint == "transactions"
    }
    assert second.plan.requests == [] and first_sync.served_in_all == len(log)
    dialect = first_sync.running.sandbox.config.dialect
    for site in ("alpha", "beta"):
        assert_matches_ground_truth(first_sync.running, first_sync.data_dir, site, START)
        assert_every_field_is_read(first_sync.data_dir, site, dialect)
        service = Manifest.load(first_sync.data_dir, site).service
        assert service == {"sandbox": "embedded", "dialect": dialect, "verified": True}


def test_a_day_later_only_new_and_unsettled_partitions_are_fetched_and_revised_windows_wait_their_turn(
    first_sync: FirstSync, tmp_path: Path
) -> None:
    """On a copy of the first sync's lake, from a sandbox of the same world a day later."""
    shutil.copytree(first_sync.data_dir, tmp_path, dirs_exist_ok=True)
    with run_sandbox(first_sync.running.sandbox.config) as running:
        options = options_for(running)
        before = len(running.sandbox.request_log)
        running.sandbox.advance(timedelta(days=1))
        result = sync(START, sites=profiles(running), data_dir=tmp_path, options=options)
        fetched = {(r.site, r.key.describe()) for r, _ in result.stored}
        slices = ("all", "deviceType=DSK", "deviceType=MBL", "deviceType=TBL", "deviceType=UKN")
        expected = set()
        for site in ("alpha", "beta"):
            # 03-09 and 03-10 were fetched before they settled; 03-11 is new; March is the partial month.
            expected |= {(site, f"transactions updateDate=2026-03-{d:02d}") for d in (9, 10, 11)}
            expected |= {(site, f"networks [{s}] 2026-03-01..2026-03-31") for s in slices}
            expected.add((site, "merchandise [all] 2026-03-01..2026-03-31"))
        assert fetched == expected
        assert len(running.sandbox.request_log) - before == len(expected)
        # January and February, copied yesterday 37 and 9 days after they ended, serve 8 days before
        # the ledger's changes call for new copies (January's next is its final fetch, on its horizon)
        rows = window_rows(sites=profiles(running), data_dir=tmp_path, options=options)
        revised = [r for r in rows if r.window_start in (date(2026, 1, 1), date(2026, 2, 1))]
        assert revised and any(r.ledger_changed for r in revised)  # the world did revise a month
        copied = first_sync.running.sandbox.now
        assert {(r.window_start, r.asked_again) for r in revised} == {
            (date(2026, 1, 1), datetime(2026, 3, 18, tzinfo=UTC)),
            (date(2026, 2, 1), copied + timedelta(days=8)),
        }
        assert_matches_ground_truth(running, tmp_path, "alpha", START)
        assert plan_sync(START, sites=profiles(running), data_dir=tmp_path, options=options).requests == []


def test_freshness_and_refresh_decide_when_unsettled_partitions_are_fetched_again(
    running: RunningSandbox, tmp_path: Path
) -> None:
    start = running.sandbox.now.date() - timedelta(days=4)
    options = options_for(running)
    sync(start, sites=profiles(running)[:1], data_dir=tmp_path, options=options, networks=[], merchandise=[])
    running.sandbox.advance(timedelta(minutes=30))
    assert (
        plan_sync(
            start,
            sites=profiles(running)[:1],
            data_dir=tmp_path,
            options=options,
            networks=[],
            merchandise=[],
        ).requests
        == []
    )
    running.sandbox.advance(timedelta(minutes=31))
    again = plan_sync(
        start, sites=profiles(running)[:1], data_dir=tmp_path, options=options, networks=[], merchandise=[]
    )
    assert [r.key.start.day for r in again.requests] == [9, 10] and {r.reason for r in again.requests} == {
        "unsettled"
    }
    forced = plan_sync(
        start,
        sites=profiles(running)[:1],
        data_dir=tmp_path,
        options=options,
        networks=[],
        merchandise=[],
        refresh=True,
    )
    assert len(forced.requests) == 5 and {r.reason for r in forced.requests} == {"refresh"}


def test_refresh_fetches_again_the_range_asked_and_leaves_the_windows_outside_it_to_their_schedule(
    running: RunningSandbox, tmp_path: Path
) -> None:
    options = options_for(running)
    today = running.sandbox.now.date()
    alpha = profiles(running)[:1]
    sync(today - timedelta(days=12), sites=alpha, data_dir=tmp_path, options=options, grain="day")
    running.sandbox.advance(timedelta(days=1))  # some earlier windows fall due for a second look
    plan = plan_sync(today, today, sites=alpha, data_dir=tmp_path, options=options, grain="day", refresh=True)
    refreshed = [r.key for r in plan.requests if r.reason == "refresh"]
    assert refreshed and all(key.start <= today < key.end for key in refreshed)
    outside = [r for r in plan.requests if not r.key.start <= today < r.key.end]
    assert outside and {r.reason for r in outside} <= {"ended", "complete", "changed", "revisable", "final"}
    assert len(plan.requests) < 60  # not every stored day window of the twelve days again (156)


@pytest.mark.parametrize("dialect", ["contract", "published"])
def test_faults_do_not_change_the_totals(tmp_path: Path, dialect: str) -> None:
    faults = FaultConfig(
        rate=0.25, kinds=frozenset({"500", "503", "drop", "truncate", "malformed", "html"}), seed=3
    )
    with run_sandbox(small_config(faults=faults, dialect=dialect)) as running:
        options = options_for(running, clock=FakeClock())
        start = running.sandbox.now.date() - timedelta(days=29)
        runs = 0
        while True:  # what fails after the retries stays due: the next sync picks it up
            runs += 1
            result = sync(start, sites=profiles(running), data_dir=tmp_path, options=options)
            if not result.failed or runs == 4:
                break
        assert not result.failed
        assert sum(1 for r in running.sandbox.request_log if r.fault) > 20
        for site in ("alpha", "beta"):
            assert_matches_ground_truth(running, tmp_path, site, start)
    assert not list(tmp_path.rglob("*.tmp"))


def test_loaders_fetch_what_is_missing_and_filter_locally(running: RunningSandbox, tmp_path: Path) -> None:
    options = options_for(running)
    day = running.sandbox.now.date() - timedelta(days=3)
    frame = load_transactions(day, day, by="commissionDate", site="alpha", data_dir=tmp_path, options=options)
    assert isinstance(frame, pl.DataFrame) and frame.height > 0 and set(frame["site"]) == {"alpha"}
    requests = len(running.sandbox.request_log)
    network = frame["merchant_group_id"][0]
    filtered = load_transactions(
        day,
        day,
        by="commissionDate",
        site="alpha",
        merchant_group_ids=[network],
        data_dir=tmp_path,
        options=options,
    )
    assert len(running.sandbox.request_log) == requests  # served from disk
    assert isinstance(filtered, pl.DataFrame) and set(filtered["merchant_group_id"]) == {network}
    assert 0 < filtered.height < frame.height
    lazy = load_transactions(
        day, day, by="commissionDate", data_dir=tmp_path, options=options, lazy=True, program_type="cpc"
    )
    assert isinstance(lazy, pl.LazyFrame)
    both = lazy.collect()
    assert set(both["site"]) == {"alpha", "beta"} and set(both["program_type"]) <= {"cpc"}


def test_aggregate_loaders_keep_window_and_slice(running: RunningSandbox, tmp_path: Path) -> None:
    options = options_for(running)
    alpha, beta = profiles(running)  # this sandbox's sites (by name alone: the embedded sandbox's)
    networks = load_networks(
        "2026-02-01",
        "2026-02-28",
        slices=[{"device_type": "MBL"}, "all"],
        site=[alpha],
        data_dir=tmp_path,
        options=options,
    )
    assert isinstance(networks, pl.DataFrame)
    assert set(networks["slice"]) == {"deviceType=MBL", "all"} and set(networks["grain"]) == {"month"}
    assert set(networks["window_start"]) == {date(2026, 2, 1)} and set(networks["window_end"]) == {
        date(2026, 3, 1)
    }
    mobile = networks.filter(pl.col("slice") == "deviceType=MBL")
    assert 0 < mobile["clicks"].sum() < networks.filter(pl.col("slice") == "all")["clicks"].sum()
    daily = load_merchandise(
        "2026-02-01", "2026-02-03", grain="day", site=[beta], data_dir=tmp_path, options=options
    )
    assert isinstance(daily, pl.DataFrame) and daily["window_start"].n_unique() == 3


def test_invalidate_makes_the_next_sync_fetch_the_range_again(
    running: RunningSandbox, tmp_path: Path
) -> None:
    options = options_for(running)
    start = running.sandbox.now.date() - timedelta(days=20)
    sync(start, sites=profiles(running), data_dir=tmp_path, options=options)
    assert (
        invalidate("2026-02-20", "2026-02-22", sites="alpha", datasets=["transactions"], data_dir=tmp_path)
        == 3
    )
    again = sync(start, sites=profiles(running), data_dir=tmp_path, options=options)
    assert sorted(r.key.describe() for r, _ in again.stored) == [
        f"transactions updateDate=2026-02-{d}" for d in (20, 21, 22)
    ]


def test_invalidate_marks_what_the_next_sync_fetches_whatever_its_range_and_slices(
    running: RunningSandbox, tmp_path: Path
) -> None:
    """A window of a country's slice, which a plain sync never asks for, is fetched again all the
    same; until then its file is read (never quarantined), and the views keep its figures."""
    options = options_for(running)
    today = running.sandbox.now.date()
    alpha = profiles(running)[:1]
    sync(today - timedelta(days=3), sites=alpha, countries=["US"], data_dir=tmp_path, options=options)
    month = today.replace(day=1)
    us = "SELECT sum(clicks) FROM country_performance WHERE country = 'US' AND window_start = ?"
    with connect(tmp_path) as con:
        clicks = con.execute(us, [month]).fetchall()
    assert clicks[0][0] > 0
    # all, four devices and the US: the windows of the month
    assert invalidate(month, month, sites="alpha", datasets=["networks"], data_dir=tmp_path) == 6
    assert all(e.invalidated for e in Manifest.load(tmp_path, "alpha") if e.key.dataset == "networks")
    service = Manifest.load(tmp_path, "alpha").service
    status(sites=alpha, data_dir=tmp_path, options=options, rebuild=True)  # rebuilt from its files:
    rebuilt = Manifest.load(tmp_path, "alpha")  # what only the manifest knew is kept
    assert all(e.invalidated for e in rebuilt if e.key.dataset == "networks") and rebuilt.service == service
    with connect(tmp_path) as con:
        assert con.execute(us, [month]).fetchall() == clicks
    assert (
        plan_sync(today, today, sites=alpha, data_dir=tmp_path, options=options)
        .describe()
        .count("invalidated")
    )
    again = sync(today, today, sites=alpha, data_dir=tmp_path, options=options)  # no country named
    refetched = {r.key.slice for r, _ in again.stored if r.key.dataset == "networks"}
    assert "country=US" in refetched and len(refetched) == 6
    assert not (tmp_path / "quarantine").exists()
    assert not any(e.invalidated for e in Manifest.load(tmp_path, "alpha"))
    with connect(tmp_path) as con:
        assert con.execute(us, [month]).fetchall()[0][0] > 0


def test_a_file_no_entry_vouches_for_is_fetched_again_after_its_quarantine(
    running: RunningSandbox, tmp_path: Path
) -> None:
    """A slice no sync of this range asks for: quarantined when its entry is lost, and fetched
    again by the same sync, as its message says."""
    options = options_for(running)
    today = running.sandbox.now.date()
    alpha = profiles(running)[:1]
    sync(today, today, sites=alpha, countries=["US"], data_dir=tmp_path, options=options)
    manifest = Manifest.load(tmp_path, "alpha")
    (us,) = [e for e in manifest if e.key.slice == "country=US"]
    manifest.entries.pop(us.relpath)
    manifest.save()
    again = sync(today, today, sites=alpha, data_dir=tmp_path, options=options)
    assert [r.key for r, _ in again.stored if r.key.slice == "country=US"] == [us.key]
    assert us.relpath in Manifest.load(tmp_path, "alpha").entries


def test_status_reports_what_is_stored_and_unsettled(running: RunningSandbox, tmp_path: Path) -> None:
    options = options_for(running)
    sync(
        running.sandbox.now.date() - timedelta(days=9),
        sites=profiles(running),
        data_dir=tmp_path,
        options=options,
    )
    frame = status(sites=profiles(running), data_dir=tmp_path, options=options)
    alpha = frame.filter((pl.col("site") == "alpha") & (pl.col("dataset") == "transactions")).row(
        0, named=True
    )
    assert alpha["partitions"] == 10 and alpha["unsettled"] == 2 and alpha["rows"] > 0


def test_zero_row_days_are_fetched_days(running: RunningSandbox, tmp_path: Path) -> None:
    options = options_for(running)
    old = date(2025, 9, 1)  # before the sandbox's history begins
    result = sync(
        old,
        old + timedelta(days=2),
        sites=profiles(running)[:1],
        data_dir=tmp_path,
        options=options,
        networks=[],
        merchandise=[],
    )
    assert [rows for _, rows in result.stored] == [0, 0, 0]
    manifest = Manifest.load(tmp_path, "alpha")
    assert len(manifest) == 3 and all(e.settled and e.rows == 0 for e in manifest)
    again = sync(
        old,
        old + timedelta(days=2),
        sites=profiles(running)[:1],
        data_dir=tmp_path,
        options=options,
        networks=[],
        merchandise=[],
    )
    assert again.plan.requests == []


def test_bad_ranges_are_refused_before_anything_is_fetched(running: RunningSandbox, tmp_path: Path) -> None:
    options = options_for(running)
    with pytest.raises(ValidationError, match="after today"):
        sync("2026-03-01", "2026-04-01", sites=profiles(running), data_dir=tmp_path, options=options)
    with pytest.raises(ValidationError, match="start <= end"):
        sync("2026-03-05", "2026-03-01", sites=profiles(running), data_dir=tmp_path, options=options)
    with pytest.raises(ValidationError, match="not a grain"):
        load_networks("2026-03-01", "2026-03-02", grain="week", data_dir=tmp_path, options=options)  # type: ignore[arg-type]
    assert running.sandbox.request_log == []


def test_the_plan_prints_requests_per_lane_with_an_eta(running: RunningSandbox, tmp_path: Path) -> None:
    plan = plan_sync(
        START,
        sites=profiles(running),
        data_dir=tmp_path,
        options=SyncOptions(now=lambda: running.sandbox.now, pace="transactions=60,networks=10"),
    )
    text = plan.describe()
    assert "228 requests" in text and "alpha        transactions     90 requests (90 missing)" in text
    assert plan.pace_floor == pytest.approx(89 * 60.5)  # the longest lane, at the pace plus its margin
    # the ETA adds what the requests cost beyond the pace, and the end work (rollups, catalog)
    assert plan.eta_seconds > plan.pace_floor + plan.finish.seconds > plan.pace_floor
    assert "the pace alone: 90 min" in text and text.endswith("(first sync: costs estimated)")


def test_ctrl_c_waits_for_the_partition_being_stored_and_counts_it(
    running: RunningSandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A lane still storing when Ctrl-C comes finishes first, however long past the grace that takes:
    the sync returns after it (still holding the lake), and its result counts that partition."""
    storing, release, returned = Signal(), Signal(), Signal()
    held: list[tuple[str, PartitionKey]] = []
    write = run_module.write_partition

    def slow_write(data_dir: Path, site: str, key: PartitionKey, *rest: Any) -> StoredFile:
        if not held:
            held.append((site, key))
            storing.set()
            release.wait(120)
        return write(data_dir, site, key, *rest)

    def ctrl_c_while_storing() -> None:
        storing.wait(120)
        signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)
        wait_for(lambda: "finish storing" in caplog.text or returned.is_set(), "the sync to wait on")
        release.set()

    monkeypatch.setattr(run_module, "write_partition", slow_write)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # xdist workers may ignore it
    helper = threading.Thread(target=ctrl_c_while_storing)
    helper.start()
    try:
        result = sync(START, sites=profiles(running), data_dir=tmp_path, options=options_for(running))
    finally:
        returned.set()
        release.set()
        helper.join(120)
        signal.signal(signal.SIGINT, previous)
    assert result.interrupted and "waiting for 1 lanes to finish storing" in caplog.text
    stored = {(r.site, r.key) for r, _ in result.stored}
    assert held[0] in stored  # stored before the sync returned, and counted
    # the result says all the lake holds: nothing was stored after the sync returned
    in_lake = {(site, e.relpath) for site in ("alpha", "beta") for e in Manifest.load(tmp_path, site)}
    assert in_lake == {(site, key.relpath) for site, key in stored}
