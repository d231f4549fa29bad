"""The views stay inside the lake, agree with each other in a connection kept open through syncs,
survive a damaged partition, and print numbers a spreadsheet can take as they are."""

from __future__ import annotations

import dataclasses
import logging
import re
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import duckdb
import polars as pl
import pytest

from commerce_reports.cli import main
from commerce_reports.cli.parser import USAGE
from commerce_reports.contract import PartitionKey
from commerce_reports.db import VIEWS, connect, fresh_rollups, query, refresh_rollups, write_catalog
from commerce_reports.db.recompute import rollup_differences
from commerce_reports.db.state import SiteState, load_state, rollup_files, save_state, site_places
from commerce_reports.errors import LakeError, ValidationError
from commerce_reports.lake.manifest import store_partition
from tests.db.conftest import SyncedLake
from tests.db.test_access import _table, _version


def test_sql_reaches_nothing_outside_the_data_folder(
    synced: SyncedLake, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outside = tmp_path / "stolen.csv"
    data = ["--data-dir", str(synced.data_dir)]
    for sql in (
        f"COPY (SELECT * FROM transactions) TO '{outside}'",
        f"ATTACH '{tmp_path / 'other.duckdb'}' AS other",
        "SELECT * FROM read_text('/etc/passwd')",
        "SET enable_external_access = true",
    ):
        assert main(["sql", sql, *data]) in (1, USAGE), sql  # refused before it runs, or by DuckDB
        err = capsys.readouterr().err
        assert err.startswith("error: ") and "Traceback" not in err
        assert "read only the data folder" in err or "only read" in err, err
    assert not outside.exists() and not (tmp_path / "other.duckdb").exists()
    target = tmp_path / "out.json"  # --output writes through the toolkit, not DuckDB
    assert (
        main(["sql", "SELECT site FROM site_performance", "--format", "json", "--output", str(target), *data])
        == 0
    )
    assert target.read_text().startswith("[{")


def test_connect_read_only_false_is_the_full_engine(synced: SyncedLake, tmp_path: Path) -> None:
    data_dir = synced.copy(tmp_path / "data")
    with connect(data_dir) as con, pytest.raises(LakeError, match="read only the data folder"):
        query(con, "SELECT * FROM read_text('/etc/hostname')")
    target = tmp_path / "copy.csv"
    with connect(data_dir, read_only=False) as con:
        con.execute(f"COPY (SELECT site, revenue FROM site_performance) TO '{target}'")
    assert target.read_text().startswith("site,revenue")


def _agree(con: object) -> tuple[int, int]:
    """Current transactions, and the distinct ids among the stored versions, on one connection."""
    rows = query(con, "SELECT count(*) AS n FROM transactions")["n"][0]  # type: ignore[arg-type]
    ids = query(
        con,  # type: ignore[arg-type]
        "SELECT count(DISTINCT (site, commission_id)) AS n FROM transaction_versions "
        "WHERE commission_id IS NOT NULL",
    )["n"][0]
    return int(rows), int(ids)


def test_a_connection_kept_open_through_a_sync_never_contradicts_itself(
    rolled: SyncedLake, tmp_path: Path
) -> None:
    data_dir = rolled.copy(tmp_path)  # rollups built and published, as a sync leaves them
    con = connect(data_dir)
    try:
        before, ids = _agree(con)
        assert before == ids and fresh_rollups(data_dir) == ["alpha", "beta"]
        for n in range(3):  # a sync stores three more days: new transactions and a return
            day = date(2026, 3, 11) + timedelta(days=n)
            rows = [_version(f"new-{n}-{k}", day, 10.0, 100.0) for k in range(4)]
            rows.append(_version("returned-later", day, -5.0 * n, 10.0))
            store_partition(
                data_dir, "alpha", PartitionKey.transactions(day), _table(*rows), datetime.now(UTC)
            )
            # the writer is at work: the views read the state it last published, whole
            assert _agree(con) == (before, ids)
        refresh_rollups(data_dir)  # done: it publishes the lake and its rollups
        during = _agree(con)
        assert during[0] == during[1] == before + 13 and fresh_rollups(data_dir) == ["alpha", "beta"]
        revenue = query(con, "SELECT round(sum(revenue), 2) AS r FROM daily_performance")["r"][0]
        assert (
            revenue
            == query(con, "SELECT round(sum(publisher_net_revenue), 2) AS r FROM transactions")["r"][0]
        )
    finally:
        con.close()


def test_a_damaged_partition_is_left_out_and_named_never_a_crash(
    rolled: SyncedLake, tmp_path: Path, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    data_dir = rolled.copy(tmp_path)  # rollups built and published, as a sync leaves them
    cut = data_dir / "lake/site=alpha" / PartitionKey.transactions(date(2026, 2, 3)).relpath / "part.parquet"
    cut.write_bytes(cut.read_bytes()[: cut.stat().st_size // 2])  # cut short, as a full disk leaves it
    garbled = (
        data_dir / "lake/site=beta" / PartitionKey.transactions(date(2026, 2, 4)).relpath / "part.parquet"
    )
    body = bytearray(garbled.read_bytes())
    body[100:-200] = bytes(len(body) - 300)  # whole frame, unreadable content
    garbled.write_bytes(bytes(body))
    with caplog.at_level(logging.WARNING):
        done = {r.site: r for r in refresh_rollups(data_dir)}
    assert list(done["alpha"].skipped) == ["transactions/by=updateDate/day=2026-02-03/part.parquet"]
    assert list(done["beta"].skipped) == ["transactions/by=updateDate/day=2026-02-04/part.parquet"]
    for why in (*done["alpha"].skipped.values(), *done["beta"].skipped.values()):
        assert "not what the sync stored" in why  # its digest is not its manifest entry's
    assert (
        str(cut) in caplog.text and str(garbled) in caplog.text and "commerce-reports verify" in caplog.text
    )
    assert fresh_rollups(data_dir) == ["alpha", "beta"]  # what is readable is rolled up
    write_catalog(data_dir)
    assert main(["sql", "SELECT count(*) AS n FROM transaction_versions", "--data-dir", str(data_dir)]) == 0
    assert int(capsys.readouterr().out.split("│")[-2].strip()) > 0
    with connect(data_dir) as con:
        assert query(con, "SELECT count(*) AS n FROM transactions")["n"][0] > 0


def test_sql_prints_cents_integers_and_whole_lines(
    synced: SyncedLake, synced_con: duckdb.DuckDBPyConnection, capsys: pytest.CaptureFixture[str]
) -> None:
    data = ["--data-dir", str(synced.data_dir)]
    sql = (
        "SELECT 299902.75000000006::DOUBLE AS revenue, 0.1::DOUBLE + 0.2 AS return_rate, "
        "0.261602316::DOUBLE AS epc, 0.138468::DOUBLE AS revenue_change, "
        "sum(transactions) AS n FROM site_performance"
    )
    assert main(["sql", sql, "--format", "csv", *data]) == 0
    header, row = capsys.readouterr().out.splitlines()
    assert header == "revenue,return_rate,epc,revenue_change,n"
    # the float noise gone, every figure kept: an EPC or a change is no money to round to the cent
    assert row.startswith("299902.75,0.3,0.261602316,0.138468,") and row.split(",")[4].isdigit()
    assert main(["sql", sql, "--format", "json", *data]) == 0
    assert capsys.readouterr().out.endswith("}]\n")
    assert query(synced_con, sql).schema["n"] == pl.Int64
    for view in VIEWS:  # counts are integers; decimals are money, of 4 places
        types = {str(t) for t in synced_con.sql(f"SELECT * FROM {view} LIMIT 0").types}
        assert not {t for t in types if t.startswith("HUGEINT") or t.endswith(",0)")}, view
        assert {t for t in types if t.startswith("DECIMAL")} <= {"DECIMAL(18,4)", "DECIMAL(38,4)"}, view
    assert main(["sql", "SELECT revenue FROM site_performance LIMIT 1", "--format", "csv", *data]) == 0
    assert re.fullmatch(r"revenue\n-?[0-9]+\.[0-9]{4}\n", capsys.readouterr().out)  # exact, to the digit


def test_bad_arguments_are_toolkit_errors(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="changed"):
        refresh_rollups(tmp_path, changed=["alpha"])  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="PartitionKey"):
        refresh_rollups(tmp_path, changed={"alpha": ["2026-01-01"]})  # type: ignore[dict-item]
    with pytest.raises(ValidationError, match="site"):
        refresh_rollups(tmp_path, changed={"Not A Site": []})
    with pytest.raises(ValidationError, match="read_only"):
        connect(tmp_path, read_only="no")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="data_dir"):
        connect(42)  # type: ignore[arg-type]
    with connect(tmp_path) as con, pytest.raises(ValidationError, match="sql"):
        query(con, "  ")


def test_a_forged_rollup_is_never_read_and_verify_rebuilds_it(
    rolled: SyncedLake, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data_dir = rolled.copy(tmp_path)  # rollups built and published, as a sync leaves them
    sql = "SELECT round(sum(revenue), 2) AS r FROM site_performance"
    with connect(data_dir) as con:
        honest = query(con, sql)["r"][0]
        month = sorted((data_dir / "rollups/site=alpha/site_performance").glob("2026-*.parquet"))[0]
        with duckdb.connect() as forger:  # a COPY ... TO inside the lake, as the sql command once allowed
            forger.execute(
                f"COPY (SELECT * REPLACE (revenue * 1000 AS revenue) FROM read_parquet('{month}')) "
                f"TO '{month}' (FORMAT parquet)"
            )
        assert fresh_rollups(data_dir) == ["beta"]  # alpha's rollups are no longer the ones built
        assert main(["verify", "--data-dir", str(data_dir)]) == 1
        said = capsys.readouterr().out
        assert "rollups of alpha: rollup files differ from what their refresh wrote" in said
        assert "site_performance/" in said
        assert fresh_rollups(data_dir) == ["alpha", "beta"]
        assert query(con, sql)["r"][0] == honest
    assert main(["verify", "--data-dir", str(data_dir)]) == 0


def test_a_rollup_forged_with_its_record_passes_verify_and_verify_deep_finds_and_rebuilds_it(
    rolled: SyncedLake, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A rollup file forged and its digest written into the rollups' state with it: `verify`
    checks a file against that record, and vouches for it (the views then read the forgery).
    `verify --deep` computes the rollups again from the lake and compares them row for row."""
    data_dir = rolled.copy(tmp_path)
    sql = "SELECT round(sum(revenue), 2) AS r FROM site_performance"
    with connect(data_dir) as con:
        honest = query(con, sql)["r"][0]
    places = site_places(data_dir, "alpha")
    month = sorted(places.views["site_performance"].glob("2026-*.parquet"))[0]
    with duckdb.connect() as forger:
        forger.execute(
            f"COPY (SELECT * REPLACE (revenue * 1000 AS revenue) FROM read_parquet('{month}')) "
            f"TO '{month}' (FORMAT parquet)"
        )
    state = load_state(places)
    assert state is not None
    save_state(places, dataclasses.replace(state, files=rollup_files(places, read_all=True)))  # its record
    assert main(["verify", "--data-dir", str(data_dir)]) == 0  # (what a check against the record sees)
    said = capsys.readouterr()
    assert "all intact" in said.out
    # each reading step said as it runs (9 s in silence for the 1 M bench lake, minutes at 100 M): a
    # counting line, or (no terminal, no notebook) a line as it starts; and one when it ends, either way
    for step in ("every partition", "every rollup file"):
        assert f"reading {step} by content ..." in said.err, said.err
        assert f"reading {step} by content: done in " in said.err, said.err
    with connect(data_dir) as con:
        assert query(con, sql)["r"][0] != honest  # read as the truth
    assert main(["verify", "--deep", "--site", "alpha", "--data-dir", str(data_dir)]) == 1
    said = capsys.readouterr()
    assert (
        "rollups of alpha: differ from a computation of them from the lake (site_performance: 2 rows, "
        "revenue differs): rebuilt" in said.out
    ), said.out
    assert "computing the rollups of site alpha again from its lake files" in said.err  # (seconds: said)
    with connect(data_dir) as con:
        assert query(con, sql)["r"][0] == honest
    assert main(["verify", "--deep", "--site", "alpha", "--data-dir", str(data_dir)]) == 0
    assert not list(places.folder.parent.glob(".*"))  # no computation left aside


def test_how_two_versions_of_the_rollups_differ_is_said_by_rollup_keys_and_columns(
    rolled: SyncedLake, tmp_path: Path
) -> None:
    """What `verify --deep` and the incremental tests say of a difference: the rows, the keys one
    side alone holds, the columns that differ where both hold a key (they said a count of rows)."""
    left, right = rolled.copy(tmp_path / "left"), rolled.copy(tmp_path / "right")
    month = sorted(site_places(right, "alpha").views["daily_performance"].glob("2026-*.parquet"))[0]
    with duckdb.connect() as con:
        (day,) = con.execute(f"SELECT min(day) FROM read_parquet('{month}')").fetchall()[0]
        changed = f"CASE WHEN day = DATE '{day}' THEN revenue + 1 ELSE revenue END AS revenue"
        con.execute(
            f"COPY (SELECT * REPLACE ({changed}) FROM read_parquet('{month}') "
            f"WHERE day <> DATE '{day}' + 1) TO '{month}' (FORMAT parquet)"
        )
        assert rollup_differences(con, left, right, "alpha") == {
            "daily_performance": "3 rows, 1 key on one side only, revenue differs"
        }
        assert rollup_differences(con, left, left, "alpha") == {}


def test_verify_leaves_a_stopped_refresh_to_the_next_one_and_still_finds_a_forgery(
    rolled: SyncedLake, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A refresh stopped midway (Ctrl-C, a kill) leaves rollup files its state does not vouch for;
    that is not damage: the views read the lake meanwhile, and the next refresh (verify's own, here)
    writes them. Verify said "differ from what their refresh wrote" and exited 1 after a Ctrl-C'd
    rebuild at 10 M."""
    data_dir = rolled.copy(tmp_path)
    places = site_places(data_dir, "alpha")
    built = load_state(places)
    assert built is not None
    months = sorted((data_dir / "rollups/site=alpha/site_performance").glob("2026-*.parquet"))
    months[0].unlink()  # a full build stopped after it replaced some files: its state says so first
    save_state(places, SiteState(listing={}, rebuilding=True))
    assert fresh_rollups(data_dir) == ["beta"]  # alpha's rollups are not read meanwhile
    assert main(["verify", "--data-dir", str(data_dir)]) == 0  # its refresh finishes the build
    assert "differ" not in capsys.readouterr().out
    assert fresh_rollups(data_dir) == ["alpha", "beta"]
    stopped = load_state(places)
    assert stopped is not None  # an update stopped while it rewrote the first month
    save_state(places, dataclasses.replace(stopped, pending_months=frozenset({months[0].stem})))
    rewritten = months[0].with_suffix(".staged")  # as a refresh writes: a new file moved into place
    rewritten.write_bytes(months[1].read_bytes())
    rewritten.replace(months[0])
    assert main(["verify", "--data-dir", str(data_dir)]) == 0
    assert "differ" not in capsys.readouterr().out
    months[1].write_bytes(months[0].read_bytes())  # outside the months being rewritten: a forgery
    assert main(["verify", "--data-dir", str(data_dir)]) == 1
    assert f"site_performance/{months[1].name}" in capsys.readouterr().out
    assert fresh_rollups(data_dir) == ["alpha", "beta"]
    assert main(["verify", "--data-dir", str(data_dir)]) == 0
