"""A refresh carries out its plan, and a plan shown (`plan_rollups`, `rollups --plan`) writes nothing."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from commerce_reports.cli import main
from commerce_reports.contract import TRANSACTION_SCHEMA, PartitionKey
from commerce_reports.db import plan_rollups, refresh_rollups
from commerce_reports.db.build import SiteBuild
from commerce_reports.db.plan import DELTA, NOTHING, UPDATE, WHOLE
from commerce_reports.lake.manifest import store_partition
from tests.conftest import FullRebuildFallbacks

FIRST = date(2026, 3, 1)


def _day(data_dir: Path, day: date, *sales: tuple[str, date, str]) -> None:
    """Store the updateDate day `day` holding `sales` (id, commission day, revenue)."""
    rows = [
        {
            "commission_id": cid,
            "commission_date": earned,
            "update_date": day,
            "publisher_net_revenue": Decimal(revenue),
            "order_value": Decimal(revenue) * 10,
            "network": "N",
            "link_url": "https://shop.example/a",
            "products": [],
        }
        for cid, earned, revenue in sales
    ]
    at = datetime.combine(day, datetime.min.time(), UTC) + timedelta(hours=12)
    store_partition(
        data_dir, "s", PartitionKey.transactions(day), pa.Table.from_pylist(rows, TRANSACTION_SCHEMA), at
    )


@pytest.fixture
def lake(tmp_path: Path) -> Path:
    """Three days, built whole; then a fourth day stored: a sale, and a return of the first one."""
    _day(tmp_path, FIRST, ("a", FIRST, "10"), ("b", FIRST, "20"))
    _day(tmp_path, FIRST + timedelta(days=1), ("c", FIRST + timedelta(days=1), "30"))
    _day(tmp_path, FIRST + timedelta(days=2))
    refresh_rollups(tmp_path)
    _day(tmp_path, FIRST + timedelta(days=3), ("a", FIRST, "0"), ("d", FIRST + timedelta(days=3), "5"))
    return tmp_path


def _files(folder: Path) -> dict[str, int]:
    return {str(p.relative_to(folder)): p.stat().st_mtime_ns for p in folder.rglob("*") if p.is_file()}


def test_a_plan_shown_writes_nothing_and_is_the_plan_the_refresh_carries_out(lake: Path) -> None:
    before = _files(lake)
    [plan] = plan_rollups(lake)
    assert _files(lake) == before
    assert (plan.action, plan.changes) == (
        UPDATE,
        {"transactions/by=updateDate/day=2026-03-04/part.parquet": "added"},
    )
    steps = {(s.rollup, s.bucket): s.action for s in plan.steps}
    assert steps[("transactions", "2026-03-04")] == WHOLE  # a day first seen: a file of its own
    assert steps[("transactions", "2026-03")] == "patch"  # the return of a, earned on a day built whole
    assert steps[("site_performance", "2026-03")] == DELTA
    [done] = refresh_rollups(lake)
    assert done.plan == plan and done.months == ("2026-03",) and not done.full
    assert plan_rollups(lake)[0].action == NOTHING


def test_the_command_prints_the_plan_and_writes_nothing(
    lake: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _files(lake)
    assert main(["rollups", "--plan", "--data-dir", str(lake)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "rollups of s: update (1 lake files changed)"
    assert out[1] == "  added: transactions/by=updateDate/day=2026-03-04/part.parquet"
    day = "  transactions             2026-03-04   whole    "
    assert f"{day}first seen since the last full build: a file of its own" in out
    assert _files(lake) == before


@pytest.mark.expects_full_rebuild
def test_an_update_that_fails_is_rebuilt_whole_and_said(
    lake: Path, monkeypatch: pytest.MonkeyPatch, full_rebuild_fallbacks: FullRebuildFallbacks
) -> None:
    """The views stay true (the rollups are rebuilt whole), and the fallback is told: a test that
    does not expect it fails (`tests/conftest.py`)."""

    def fail(self: SiteBuild, plan: object) -> None:
        raise duckdb.BinderException("a merge that does not bind")

    monkeypatch.setattr(SiteBuild, "write", fail)
    [done] = refresh_rollups(lake)
    assert done.full and done.plan.reason == "asked to rebuild them whole"
    assert full_rebuild_fallbacks.found == [
        "the rollups of site s could not be updated (a merge that does not bind): rebuilding them whole"
    ]


def test_an_update_that_ctrl_c_interrupted_stops_and_is_not_rebuilt(
    lake: Path, monkeypatch: pytest.MonkeyPatch, full_rebuild_fallbacks: FullRebuildFallbacks
) -> None:
    """A query that a command's Ctrl-C watcher interrupted (`interrupts.py`) ends with DuckDB's
    InterruptException, a `duckdb.Error`: the refresh stops as for any Ctrl-C, with no fallback."""

    def interrupted(self: SiteBuild, plan: object) -> None:
        raise duckdb.InterruptException("INTERRUPT Error: Interrupted!")

    monkeypatch.setattr(SiteBuild, "write", interrupted)
    with pytest.raises(KeyboardInterrupt):
        refresh_rollups(lake)
    assert full_rebuild_fallbacks.found == []
    monkeypatch.undo()
    [done] = refresh_rollups(lake)  # the next refresh carries the update out
    assert done.plan.action == UPDATE and not done.full
