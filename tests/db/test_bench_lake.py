"""The bench lake generator streams: written in chunks of a few days, it is the same lake, and its
aggregate windows (built from month cubes as the chunks pass) agree with its own ledger."""

from __future__ import annotations

import hashlib
import importlib.util
import shutil
from pathlib import Path
from types import ModuleType

import duckdb
import pytest

from commerce_reports.contract import PART_FILE, site_root
from commerce_reports.files import sha256_of
from commerce_reports.lake.manifest import Manifest

MAKE_LAKE = Path(__file__).parents[2] / "bench" / "make_lake.py"
N, DAYS = 3_000, 45  # 2 months and the December of the first days' clicks
pytestmark = pytest.mark.xdist_group("bench-lake")  # its chunked lake written once, on one worker


def _bench_script(name: str) -> ModuleType:
    """A script of `bench/` (not a package), loaded as a module."""
    spec = importlib.util.spec_from_file_location(name, MAKE_LAKE.with_name(f"{name}.py"))
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def make_lake() -> ModuleType:
    return _bench_script("make_lake")


@pytest.fixture(scope="module")
def chunked(make_lake: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    """The lake written in 5 chunks of 9 days, and how many versions it holds."""
    assert len(make_lake._chunks(N, DAYS, 600)) == 5
    folder = tmp_path_factory.mktemp("chunked")
    return folder, make_lake.make_lake(folder, N, DAYS, chunk_rows=600, say=False)


def _digests(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in root.rglob("*.parquet")
    }


def test_chunks_of_days_write_the_lake_of_one_chunk_byte_for_byte(
    make_lake: ModuleType, chunked: tuple[Path, int], tmp_path: Path
) -> None:
    versions = make_lake.make_lake(tmp_path, N, DAYS, chunk_rows=10**9, say=False)
    assert versions == chunked[1] > N  # every transaction, and its returns
    files = _digests(tmp_path)
    assert len(files) == DAYS + 3 * len(make_lake.SLICES) * 2  # the ledger, and 3 click months
    assert _digests(chunked[0]) == files
    assert not (tmp_path / ".make-lake-spill").exists()


def test_the_aggregates_sum_the_current_state_of_the_ledger(
    make_lake: ModuleType, chunked: tuple[Path, int]
) -> None:
    """What the month cubes made of first versions equals the latest versions the ledger holds,
    summed by click month and network (the `all` slice)."""
    site = chunked[0] / "lake" / f"site={make_lake.SITE}"
    current = (
        f"SELECT * FROM read_parquet('{site}/transactions/*/*/part.parquet') "
        "QUALIFY row_number() OVER (PARTITION BY commission_id ORDER BY update_date DESC) = 1"
    )
    with duckdb.connect() as con:
        ledger = con.execute(
            "SELECT date_trunc('month', click_date)::DATE, network, sum(publisher_net_revenue), count(*) "
            f"FROM ({current}) WHERE click_date IS NOT NULL GROUP BY ALL ORDER BY ALL"
        ).fetchall()
        windows = con.execute(
            "SELECT window_start, network_name, revenue, actions::BIGINT FROM "
            f"read_parquet('{site}/networks/slice=all/*/*/part.parquet') ORDER BY ALL"
        ).fetchall()
    assert len(ledger) > 40
    assert windows == ledger


def test_the_refresh_bench_stores_refetched_days_short_and_puts_them_back_whole(
    chunked: tuple[Path, int], tmp_path: Path
) -> None:
    # rollup_bench --refetched: the days a sync fetches again are stored as the sync before saw
    # them, then whole again; the lake must end with the same rows, every file vouched for
    bench = _bench_script("rollup_bench")
    lake = tmp_path / "lake"
    shutil.copytree(chunked[0], lake)
    *earlier, _ = bench._sync_days(lake, 2)
    parts = [site_root(lake, bench.SITE) / key.relpath / PART_FILE for key in earlier]

    def ids(part: Path) -> list[str]:
        with duckdb.connect() as con:
            return sorted(con.sql(f"SELECT commission_id FROM read_parquet('{part}')").fetchall())

    before = [ids(part) for part in parts]
    bench._store_earlier_copies(lake, earlier)
    assert [len(ids(part)) for part in parts] == [len(b) - -(-len(b) // bench._LATE) for b in before]
    _assert_vouched(lake, bench.SITE, parts)
    bench._restore(lake)
    assert [ids(part) for part in parts] == before
    _assert_vouched(lake, bench.SITE, parts)


def _assert_vouched(lake: Path, site: str, parts: list[Path]) -> None:
    entries = {e.relpath: e for e in Manifest.load(lake, site)}
    for part in parts:
        relpath = str(part.parent.relative_to(site_root(lake, site)))
        assert entries[relpath].sha256 == sha256_of(part)
