"""`buckets.write_all`: the writes of an update staged two at a time store what one at a time does,
and a write that fails moves no file of any write into place."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from commerce_reports.db.buckets import NONE, Bucketed, month_bucket, within, write_all

ROWS = (
    "SELECT 'alpha' AS site, DATE '2026-01-01' + CAST(i % 90 AS INTEGER) AS day, "
    "CAST(i AS DECIMAL(18, 4)) / 7 AS revenue FROM range(3000) AS t(i)"
)


def _writes(root: Path) -> list[Bucketed]:
    return [
        Bucketed(ROWS, month_bucket("day"), root / "whole"),  # every month, and _empty.parquet
        Bucketed(ROWS, month_bucket("day"), root / "some", only={"2026-02", "2026-05"}),  # one empty
        Bucketed(ROWS, month_bucket("day"), root / "none", only=set()),
        Bucketed(ROWS, month_bucket("day"), root / "one", only={"2026-03"}),  # one bucket: a plain COPY
        Bucketed(ROWS, month_bucket("day"), root / "gone", only={"2026-07"}),  # one bucket, no rows
    ]


def _stored(folder: Path) -> dict[str, list[tuple[object, ...]]]:
    with duckdb.connect() as con:
        return {
            path.name: con.execute(f"SELECT * FROM read_parquet('{path}') ORDER BY ALL").fetchall()
            for path in sorted(folder.glob("*.parquet"))
        }


def test_writes_staged_two_at_a_time_store_the_same_files(tmp_path: Path) -> None:
    stored = {}
    for at_once in (1, 2):
        root = tmp_path / str(at_once)
        root.mkdir(parents=True)
        for left in ("some/2026-05", "gone/2026-07"):
            (root / left).parent.mkdir(exist_ok=True)
            (root / f"{left}.parquet").write_bytes(b"a month left without rows: deleted")
        with duckdb.connect() as con:
            written = write_all(con, _writes(root), at_once=at_once)
        assert written == [{"2026-01", "2026-02", "2026-03"}, {"2026-02"}, set(), {"2026-03"}, set()]
        stored[at_once] = {name: _stored(root / name) for name in ("whole", "some", "one", "gone")}
        assert not list(root.rglob(".*"))  # no staging folder, no temporary file left
    assert stored[1] == stored[2]
    assert sorted(stored[2]["whole"]) == [
        "2026-01.parquet",
        "2026-02.parquet",
        "2026-03.parquet",
        "_empty.parquet",
    ]
    assert sorted(stored[2]["some"]) == ["2026-02.parquet"]
    assert stored[2]["one"] == {"2026-03.parquet": stored[2]["whole"]["2026-03.parquet"]}
    assert stored[2]["gone"] == {}
    assert sum(len(rows) for rows in stored[2]["whole"].values()) == 3000


def test_a_failing_write_moves_no_file_of_any_write(tmp_path: Path) -> None:
    broken = Bucketed("SELECT * FROM no_such_table", month_bucket("day"), tmp_path / "broken")
    with duckdb.connect() as con, pytest.raises(duckdb.CatalogException):
        write_all(con, [*_writes(tmp_path), broken], at_once=2)
    assert not list((tmp_path / "whole").glob("*")) and not list(tmp_path.rglob(".*"))


@settings(max_examples=60, deadline=None)
@given(
    st.sets(
        st.one_of(
            st.dates(date(2024, 11, 1), date(2025, 2, 28)).map(str),
            st.dates(date(2024, 11, 1), date(2025, 2, 28)).map(lambda d: str(d)[:7]),
            st.just(NONE),
        ),
        max_size=12,
    )
)
def test_within_holds_the_dates_of_its_buckets_and_no_other(buckets: set[str]) -> None:
    # adjacent days and months are joined into ranges: the dates each selects must stay the same
    con = duckdb.connect()
    days = [date(2024, 10, 30) + timedelta(days=n) for n in range(125)]
    con.execute("CREATE TABLE d AS SELECT unnest(?::DATE[]) AS day UNION ALL SELECT NULL", [days])
    chosen = {r[0] for r in con.execute(f"SELECT day FROM d WHERE {within('day', buckets)}").fetchall()}

    def bucket_of(day: date | None) -> set[str]:
        return {NONE} if day is None else {str(day), str(day)[:7]}

    expected = {d for d in [*days, None] if bucket_of(d) & buckets}
    assert chosen == expected


def test_a_bucket_duckdb_writes_in_several_files_is_stored_with_its_own_columns(tmp_path: Path) -> None:
    """DuckDB writes a bucket in several files when it must close some (more buckets than files
    it keeps open): the stored file joins them, with the SELECT's columns and rows alone. A folder
    `site=epoch` above them adds no column, nor turns the site into a date."""
    folder = tmp_path / "rollups" / "site=epoch" / "rollup"
    rows = ROWS.replace("'alpha'", "'epoch'")
    with duckdb.connect(config={"preserve_insertion_order": False}) as con:
        con.execute("SET partitioned_write_max_open_files = 1")
        con.execute("SET partitioned_write_flush_threshold = 100")
        (written,) = write_all(con, [Bucketed(rows, month_bucket("day"), folder)])
        assert written == {"2026-01", "2026-02", "2026-03"}
        stored = f"read_parquet('{folder}/*.parquet', hive_partitioning = false)"
        assert con.execute(f"DESCRIBE SELECT * FROM {stored}").fetchall() == (
            con.execute(f"DESCRIBE {rows}").fetchall()
        )
        assert con.execute(f"SELECT * FROM {stored} ORDER BY ALL").fetchall() == (
            con.execute(f"{rows} ORDER BY ALL").fetchall()
        )
