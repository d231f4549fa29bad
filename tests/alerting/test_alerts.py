"""Alerts on 180 days of the two demo sites (`tests.lakes.alerts_lake`): silent on the sandbox's
ordinary world, naming the network of a staged incident (EPC -50% for a week); thresholds from
commerce-reports.toml; the command's exit codes; the lake's own health."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import duckdb
import pytest

from commerce_reports.alerting import Thresholds, alerts
from commerce_reports.contract import PartitionKey
from commerce_reports.db import connect
from commerce_reports.errors import ConfigurationError, ValidationError
from commerce_reports.lake import record_failures
from commerce_reports.secret import Secret
from tests.lakes import ALERTS_DAYS, ALERTS_NOW, INCIDENT_FROM, alerts_lake

# the lake: 720 partitions synced over loopback, once per run (by the first test that asks)
# one worker builds and reads it (another asking meanwhile would wait for it, idle)
pytestmark = [pytest.mark.slow, pytest.mark.timeout(600), pytest.mark.xdist_group("alerts-lake")]
LAST = ALERTS_NOW.date() - timedelta(days=1)  # the last complete day


@pytest.fixture(scope="session")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return alerts_lake(tmp_path_factory)


@pytest.fixture(scope="module")
def con(lake: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    with connect(lake) as connection:
        yield connection


def test_the_ordinary_world_raises_no_alert_over_180_days(
    con: duckdb.DuckDBPyConnection, lake: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every day of the history with a baseline is judged: both sites up to the day before the
    incident, and beta (which has none) up to the last day."""
    before = alerts(
        con, as_of=INCIDENT_FROM - timedelta(days=1), days=ALERTS_DAYS, data_dir=lake, now=ALERTS_NOW
    )
    beta = alerts(con, site="beta", days=ALERTS_DAYS, data_dir=lake, now=ALERTS_NOW)
    with capsys.disabled():
        print(f"\nalerts on the ordinary world: {len(before.alerts)} ({before.summary()})")
        print(f"alerts on beta to the last day: {len(beta.alerts)} ({beta.summary()})")
    assert before.alerts == () and beta.alerts == () and beta.exit_code == 0
    assert before.series > 150 and before.unchecked == ()  # per network, device and country; EPC too


def test_an_epc_halved_on_one_network_for_a_week_is_named(con: duckdb.DuckDBPyConnection, lake: Path) -> None:
    """Named, with its size, since when and its baseline. Clicks are judged on the daily windows the
    lake holds whole (`complete`: fetched once they settled, two days after their day)."""
    report = alerts(con, days=7, data_dir=lake, now=ALERTS_NOW)
    changes = [a for a in report.alerts if a.kind == "change"]
    assert {(a.site, a.scope, a.key) for a in changes} == {("alpha", "network", "Northwind Affiliates")}
    ((whole,),) = con.execute(
        "SELECT max(window_start) FROM networks WHERE site = 'alpha' AND grain = 'day' AND complete"
    ).fetchall()
    assert whole == LAST - timedelta(days=2)
    epc = next(a for a in changes if a.metric == "epc")
    assert (epc.since, epc.as_of, epc.days) == (INCIDENT_FROM, whole, (whole - INCIDENT_FROM).days + 1)
    assert epc.change is not None and -0.6 < epc.change < -0.4
    assert epc.z is not None and epc.z <= -report.thresholds.z and epc.weeks == 8
    line = epc.describe(report.currency)
    assert line.startswith("alpha · network Northwind Affiliates: EPC $0.") and "down 5" in line, line
    assert (
        f"over the {epc.days} days from {INCIDENT_FROM} to {whole}" in line and "the 8 weeks before" in line
    )
    assert report.exit_code == 3
    frame = report.frame()
    assert frame.filter(frame["metric"] == "epc")["key"].to_list() == ["Northwind Affiliates"]
    assert epc.describe("EUR").startswith("alpha · network Northwind Affiliates: EPC €0.")


def test_the_command_exits_3_on_alerts(lake: Path, tmp_path: Path) -> None:
    """A real process in a project whose commerce-reports.toml names the lake and the thresholds
    (the lake was synced on the sandbox's frozen clock: its staleness is set aside here). Without
    an alert it exits 0: `AlertReport.exit_code`, checked on the ordinary world above."""
    (tmp_path / "commerce-reports.toml").write_text(f'data_dir = "{lake}"\n\n[alerts]\nstale_hours = 1e9\n')

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "commerce_reports", "alerts", *args]
        return subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120)

    found = run("--days", "7")
    assert found.returncode == 3, found.stderr
    assert "1 alert" in found.stdout and "alpha · network Northwind Affiliates: EPC" in found.stdout


def test_thresholds_come_from_the_alerts_table_and_are_checked() -> None:
    chosen = Thresholds.from_table(
        {"epc_drop": "40%", "return_rate_rise": False, "revenue_rise": 0.5, "z": 5}
    )
    assert (
        chosen.drops["epc"] == 0.4 and chosen.rises["return_rate"] is None and chosen.rises["revenue"] == 0.5
    )
    assert chosen.z == 5 and chosen.baseline_weeks == Thresholds().baseline_weeks
    for table, message in (
        ({"epc_fall": "30%"}, "unknown setting 'epc_fall'"),
        ({"epc_drop": 30}, "write a percentage"),
        ({"z": -1}, "z = -1; give a positive number"),
        ({"min_weeks": 9}, "min_weeks (9) is more than baseline_weeks (8)"),
        ({"max_span": 8}, "max_span = 8; give a whole number from 1 to 7"),
    ):
        with pytest.raises(ConfigurationError, match=re.escape(message)):
            Thresholds.from_table(table)


def test_bad_arguments_and_settings_say_what_is_right(
    con: duckdb.DuckDBPyConnection, lake: Path, tmp_path: Path
) -> None:
    with pytest.raises(ValidationError, match="'gamma' is not in the lake; use one of alpha, beta"):
        alerts(con, site="gamma", data_dir=lake)
    with pytest.raises(ValidationError, match="days: 0 is not a count of days"):
        alerts(con, days=0, data_dir=lake)
    (tmp_path / "commerce-reports.toml").write_text('[alerts]\nepc_drop = "half"\n')  # the test's cwd
    with pytest.raises(ConfigurationError, match="epc_drop = 'half'; write a percentage"):
        alerts(con, data_dir=lake)


def test_the_health_says_a_stale_lake_and_a_partition_that_keeps_failing(
    con: duckdb.DuckDBPyConnection, lake: Path, tmp_path: Path
) -> None:
    """The lake's health is read from its folder: here a copy of alpha's manifest, with one
    partition failed in three syncs (its reason holds a key: masked)."""
    site = tmp_path / "lake" / "site=alpha"
    site.mkdir(parents=True)
    shutil.copy(lake / "lake" / "site=alpha" / "manifest.json", site / "manifest.json")
    key = PartitionKey.transactions(LAST)
    token = Secret("sk-live-failing-0123456789")
    for n in range(3):
        at = ALERTS_NOW + timedelta(days=n)
        record_failures(tmp_path, "alpha", [(key, f"HTTP 500 with {token.reveal()} in it")], [], at)
    later = ALERTS_NOW + timedelta(days=3)
    report = alerts(con, site="alpha", days=1, data_dir=tmp_path, now=later)
    health = {a.kind: a.describe() for a in report.alerts if a.kind != "change"}
    assert health["stale"].startswith("alpha: the lake was last synced 3.0 days ago (2026-11-24 12:00 UTC)")
    failing = f"alpha: 1 partition failed in 3 or more syncs in a row: transactions updateDate={LAST}"
    assert health["failing"].startswith(f"{failing} (3 syncs: HTTP 500 with *** in it)")
    assert (
        token.reveal() not in health["failing"] and token.reveal() not in (site / "failures.json").read_text()
    )
    record_failures(tmp_path, "alpha", [], [key], later)  # stored again: no longer failing
    again = alerts(con, site="alpha", days=1, data_dir=tmp_path, now=ALERTS_NOW)
    assert [a.kind for a in again.alerts if a.kind != "change"] == []
