"""Where the index rows of a ledger file version are: its month's pack, once the month settled, or a
file of its own (see `db/ledger_index.py`; `test_incremental.py` holds the figures they lead to)."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

from commerce_reports.contract import PartitionKey
from commerce_reports.db.ledger_index import PACKED_AFTER, IndexLayout


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
