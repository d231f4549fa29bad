"""Where the index rows of a ledger file version are: its month's pack, once the month settled, or a
file of its own (see `db/ledger_index.py`; `test_incremental.py` holds the figures they lead to)."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pytest

from commerce_reports import activity
from commerce_reports.contract import TRANSACTION_SCHEMA, PartitionKey
from commerce_reports.db import connect, ledger_index, rebuild_rollups, refresh_rollups
from commerce_reports.db.ledger_index import PACKED_AFTER, IndexLayout
from commerce_reports.lake.manifest import store_partition


def _relpath(day: date) -> str:
    return f"{PartitionKey.transactions(day).relpath}/part.parquet"


def _ledger(first: date, last: date, digest: str = "a" * 64) -> dict[str, str]:
    days = (first + timedelta(days=n) for n in range((last - first).days + 1))
    return {_relpath(day): digest for day in days}


def test_a_month_s_versions_share_a_pack_once_it_ended_a_week_before_the_newest_day(tmp_path: Path) -> None:
    ready = date(2026, 3, 1) + PACKED_AFTER  # February ended March 1st
    early = IndexLayout(tmp_path, _ledger(date(2026, 1, 1), ready - timedelta(days=1)))
    assert early.packed == {"updateDate_2026-01"}
    later = IndexLayout(tmp_path, _ledger(date(2026, 1, 1), ready))
    assert later.packed == {"updateDate_2026-01", "updateDate_2026-02"}
    january, march = _relpath(date(2026, 1, 31)), _relpath(ready)
    assert later.target(january) == later.packs["updateDate_2026-01"]
    assert later.target(january).name.startswith("updateDate_2026-01.")
    assert later.target(march) == later.own(march) == tmp_path / f"updateDate_{ready}.{'a' * 24}.parquet"
    assert IndexLayout(tmp_path, {}).packed == frozenset()


def test_a_pack_is_named_by_the_versions_of_its_month_alone(tmp_path: Path) -> None:
    ledger = _ledger(date(2026, 1, 1), date(2026, 3, 20))
    before = IndexLayout(tmp_path, ledger)
    changed = IndexLayout(tmp_path, {**ledger, _relpath(date(2026, 2, 3)): "b" * 64})
    assert changed.packs["updateDate_2026-02"] != before.packs["updateDate_2026-02"]
    assert changed.packs["updateDate_2026-01"] == before.packs["updateDate_2026-01"]
    removed = IndexLayout(tmp_path, {r: d for r, d in ledger.items() if r != _relpath(date(2026, 1, 9))})
    assert removed.packs["updateDate_2026-01"] != before.packs["updateDate_2026-01"]
    assert removed.packs["updateDate_2026-02"] == before.packs["updateDate_2026-02"]


def test_a_version_s_rows_are_in_its_month_s_pack_else_the_pack_before_else_its_own_file(
    tmp_path: Path,
) -> None:
    """The pack of the versions now, where written; else, for a version unchanged, the pack of the
    versions before (a sibling changed and the month is not packed again yet); else its own file;
    else nowhere (a refresh stopped before indexing it: the caller reads the ledger file)."""
    ledger = _ledger(date(2026, 1, 1), date(2026, 3, 20))
    before = IndexLayout(tmp_path, ledger)
    sibling, changed = _relpath(date(2026, 1, 5)), _relpath(date(2026, 1, 6))
    now = IndexLayout(tmp_path, {**ledger, changed: "b" * 64})
    assert now.present([sibling, changed], before) == {sibling: None, changed: None}
    now.own(changed).touch()
    before.packs["updateDate_2026-01"].touch()
    assert now.present([sibling, changed], before) == {
        sibling: before.packs["updateDate_2026-01"],  # (the changed version is not in it)
        changed: now.own(changed),
    }
    now.packs["updateDate_2026-01"].touch()
    assert now.present([sibling, changed], before) == dict.fromkeys(
        [sibling, changed], now.packs["updateDate_2026-01"]
    )


def _sync_day(data_dir: Path, day: date, ids: list[str]) -> None:
    rows = [
        {
            "commission_id": cid,
            "commission_date": day,
            "update_date": day,
            "publisher_net_revenue": Decimal(n),
        }
        for n, cid in enumerate(ids, 1)
    ]
    table = pa.Table.from_pylist(rows, schema=TRANSACTION_SCHEMA)
    store_partition(data_dir, "s", PartitionKey.transactions(day), table, datetime.now(UTC))


def test_a_lake_indexed_day_by_day_packs_its_settled_months_at_its_next_refresh_saying_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A lake whose rollups a release before packs built (a file per ledger day): its next refresh
    packs every settled month at once (seconds per month at 100 M: said), from the index files it
    has, and leaves the days of a month not settled in files of their own."""
    monkeypatch.setattr(activity, "interactive", lambda: False)
    for day, ids in ((date(2026, 1, 5), ["a", "b"]), (date(2026, 1, 9), ["a"]), (date(2026, 2, 3), ["c"])):
        _sync_day(tmp_path, day, ids)
    with monkeypatch.context() as before_packs:
        before_packs.setattr(ledger_index, "PACKED_AFTER", timedelta(days=10_000))
        rebuild_rollups(tmp_path)
    index = tmp_path / "rollups" / "site=s" / "index"
    assert sorted(p.name.split(".")[0] for p in index.iterdir()) == [
        "updateDate_2026-01-05",
        "updateDate_2026-01-09",
        "updateDate_2026-02-03",
    ]
    capsys.readouterr()
    _sync_day(tmp_path, date(2026, 3, 20), ["b", "d"])  # January and February settled
    [done] = refresh_rollups(tmp_path, {"s": [PartitionKey.transactions(date(2026, 3, 20))]})
    assert not done.full
    said = capsys.readouterr().err.splitlines()
    assert said[0] == "packing the index of 2 settled months of site s ..."
    assert re.fullmatch(r"packing the index of 2 settled months of site s: done in \d+\.\d s", said[-1])
    assert sorted(p.name.split(".")[0] for p in index.iterdir()) == [
        "updateDate_2026-01",
        "updateDate_2026-02",
        "updateDate_2026-03-20",
    ]
    with connect(tmp_path) as con:  # b's January version found through January's pack
        counts = con.sql("SELECT commission_id, version_count, commission_date FROM transactions ORDER BY 1")
        assert counts.fetchall() == [
            ("a", 2, date(2026, 1, 9)),
            ("b", 2, date(2026, 3, 20)),
            ("c", 1, date(2026, 2, 3)),
            ("d", 1, date(2026, 3, 20)),
        ]
