"""Alerts on 180 days of the two demo sites (`tests.lakes.alerts_lake`): silent on the sandbox's
ordinary world, naming a network whose orders pay half for a week with its driver first and its
knock-on alerts under it, each figure over the span it states; why revenue moved (`explain`);
the command's exit codes and what it could not judge; the lake's own health; and the sandbox's
world without files (`world.py`, what the per-rule tests run on) against this synced lake."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import duckdb
import polars as pl
import pytest

from commerce_reports.alerting import alerts, explain
from commerce_reports.contract import PartitionKey
from commerce_reports.db import connect
from commerce_reports.errors import ConfigurationError, ValidationError
from commerce_reports.lake import record_failures
from commerce_reports.sandbox import Incident
from commerce_reports.sandbox.world import LAG_DAYS
from commerce_reports.secret import Secret
from tests.alerting.world import world_lake
from tests.lakes import ALERTS_DAYS, ALERTS_NOW, INCIDENT, INCIDENT_FROM, alerts_lake

# the lake: 720 partitions synced over loopback, once per run (by the first test that asks)
# one worker builds and reads it (another asking meanwhile would wait for it, idle)
pytestmark = [pytest.mark.slow, pytest.mark.timeout(600), pytest.mark.xdist_group("alerts-lake")]
LAST = ALERTS_NOW.date() - timedelta(days=1)  # the last complete day
NETWORK = "Northwind Affiliates"


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
    incident, and beta (which has none) up to the last day, every rule on every scope."""
    before = alerts(
        con, as_of=INCIDENT_FROM - timedelta(days=1), days=ALERTS_DAYS, data_dir=lake, now=ALERTS_NOW
    )
    beta = alerts(con, site="beta", days=ALERTS_DAYS, data_dir=lake, now=ALERTS_NOW)
    with capsys.disabled():
        print(f"\nalerts on the ordinary world: {len(before.alerts)} ({before.summary()})")
        print(f"alerts on beta to the last day: {len(beta.alerts)} ({beta.summary()})")
    assert before.describe().count("\n- ") == 0 and beta.alerts == () and beta.exit_code == 0
    assert before.alerts == ()
    assert before.series > 150 and before.unchecked == ()  # per network, device, country, merchant, link
    scopes = {line.split(":")[0] for line in before.describe().splitlines()}
    assert not [s for s in scopes if "merchant" in s]  # nothing judged per merchant raised either


def test_a_network_paid_half_per_order_is_named_first_with_its_knock_on_alerts(
    con: duckdb.DuckDBPyConnection, lake: Path
) -> None:
    """The cause's headline is its revenue per order (the driver: each order pays half); its
    revenue and EPC fall with it, grouped under it; every figure is that of the span it states."""
    report = alerts(con, days=7, data_dir=lake, now=ALERTS_NOW)
    (group,) = report.groups
    assert (group.cause.site, group.cause.scope, group.cause.key) == ("alpha", "network", NETWORK)
    assert group.cause.rule is not None and group.cause.rule.name == "order_value_drop"
    assert group.driver == "order_value" and -0.6 < (group.driver_change or 0) < -0.4
    assert {a.rule.name for a in group.members if a.rule} >= {"revenue_drop", "epc_drop"}
    assert all((a.site, a.scope, a.key) == ("alpha", "network", NETWORK) for a in group.alerts)
    for alert in group.alerts:  # the stated span is the figure's: since and days agree, inside the incident
        assert alert.since is not None and alert.as_of is not None and alert.z is not None
        assert alert.since >= INCIDENT_FROM and alert.days == (alert.as_of - alert.since).days + 1
        assert alert.z <= -report.thresholds.z and (alert.change or 0) <= -0.3
    value = group.cause
    assert value.value == pytest.approx(_order_value(con, value.since, value.as_of), rel=1e-9)
    line = value.describe(report.currency)
    assert line.startswith(f"alpha · network {NETWORK}: revenue per order $") and " down " in line
    assert f"from {value.since} to {value.as_of}" in line or f"on {value.as_of}" in line
    epc = next(a for a in group.members if a.metric == "epc")
    assert epc.value == pytest.approx(_epc(con, epc.since, epc.as_of), rel=1e-9)
    assert report.exit_code == 3 and report.frame()["role"].to_list().count("cause") == 1
    shown = report.to_dict()["groups"][0]
    assert shown["cause"]["rule"] == "order_value_drop" and shown["driver"] == "order_value"
    assert shown["decomposition"][0]["dimension"] == "total" and isinstance(
        shown["decomposition"][0]["revenue"], str
    )
    # money is decimal text in cents, as the decomposition's (it was 1210.0200000000002)
    assert re.fullmatch(r"\d+\.\d\d", shown["explained"]["at_stake"])
    assert report.frame()["at_stake"].dtype == pl.Decimal(38, 2)
    assert value.describe("EUR").startswith(f"alpha · network {NETWORK}: revenue per order €")


def _order_value(con: duckdb.DuckDBPyConnection, since: object, as_of: object) -> float:
    """Revenue per order of the network over since..as_of, as the ledger knew it on as_of."""
    ((value,),) = con.execute(
        """SELECT sum(CASE WHEN update_date <= $as_of THEN publisher_net_revenue ELSE original_revenue END)
                  / count(*) FILTER (WHERE original_revenue > 0)
           FROM transactions WHERE site = 'alpha' AND network = $network
             AND commission_date BETWEEN $since AND $as_of AND first_update_date <= $as_of""",
        {"since": since, "as_of": as_of, "network": NETWORK},
    ).fetchall()
    return float(value)


def _epc(con: duckdb.DuckDBPyConnection, since: object, as_of: object) -> float:
    """The network's revenue of its clicks of since..as_of, as the ledger knew it on as_of, over
    those clicks (the networks report's daily windows)."""
    ((revenue,),) = con.execute(
        """SELECT sum(CASE WHEN update_date <= $as_of THEN publisher_net_revenue ELSE original_revenue END)
           FROM transactions WHERE site = 'alpha' AND network = $network
             AND click_date BETWEEN $since AND $as_of AND first_update_date <= $as_of""",
        {"since": since, "as_of": as_of, "network": NETWORK},
    ).fetchall()
    ((clicks,),) = con.execute(
        "SELECT sum(clicks) FROM networks WHERE site = 'alpha' AND grain = 'day' AND slice = 'all' "
        "AND network_name = $network AND window_start BETWEEN $since AND $as_of",
        {"since": since, "as_of": as_of, "network": NETWORK},
    ).fetchall()
    return float(revenue) / float(clicks)


def test_explain_splits_the_week_by_factor_and_names_the_network(con: duckdb.DuckDBPyConnection) -> None:
    """The incident's week against the week before: contributions add up to the change, to the
    cent, in total and per dimension, and Northwind's fall is its revenue per order."""
    frame = explain(con, site="alpha", start=INCIDENT_FROM, end=LAST, by=["network", "device"], top_n=3)
    total = frame.row(0, named=True)
    ((now,), (then,)) = con.execute(
        "SELECT sum(revenue) FROM daily_performance WHERE site = 'alpha' AND day BETWEEN ? AND ? "
        "UNION ALL SELECT sum(revenue) FROM daily_performance WHERE site = 'alpha' AND day BETWEEN ? AND ?",
        [INCIDENT_FROM, LAST, INCIDENT_FROM - timedelta(days=7), LAST - timedelta(days=7)],
    ).fetchall()
    assert (total["revenue"], total["revenue_previous"]) == (now, then) and total[
        "contribution"
    ] == now - then
    for dimension in ("network", "device"):
        part = frame.filter(pl.col("dimension") == dimension)
        assert part["contribution"].sum() == now - then, dimension
    northwind = frame.filter(pl.col("key") == NETWORK).row(0, named=True)
    assert northwind["driver"] == "order_value" and northwind["driver_change"] < -0.4
    assert frame.filter(pl.col("dimension") == "network")["key"][0] == NETWORK  # the largest fall first
    effects = [northwind[c] for c in ("clicks_effect", "conversion_effect", "order_value_effect")]
    assert sum(e or Decimal(0) for e in effects) == northwind["contribution"]


def test_the_command_exits_3_on_alerts_and_says_what_it_could_not_judge(lake: Path, tmp_path: Path) -> None:
    """A real process in a project whose commerce-reports.toml names the lake and a setting (the
    lake was synced on the sandbox's frozen clock: its staleness is set aside here)."""
    (tmp_path / "commerce-reports.toml").write_text(f'data_dir = "{lake}"\n\n[alerts]\nstale_hours = 1e9\n')

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "commerce_reports", "alerts", *args]
        return subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120)

    found = run("--days", "7")
    assert found.returncode == 3, found.stderr
    assert f"- alpha · network {NETWORK}: revenue per order" in found.stdout and "    why: " in found.stdout
    beyond = run("--days", "1", "--site", "beta", "--as-of", str(LAST + timedelta(days=1)))
    assert beyond.returncode == 0, beyond.stderr
    ahead = LAST + timedelta(days=1)
    measures = "revenue, orders net of returns, revenue per order, returns"
    said = f"not judged: beta: {measures} judged on no day ({ahead}"
    assert f"{said}: not stored whole in the lake yet)" in beyond.stdout


def test_a_configured_site_never_synced_is_an_alert(lake: Path, tmp_path: Path) -> None:
    """A cron line `alerts || mail ...` is there to hear of a site that no sync ever fetched: it
    was `0 alerts` and exit 0 (an empty lake too), while `status` said to sync first."""
    (tmp_path / "commerce-reports.toml").write_text(f'data_dir = "{lake}"\n\n[alerts]\nstale_hours = 1e9\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMMERCE_REPORTS_")}
    env |= {
        "COMMERCE_REPORTS_BASE_URL": "https://api.example.com/v1",
        "COMMERCE_REPORTS_SECRET_KEY_ALPHA": "alpha-key-0123456789",
        "COMMERCE_REPORTS_SECRET_KEY_GAMMA": "gamma-key-0123456789",
    }
    command = [
        sys.executable,
        "-m",
        "commerce_reports",
        "alerts",
        "--days",
        "1",
        "--as-of",
        str(LAST - timedelta(days=30)),
    ]
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 3, done.stderr
    assert (
        "- gamma: configured, but never synced: no figure or alert covers it until "
        "`commerce-reports sync --site gamma` fetches it" in done.stdout
    )
    assert "alpha: configured" not in done.stdout  # (synced: in the lake)


def test_bad_arguments_and_settings_say_what_is_right(
    con: duckdb.DuckDBPyConnection, lake: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(ValidationError, match="'gamma' is not in the lake; use one of alpha, beta"):
        alerts(con, site="gamma", data_dir=lake)
    with pytest.raises(ValidationError, match="days: 0 is not a count of days"):
        alerts(con, days=0, data_dir=lake)
    with pytest.raises(ValidationError, match="is not a list of dimensions"):
        explain(con, site="alpha", by=["browser"])  # type: ignore[list-item]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "commerce-reports.toml").write_text('[alerts]\nepc_drop = "half"\n')
    with pytest.raises(ConfigurationError, match="epc_drop = 'half'; write a percentage"):
        alerts(con, data_dir=lake)


def test_a_day_after_today_is_refused_not_judged_on_no_day(tmp_path: Path) -> None:
    """`as_of` tomorrow holds no figure: judged on no day, a report of 0 alerts would read as all
    clear (`alerts || mail`). It is refused, naming today, before any lake is read."""
    today = ALERTS_NOW.date()
    tomorrow = today + timedelta(days=1)
    with pytest.raises(ValidationError, match=rf"as_of: {tomorrow} is after today \({today}\)"):
        alerts(as_of=tomorrow, now=ALERTS_NOW, data_dir=tmp_path)


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
    health = {a.kind: a.describe() for a in report.health}
    assert health["stale"].startswith("alpha: the lake was last synced 3.0 days ago (2026-11-24 12:00 UTC)")
    failing = f"alpha: 1 partition failed in 3 or more syncs in a row: transactions updateDate={LAST}"
    assert health["failing"].startswith(f"{failing} (3 syncs: HTTP 500 with *** in it)")
    assert (
        token.reveal() not in health["failing"] and token.reveal() not in (site / "failures.json").read_text()
    )
    record_failures(tmp_path, "alpha", [], [key], later)  # stored again: no longer failing
    again = alerts(con, site="alpha", days=1, data_dir=tmp_path, now=ALERTS_NOW)
    assert again.health == ()


def test_the_health_judged_beside_a_connection_is_of_the_lake_it_reads(lake: Path) -> None:
    """Not the configured lake's (here none: the test's own data home): `cr.alerts(cr.connect(L))`
    says L was last synced days ago."""
    from commerce_reports.db import connect

    later = ALERTS_NOW + timedelta(days=3)
    with connect(lake) as own:
        report = alerts(own, site="alpha", days=1, now=later, progress=False)
    assert any(a.kind == "stale" for a in report.health)


def test_the_world_without_files_is_what_the_sync_stored(con: duckdb.DuckDBPyConnection) -> None:
    """`world.py`, on which the per-rule tests and the incidents bench run, holds for the last
    three weeks what this lake synced over loopback from the same world: every commission (its
    latest revenue, first day, original revenue, scopes) and every day's clicks per network."""
    days = 21
    first = ALERTS_NOW.date() - timedelta(days=days - 1)
    model = world_lake(
        seed=0,
        now=ALERTS_NOW,
        days=days,
        sites=("alpha", "beta"),
        transactions_per_day=200,
        incidents=(Incident.parse(INCIDENT),),
    )
    columns = (
        "site, commission_id, commission_date, click_date, first_update_date, update_date, "
        "publisher_net_revenue, original_revenue, returned, network, device, upper(country), "
        "merchant_group_name, link_url"
    )
    # every order and adjustment; a separate return only of a click the model generated (from
    # LAG_DAYS before its first day: an older click's return is left out, see world.py)
    ledger = (
        f"SELECT {columns} FROM transactions WHERE commission_date BETWEEN $1 AND $2 "
        f"AND (original_revenue > 0 OR click_date >= $1 - {LAG_DAYS}) ORDER BY ALL"
    )
    window = [first, LAST]
    with model:
        assert model.execute(ledger, window).fetchall() == con.execute(ledger, window).fetchall()
        clicks = (
            "SELECT site, window_start, network_name, clicks FROM networks WHERE grain = 'day' "
            "AND slice = 'all' AND window_start BETWEEN $1 AND $2 ORDER BY ALL"
        )
        assert model.execute(clicks, window).fetchall() == con.execute(clicks, window).fetchall()


def test_with_no_series_judged_the_alerts_say_so_not_that_nothing_moved(
    con: duckdb.DuckDBPyConnection,
) -> None:
    """A period the lake does not hold: no word on what moved, which nobody judged."""
    report = alerts(con, site="alpha", as_of="2025-01-07", days=7, now=ALERTS_NOW, progress=False)
    assert report.series == 0 and not report.groups
    html = report.to_html()
    assert "no series judged" in html and "nothing moved" not in html


def test_a_mistyped_as_of_is_said_by_its_own_name(con: duckdb.DuckDBPyConnection) -> None:
    with pytest.raises(ValidationError, match="as_of: '2026-02-30' is not a real calendar date"):
        alerts(con, as_of="2026-02-30", progress=False)  # it said `end:`
