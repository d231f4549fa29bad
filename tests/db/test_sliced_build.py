"""A full build in slices (ids by hash for `transactions`, months for the other rollups, as a large
lake is built, each slice's stored transactions read from their files) writes the rollups that the
build in one statement each writes (its stored transactions read into memory once)."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from commerce_reports.db import build, rebuild_rollups
from commerce_reports.db.state import rollups_root
from tests.db.conftest import SyncedLake


def _rollups(data_dir: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every rollup file of `data_dir` (by its path below the rollups, the index files apart: they
    hold hashes), its rows sorted."""
    root = rollups_root(data_dir)
    files = sorted(p for p in root.rglob("*.parquet") if "index" not in p.relative_to(root).parts)
    with duckdb.connect() as con:
        return {
            str(p.relative_to(root)): con.execute(
                f"SELECT * FROM read_parquet('{p}') ORDER BY ALL"
            ).fetchall()
            for p in files
        }


def test_a_build_in_slices_writes_the_rollups_of_a_build_in_one(
    synced: SyncedLake, rolled: SyncedLake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    one = rolled.data_dir  # the rollups of a build in one
    sliced = synced.copy(tmp_path / "sliced")
    months = len(list((rollups_root(one) / "site=alpha" / "transactions" / "base").glob("whole-*")))
    assert months >= 3
    slicing = {"ids": 0, "months": 0}
    id_buckets, month_slices = build.SiteBuild._id_buckets, build.SiteBuild._month_slices

    def count_ids(self: build.SiteBuild, ledger: list[str]) -> int:
        found = id_buckets(self, ledger)
        slicing["ids"] = max(slicing["ids"], found)
        return found

    def count_months(self: build.SiteBuild, base: list[Path]) -> list[tuple[set[str], int]]:
        found = month_slices(self, base)
        slicing["months"] = max(slicing["months"], len(found))
        return found

    monkeypatch.setattr(build, "SLICE_ROWS", 200)  # a lake of some 2,000 versions a site
    monkeypatch.setattr(build, "IN_MEMORY_ROWS", 0)  # each slice read from its files (the one: from memory)
    monkeypatch.setattr(build.SiteBuild, "_id_buckets", count_ids)
    monkeypatch.setattr(build.SiteBuild, "_month_slices", count_months)
    rebuild_rollups(sliced)
    assert slicing["ids"] > 3 and slicing["months"] >= months  # it was built in slices
    expected = _rollups(one)
    assert len(expected) > 20
    assert _rollups(sliced) == expected
    assert not list(rollups_root(sliced).rglob(".slices-*"))  # the slices' files are gone
