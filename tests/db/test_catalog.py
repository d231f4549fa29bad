"""The catalog file: read by the real DuckDB CLI from PyPI, from any folder, repaired after a move,
and rewritten only when its views change."""

from __future__ import annotations

import shutil
import subprocess
import sys
from datetime import UTC, date, datetime
from pathlib import Path

import duckdb
import pytest

from commerce_reports.cli import main
from commerce_reports.contract import PartitionKey
from commerce_reports.db import CATALOG_FILE, catalog_problem, refresh_rollups, write_catalog
from commerce_reports.lake.store import write_partition
from tests.db.conftest import SyncedLake
from tests.db.test_access import _table, _version

DUCKDB_CLI = Path(sys.executable).with_name("duckdb")  # the `duckdb-cli` wheel's binary
if not DUCKDB_CLI.exists():
    DUCKDB_CLI = Path(shutil.which("duckdb") or DUCKDB_CLI)


def _cli_count(catalog: Path, cwd: Path) -> int:
    """`duckdb -readonly <catalog> -c "SELECT count(*) FROM network_performance"`, run from `cwd`."""
    done = subprocess.run(
        [
            str(DUCKDB_CLI),
            "-readonly",
            str(catalog),
            "-csv",
            "-c",
            "SELECT count(*) FROM network_performance",
        ],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return int(done.stdout.split()[-1])


@pytest.mark.skipif(
    not DUCKDB_CLI.exists(), reason="the duckdb CLI (pip install duckdb-cli) is not installed"
)
def test_the_duckdb_cli_reads_the_catalog_from_anywhere_and_after_a_move(
    synced: SyncedLake, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data_dir = synced.copy(tmp_path / "data")
    refresh_rollups(data_dir)
    catalog = write_catalog(data_dir)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    with duckdb.connect(str(catalog), read_only=True) as reader:
        expected = reader.execute("SELECT count(*) FROM network_performance").fetchone()
    assert expected is not None and expected[0] > 0
    assert _cli_count(catalog, cwd=elsewhere) == expected[0]

    moved = tmp_path / "moved"
    data_dir.rename(moved)
    problem = catalog_problem(moved)
    assert problem is not None and "moved" in problem and "commerce-reports catalog" in problem
    assert main(["sql", "SELECT 1 AS one", "--data-dir", str(moved)]) == 0  # the next command repairs it
    capsys.readouterr()
    assert catalog_problem(moved) is None
    assert _cli_count(moved / CATALOG_FILE, cwd=elsewhere) == expected[0]


def test_the_catalog_is_rewritten_only_when_its_views_change(synced: SyncedLake, tmp_path: Path) -> None:
    data_dir = synced.copy(tmp_path)
    refresh_rollups(data_dir)
    first = write_catalog(data_dir).stat()
    assert write_catalog(data_dir).stat().st_ino == first.st_ino  # nothing changed: not rewritten
    day = date(2026, 3, 9)  # a day stored again, as a sync does, then the rollups refreshed
    table = _table(_version("late", day, 5.0, 50.0))
    write_partition(data_dir, "alpha", PartitionKey.transactions(day), table, datetime.now(UTC))
    refresh_rollups(data_dir)
    assert write_catalog(data_dir).stat().st_ino == first.st_ino
    # the same partition changed again but its rollups not refreshed: alpha reads the lake now
    write_partition(data_dir, "alpha", PartitionKey.transactions(day), table, datetime.now(UTC))
    assert catalog_problem(data_dir) is not None
    assert write_catalog(data_dir).stat().st_ino != first.st_ino
    assert catalog_problem(data_dir) is None
