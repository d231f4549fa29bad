"""The catalog file: read by the real DuckDB CLI from PyPI, from any folder, repaired after a move,
and rewritten only when its views change."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from datetime import UTC, date, datetime
from pathlib import Path

import duckdb
import pytest

from commerce_reports.contract import PartitionKey
from commerce_reports.db import CATALOG_FILE, catalog_problem, refresh_rollups, write_catalog
from commerce_reports.lake.manifest import store_partition
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
def test_a_copied_data_folder_reads_its_own_files_from_anywhere(rolled: SyncedLake, tmp_path: Path) -> None:
    data_dir = rolled.copy(tmp_path / "data")  # rollups built and published, as a sync leaves them
    catalog = write_catalog(data_dir)
    with duckdb.connect(str(catalog), read_only=True) as reader:
        expected = reader.execute("SELECT count(*) FROM network_performance").fetchone()
    assert expected is not None and expected[0] > 0
    assert _cli_count(catalog, cwd=Path("/")) == expected[0]
    assert _cli_count(Path(CATALOG_FILE), cwd=data_dir) == expected[0]  # a relative path works too

    copy = tmp_path / "copy"
    shutil.copytree(data_dir, copy, symlinks=True)
    opened = _files_opened(copy / CATALOG_FILE, cwd=Path("/"))  # while the original still exists
    assert opened and not [f for f in opened if f.startswith(str(data_dir))]
    assert any(f.startswith(str(copy / "views")) for f in opened)
    shutil.rmtree(data_dir)
    assert _cli_count(copy / CATALOG_FILE, cwd=Path("/")) == expected[0]
    assert catalog_problem(copy) is None  # a moved folder needs no repair


def _files_opened(catalog: Path, cwd: Path) -> list[str]:
    """Every file the DuckDB CLI opens to answer a query over the catalog (strace)."""
    strace = shutil.which("strace")
    if strace is None:
        pytest.skip("strace is not installed (Debian: apt-get install strace)")
    log = catalog.parent.parent / "strace.log"
    command = [str(DUCKDB_CLI), "-readonly", str(catalog), "-c", "SELECT count(*) FROM network_performance"]
    done = subprocess.run(
        [strace, "-f", "-qq", "-e", "trace=open,openat,stat,newfstatat", "-o", str(log), *command],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return re.findall(r'"(/[^"]+\.parquet)"', log.read_text())


def test_the_catalog_names_how_to_open_it_when_attached_elsewhere(synced: SyncedLake, tmp_path: Path) -> None:
    data_dir = synced.copy(tmp_path)
    catalog = write_catalog(data_dir)
    with duckdb.connect() as con:
        con.execute(f"ATTACH '{catalog}' AS c (READ_ONLY)")
        with pytest.raises(duckdb.Error, match="commerce-reports catalog --data-dir"):
            con.execute("SELECT count(*) FROM c.network_performance").fetchall()


def test_the_catalog_is_rewritten_only_when_its_views_change(rolled: SyncedLake, tmp_path: Path) -> None:
    data_dir = rolled.copy(tmp_path)  # rollups built and published, as a sync leaves them
    first = write_catalog(data_dir).stat()
    assert write_catalog(data_dir).stat().st_ino == first.st_ino  # nothing changed: not rewritten
    day = date(2026, 3, 9)  # a day stored again, as a sync does
    table = _table(_version("late", day, 5.0, 50.0))
    store_partition(data_dir, "alpha", PartitionKey.transactions(day), table, datetime.now(UTC))
    assert catalog_problem(data_dir) is None  # the views read the state last published
    refresh_rollups(data_dir)  # the writer is done: a new state is published
    assert catalog_problem(data_dir) is not None
    second = write_catalog(data_dir).stat()
    assert second.st_ino != first.st_ino and catalog_problem(data_dir) is None
    assert write_catalog(data_dir).stat().st_ino == second.st_ino


def test_verify_writes_the_catalog_of_what_it_published(rolled: SyncedLake, tmp_path: Path) -> None:
    """`verify` published a generation without the quarantined file, and `commerce.duckdb` went on
    reading the one before (the quarantined bytes, through its links, as complete), until that was
    pruned and every query of the DuckDB command line failed: the README names `verify` as the
    remedy for its users. It writes the catalog of what it publishes."""
    from commerce_reports.api import verify

    data_dir = rolled.copy(tmp_path)
    catalog = write_catalog(data_dir)

    def read() -> tuple[object, ...] | None:
        with duckdb.connect(str(catalog), read_only=True) as reader:
            return reader.execute(
                "SELECT commerce_generation(), count(*) FROM transactions WHERE site = 'alpha'"
            ).fetchone()

    before = read()
    assert before is not None
    gone = next((data_dir / "lake" / "site=alpha" / "transactions").rglob("part.parquet"))
    with duckdb.connect() as con:  # (not the module's shared one: a fetchone leaves its result open)
        held = con.execute(f"SELECT count(*) FROM read_parquet('{gone}')").fetchone()
    gone.unlink()
    report = verify(data_dir=data_dir)
    assert not report.ok and catalog_problem(data_dir) is None
    after = read()
    assert after is not None and held is not None
    assert after[0] != before[0] and after[1] == before[1] - held[0]  # type: ignore[operator]


def test_a_new_generation_moves_only_the_catalogs_macros(rolled: SyncedLake, tmp_path: Path) -> None:
    """A sync that changes figures but not which files the views read defines the macros again
    (the generation, the coverage) and keeps every view's SQL: the catalog answers the new figures
    and the new coverage, and a query cannot tell it from one written whole."""
    data_dir = rolled.copy(tmp_path)  # rollups built and published, as a sync leaves them
    catalog = write_catalog(data_dir)
    question = (
        "SELECT count(*) FILTER (WHERE commission_id = 'late'), "
        "(SELECT count(*) FILTER (WHERE complete) FROM daily_performance) FROM transactions"
    )

    def views_and_answer() -> tuple[list[tuple[str, str]], tuple[object, ...] | None]:
        with duckdb.connect(str(catalog), read_only=True) as reader:
            views = reader.execute(
                "SELECT view_name, sql FROM duckdb_views() WHERE NOT internal ORDER BY schema_name, view_name"
            ).fetchall()
            return views, reader.execute(question).fetchone()

    views, before = views_and_answer()
    assert before is not None and before[0] == 0
    day = date(2026, 3, 10)  # the last day, stored again and settled: the coverage grows by it
    late = _table({**_version("late", day, 5.0, 50.0), "commission_date": day})
    store_partition(data_dir, "alpha", PartitionKey.transactions(day), late, datetime.now(UTC), settled=True)
    refresh_rollups(data_dir)
    write_catalog(data_dir)
    assert catalog_problem(data_dir) is None
    after, answer = views_and_answer()
    assert after == views  # not one view was created again
    written_whole = write_catalog(data_dir, force=True)
    with duckdb.connect(str(written_whole), read_only=True) as reader:
        assert reader.execute(question).fetchone() == answer
    assert answer is not None and answer[0] == 1 and answer[1] == before[1] + 1
