"""A data folder is read as it is named. DuckDB reads `*`, `?` and `[` in any path as a pattern:
beside a lake in `shop1/`, one in `shop?/` would also read `shop1`'s files, and one in `a [b]/`
would find none of its own. Every view, rollup and published generation reads the folder's own
files, whatever its name holds (a quote too)."""

from __future__ import annotations

import shutil
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pytest

from commerce_reports.contract import TRANSACTION_SCHEMA, PartitionKey
from commerce_reports.db import connect, refresh_rollups
from commerce_reports.db.connection import VIEWS
from commerce_reports.lake.manifest import store_partition

DAY = date(2026, 3, 2)


def _lake(folder: Path, revenues: list[int]) -> None:
    """A lake of one update day, a transaction per revenue, its rollups built and published."""
    rows = [
        {
            "commission_id": f"c{n}",
            "commission_date": DAY,
            "update_date": DAY,
            "publisher_net_revenue": Decimal(r),
        }
        for n, r in enumerate(revenues)
    ]
    table = pa.Table.from_pylist(rows, schema=TRANSACTION_SCHEMA)
    store_partition(folder, "s", PartitionKey.transactions(DAY), table, datetime(2026, 3, 3, tzinfo=UTC))
    refresh_rollups(folder)


@pytest.fixture(scope="module")
def neighbours(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The lakes a pattern in a folder's name would also match, built once for the module: each test
    copies them beside its own (a copy is the same files, a tenth of a build's time)."""
    folder = tmp_path_factory.mktemp("neighbours")
    _lake(folder / "shop1", [1000, 1000, 1000])  # what the pattern `shop?` (or `shop*`) also matches
    _lake(folder / "b", [1000])  # and `a [b]`: a folder named `a b`
    return folder


@pytest.mark.parametrize("name", ["shop*", "shop[1]", "a [b]", "shop's", "café ☕"])  # (`?`: refused)
def test_a_folder_named_with_pattern_characters_reads_its_own_files_only(
    name: str, tmp_path: Path, neighbours: Path
) -> None:
    shutil.copytree(neighbours, tmp_path, symlinks=True, dirs_exist_ok=True)
    own = tmp_path / name
    _lake(own, [5, 7])
    with connect(own) as con:
        for view in VIEWS:
            con.sql(f"SELECT * FROM {view}").fetchall()  # every view reads
        assert con.sql("SELECT count(*), sum(publisher_net_revenue) FROM transactions").fetchall() == [
            (2, Decimal(12))
        ]
        assert con.sql("SELECT count(*) FROM transaction_versions").fetchall() == [(2,)]
        assert con.sql("SELECT sum(revenue) FROM site_performance").fetchall() == [(Decimal(12),)]


def test_a_folder_beside_the_sites_that_holds_no_site_is_left_out_saying_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A file manager's copy of a site's folder (`site=s copy`) holds no site: every read leaves it
    out, from the published generation or from the lake itself, and says so, where every query
    failed on "'s copy' is not a usable site name"."""
    folder = tmp_path / "data"
    _lake(folder, [5, 7])
    shutil.copytree(folder / "lake" / "site=s", folder / "lake" / "site=s copy")
    refresh_rollups(folder)
    for published in (True, False):
        if not published:  # no generation: the views read the lake's files
            shutil.rmtree(folder / "views")
        with connect(folder) as con:
            for view in VIEWS:
                assert con.sql(f"SELECT DISTINCT site FROM {view}").fetchall() in ([("s",)], []), view
            assert con.sql("SELECT count(*) FROM transaction_versions").fetchall() == [(2,)]
    assert "site=s copy is not the folder of a site" in caplog.text


def test_a_link_that_loops_among_the_partitions_is_passed_over(tmp_path: Path) -> None:
    """A stray pair of links naming each other beside a day's folder (`day=... -> loopA ->
    day=...`): every query of the lake failed, "Too many levels of symbolic links"."""
    from commerce_reports.api import verify

    folder = tmp_path / "data"
    _lake(folder, [5, 7])
    days = folder / "lake" / "site=s" / "transactions" / "by=updateDate"
    (days / "day=2026-12-05").symlink_to("loopA")
    (days / "loopA").symlink_to("day=2026-12-05")
    refresh_rollups(folder)
    with connect(folder) as con:
        assert con.sql("SELECT count(*), sum(publisher_net_revenue) FROM transactions").fetchall() == [
            (2, Decimal(12))
        ]
    assert verify(data_dir=folder).ok
