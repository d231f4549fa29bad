"""`sql` and `query` run only a statement that reads: anything that writes a file, attaches,
installs or changes a setting is refused before it runs, whatever path it names, inside the lake too."""

from __future__ import annotations

import os
from pathlib import Path

import duckdb
import pytest

from commerce_reports.cli import main
from commerce_reports.cli.parser import USAGE
from commerce_reports.db import connect, query, stream
from commerce_reports.db.guard import read_only_statement
from commerce_reports.errors import ValidationError
from tests.db.conftest import SyncedLake


def _refusals(data_dir: Path, outside: Path) -> list[str]:
    rollup = next((data_dir / "rollups").rglob("*.parquet"))
    return [
        f"COPY (SELECT 1 AS revenue) TO '{rollup}' (FORMAT parquet)",  # a forged rollup, inside the lake
        f"COPY (SELECT * FROM transactions) TO '{data_dir / 'lake' / 'x.csv'}'",
        f"COPY (SELECT * FROM transactions) TO '{outside / 'stolen.csv'}'",
        f"EXPORT DATABASE '{data_dir / 'lake' / 'dump'}'",
        f"ATTACH '{data_dir / 'lake' / 'other.duckdb'}' AS other",
        "DETACH other",
        "INSTALL httpfs",
        "LOAD httpfs",
        "SET enable_external_access = true",
        "RESET allowed_directories",
        "PRAGMA enable_profiling",
        "CALL checkpoint()",
        "CREATE TABLE t AS SELECT 1",
        "CREATE OR REPLACE VIEW transactions AS SELECT 1",
        f"EXPLAIN ANALYZE COPY (SELECT 1) TO '{data_dir / 'lake' / 'e.csv'}'",
        "SELECT 1; COPY (SELECT 1) TO 'x.csv'",  # a second statement
        f"SELECT 1 -- harmless\n;\n/* then */ COPY (SELECT 1) TO '{data_dir / 'lake' / 'c.csv'}'",
        f"select 1;copy(select 1)to'{data_dir / 'lake' / 'd.csv'}'",  # no spaces
        "SELECT ';' AS a; SET threads = 1",  # a semicolon inside quotes, then a real one
        'SELECT 1 AS "x;"; PRAGMA version',
        "UPDATE EXTENSIONS",
        "  \n -- nothing but a comment",
        "SELEC 1",
    ]


def _files(folder: Path) -> dict[str, tuple[int, int]]:
    return {str(p): (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.rglob("*") if p.is_file()}


def test_writing_attaching_installing_and_setting_are_refused_before_they_run(
    synced: SyncedLake, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data_dir = synced.copy(tmp_path / "data")
    assert main(["rollups", "--data-dir", str(data_dir)]) == 0
    capsys.readouterr()
    before = _files(tmp_path)
    with connect(data_dir) as con:
        for sql in _refusals(data_dir, tmp_path):
            assert main(["sql", sql, "--data-dir", str(data_dir)]) == USAGE, sql  # nothing ran
            err = capsys.readouterr().err
            assert err.startswith("error: sql: ") and "Traceback" not in err, (sql, err)
            with pytest.raises(ValidationError, match=r"^sql: "):
                query(con, sql)
            with pytest.raises(ValidationError, match=r"^sql: "):
                next(stream(con, sql))
    assert _files(tmp_path) == before  # nothing written, replaced or touched
    assert main(["sql", "SELECT count(*) AS n FROM site_performance", "--data-dir", str(data_dir)]) == 0


@pytest.mark.parametrize(
    ("sql", "kept"),
    [
        ("SELECT 1 AS a;", "SELECT 1 AS a"),
        ("  WITH t AS (SELECT 1 AS a) SELECT a FROM t ;; ", "WITH t AS (SELECT 1 AS a) SELECT a FROM t"),
        ("FROM range(3)", "FROM range(3)"),
        ("/* a note */ SELECT 'COPY x TO y' AS text", "/* a note */ SELECT 'COPY x TO y' AS text"),
        ("DESCRIBE SELECT 1 AS a", "DESCRIBE SELECT 1 AS a"),
        ("SUMMARIZE SELECT 1 AS a", "SUMMARIZE SELECT 1 AS a"),
        ("VALUES (1), (2)", "VALUES (1), (2)"),
    ],
)
def test_every_kind_of_read_passes_as_one_statement(sql: str, kept: str) -> None:
    assert read_only_statement(sql) == kept
    assert duckdb.connect().sql(kept) is not None


def test_the_refusal_says_what_and_what_instead() -> None:
    with pytest.raises(ValidationError) as caught:
        read_only_statement("COPY (SELECT 1) TO 'x.csv'")
    assert "COPY statement" in str(caught.value) and "connect(read_only=False)" in str(caught.value)
    with pytest.raises(ValidationError, match="2 statements"):
        read_only_statement("SELECT 1; SELECT 2")
    for wrong in (None, 42, b"SELECT 1", ""):
        with pytest.raises(ValidationError, match="not a query"):
            read_only_statement(wrong)  # type: ignore[arg-type]
    assert not os.path.exists("x.csv")


def test_a_refused_statement_is_named_as_english_names_it() -> None:
    with pytest.raises(ValidationError, match="sql: is an ATTACH statement"):
        read_only_statement("ATTACH 'other.duckdb'")
    with pytest.raises(ValidationError, match="sql: is a COPY statement"):
        read_only_statement("COPY (SELECT 1) TO 'x.csv'")
