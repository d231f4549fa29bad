"""Revisions, on the sandbox's clock: daily syncs over three months of late commissions and returns
ask every aggregate window again on the policy's schedule (none left due beyond its slack), end
with every final window equal to the service's answer and every revisable one equal to what the
service answered when it was fetched (its `report_fetched_at`), and the ledger's figures equal to
the ground truth, to the cent. On the contract dialect: the revision policy never sees the wire (a
dialect names parameters and shapes rows, which `tests/test_dialects.py` and the published first
sync of `tests/lake/test_sync.py` check), and a second 90-day run cost the suite half a minute.

Also measured: the requests a month of daily syncs makes under the revision policy, against the
lake's behaviour before revisions (`revision_days=2`: a window final two days after it ends), from
the same lake on the same days. `pytest -s -k daily_syncs` prints them; `bench/daily_syncs_bench.py`
counts them for the default slices against round 3's policy.
"""

from __future__ import annotations

import shutil
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import duckdb
import polars as pl
import pytest

from commerce_reports.api import SyncOptions, sync
from commerce_reports.client import ReportsClient
from commerce_reports.contract import PartitionKey
from commerce_reports.db import connect
from commerce_reports.lake.manifest import Manifest
from commerce_reports.params import Filters
from commerce_reports.sandbox import SandboxConfig, run_sandbox
from commerce_reports.sandbox.reports import ReportsSandbox
from commerce_reports.sandbox.runner import RunningSandbox
from commerce_reports.sites import SiteProfile
from commerce_reports.syncing import SettlePolicy, SyncResult
from commerce_reports.syncing.jobs import fetch_keys, ledger
from commerce_reports.syncing.revisions import LedgerSignal
from tests.conftest import FakeClock
from tests.lake.conftest import profiles
from tests.lakes import isolated

FIRST_SYNC = datetime(2026, 1, 1, 6, 0, tzinfo=UTC)  # a daily sync at 06:00 UTC
LEDGER_START = date(2025, 12, 1)  # every sync keeps the ledger from here: December on is whole
DAYS = 91  # syncs on 91 days: 90 simulated days after the first
MONTH = range(60, 90)  # the month of daily syncs counted under both policies
NETWORK_SLICES = ("all", {"device_type": "MBL"})
COUNTRIES = ("US",)
POLICY = SettlePolicy()
# The scenario's ~120 syncs are one fixture: about 40 s on 2 quiet cores, several times that on a
# machine shared with other suites (the default per-test limit is 120 s).
pytestmark = pytest.mark.timeout(400)


def _config(dialect: str) -> SandboxConfig:
    return SandboxConfig(
        now=FIRST_SYNC,
        first_day=date(2025, 10, 1),
        pace=0.0,
        transactions_per_day=10,
        dialect=dialect,
    )


@dataclass
class DailySyncs:
    """Syncs of one site, once a day at 06:00 on the sandbox's clock, and the requests each made."""

    running: RunningSandbox
    data_dir: Path
    site: SiteProfile
    requests: list[int] = field(default_factory=list)  # served per sync
    reasons: list[Counter[str]] = field(default_factory=list)  # why, per sync

    def options(self) -> SyncOptions:
        return SyncOptions(
            now=lambda: self.running.sandbox.now,
            clock=FakeClock(),
            pace=0,
            progress=False,
            say=lambda _: None,
        )

    def once(self) -> None:
        """One scheduled sync (its end work, the rollups, is left to the last: see `last`)."""
        before = len(self.running.sandbox.request_log)
        options = self.options()
        keys = ledger(LEDGER_START, None, [self.site.name], NETWORK_SLICES, None, COUNTRIES, "month", options)
        result = fetch_keys(self.data_dir, {self.site.name: self.site}, keys, options, revisions=True)
        self.count(result, before)

    def count(self, result: SyncResult, before: int) -> None:
        assert result.ok, result.summary()
        self.requests.append(len(self.running.sandbox.request_log) - before)
        self.reasons.append(Counter(r.reason for r in result.plan.requests))

    def last(self) -> None:
        """The last sync, as `commerce_reports.sync` runs it: with the rollups and the catalog."""
        before = len(self.running.sandbox.request_log)
        result = sync(
            LEDGER_START,
            sites=[self.site],
            networks=NETWORK_SLICES,
            countries=COUNTRIES,
            data_dir=self.data_dir,
            options=self.options(),
        )
        self.count(result, before)

    def next_day(self) -> None:
        self.running.sandbox.advance(timedelta(days=1))


def assert_windows_within_policy(manifest: Manifest, now: datetime) -> None:
    """After a sync, every stored window is final once its horizon has passed, fresh while
    current, and otherwise not due for longer than the policy's slack: the lag it states (see
    `SettlePolicy.schedule`), whatever the budget left for a later sync."""
    ledger = LedgerSignal.of(manifest)
    for entry in manifest:
        key = entry.key
        if key.dataset == "transactions":
            continue
        where = f"{key.describe()} at {now}"
        if now >= POLICY.revisable_until(key):
            assert POLICY.has_settled(entry), f"{where}: not final"
        elif now < datetime.combine(key.end, datetime.min.time(), UTC):
            assert now - entry.fetched_at < POLICY.freshness, f"{where}: current, fetched {entry.fetched_at}"
        else:
            due = POLICY.due(entry, now, ledger)
            assert due is None or not due.forced, f"{where}: {due}"
            assert now - entry.fetched_at <= POLICY.revision_max_age + POLICY.revision_slack, where


@dataclass(frozen=True)
class Scenario:
    dialect: str
    data_dir: Path
    sandbox: ReportsSandbox  # stopped: its config and clock, for the ground truth
    site: SiteProfile
    requests: list[int]
    reasons: list[Counter[str]]
    old_month: list[int]  # the requests of the same month under the old policy (contract only)
    old_stale: list[str]  # windows the old policy left different from the service's answers
    seconds: float  # wall time of the syncs
    cpu_seconds: float  # what they cost this process (a shared machine's wall time varies)


def _month_from(
    lake: Path, config: SandboxConfig, site: SiteProfile, revision_days: int, first: int
) -> tuple[list[int], list[str]]:
    """The month's syncs again, on a copy of the lake as it was before them, under another horizon;
    what they asked, and which windows they left differing from the service's answers."""
    with run_sandbox(config) as running:
        running.sandbox.advance(timedelta(days=first))
        profile = replace(profiles(running)[0], revision_days=revision_days)
        days = DailySyncs(running, lake, profile)
        for _ in MONTH:
            days.once()
            days.next_day()
        running.sandbox.advance(timedelta(days=-1))  # back to the month's last sync
        return days.requests, _stale_windows(running, lake, profile)


def _stale_windows(
    running: RunningSandbox, lake: Path, site: SiteProfile, *, final_only: bool = False
) -> list[str]:
    """The stored networks windows (`all` slice; `final_only`: those final) whose revenue differs
    from the service's answer now."""
    stale = []
    with _client(running, site) as client:
        for window in Manifest.load(lake, site.name).windows():
            if window.dataset != "networks" or window.slice != "all" or (final_only and not window.final):
                continue
            key = PartitionKey.aggregate("networks", window.start, Filters(), "month")
            stored = pl.read_parquet(lake / "lake" / f"site={site.name}" / key.relpath / "part.parquet")
            served = pl.from_arrow(client.networks(window.start, window.end))
            assert isinstance(served, pl.DataFrame)
            if round(stored["revenue"].sum(), 2) != round(served["revenue"].sum(), 2):
                stale.append(
                    f"{window.start}: {stored['revenue'].sum():.2f} != {served['revenue'].sum():.2f}"
                )
    return stale


def _client(running: RunningSandbox, site: SiteProfile) -> ReportsClient:
    return ReportsClient(site.secret_key, running.base_url, dialect=site.dialect, pace=0, clock=FakeClock())


@pytest.fixture(
    scope="module",
    params=[pytest.param("contract", marks=pytest.mark.xdist_group("revisions"))],
)
def scenario(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Scenario:
    """Daily syncs over 90 days of one site; the lake checked against the policy after each."""
    dialect = request.param
    data_dir = tmp_path_factory.mktemp(f"revisions-{dialect}")
    config = _config(dialect)
    started, cpu = time.perf_counter(), time.process_time()
    with isolated(tmp_path_factory.mktemp("cache")), run_sandbox(config) as running:
        days = DailySyncs(running, data_dir, profiles(running)[0])
        old_month: list[int] = []
        old_stale: list[str] = []
        for day in range(DAYS):
            if day == MONTH.start:
                before = tmp_path_factory.mktemp("old-policy")
                shutil.copytree(data_dir / "lake", before / "lake")
                old_month, old_stale = _month_from(before, config, days.site, 2, day)
            days.last() if day == DAYS - 1 else days.once()
            assert_windows_within_policy(Manifest.load(data_dir, days.site.name), running.sandbox.now)
            if day % 7 == 6:  # and once a week: every final window as the service answers now
                assert _stale_windows(running, data_dir, days.site, final_only=True) == [], (
                    running.sandbox.now
                )
            if day < DAYS - 1:
                days.next_day()
        return Scenario(
            dialect,
            data_dir,
            running.sandbox,
            days.site,
            days.requests,
            days.reasons,
            old_month,
            old_stale,
            time.perf_counter() - started,
            time.process_time() - cpu,
        )


@pytest.fixture(scope="module")
def views(scenario: Scenario) -> Iterator[duckdb.DuckDBPyConnection]:
    con = connect(scenario.data_dir)
    try:
        yield con
    finally:
        con.close()


def _cents(value: object) -> Decimal:
    """An amount to the cent, exactly (a float of the ground truth as the amount it stands for)."""
    return Decimal(repr(value) if isinstance(value, float) else str(value)).quantize(Decimal("0.01"))


def _frame(con: duckdb.DuckDBPyConnection, sql: str) -> pl.DataFrame:
    return con.sql(sql).pl()


def test_daily_syncs_ask_the_revised_windows_again_and_count_the_requests(scenario: Scenario) -> None:
    """(The policy held after every sync: the fixture checks it as the days go.)"""
    month = sum(scenario.requests[d] for d in MONTH)
    why = sum((scenario.reasons[d] for d in MONTH), Counter())
    print(
        f"\n{scenario.dialect}: {DAYS} daily syncs made {sum(scenario.requests)} requests in "
        f"{scenario.seconds:.1f} s ({scenario.cpu_seconds:.1f} s of CPU); "
        f"the month of days {MONTH.start}..{MONTH.stop - 1}: {month} requests ({dict(why.most_common())})"
    )
    every = sum(scenario.reasons, Counter())
    assert why["changed"] and why["final"] and every["ended"] and every["complete"]
    assert all(n >= 3 for n in scenario.requests[1:])  # at least the ledger's last three days
    # the ledger's three days and the current window's four slices, then at most the budget
    assert max(scenario.requests[1:]) <= 3 + 4 + POLICY.revision_budget
    if scenario.dialect == "contract":
        old = sum(scenario.old_month)
        print(f"  the same month under the old policy (a window final 2 days after it ends): {old}")
        print(f"  windows the old policy left stale: {scenario.old_stale}")
        assert old < month  # revisions cost requests...
        assert scenario.old_stale  # ...and without them the figures drift from the service's


def _served(client: ReportsClient, dataset: str, start: date, end: date, filters: Filters) -> pl.DataFrame:
    fetch = client.networks if dataset == "networks" else client.merchandise
    frame = pl.from_arrow(fetch(start, end, filters))
    assert isinstance(frame, pl.DataFrame)
    return frame


def _months(scenario: Scenario) -> list[date]:
    last = scenario.sandbox.now.date()
    months, month = [], LEDGER_START
    while month <= last:
        months.append(month)
        month = (month + timedelta(days=32)).replace(day=1)
    return months


def _window_end(month: date) -> date:
    return (month + timedelta(days=32)).replace(day=1)


class _Service:
    """The service as it answered at any moment: a sandbox frozen there, started once per moment."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.stack = ExitStack()
        self.clients: dict[datetime, tuple[ReportsClient, ReportsSandbox]] = {}

    def __enter__(self) -> _Service:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stack.close()

    def at(self, moment: datetime) -> tuple[ReportsClient, ReportsSandbox]:
        if moment not in self.clients:
            running = self.stack.enter_context(run_sandbox(replace(self.scenario.sandbox.config, now=moment)))
            client = self.stack.enter_context(_client(running, self.scenario.site))
            self.clients[moment] = (client, running.sandbox)
        return self.clients[moment]

    def as_stored(self, dataset: str, month: date, filters: Filters) -> tuple[pl.DataFrame, ReportsSandbox]:
        """The service's answer for a stored window as of its copy (now, when the copy is final),
        and the sandbox of that moment (its ground truth)."""
        key = PartitionKey.aggregate(dataset, month, filters, "month")  # type: ignore[arg-type]
        entry = Manifest.load(self.scenario.data_dir, self.scenario.site.name).get(key)
        assert entry is not None, key
        final = POLICY.has_settled(entry)
        client, sandbox = self.at(self.scenario.sandbox.now if final else entry.fetched_at)
        return _served(client, dataset, month, _window_end(month), filters), sandbox


def test_every_performance_view_equals_the_service_and_the_ground_truth(
    scenario: Scenario, views: duckdb.DuckDBPyConnection
) -> None:
    """The transaction figures as the ground truth now; the report figures of each window as the
    service answers now once final, and as it answered at `report_fetched_at` before (the lag the
    policy states, checked after every sync by the fixture)."""
    now = scenario.sandbox.now
    site = scenario.site.name
    with _Service(scenario) as service:
        for month in _months(scenario):
            end = _window_end(month)
            last = min(end - timedelta(days=1), now.date())
            where = f"WHERE site = '{site}' AND window_start = '{month}'"
            # network_performance and site_performance: the `all` slice, per network and in all
            served, then = service.as_stored("networks", month, Filters())
            by_click = then.ground_truth(site, month, last, by="click_date", group_by=["network"])
            rows = _frame(views, f"SELECT * FROM network_performance {where} AND clicks IS NOT NULL")
            ours = {
                r["network"]: (r["clicks"], _cents(r["aggregate_revenue"]), _cents(r["sales"]), r["actions"])
                for r in rows.iter_rows(named=True)
            }
            theirs = {
                r["network_name"]: (r["clicks"], _cents(r["revenue"]), _cents(r["sales"]), r["actions"])
                for r in served.iter_rows(named=True)
            }
            assert ours == theirs, month
            earning = {
                r["network"]: (_cents(r["revenue"]), r["transactions"])
                for r in by_click.iter_rows(named=True)
            }
            assert {k: (v[1], v[3]) for k, v in ours.items() if v[3]} == earning, month
            whole = scenario.sandbox.ground_truth(site, month, last)  # by commission date: the ledger
            total = _frame(views, f"SELECT * FROM site_performance {where}").row(0, named=True)
            assert (total["clicks"], _cents(total["aggregate_revenue"])) == (
                served["clicks"].sum(),
                _cents(served["revenue"].sum()),
            )
            assert (_cents(total["revenue"]), total["transactions"], total["returns"]) == (
                _cents(whole["revenue"][0]),
                whole["transactions"][0],
                whole["returns"][0],
            ), month
            # device_performance (the MBL slice) and country_performance (the US slice)
            for view, column, value, filters in (
                ("device_performance", "device", "Mobile", Filters(device_type="MBL")),
                ("country_performance", "country", "US", Filters(country="US")),
            ):
                served, _ = service.as_stored("networks", month, filters)
                row = _frame(views, f"SELECT * FROM {view} {where} AND {column} = '{value}'").row(
                    0, named=True
                )
                assert (row["clicks"], _cents(row["aggregate_revenue"]), row["actions"]) == (
                    served["clicks"].sum(),
                    _cents(served["revenue"].sum()),
                    served["actions"].sum(),
                ), (view, month)
                split = _frame(views, f"SELECT sum(revenue) AS r, sum(transactions) AS t FROM {view} {where}")
                assert (_cents(split["r"][0]), split["t"][0]) == (
                    _cents(whole["revenue"][0]),
                    whole["transactions"][0],
                )
            # merchandise_performance: the `all` slice, per product and merchant
            served, _ = service.as_stored("merchandise", month, Filters())
            rows = _frame(views, f"SELECT * FROM merchandise_performance {where} AND actions IS NOT NULL")
            key = ("product_name", "merchant_group_id")
            ours = {
                tuple(r[k] for k in key): (_cents(r["aggregate_revenue"]), _cents(r["sales"]), r["actions"])
                for r in rows.iter_rows(named=True)
            }
            theirs = {
                tuple(r[k] for k in key): (_cents(r["revenue"]), _cents(r["sales"]), r["actions"])
                for r in served.iter_rows(named=True)
            }
            assert ours == theirs, month


def test_windows_past_their_horizon_are_final_and_the_rest_say_until_when(
    scenario: Scenario, views: duckdb.DuckDBPyConnection
) -> None:
    now = scenario.sandbox.now  # April 1st: December and January are past their horizon, February not
    manifest = Manifest.load(scenario.data_dir, scenario.site.name)
    windows = manifest.windows()
    assert sorted({w.start for w in windows}) == _months(scenario)
    final = [(w.dataset, w.slice, w.start) for w in windows if w.final]
    assert sorted({start for _, _, start in final}) == [date(2025, 12, 1), date(2026, 1, 1)]
    assert len(final) == 2 * 4  # two months of four slices (networks all, MBL, US; merchandise all)
    for w in windows:
        assert w.revisable_until == datetime.combine(w.end, datetime.min.time(), UTC) + timedelta(days=45)
        assert w.final == (now >= w.revisable_until) == (w.fetched_at >= w.revisable_until)
    # the views say the same of every window's rows (a window without rows has none to say it of)
    by_window = {(w.dataset, w.slice, w.start): (w.final, w.fetched_at) for w in windows}
    shown = {}
    for dataset in ("networks", "merchandise"):
        rows = views.execute(
            f"SELECT DISTINCT slice, window_start, final, fetched_at FROM {dataset}"
        ).fetchall()
        shown |= {(dataset, s, start): (final, fetched) for s, start, final, fetched in rows}
    assert shown == {k: v for k, v in by_window.items() if k in shown}
    unshown = [_key(*k).relpath for k in by_window.keys() - shown.keys()]
    assert all(manifest.entries[relpath].rows == 0 for relpath in unshown)


def _key(dataset: str, slice: str, start: date) -> PartitionKey:
    return PartitionKey.aggregate(dataset, start, Filters.from_canonical(slice), "month")  # type: ignore[arg-type]
