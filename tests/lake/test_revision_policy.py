"""The revision policy piece by piece: why a window is fetched again, what a ledger day touched,
what the manifest records of it (and recovers from the files), the horizon as a setting, and a
sync that runs long after the last one."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from commerce_reports.api import plan_sync, sync, window_rows
from commerce_reports.config import DEFAULT_REVISION_DAYS, Settings
from commerce_reports.contract import PartitionKey
from commerce_reports.errors import ConfigurationError, LakeError, ValidationError
from commerce_reports.lake import Entry, Manifest, Touched, rebuild
from commerce_reports.lake.store import write_partition
from commerce_reports.params import Filters
from commerce_reports.parse import parse_transactions
from commerce_reports.parse.aggregates import parse_aggregate
from commerce_reports.sandbox.runner import RunningSandbox
from commerce_reports.sites import configured_sites
from commerce_reports.syncing import SettlePolicy, SyncPlan
from commerce_reports.syncing.plan import (
    DEFAULT_NETWORK_SLICES,
    Due,
    PlannedRequest,
    Reason,
    aggregate_keys,
    plan_partitions,
)
from commerce_reports.syncing.revisions import LedgerSignal
from commerce_reports.syncing.status import describe_windows
from tests.factories import body, nested, networks_body
from tests.lake.conftest import options_for, profiles

JANUARY = PartitionKey.aggregate("networks", date(2026, 1, 1), Filters(), "month")  # ends Feb 1
POLICY = SettlePolicy()  # 45 days: January is revisable until March 18th, 00:00 UTC


def at(day: str, hour: int = 6) -> datetime:
    return datetime.fromisoformat(day).replace(hour=hour, tzinfo=UTC)


def entry(key: PartitionKey, fetched: datetime, *, touched: Touched | None = None, untyped: int = 0) -> Entry:
    return Entry(key.relpath, key.params(), fetched, 1, "x", False, untyped=untyped, touched=touched)


def ledger_day(day: str, fetched: datetime, *click_days: str, undated: str | None = None) -> Entry:
    touched = Touched.of(
        [date.fromisoformat(d) for d in click_days], None if undated is None else date.fromisoformat(undated)
    )
    return entry(PartitionKey.transactions(date.fromisoformat(day)), fetched, touched=touched)


def reason(fetched: datetime, now: datetime, *ledger: Entry, policy: SettlePolicy = POLICY) -> str | None:
    return policy.reason_to_fetch(JANUARY, entry(JANUARY, fetched), now, ledger=LedgerSignal(ledger))


def test_a_window_is_asked_again_on_a_schedule_that_thins_out_with_its_age() -> None:
    assert POLICY.revisable_until(JANUARY) == at("2026-03-18", 0)
    changed = ledger_day("2026-03-17", at("2026-03-17", 23), undated="2026-03-17")  # touches January
    # current: fetched again once the copy is an hour old
    assert reason(at("2026-01-20"), at("2026-01-20", 7)) == "unsettled"
    assert reason(at("2026-01-20"), at("2026-01-20", 6) + timedelta(minutes=30)) is None
    # once after it ended (its last day), once after it settled two days later (complete)
    assert reason(at("2026-01-31"), at("2026-02-01")) == "ended"
    assert reason(at("2026-02-01"), at("2026-02-02"), changed) is None
    assert reason(at("2026-02-01"), at("2026-02-03")) == "complete"
    # then a copy made `a` after the end serves `a` (2.25 days here) while the ledger shows a change...
    assert POLICY.lag(JANUARY, at("2026-02-03")) == timedelta(days=2, hours=6)
    assert reason(at("2026-02-03"), at("2026-02-05", 12) - timedelta(minutes=61), changed) is None
    assert reason(at("2026-02-03"), at("2026-02-05", 13), changed) == "changed"
    # ...or revision_max_age (8 days) in any case, the longest any copy serves
    assert reason(at("2026-02-03"), at("2026-02-10", 13)) is None
    assert reason(at("2026-02-03"), at("2026-02-11", 6)) == "revisable"
    # a turn by age is taken by the sync that starts within the hour before it: the daily sync at
    # the hour its copy was made (seconds into an earlier run) asked nothing, and the copy aged a day
    assert reason(at("2026-02-03"), at("2026-02-11", 6) - timedelta(seconds=5)) == "revisable"
    assert reason(at("2026-02-03"), at("2026-02-05", 12) - timedelta(seconds=5), changed) == "changed"
    # a turn by the calendar never is: a copy made before a window ended, or settled, is not that copy
    assert reason(at("2026-01-31"), at("2026-02-01", 0) - timedelta(seconds=5)) == "unsettled"  # current
    assert reason(at("2026-02-01"), at("2026-02-03", 0) - timedelta(seconds=5)) is None
    assert POLICY.lag(JANUARY, at("2026-02-20")) == timedelta(days=8)
    # a lag ending too close to the horizon waits for the final fetch instead
    assert POLICY.schedule(JANUARY, at("2026-03-05")) == ("changed", at("2026-03-13"))
    assert POLICY.schedule(JANUARY, at("2026-03-08")) == ("final", at("2026-03-18", 0))
    assert reason(at("2026-03-08"), at("2026-03-17"), changed) is None
    # past the horizon: one last fetch, however late; then never again
    assert reason(at("2026-03-17"), at("2026-03-18", 1)) == "final"
    assert reason(at("2026-02-10"), at("2026-12-25")) == "final"
    assert reason(at("2026-03-18", 0), at("2027-01-01")) is None
    assert POLICY.schedule(JANUARY, at("2026-03-18", 0)) is None
    assert POLICY.has_settled(entry(JANUARY, at("2026-03-18", 0)))
    # a copy holding values the parser could not type is never final
    untyped = entry(JANUARY, at("2026-04-01"), untyped=1)
    assert POLICY.reason_to_fetch(JANUARY, untyped, at("2026-04-02")) == "untyped"


def test_status_says_from_when_a_window_is_asked_again() -> None:
    changed = ledger_day("2026-02-05", at("2026-02-06"), "2026-01-31")
    copy = entry(JANUARY, at("2026-02-03"))
    assert POLICY.asked_again(copy, at("2026-02-04"), LedgerSignal([])) == at("2026-02-11")  # max age
    assert POLICY.asked_again(copy, at("2026-02-06", 7), LedgerSignal([changed])) == at("2026-02-05", 12)
    assert POLICY.asked_again(entry(JANUARY, at("2026-01-20")), at("2026-01-20", 7)) == at("2026-01-20", 7)
    assert POLICY.asked_again(entry(JANUARY, at("2026-03-18", 0)), at("2026-04-01")) is None


def _due(reason: Reason, lateness: float, *, forced: bool = False) -> Due:
    return Due(reason, at("2026-02-10"), lateness, forced)


def test_a_budget_asks_the_most_urgent_windows_first_and_what_is_due_too_long_regardless() -> None:
    def request(month: int, why: Reason) -> PlannedRequest:
        return PlannedRequest(
            "alpha", PartitionKey.aggregate("networks", date(2026, month, 1), Filters(), "month"), why
        )

    dues = [
        (_due("changed", 1.5), request(1, "changed")),
        (_due("revisable", 3.0), request(2, "revisable")),
        (_due("complete", 1.0), request(3, "complete")),
        (_due("final", 1.0), request(4, "final")),
        (_due("changed", 1.1, forced=True), request(5, "changed")),
        (_due("ended", 1.0), request(6, "ended")),
    ]
    asked, waiting = SettlePolicy(revision_budget=4).budgeted(dues)
    assert [r.key.start.month for r in asked] == [5, 4, 6, 3]  # the forced, final, ended, complete
    assert waiting == 2
    asked, waiting = SettlePolicy(revision_budget=6).budgeted(dues)
    assert [r.key.start.month for r in asked] == [5, 4, 6, 3, 2, 1]  # then the latest first
    asked, waiting = SettlePolicy(revision_budget=0).budgeted(dues)
    assert ([r.key.start.month for r in asked], waiting) == ([5], 5)
    # a window due for longer than the slack (2 days) is forced
    late = POLICY.due(entry(JANUARY, at("2026-02-03")), at("2026-02-13", 6))
    assert late is not None and (late.reason, late.since, late.forced) == (
        "revisable",
        at("2026-02-11"),
        True,
    )
    assert late.lateness == pytest.approx(10.0 / 8.0, rel=1e-3)
    early = POLICY.due(entry(JANUARY, at("2026-02-03")), at("2026-02-11", 7))
    assert early is not None and not early.forced


def test_a_plan_says_which_windows_its_budget_left_for_a_later_sync(tmp_path: Path) -> None:
    keys = aggregate_keys("networks", date(2026, 1, 1), date(2026, 1, 31), DEFAULT_NETWORK_SLICES)
    manifest = Manifest(tmp_path, "alpha", {key.relpath: entry(key, at("2026-01-31")) for key in keys})

    def plan(now: datetime) -> SyncPlan:
        pace = {"networks": 60.0}
        return plan_partitions(
            {"alpha": manifest}, {"alpha": keys}, now=now, pace=pace, policies={"alpha": POLICY}
        )

    first = plan(at("2026-02-01"))
    assert [r.reason for r in first.requests] == ["ended"] * 4 and first.deferred == 1
    assert "1 window due again wait for a later sync (at most 4 windows" in first.describe()
    late = plan(at("2026-02-03", 1))  # due for two days: asked whatever the budget
    assert [r.reason for r in late.requests] == ["ended"] * 5 and late.deferred == 0


def test_a_site_synced_rarely_gets_every_window_due_at_once_its_final_fetches_included(
    tmp_path: Path,
) -> None:
    """The budget spreads the windows due over daily syncs. Long after the last sync, January's
    windows are past their horizon by weeks and February's by 30 hours (due, not yet forced):
    with no daily sync to follow, all are asked now, and each copy is final."""
    january = aggregate_keys("networks", date(2026, 1, 1), date(2026, 1, 31), DEFAULT_NETWORK_SLICES)
    february = aggregate_keys("networks", date(2026, 2, 1), date(2026, 2, 28), DEFAULT_NETWORK_SLICES)
    entries = {key.relpath: entry(key, at("2026-02-27")) for key in (*january, *february)}
    now = POLICY.revisable_until(february[0]) + timedelta(hours=30)

    def plan(manifest: Manifest) -> SyncPlan:
        keys = {"alpha": [*january, *february]}
        return plan_partitions({"alpha": manifest}, keys, now=now, pace={}, policies={"alpha": POLICY})

    rare = plan(Manifest(tmp_path, "alpha", entries))
    assert [r.reason for r in rare.requests] == ["final"] * 10 and rare.deferred == 0
    # a site synced yesterday: the budget holds February's back for the next day's sync
    yesterday = PartitionKey.transactions(now.date() - timedelta(days=1))
    daily = plan(
        Manifest(tmp_path, "alpha", {**entries, yesterday.relpath: entry(yesterday, now - timedelta(days=1))})
    )
    assert {r.key.start for r in daily.requests} == {date(2026, 1, 1)} and daily.deferred == 5


def test_a_plan_counts_what_it_left_alone_by_what_it_is(tmp_path: Path) -> None:
    """The same lake read over two ranges: what is in range and current, and what is stored outside
    the range, are said apart (one total per command looked like three lakes)."""
    days = [PartitionKey.transactions(date(2026, 1, d)) for d in range(1, 21)]
    manifest = Manifest(tmp_path, "alpha", {key.relpath: entry(key, at("2026-01-25")) for key in days})
    plan = plan_partitions(
        {"alpha": manifest}, {"alpha": days[5:10]}, now=at("2026-02-20"), pace={}, policies={"alpha": POLICY}
    )
    assert (plan.skipped, plan.outside) == (5, 15)
    said = "nothing to fetch: 5 partitions in range stored and current, 15 more stored outside it"
    assert plan.describe() == said
    # A sync adds its stored windows outside the range (none due here): still counted as outside.
    windows = aggregate_keys("networks", date(2026, 1, 1), date(2026, 1, 31), DEFAULT_NETWORK_SLICES)
    stored = {**manifest.entries, **{key.relpath: entry(key, at("2026-02-19")) for key in windows}}
    plan = plan_partitions(
        {"alpha": Manifest(tmp_path, "alpha", stored)},
        {"alpha": [*days[5:10], *windows]},
        asked={"alpha": days[5:10]},
        now=at("2026-02-20"),
        pace={},
        policies={"alpha": POLICY},
    )
    assert (plan.requests, plan.skipped, plan.outside) == ([], 5, 20)


def test_the_ledger_says_which_windows_changed_since_their_copy() -> None:
    fetched, now = at("2026-02-04"), at("2026-02-08")  # the copy serves 3.25 days: due Feb 7, 12:00
    # a day that ends after the copy, fetched after it, with a row clicked in January
    assert reason(fetched, now, ledger_day("2026-02-07", at("2026-02-08"), "2026-01-31")) == "changed"
    assert (
        reason(fetched, now, ledger_day("2026-02-07", at("2026-02-08"), "2026-02-03")) is None
    )  # February's
    # fetched before the copy: the copy holds what it knew
    assert reason(fetched, now, ledger_day("2026-02-04", at("2026-02-04", 5), "2026-01-31")) is None
    # a day that ended before the copy was fetched: every change it holds was in the copy
    assert reason(fetched, now, ledger_day("2026-02-03", at("2026-02-08"), "2026-01-31")) is None
    # a row without click detail may belong to any window starting by its commission date
    assert reason(fetched, now, ledger_day("2026-02-07", at("2026-02-08"), undated="2026-02-07")) == "changed"
    assert reason(fetched, now, ledger_day("2026-02-07", at("2026-02-08"), undated="2025-12-20")) is None
    # a day recorded before touches were: it cannot say which, so every window
    unknown = entry(PartitionKey.transactions(date(2026, 2, 7)), at("2026-02-08"))
    assert reason(fetched, now, unknown) == "changed"
    # the current window is refreshed hourly, whatever the ledger says
    assert reason(at("2026-01-20"), at("2026-01-20", 8), unknown) == "unsettled"


def test_a_two_day_horizon_is_the_lakes_behaviour_before_revisions() -> None:
    old = SettlePolicy(revision_days=2)
    assert old.settles_at(JANUARY) == at("2026-02-03", 0)
    assert reason(at("2026-01-31"), at("2026-02-01"), policy=old) == "ended"
    assert reason(at("2026-02-02"), at("2026-02-02", 8), policy=old) is None
    assert reason(at("2026-02-02"), at("2026-02-04"), policy=old) == "final"
    assert reason(at("2026-02-03", 0), at("2026-03-01"), policy=old) is None


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"revision_days": -1}, "not a number of days"),
        ({"revision_days": 4.5}, "not a number of days"),
        ({"revision_max_age": timedelta(0)}, "longer than 0"),
        ({"revision_lag": 0}, "not a share of an age"),
        ({"revision_budget": -1}, "not a count"),
        ({"revision_slack": 2}, "not a duration"),
        ({"freshness": 3}, "not a duration"),
    ],
)
def test_a_policy_refuses_what_is_not_a_horizon(changes: dict[str, object], message: str) -> None:
    with pytest.raises((ConfigurationError, ValidationError), match=message):
        SettlePolicy(**changes)  # type: ignore[arg-type]


def test_touched_days_are_runs_and_windows_overlap_them() -> None:
    days = [date(2026, 1, d) for d in (5, 3, 4, 4, 9)]
    touched = Touched.of(days)
    assert touched.click_days == ((date(2026, 1, 3), date(2026, 1, 5)), (date(2026, 1, 9), date(2026, 1, 9)))
    assert touched.touches(date(2026, 1, 5), date(2026, 1, 6)) and touched.touches(
        date(2026, 1, 1), date(2026, 2, 1)
    )
    assert not touched.touches(date(2026, 1, 6), date(2026, 1, 9)) and not touched.touches(
        date(2026, 1, 10), date(2026, 2, 1)
    )
    assert Touched.from_json(json.loads(json.dumps(touched.to_json()))) == touched


def _stored_day(data_dir: Path, fetched: datetime) -> PartitionKey:
    """A ledger day of three rows: two clicked in January and February, one without click detail."""
    rows = [
        nested(1, click={"clickDate": "2026-01-31"}, commission={"commissionDate": "2026-02-02"}),
        nested(2, click={"clickDate": "2026-02-01"}, commission={"commissionDate": "2026-02-02"}),
        {**nested(3, commission={"commissionDate": "2026-02-01"}), "click": {}},
    ]
    key = PartitionKey.transactions(date(2026, 2, 3))
    written = write_partition(data_dir, "alpha", key, parse_transactions(body(rows)), fetched)
    Manifest.record(data_dir, "alpha", key, written, fetched, settled=False)  # settles on Feb 5th
    return key


def test_the_manifest_records_what_a_day_touched_and_each_windows_horizon_and_recovers_both(
    tmp_path: Path,
) -> None:
    fetched = at("2026-02-04")
    day = _stored_day(tmp_path, fetched)
    assert Manifest.record_horizon(tmp_path, "alpha", 45) == 0  # no window yet: the horizon alone
    table = parse_aggregate("networks", networks_body(), date(2026, 1, 1), date(2026, 2, 1))
    written = write_partition(tmp_path, "alpha", JANUARY, table, fetched)
    Manifest.record(tmp_path, "alpha", JANUARY, written, fetched, settled=False)

    raw = json.loads((tmp_path / "lake" / "site=alpha" / "manifest.json").read_text())
    assert raw["revision_days"] == 45
    assert raw["partitions"][day.relpath]["touched"] == {
        "click_days": [["2026-01-31", "2026-02-01"]],
        "undated_through": "2026-02-01",
    }
    window = raw["partitions"][JANUARY.relpath]
    assert (window["revisable_until"], window["final"]) == ("2026-03-18T00:00:00+00:00", False)
    assert "touched" not in window and "revisable_until" not in raw["partitions"][day.relpath]

    before = Manifest.load(tmp_path, "alpha")
    (tmp_path / "lake" / "site=alpha" / "manifest.json").unlink()
    rebuilt, _ = rebuild(tmp_path, "alpha", POLICY)
    assert rebuilt.get(day) == before.get(day) and rebuilt.revision_days == 45
    assert [(w.start, w.fetched_at, w.revisable_until, w.final) for w in rebuilt.windows()] == [
        (date(2026, 1, 1), fetched, at("2026-03-18", 0), False)
    ]
    # a shorter horizon makes the window final: it was fetched after it ended plus two days
    assert Manifest.record_horizon(tmp_path, "alpha", 2) == 1
    (state,) = Manifest.load(tmp_path, "alpha").windows()
    assert (state.revisable_until, state.final) == (at("2026-02-03", 0), True)


def test_a_day_stored_without_click_dates_touches_every_window(tmp_path: Path) -> None:
    """A file of an older writer, without the column, is rebuilt as a day that cannot say which."""
    key = _stored_day(tmp_path, at("2026-02-04"))
    path = tmp_path / "lake" / "site=alpha" / key.relpath / "part.parquet"
    pq.write_table(pq.read_table(path).drop_columns(["click_date"]), path)
    rebuilt, _ = rebuild(tmp_path, "alpha", POLICY, trusted=True)  # (the file as that writer left it)
    day = rebuilt.get(key)
    assert day is not None and day.rows == 3 and day.touched is None
    assert LedgerSignal([day]).changed(JANUARY, at("2026-02-02"))


def test_a_horizon_that_is_not_days_is_a_damaged_manifest(tmp_path: Path) -> None:
    path = tmp_path / "lake" / "site=alpha" / "manifest.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"partitions": {}, "revision_days": "soon"}))
    with pytest.raises(LakeError, match="is damaged"):
        Manifest.load(tmp_path, "alpha")


def test_the_horizon_is_a_setting_and_a_key_per_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings.from_env().revision_days == DEFAULT_REVISION_DAYS == 45
    monkeypatch.setenv("COMMERCE_REPORTS_REVISION_DAYS", "60")
    assert Settings.from_env().revision_days == 60
    monkeypatch.setenv("COMMERCE_REPORTS_REVISION_DAYS", "six weeks")
    with pytest.raises(
        ConfigurationError, match="COMMERCE_REPORTS_REVISION_DAYS: 'six weeks' is not a number of days"
    ):
        Settings.from_env()
    monkeypatch.setenv("COMMERCE_REPORTS_REVISION_DAYS", "60")
    monkeypatch.setenv("COMMERCE_REPORTS_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("RECIPES_KEY", "recipes-key-789")
    monkeypatch.setenv("GADGETS_KEY", "gadgets-key-012")
    monkeypatch.setenv("COMMERCE_REPORTS_BASE_URL", "https://api.example.com")
    (tmp_path / "sites.toml").write_text(
        '[sites.recipes]\nsecret_key_env = "RECIPES_KEY"\nrevision_days = 90\n\n'
        '[sites.gadgets]\nsecret_key_env = "GADGETS_KEY"\n'
    )
    sites = configured_sites(Settings.from_env())
    assert (sites["recipes"].revision_days, sites["gadgets"].revision_days) == (90, 60)
    (tmp_path / "sites.toml").write_text(
        '[sites.recipes]\nsecret_key_env = "RECIPES_KEY"\nrevision_days = -3\n'
    )
    with pytest.raises(
        ConfigurationError, match=r"\[sites.recipes\] revision_days: -3 is not a number of days"
    ):
        configured_sites(Settings.from_env())


def test_a_sync_long_after_the_last_ends_with_final_windows_whatever_its_range(
    running: RunningSandbox, tmp_path: Path
) -> None:
    """A laptop that syncs a week of February, then once more in June, for June only."""
    site = profiles(running)[:1]
    options = options_for(running)
    first = running.sandbox.now.date() - timedelta(days=6)  # March 4th..10th
    sync(first, sites=site, data_dir=tmp_path, options=options, networks=["all"], merchandise=[])
    (march,) = Manifest.load(tmp_path, "alpha").windows()
    assert not march.final and march.revisable_until == at("2026-05-16", 0)
    rows = window_rows(sites=site, data_dir=tmp_path, options=options)
    assert [(r.window_start, r.final) for r in rows] == [(date(2026, 3, 1), False)]
    assert "2026-05-16 00:00:00 UTC  no" in describe_windows(rows)

    running.sandbox.advance(timedelta(days=90))  # June 8th: March's horizon has passed
    june = running.sandbox.now.date() - timedelta(days=2)
    plan = plan_sync(june, sites=site, data_dir=tmp_path, options=options, networks=["all"], merchandise=[])
    reasons = {r.key.describe(): r.reason for r in plan.requests if r.key.dataset == "networks"}
    assert reasons == {
        "networks [all] 2026-03-01..2026-03-31": "final",
        "networks [all] 2026-06-01..2026-06-30": "missing",
    }
    assert "final     2026-03-01..2026-03-31, 1 slice: its horizon has passed" in plan.describe()
    result = sync(june, sites=site, data_dir=tmp_path, options=options, networks=["all"], merchandise=[])
    assert result.ok
    windows = {w.start: w for w in Manifest.load(tmp_path, "alpha").windows()}
    assert windows[date(2026, 3, 1)].final and not windows[date(2026, 6, 1)].final
    again = plan_sync(june, sites=site, data_dir=tmp_path, options=options, networks=["all"], merchandise=[])
    assert again.requests == []
    # the site's horizon set longer since: status says what the plan does (it said the stored one)
    longer = [dataclasses.replace(site[0], revision_days=120)]
    rows = window_rows(sites=longer, data_dir=tmp_path, options=options)
    (row,) = [r for r in rows if r.window_start == date(2026, 3, 1)]
    assert (row.revisable_until, row.final, row.asked_again is None) == (at("2026-07-30", 0), False, False)


def test_each_site_syncs_under_its_own_horizon(running: RunningSandbox, tmp_path: Path) -> None:
    alpha, beta = profiles(running)
    beta = replace(beta, revision_days=10)
    start = running.sandbox.now.date() - timedelta(days=2)
    sync(
        start,
        sites=[alpha, beta],
        data_dir=tmp_path,
        options=options_for(running),
        networks=["all"],
        merchandise=[],
    )
    for site, days, until in (("alpha", 45, at("2026-05-16", 0)), ("beta", 10, at("2026-04-11", 0))):
        manifest = Manifest.load(tmp_path, site)
        assert manifest.revision_days == days
        assert [w.revisable_until for w in manifest.windows()] == [until]


def test_a_rebuild_refuses_what_is_not_a_settle_policy(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="is not a settle policy"):
        rebuild(tmp_path, "alpha", POLICY.is_settled)  # type: ignore[arg-type]
