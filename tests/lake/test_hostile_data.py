"""Answers that hold what a day cannot, through the real client over loopback: a commission twice,
a row of another day, 1e400 and -Infinity, the caller's key echoed in disguise. What is stored,
the manifest, the settle flag, the sync's summary and the views are each checked."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from commerce_reports.api import plan_sync, sync
from commerce_reports.contract import UNPARSED, PartitionKey, site_root
from commerce_reports.db import connect
from commerce_reports.lake import Manifest
from commerce_reports.lake.manifest import Entry
from commerce_reports.params import Filters
from commerce_reports.sandbox import run_sandbox
from commerce_reports.sandbox.faults import FOREIGN_DAY
from commerce_reports.sandbox.runner import RunningSandbox
from commerce_reports.syncing import SyncResult
from tests.lake.conftest import options_for, profiles, small_config

pytestmark = pytest.mark.parametrize("dialect", ["contract", "published"])


@pytest.fixture
def running(dialect: str) -> Iterator[RunningSandbox]:
    with run_sandbox(small_config(dialect=dialect)) as running:
        yield running


def _day(running: RunningSandbox) -> date:
    return running.sandbox.now.date() - timedelta(days=12)  # long settled: only a doubt unsettles it


def _sync(running: RunningSandbox, data_dir: Path, networks: bool = False) -> SyncResult:
    day = _day(running)
    return sync(
        day,
        day,
        sites=profiles(running)[:1],
        data_dir=data_dir,
        options=options_for(running),
        networks=[Filters()] if networks else [],
        merchandise=[],
    )


def _stored(data_dir: Path, key: PartitionKey) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = pq.read_table(site_root(data_dir, "alpha") / key.relpath).to_pylist()
    return rows


def _entry(data_dir: Path, key: PartitionKey) -> Entry:
    entry = Manifest.load(data_dir, "alpha").get(key)
    assert entry is not None
    return entry


def _totals(data_dir: Path) -> tuple[object, ...]:
    with connect(data_dir) as con:
        row = con.execute(
            "SELECT count(*), sum(publisher_net_revenue), any_value(typeof(publisher_net_revenue)) "
            "FROM transactions"
        ).fetchone()
    assert row is not None
    return tuple(row)


def test_a_commission_twice_in_a_day_is_stored_once_and_counted(
    running: RunningSandbox, tmp_path: Path
) -> None:
    clean = _sync(running, tmp_path / "clean")
    running.sandbox.inject("duplicate", 1, "transactions")
    result = _sync(running, tmp_path / "lake")
    key = PartitionKey.transactions(_day(running))
    stored, expected = _stored(tmp_path / "lake", key), _stored(tmp_path / "clean", key)

    def rows(table: list[dict[str, object]]) -> list[dict[str, object]]:
        return sorted(({k: v for k, v in r.items() if k != "fetched_at"} for r in table), key=str)

    assert rows(stored) == rows(expected)  # exactly the clean answer's rows (the copy was the last)
    entry = _entry(tmp_path / "lake", key)
    assert entry.collapsed == 1 and entry.settled and entry.rows == len(expected)
    assert result.ok and clean.ok and [(r.key, n) for r, n in result.collapsed] == [(key, 1)]
    line = f"warning: alpha {key.describe()}: 1 duplicate rows of a commission collapsed"
    line += " (the last in the answer kept)"
    assert line in result.summary().splitlines()
    assert _totals(tmp_path / "lake") == _totals(tmp_path / "clean")  # counted once in every view


def test_a_row_of_another_day_keeps_the_day_unsettled_until_asked_again(
    running: RunningSandbox, tmp_path: Path
) -> None:
    running.sandbox.inject("foreign_day", 1, "transactions")
    result = _sync(running, tmp_path)
    key = PartitionKey.transactions(_day(running))
    days = [row["update_date"] for row in _stored(tmp_path, key)]
    assert days.count(date.fromisoformat(FOREIGN_DAY)) == 1  # kept for inspection
    entry = _entry(tmp_path, key)
    assert entry.foreign == 1 and not entry.settled
    line = f"warning: alpha {key.describe()}: 1 rows carry another updateDate than the day asked; "
    assert any(text.startswith(line) for text in result.summary().splitlines())
    running.sandbox.advance(timedelta(minutes=61))  # past the freshness interval
    day = _day(running)
    again = plan_sync(
        day, day, sites=profiles(running)[:1], data_dir=tmp_path, options=options_for(running), networks=[]
    )
    assert [(r.key, r.reason) for r in again.requests if r.key.dataset == "transactions"] == [
        (key, "foreign")
    ]
    healed = _sync(running, tmp_path)  # the service answers rightly now
    assert healed.ok and healed.summary().count("warning:") == 0
    entry = _entry(tmp_path, key)
    assert entry.foreign == 0 and entry.settled


@pytest.mark.parametrize("kind, text", [("huge_number", "1e400"), ("negative_infinity", "-Infinity")])
def test_an_infinite_amount_is_kept_raw_and_never_reaches_a_view(
    running: RunningSandbox, tmp_path: Path, kind: str, text: str
) -> None:
    for endpoint in ("transactions", "networks"):
        running.sandbox.inject(kind, 1, endpoint)
    result = _sync(running, tmp_path, networks=True)
    assert result.ok
    day = _day(running)
    ledger = PartitionKey.transactions(day)
    window = PartitionKey.aggregate("networks", day.replace(day=1), Filters(), "month")
    for key, column in ((ledger, "publisher_net_revenue"), (window, "revenue")):
        rows = _stored(tmp_path, key)
        held = [row for row in rows if row[column] is None]
        assert len(held) == 1, key
        assert json.loads(str(held[0]["extra"]))[UNPARSED][column] == text  # its raw text, as a string
        entry = _entry(tmp_path, key)
        assert entry.untyped == 1 and not entry.settled
        line = f"warning: alpha {key.describe()}: 1 rows hold values that could not be typed (kept in extra)"
        assert any(line in summary for summary in result.summary().splitlines())
    with connect(tmp_path) as con:
        for view, column in (
            ("transactions", "publisher_net_revenue"),
            ("network_performance", "aggregate_revenue"),
        ):
            found = con.execute(
                f"SELECT any_value(typeof({column})), max(abs({column})) FROM {view}"
            ).fetchone()
            assert found is not None and found[0].startswith("DECIMAL") and found[1] < Decimal(10**7), view


def test_a_window_holding_an_unreadable_amount_is_neither_complete_nor_final_until_fetched_clean(
    running: RunningSandbox, tmp_path: Path
) -> None:
    """Its sum is short by the amount: no figure of its period may say it is whole."""
    running.sandbox.inject("huge_number", 1, "networks")
    _sync(running, tmp_path, networks=True)
    month = _day(running).replace(day=1)

    def flags() -> tuple[object, ...]:
        with connect(tmp_path) as con:
            found = con.execute(
                "SELECT bool_or(complete), bool_or(final), count(*) FILTER (WHERE revenue IS NULL) "
                "FROM networks WHERE window_start = ? AND grain = 'month'",
                [month],
            ).fetchone()
            totals = con.execute(
                "SELECT bool_or(complete) FROM report_totals WHERE window_start = ?", [month]
            ).fetchone()
        assert found is not None and totals is not None
        return (*found, *totals)

    assert flags() == (False, False, 1, False)  # the window ended and settled: only the doubt says no
    running.sandbox.advance(timedelta(hours=2))  # its copy has served its hour: asked again
    _sync(running, tmp_path, networks=True)
    assert flags() == (True, False, 0, True)  # complete; final once its horizon has passed


def test_the_key_echoed_in_disguise_is_stored_nowhere(running: RunningSandbox, tmp_path: Path) -> None:
    running.sandbox.inject("echo_key", 1, "transactions")
    result = _sync(running, tmp_path)
    assert result.ok
    key = profiles(running)[0].secret_key.reveal()
    disguises = {
        "as it is": key,
        "hex": key.encode().hex(),
        "HEX": key.encode().hex().upper(),
        "reversed": key[::-1],
        "spaced": " ".join(key),
        "base64": base64.b64encode(key.encode()).decode().rstrip("="),
    }
    stored = _stored(tmp_path, PartitionKey.transactions(_day(running)))
    echoed = json.loads(str(stored[0]["extra"]))["debug"]
    assert set(echoed) == {"echo", "hex", "reversed", "spaced", "b64"}
    assert set(echoed.values()) == {"***"}  # every disguise masked, the rest of the row kept
    everything = json.dumps(stored, default=str) + (tmp_path / "lake/site=alpha/manifest.json").read_text()
    for part in (tmp_path / "lake").rglob("*.parquet"):  # and every file of the lake, read back in full
        everything += json.dumps(pq.read_table(part).to_pylist(), default=str)
    assert [name for name, text in disguises.items() if text in everything] == []
