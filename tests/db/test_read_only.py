"""`connect()` only reads, by construction: every probe that would write in the data folder (or
change what the connection's views say) is refused before it runs, through SQL or through DuckDB's
Python API, and reading works as on DuckDB's own connection."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pytest

from commerce_reports.db import connect
from commerce_reports.db.readonly import ReadOnlyConnection
from commerce_reports.errors import CommerceReportsError, LakeError
from tests.db.conftest import SyncedLake

Probe = Callable[[Any, Path], object]


def _sql_probes(folder: Path) -> dict[str, str]:
    lake, rollups, views = folder / "lake", folder / "rollups", folder / "views"
    rollup = next(rollups.rglob("site_performance/*.parquet"))
    return {
        "COPY into the lake": f"COPY (SELECT 1 AS a) TO '{lake}/site=alpha/x.parquet'",
        "COPY over a rollup": f"COPY (SELECT * FROM site_performance) TO '{rollup}'",
        "COPY over a manifest": f"COPY (SELECT 1 AS a) TO '{lake}/site=alpha/manifest.json' (FORMAT csv)",
        "COPY over views/current.json": f"COPY (SELECT 1 AS a) TO '{views}/current.json' (FORMAT csv)",
        "ATTACH a new file in lake/": f"ATTACH '{lake}/new.duckdb' AS other",
        "EXPORT DATABASE": f"EXPORT DATABASE '{lake}/exported'",
        "IMPORT DATABASE": f"IMPORT DATABASE '{lake}'",
        "CREATE OR REPLACE VIEW": "CREATE OR REPLACE VIEW transactions AS SELECT 1 AS commission_id",
        "CREATE TABLE": "CREATE TABLE t AS SELECT 1",
        "CREATE MACRO": "CREATE MACRO m() AS 1",
        "DROP VIEW": "DROP VIEW site_performance",
        "INSTALL": "INSTALL httpfs",
        "LOAD": "LOAD httpfs",
        "SET": "SET enable_external_access = true",
        "PRAGMA": "PRAGMA enable_profiling",
        "CALL": "CALL pragma_version()",
        "two statements": f"SELECT 1; COPY (SELECT 1 AS a) TO '{lake}/two.csv'",
        "a statement after a comment": f"SELECT 1 /* ; */; COPY (SELECT 1 AS a) TO '{lake}/c.csv'",
        "EXPLAIN ANALYZE COPY": f"EXPLAIN ANALYZE COPY (SELECT 1 AS a) TO '{lake}/e.csv'",
        "COPY inside query()": f"SELECT * FROM query('COPY (SELECT 1 AS a) TO ''{lake}/q.csv''')",
        "DETACH": "DETACH memory",
        "CHECKPOINT": "CHECKPOINT",
    }


def _api_probes(folder: Path) -> dict[str, Probe]:
    lake = folder / "lake"
    frame = pl.DataFrame({"commission_id": ["forged"]})
    return {
        "relation.write_parquet": lambda con, _: con.sql("SELECT 1 AS a").write_parquet(f"{lake}/w.parquet"),
        "relation.to_csv": lambda con, _: con.sql("SELECT 1 AS a").to_csv(f"{lake}/w.csv"),
        "relation.create": lambda con, _: con.sql("SELECT 1 AS a").create("t"),
        "relation.create_view": lambda con, _: con.sql("SELECT 1 AS a").create_view("transactions"),
        "relation.to_table": lambda con, _: con.sql("SELECT 1 AS a").to_table("t"),
        "relation.insert_into": lambda con, _: con.sql("SELECT 1 AS a").insert_into("t"),
        "relation.query(COPY)": lambda con, _: con.sql("SELECT 1 AS a").query(
            "r", f"COPY r TO '{lake}/r.csv'"
        ),
        "relation._con": lambda con, _: con.sql("SELECT 1 AS a")._con,
        "install_extension": lambda con, _: con.install_extension("httpfs"),
        "load_extension": lambda con, _: con.load_extension("httpfs"),
        "register over a view": lambda con, _: con.register("transactions", frame),
        "append": lambda con, _: con.append("transactions", frame.to_pandas()),
        "checkpoint": lambda con, _: con.checkpoint(),
        "from_query(COPY)": lambda con, _: con.from_query(f"COPY (SELECT 1 AS a) TO '{lake}/f.csv'"),
        "executemany(COPY)": lambda con, _: con.executemany(f"COPY (SELECT 1 AS a) TO '{lake}/m.csv'", []),
        "a cursor's COPY": lambda con, _: con.cursor().execute(f"COPY (SELECT 1 AS a) TO '{lake}/k.csv'"),
    }


def _tree(folder: Path) -> dict[str, str]:
    """Every file below `folder` with the digest of its bytes."""
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def test_every_write_probe_through_connect_is_refused_and_nothing_changes(
    rolled: SyncedLake, tmp_path: Path
) -> None:
    folder = rolled.copy(tmp_path)  # rollups built and published, as after a sync
    before = _tree(folder)
    assert any(name.startswith("rollups/") for name in before) and "views/current.json" in before
    accepted: list[str] = []
    with connect(folder) as con:
        assert isinstance(con, ReadOnlyConnection)
        revenue = con.sql("SELECT sum(revenue) FROM site_performance").fetchall()
        probes = [(f"sql: {name}", lambda c, _, q=q: c.sql(q)) for name, q in _sql_probes(folder).items()]
        probes += [
            (f"execute: {name}", lambda c, _, q=q: c.execute(q)) for name, q in _sql_probes(folder).items()
        ]
        probes += list(_api_probes(folder).items())
        for name, probe in probes:
            try:
                probe(con, folder)
            except (CommerceReportsError, duckdb.Error):
                continue
            accepted.append(name)
        assert con.sql("SELECT sum(revenue) FROM site_performance").fetchall() == revenue
        assert con.sql("SELECT count(*) FROM transactions WHERE commission_id = 'forged'").fetchall() == [
            (0,)
        ]
    assert accepted == []
    assert len(probes) >= 60
    assert _tree(folder) == before  # not a byte written anywhere in the data folder


def test_reading_works_as_on_duckdbs_own_connection(synced: SyncedLake) -> None:
    with connect(synced.data_dir) as con:
        frame = con.sql(
            "SELECT site, sum(revenue) AS revenue FROM site_performance GROUP BY 1 ORDER BY 1"
        ).pl()
        assert frame["site"].to_list() == ["alpha", "beta"]
        assert con.execute("SELECT count(*) FROM transactions WHERE site = ?", ["alpha"]).fetchall()[0][0] > 0
        relation = con.sql("SELECT * FROM transactions").filter("site = 'beta'").limit(3)
        assert len(relation.fetchall()) == 3 and "commission_id" in relation.columns
        con.execute("BEGIN")  # several statements over one state of the lake
        first = con.execute("SELECT count(*) FROM transaction_versions").fetchall()
        assert con.execute("SELECT count(*) FROM transaction_versions").fetchall() == first
        con.execute("COMMIT")
        with con.cursor() as cursor:
            assert cursor.sql("SELECT 42").fetchall() == [(42,)]
            with pytest.raises(CommerceReportsError):
                cursor.execute("CREATE TABLE t AS SELECT 1")
        con.register("mine", pl.DataFrame({"x": [1, 2]}))
        assert con.sql("SELECT sum(x) FROM mine").fetchall() == [(3,)]


@pytest.mark.parametrize("what", ["missing", "no lake"])
def test_a_folder_that_does_not_exist_or_holds_no_lake_is_an_error(tmp_path: Path, what: str) -> None:
    folder = tmp_path / "nowhere" if what == "missing" else tmp_path
    (tmp_path / "notes.txt").write_text("a folder of other things")  # an empty one is a lake not synced yet
    with pytest.raises(LakeError, match="there is no folder" if what == "missing" else "holds no lake"):
        connect(folder)
    assert not (tmp_path / "nowhere").exists()
