"""A sync never fails quietly: every partition not stored is reported with its reason, the command
exits non-zero; partitions the parser could not fully type stay unsettled; odd filters stay safe."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pyarrow as pa
import pytest

from commerce_reports.api import SyncOptions, load_networks, load_transactions, plan_sync, status, sync
from commerce_reports.cli import main
from commerce_reports.errors import AuthenticationError, LakeError, ValidationError
from commerce_reports.lake import Manifest
from commerce_reports.sandbox import SandboxConfig, run_sandbox
from commerce_reports.sandbox.runner import RunningSandbox
from commerce_reports.secret import Secret
from commerce_reports.sites import SiteProfile
from commerce_reports.syncing import run as sync_run
from tests.lake.conftest import options_for, profiles, run_hostile, small_config


@pytest.fixture
def today() -> Iterator[RunningSandbox]:
    """A sandbox frozen at this instant, so the CLI (on the real clock) agrees with it."""
    now = datetime.now(UTC).replace(microsecond=0)
    config = SandboxConfig(
        now=now, first_day=now.date() - timedelta(days=30), pace=0.0, transactions_per_day=20
    )
    with run_sandbox(config) as running:
        yield running


def test_a_file_where_a_day_folder_belongs_fails_those_days_and_the_command_exits_1(
    today: RunningSandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    days = [today.sandbox.now.date() - timedelta(days=n) for n in range(4, -1, -1)]
    blocked = [days[1], days[3]]
    for day in blocked:
        folder = tmp_path / "lake" / "site=alpha" / "transactions" / "by=updateDate" / f"day={day}"
        folder.parent.mkdir(parents=True, exist_ok=True)
        folder.write_text("a file, not a folder")
    for name, value in {
        "COMMERCE_REPORTS_SECRET_KEY_ALPHA": "sandbox-alpha-key",
        "COMMERCE_REPORTS_BASE_URL": today.base_url,
        "COMMERCE_REPORTS_PACE": "0",
    }.items():
        monkeypatch.setenv(name, value)
    code = main(["sync", "--start", days[0].isoformat(), "--no-progress", "--data-dir", str(tmp_path)])
    out, err = capsys.readouterr()
    assert code == 1
    failures = sorted(line for line in err.splitlines() if line.startswith("failed: "))
    assert len(failures) == 2, err
    for day, line in zip(blocked, failures, strict=True):
        assert line.startswith(f"failed: alpha transactions updateDate={day}: could not store it: ")
    assert "2 failed" in out and "Traceback" not in err
    stored = {e.key.start for e in Manifest.load(tmp_path, "alpha") if e.key.dataset == "transactions"}
    assert stored == set(days) - set(blocked)  # the lane went on past each failure


def test_a_partition_that_keeps_failing_is_counted_sync_after_sync_and_alerted(
    today: RunningSandbox, tmp_path: Path
) -> None:
    """Each sync records what it could not store (`failures.json` beside the manifest); the third
    failure in a row of the same partition is an alert; storing it at last clears the record."""
    from commerce_reports.alerting import alerts
    from commerce_reports.db import connect
    from commerce_reports.lake import load_failures

    now = today.sandbox.now
    days = [now.date() - timedelta(days=n) for n in range(3, -1, -1)]
    blocked = tmp_path / "lake" / "site=alpha" / "transactions" / "by=updateDate" / f"day={days[1]}"
    blocked.parent.mkdir(parents=True)
    blocked.write_text("a file, not a folder")
    profile = SiteProfile("alpha", Secret("sandbox-alpha-key"), today.base_url, sandbox=True, pace=0.0)

    def again() -> None:
        sync(
            days[0],
            sites=[profile],
            data_dir=tmp_path,
            networks=[],
            merchandise=[],
            options=options_for(today),
        )

    for count in (1, 2, 3):
        again()
        (record,) = load_failures(tmp_path, "alpha").values()
        assert (record.what, record.count) == (f"transactions updateDate={days[1]}", count)
        assert record.reason.startswith("could not store it: ")
    with connect(tmp_path) as con:
        report = alerts(con, days=1, data_dir=tmp_path, now=now)
    (failing,) = [a for a in report.alerts if a.kind == "failing"]
    assert failing.describe().startswith(
        f"alpha: 1 partition failed in 3 or more syncs in a row: transactions updateDate={days[1]} (3 syncs: "
    )
    assert report.exit_code == 3
    blocked.unlink()
    again()
    assert load_failures(tmp_path, "alpha") == {}


def test_a_refused_key_reports_every_partition_of_its_lanes(running: RunningSandbox, tmp_path: Path) -> None:
    wrong = SiteProfile("alpha", Secret("not-the-key-123"), running.base_url)
    start = running.sandbox.now.date() - timedelta(days=3)
    result = sync(
        start, sites=[wrong], data_dir=tmp_path, options=options_for(running), merchandise=[], networks=[]
    )
    assert not result.ok and len(result.failed) == 4 and not result.stored
    assert all(isinstance(f.error, AuthenticationError) for f in result.failed)
    assert [f.attempted for f in result.failed] == [True, False, False, False]
    assert "not fetched, its lane stopped after: HTTP 401" in str(result.failed[1])
    # the address check (401 proves it is the reporting API), then one: the rest would be refused alike
    assert len(running.sandbox.request_log) == 2


def test_an_unexpected_error_in_a_lane_is_reported_not_swallowed(
    running: RunningSandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = sync_run.write_partition
    bad_day = running.sandbox.now.date() - timedelta(days=2)

    def flaky(data_dir, site, key, table, fetched_at):  # type: ignore[no-untyped-def]
        if key.dataset == "transactions" and key.start == bad_day:
            raise pa.ArrowInvalid("a column no writer expected")
        return real(data_dir, site, key, table, fetched_at)

    monkeypatch.setattr(sync_run, "write_partition", flaky)
    start = running.sandbox.now.date() - timedelta(days=3)
    result = sync(start, sites=profiles(running)[:1], data_dir=tmp_path, options=options_for(running))
    transactions = [f for f in result.failed if f.request.key.dataset == "transactions"]
    assert [(f.request.key.start, f.attempted) for f in transactions] == [
        (bad_day, True),
        (bad_day + timedelta(days=1), False),
        (bad_day + timedelta(days=2), False),
    ]
    assert isinstance(transactions[0].error, LakeError) and "ArrowInvalid" in str(transactions[0].error)
    assert len(result.failed) == 3 and len(result.stored) == 1 + 5 + 1  # the other lanes ran to the end


def test_partitions_with_untypable_values_stay_unsettled_and_are_named(tmp_path: Path) -> None:
    with run_hostile(small_config(), {"untypable"}) as running:
        options = options_for(running)
        start = running.sandbox.now.date() - timedelta(days=12)  # long settled days
        alpha = profiles(running)[:1]
        result = sync(
            start,
            start + timedelta(days=2),
            sites=alpha,
            data_dir=tmp_path,
            options=options,
            networks=[],
            merchandise=[],
        )
        assert result.ok and len(result.untyped) == 3
        summary = result.summary()
        assert summary.count("rows hold values that could not be typed (kept in extra)") == 3
        assert f"warning: alpha transactions updateDate={start}: 1 rows hold values" in summary
        assert all(not e.settled and e.untyped == 1 for e in Manifest.load(tmp_path, "alpha"))
        assert status(sites=alpha, data_dir=tmp_path, options=options)["unsettled"].to_list() == [3]
        running.sandbox.advance(timedelta(minutes=61))  # past the freshness interval
        again = plan_sync(
            start,
            start + timedelta(days=2),
            sites=alpha,
            data_dir=tmp_path,
            options=options,
            networks=[],
            merchandise=[],
        )
        assert [r.reason for r in again.requests] == ["untyped"] * 3


def test_long_and_odd_filter_values_sync_end_to_end(running: RunningSandbox, tmp_path: Path) -> None:
    options = options_for(running)
    alpha = profiles(running)[:1]
    combined = {"page_utm_source": "google", "page_utm_medium": "email"}
    odd = [{"page_utm_medium": "m" * 300}, {"page_utm_medium": "email&pageUtmSource=google"}, combined]

    def load() -> dict[str, int]:
        frame = load_networks(
            "2026-02-01", "2026-02-28", slices=odd, site=alpha, data_dir=tmp_path, options=options
        )
        assert isinstance(frame, pl.DataFrame)
        return dict(frame.group_by("slice").len().iter_rows())

    rows = load()
    assert rows == {
        "pageUtmMedium=email&pageUtmSource=google": rows["pageUtmMedium=email&pageUtmSource=google"]
    }
    assert rows["pageUtmMedium=email&pageUtmSource=google"] > 0  # the odd value got its own (empty) answer
    folders = [p.name for p in (tmp_path / "lake" / "site=alpha" / "networks").iterdir()]
    assert len(folders) == 3 and max(len(f.encode()) for f in folders) <= 240
    requests = len(running.sandbox.request_log)
    assert status(sites=alpha, data_dir=tmp_path, options=options)["partitions"].to_list() == [3]
    (tmp_path / "lake" / "site=alpha" / "manifest.json").unlink()  # the long name is rebuilt from the file
    assert load() == rows
    assert len(running.sandbox.request_log) == requests
    slices = {e.key.slice for e in Manifest.load(tmp_path, "alpha")}
    assert f"pageUtmMedium={'m' * 300}" in slices


@pytest.mark.parametrize(
    "kwargs",
    [
        {"merchant_group_ids": 1.5},
        {"campaign_ids": object()},
        {"campaign_ids": {"a": 1}},
        {"program_type": 3},
    ],
)
def test_bad_filter_types_are_validation_errors(tmp_path: Path, kwargs: dict[str, object]) -> None:
    nowhere = [SiteProfile("alpha", Secret("unused-key-123"), "http://127.0.0.1:9")]  # never reached
    options = SyncOptions(now=lambda: datetime(2026, 3, 10, tzinfo=UTC), pace=0, progress=False)
    with pytest.raises(ValidationError):
        load_transactions(
            "2026-03-01", "2026-03-02", site=nowhere, data_dir=tmp_path, options=options, **kwargs
        )
    with pytest.raises(ValidationError):
        load_networks(
            "2026-03-01",
            "2026-03-02",
            slices=[{"cuids": 7}],
            site=nowhere,
            data_dir=tmp_path,
            options=options,
        )
