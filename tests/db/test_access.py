"""Dedupe, pruning, rollups, empty lakes, the catalog file, the CLI and a sync beside a reader."""

from __future__ import annotations

import re
import subprocess
import sys
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from commerce_reports import activity
from commerce_reports.cli import main
from commerce_reports.contract import AGGREGATE_SCHEMAS, TRANSACTION_SCHEMA, PartitionKey
from commerce_reports.db import VIEWS, connect, fresh_rollups, refresh_rollups, write_catalog
from commerce_reports.db.published import publish
from commerce_reports.lake.manifest import store_partition
from commerce_reports.params import Filters
from tests.db.conftest import SyncedLake
from tests.lakes import record_as_stored


def _version(cid: str, update: date, revenue: float, order: float) -> dict[str, object]:
    return {
        "commission_id": cid,
        "commission_date": date(2026, 1, 5),
        "update_date": update,
        "publisher_net_revenue": Decimal(str(revenue)),
        "order_value": Decimal(str(order)),
        "network": "N",
        "products": [],
    }


def _table(*rows: dict[str, object]) -> pa.Table:
    return pa.Table.from_pylist(list(rows), schema=TRANSACTION_SCHEMA)


def test_latest_version_wins_and_flags_returns(tmp_path: Path) -> None:
    at = datetime(2026, 2, 1, tzinfo=UTC)
    later = datetime(2026, 2, 2, tzinfo=UTC)
    store_partition(
        tmp_path,
        "s",
        PartitionKey.transactions(date(2026, 1, 5)),
        _table(_version("a", date(2026, 1, 5), 10.0, 100.0), _version("b", date(2026, 1, 5), 5.0, 50.0)),
        at,
    )
    store_partition(
        tmp_path,
        "s",
        PartitionKey.transactions(date(2026, 1, 20)),
        _table(_version("a", date(2026, 1, 20), 4.0, 40.0), _version("a9", date(2026, 1, 20), -2.0, -20.0)),
        at,
    )
    # a loader's copy of the same update day, fetched later, wins the tie
    loader = PartitionKey.transactions(date(2026, 1, 5), by="commissionDate")
    store_partition(tmp_path, "s", loader, _table(_version("b", date(2026, 1, 5), 6.0, 50.0)), later)
    with connect(tmp_path) as con:
        rows = con.sql("SELECT * FROM transactions ORDER BY commission_id").pl()
    assert rows["commission_id"].to_list() == ["a", "a9", "b"]
    assert rows["publisher_net_revenue"].to_list() == [4.0, -2.0, 6.0]
    assert rows["version_count"].to_list() == [2, 1, 1]
    assert rows["adjusted"].to_list() == [True, False, False]
    assert rows["returned"].to_list() == [True, True, False]
    assert rows["device"].to_list() == ["Unknown"] * 3


def test_unknown_device_and_partner_product_read_alike_whichever_the_dialect(tmp_path: Path) -> None:
    """Without click detail the contract dialect leaves device and partnerProduct out (NULL); the
    published one sends UKN (stored NULL) and UNK (stored Unknown): `transactions` shows Unknown."""
    rows = [
        {**_version("contract", date(2026, 1, 5), 1.0, 10.0), "partner_product": None, "device": None},
        {**_version("published", date(2026, 1, 5), 1.0, 10.0), "partner_product": "Unknown", "device": None},
        {**_version("detail", date(2026, 1, 5), 1.0, 10.0), "partner_product": "Link", "device": "Mobile"},
    ]
    store_partition(
        tmp_path, "s", PartitionKey.transactions(date(2026, 1, 5)), _table(*rows), datetime.now(UTC)
    )
    with connect(tmp_path) as con:
        shown = con.sql("SELECT partner_product, device FROM transactions ORDER BY commission_id").fetchall()
    assert shown == [("Unknown", "Unknown"), ("Link", "Mobile"), ("Unknown", "Unknown")]


def test_a_date_filter_prunes_partitions(synced_con: duckdb.DuckDBPyConnection) -> None:
    plan = "\n".join(
        row[1]
        for row in synced_con.execute(
            "EXPLAIN ANALYZE SELECT count(*) FROM transaction_versions WHERE partition_day = '2026-02-03'"
        ).fetchall()
    )
    windows = "\n".join(
        row[1]
        for row in synced_con.execute(
            "EXPLAIN ANALYZE SELECT count(*) FROM networks WHERE window_start = '2026-02-01'"
        ).fetchall()
    )
    assert "Scanning Files: 2/" in plan  # one day of each site, out of every stored day
    assert re.search(r"Total Files Read: 2\b", plan)
    assert "Scanning Files: 14/42" in windows  # 7 slices x 2 sites of one month, of three months


def test_rollups_answer_like_the_lake_and_stale_ones_are_not_used(synced: SyncedLake, tmp_path: Path) -> None:
    data_dir = synced.copy(tmp_path)
    assert [r.site for r in refresh_rollups(data_dir)] == ["alpha", "beta"]
    assert fresh_rollups(data_dir) == ["alpha", "beta"] and refresh_rollups(data_dir) == []
    with connect(data_dir) as con:
        for view in VIEWS:
            differing = con.execute(
                f"SELECT count(*) FROM (SELECT * EXCLUDE (fetched_at) FROM main.{view} EXCEPT "
                f"SELECT * EXCLUDE (fetched_at) FROM live.{view})"
                if "fetched_at" in con.sql(f"SELECT * FROM {view} LIMIT 0").columns
                else f"SELECT count(*) FROM (SELECT * FROM main.{view} EXCEPT SELECT * FROM live.{view})"
            ).fetchone()
            assert differing is not None
            if view in (
                "transactions",
                "transaction_versions",
                "networks",
                "merchandise",
                "transaction_items",
            ):
                assert differing[0] == 0, view
    day = date(2026, 2, 3)
    store_partition(
        data_dir,
        "alpha",
        PartitionKey.transactions(day),
        _table(_version("zz-new", day, 1000.0, 1.0)),
        datetime.now(UTC),
    )
    assert fresh_rollups(data_dir) == ["beta"]
    with connect(data_dir) as con:
        query = "SELECT count(*) FROM daily_performance WHERE site = 'alpha' AND revenue > 1000"
        assert con.execute(query).fetchone() == (0,)  # the views read the state last published
        publish(data_dir)  # what a writer does when it is done: alpha's rollups are stale now
        assert con.execute(query).fetchone() == (1,)


def test_an_empty_lake_gives_typed_empty_views(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with connect(tmp_path) as con:
        for view in VIEWS:
            relation = con.sql(f"SELECT * FROM {view}")
            assert relation.count("*").fetchall() == [(0,)], view  # type: ignore[union-attr]
            assert "site" in relation.columns and "NULL" not in map(str, relation.types), view
    assert main(["sql", "SELECT 1", "--data-dir", str(tmp_path)]) == 1
    assert "is empty: run `commerce-reports sync` first" in capsys.readouterr().err


def test_writer_temp_files_are_never_read(synced: SyncedLake, tmp_path: Path) -> None:
    data_dir = synced.copy(tmp_path)
    folder = data_dir / "lake/site=alpha" / PartitionKey.transactions(date(2026, 2, 3)).relpath
    (folder / ".part.999999.abcdef.tmp").write_bytes(b"half a parquet file")
    with connect(data_dir) as con:
        assert con.execute("SELECT count(*) FROM transaction_versions").fetchone() is not None


def test_catalog_file_holds_the_views_and_opens_read_only(synced: SyncedLake, tmp_path: Path) -> None:
    data_dir = synced.copy(tmp_path)
    path = write_catalog(data_dir)
    with duckdb.connect(str(path), read_only=True) as reader:
        comments = dict(
            reader.execute(
                "SELECT view_name, comment FROM duckdb_views() WHERE schema_name = 'main' AND NOT internal"
            ).fetchall()
        )
        before = reader.execute("SELECT round(sum(revenue), 2) FROM site_performance").fetchone()
        write_catalog(data_dir)  # replaced under an open reader
        after = reader.execute("SELECT round(sum(revenue), 2) FROM site_performance").fetchone()
    assert comments == VIEWS and before == after and path.stat().st_size < 2_000_000


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    """Through the real `commerce-reports` entry point."""
    code = main(list(argv))
    return code, capsys.readouterr().out


def test_sql_command_prints_writes_and_explains_errors(
    synced: SyncedLake, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = ["--data-dir", str(synced.data_dir)]
    code, out = _run(capsys, "sql", "--views")
    assert code == 0 and all(name in out for name in VIEWS)
    code, out = _run(
        capsys, "sql", "SELECT site, sum(revenue) AS r FROM site_performance GROUP BY site", *data
    )
    assert code == 0 and "alpha" in out and "beta" in out
    target = tmp_path / "out.csv"
    _run(
        capsys, "sql", "SELECT * FROM network_performance", "--format", "csv", "--output", str(target), *data
    )
    assert target.read_text().startswith("site,window_start,window_end,network,")
    assert main(["sql", "SELECT * FROM no_such_view", *data]) == 1
    assert "the views are: transaction_versions" in capsys.readouterr().err
    assert main(["sql", "SELECT revenue / 'x' FROM site_performance", *data]) == 1
    assert "the query failed" in capsys.readouterr().err


_WRITER = """
import sys
from datetime import UTC, date, datetime, timedelta
import pyarrow.parquet as pq
from pathlib import Path
from commerce_reports.contract import PartitionKey
from commerce_reports.lake.manifest import store_partition
data_dir = Path(sys.argv[1])
source = data_dir / "lake/site=alpha" / PartitionKey.transactions(date(2026, 2, 3)).relpath / "part.parquet"
table = pq.read_table(source)
for n in range(40):
    for offset in range(5):
        day = date(2026, 2, 1) + timedelta(days=offset)
        store_partition(data_dir, "alpha", PartitionKey.transactions(day), table, datetime.now(UTC))
    store_partition(data_dir, "alpha", PartitionKey.transactions(date(2026, 6, 1) + timedelta(days=n)), table,
                    datetime.now(UTC))
"""


def test_a_sync_in_another_process_does_not_break_an_open_connection(
    synced: SyncedLake, tmp_path: Path
) -> None:
    data_dir = synced.copy(tmp_path)
    con = connect(data_dir)
    writer = subprocess.Popen([sys.executable, "-c", _WRITER, str(data_dir)])
    answers = 0
    try:
        while writer.poll() is None or answers < 3:
            row = con.execute("SELECT count(*), sum(revenue) FROM daily_performance").fetchone()
            versions = con.execute(
                "SELECT count(*) FROM transaction_versions WHERE site = 'alpha'"
            ).fetchone()
            assert row is not None and row[0] > 0 and versions is not None and versions[0] > 0
            answers += 1
    finally:
        writer.wait(timeout=60)
        con.close()
    assert writer.returncode == 0 and answers >= 3


def test_files_written_before_a_column_existed_still_read(tmp_path: Path) -> None:
    """A file of schema version 2 (money as binary floats, no cuid or extra column) beside a new
    one: both read, the old money as the DECIMAL it stood for; verify finds nothing wrong."""
    at = datetime(2026, 2, 1, tzinfo=UTC)
    store_partition(
        tmp_path,
        "s",
        PartitionKey.transactions(date(2026, 1, 5)),
        _table(_version("new", date(2026, 1, 5), 1.0, 10.0)),
        at,
    )
    old = tmp_path / "lake/site=s" / PartitionKey.transactions(date(2026, 1, 6)).relpath
    old.mkdir(parents=True)
    item = {"product_id": "p", "product_name": "P", "price": 0.1, "quantity": 3.0}
    table = _table({**_version("old", date(2026, 1, 6), 0.1, 0.3), "products": []})
    table = table.drop_columns(["cuid", "extra", "products"])
    for name in ("publisher_net_revenue", "order_value"):
        table = table.set_column(table.schema.get_field_index(name), name, table[name].cast(pa.float64()))
    assert table["publisher_net_revenue"].to_pylist() == [0.1]  # the binary float nearest 0.1
    table = table.append_column("products", pa.array([[item]]))
    pq.write_table(
        table.append_column("fetched_at", pa.array([at], pa.timestamp("us", tz="UTC"))), old / "part.parquet"
    )
    record_as_stored(tmp_path, "s", PartitionKey.transactions(date(2026, 1, 6)), at)
    with connect(tmp_path) as con:
        rows = con.sql(
            "SELECT commission_id, cuid, publisher_net_revenue, order_value, typeof(publisher_net_revenue) "
            "FROM transactions ORDER BY 1"
        ).fetchall()
        items = con.sql("SELECT price, typeof(price), revenue FROM transaction_items").fetchall()
        sums = con.sql("SELECT revenue, typeof(revenue) FROM site_performance").fetchall()
    assert rows == [
        ("new", None, Decimal("1.0"), Decimal("10.0"), "DECIMAL(18,4)"),
        ("old", None, Decimal("0.1"), Decimal("0.3"), "DECIMAL(18,4)"),
    ]
    assert items == [(Decimal("0.1"), "DECIMAL(18,4)", Decimal("0.1"))]
    assert sums == [(Decimal("1.1"), "DECIMAL(38,4)")]  # no 1.1000000000000000888
    main(["verify", "--data-dir", str(tmp_path)])
    assert (old / "part.parquet").exists()  # an older type is not damage: nothing quarantined


def test_a_new_update_day_rewrites_only_the_months_it_touches(
    rolled: SyncedLake, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data_dir = rolled.copy(tmp_path)
    rollups = data_dir / "rollups" / "site=alpha"
    base = sorted(p.name for p in (rollups / "transactions" / "base").glob("whole-*.parquet"))
    assert base == ["whole-2026-01.parquet", "whole-2026-02.parquet", "whole-2026-03.parquet"]
    with connect(data_dir) as con:
        row = con.sql(
            "SELECT * EXCLUDE (site, fetched_at) FROM transaction_versions WHERE site = 'alpha' "
            "AND commission_date < DATE '2026-01-10' AND publisher_net_revenue > 0 LIMIT 1"
        ).to_arrow_table()
    old = row.select([f.name for f in TRANSACTION_SCHEMA]).to_pylist()[0]
    day = date(2026, 3, 11)
    returned = {**old, "update_date": day, "publisher_net_revenue": Decimal(0), "order_value": Decimal(0)}
    sale = {**old, "commission_id": "new-sale", "commission_date": day, "update_date": day}
    key = PartitionKey.transactions(day)
    store_partition(data_dir, "alpha", key, _table(returned, sale), datetime(2026, 3, 11, 12, tzinfo=UTC))
    before = {p: p.stat().st_mtime_ns for p in rollups.rglob("*.parquet")}

    [done] = refresh_rollups(data_dir, {"alpha": [key]})
    # Updated by the two changed transactions alone: no month's stored transactions recomputed.
    assert not done.full and done.months == ("2026-01", "2026-03") and done.recomputed == ()
    assert capsys.readouterr().err == ""  # an update (under a second) is not said
    untouched = [p for p in before if "2026-02" in p.name]
    assert untouched and all(p.stat().st_mtime_ns == before[p] for p in untouched)
    _assert_rollups_equal_live(data_dir)
    with connect(data_dir) as con:
        returns = con.execute(
            "SELECT returned, publisher_net_revenue FROM transactions WHERE commission_id = ?",
            [old["commission_id"]],
        ).fetchall()
    assert returns == [(True, 0.0)]

    # A month's aggregate window fetched again (clicks changed): that month's report side too.
    window = PartitionKey.aggregate("networks", date(2026, 2, 1), Filters(), "month")
    part = data_dir / "lake" / "site=alpha" / window.relpath / "part.parquet"
    table = pq.read_table(part).select([f.name for f in AGGREGATE_SCHEMAS["networks"]])
    table = table.set_column(
        table.schema.get_field_index("clicks"), "clicks", pc.multiply(table["clicks"], 2)
    )
    store_partition(data_dir, "alpha", window, table, datetime(2026, 3, 12, tzinfo=UTC))
    [done] = refresh_rollups(data_dir, {"alpha": [window]})
    assert not done.full and done.months == ("2026-02",) and done.recomputed == ()
    _assert_rollups_equal_live(data_dir)


def test_a_build_of_every_rollup_is_said_with_its_reason_whoever_asks(
    rolled: SyncedLake, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # An upgrade: the views' code changed. A sync with nothing to fetch then rebuilt every rollup
    # (seconds at 1 M transactions, minutes at 100 M) and said nothing.
    monkeypatch.setattr(
        activity, "interactive", lambda: False
    )  # a log (a worker may hold a kernel's modules)
    data_dir = rolled.copy(tmp_path)
    state = data_dir / "rollups" / "site=alpha" / "state.json"
    state.write_text(re.sub(r'"code": ?"\w+"', '"code": "an-older-version"', state.read_text()))
    [done] = refresh_rollups(data_dir, {"alpha": []})
    assert done.full
    said = capsys.readouterr().err.splitlines()
    why = "building the rollups of site alpha whole: the views' definitions or DuckDB's version changed"
    assert said[0].startswith(why) and said[0].endswith(" ...")  # before it starts
    assert said[-1].startswith(why) and re.search(r": done in \d+\.\d s$", said[-1])


def _assert_rollups_equal_live(data_dir: Path) -> None:
    """Each rollup equals its view computed from the lake files (money to the cent: sums over
    another order of rows differ in the last bits)."""
    compared = {
        "transactions": "* EXCLUDE (fetched_at)",
        "site_performance": "site, window_start, round(revenue, 2), transactions, returns, clicks",
        "network_performance": "site, window_start, network, round(revenue, 2), transactions, clicks",
        "link_performance": "site, day, link_url, round(revenue, 2), transactions, returns",
        "merchandise_performance": "site, window_start, product_name, round(revenue, 2), transactions",
    }
    with connect(data_dir) as con:
        for view, columns in compared.items():
            differing = con.execute(
                f"SELECT count(*) FROM ((SELECT {columns} FROM main.{view} EXCEPT ALL "
                f"SELECT {columns} FROM live.{view}) UNION ALL (SELECT {columns} FROM live.{view} "
                f"EXCEPT ALL SELECT {columns} FROM main.{view}))"
            ).fetchone()
            assert differing == (0,), view
