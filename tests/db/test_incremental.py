"""Incremental rollups equal a full rebuild, row for row, after any sequence of lake changes.

Hypothesis draws sequences of: update days synced (new transactions, returns, adjustments, ids
moving to another commission day), loader partitions, refetches that drop ids, invalidated
(removed) partitions, damaged files, aggregate windows, refreshes, and refreshes killed between
two files. After the sequence one more refresh runs, and every rollup must equal the one a full
rebuild of the same lake writes. Derandomized (the same sequences on every run) and small, so the
suite stays fast: the 8 sequences drawn by default hold every kind of step (syncs with returns and
adjustments, loaders, invalidated and damaged days, aggregates, refreshes, rebuilds; check again
when the strategy changes, since the draws follow the test's source), and two examples kill a
refresh that has files to put in place (after its first, and half way: drawn kills mostly find
nothing left to write); `DB_EXAMPLES=200 DB_RANDOM=1 pytest -p no:timeout ...` searches further.
"""

from __future__ import annotations

import itertools
import os
import shutil
from collections.abc import Iterable, Iterator
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import commerce_reports.db.buckets as buckets_module
import commerce_reports.db.build as build_module
import commerce_reports.db.plan as plan_module
from commerce_reports.contract import AGGREGATE_SCHEMAS, TRANSACTION_SCHEMA, PartitionKey, site_root
from commerce_reports.db import connect, fresh_rollups, rebuild_rollups, refresh_rollups
from commerce_reports.db.recompute import rollup_differences
from commerce_reports.db.views import VIEW_LIST
from commerce_reports.lake.manifest import store_partition
from commerce_reports.params import Filters

SITE = "s"
FIRST = date(2026, 1, 20)
DAYS = [FIRST + timedelta(days=n) for n in range(24)]  # spans three months
IDS = [f"c{n}" for n in range(8)]
NETWORKS = ("N1", "N2")
_clock = itertools.count()


def _fetched() -> datetime:
    """A distinct fetch time per write: ties between versions never decide the result."""
    return datetime(2026, 3, 1, tzinfo=UTC) + timedelta(seconds=next(_clock))


def _row(cid: str, commission: date | None, update: date, revenue: Decimal, n: int) -> dict[str, Any]:
    return {
        "commission_id": cid,
        "commission_date": commission,
        "update_date": update,
        "click_date": commission,
        "publisher_net_revenue": revenue,
        "order_value": abs(revenue) * 10,
        "network": NETWORKS[n % 2],
        "device": ("Mobile", "Desktop", None)[n % 3],
        "country": ("us", "gb")[n % 2],
        "link_url": f"https://shop.example/{n % 3}",
        "merchant_group_id": 7,
        "merchant_group_name": "M",
        "products": [
            {"product_id": f"p{n % 2}", "product_name": f"P{n % 2}", "price": Decimal(5), "quantity": 1.0}
        ],
    }


# One step: ("day", day index, [(id index, commission day index or None, revenue)]), ("loader", ...),
# ("drop", day index), ("damage", day index), ("agg", month, revenue), ("refresh",), ("kill", n),
# ("rebuild",).
_version = st.tuples(
    st.integers(0, len(IDS) - 1), st.one_of(st.none(), st.integers(0, len(DAYS) - 1)), st.integers(-50, 200)
)
_step = st.one_of(
    st.tuples(st.just("day"), st.integers(0, len(DAYS) - 1), st.lists(_version, min_size=0, max_size=5)),
    st.tuples(st.just("loader"), st.integers(0, len(DAYS) - 1), st.lists(_version, min_size=1, max_size=3)),
    st.tuples(st.just("drop"), st.integers(0, len(DAYS) - 1)),
    st.tuples(st.just("damage"), st.integers(0, len(DAYS) - 1)),
    st.tuples(st.just("agg"), st.sampled_from([date(2026, 1, 1), date(2026, 2, 1)]), st.integers(0, 500)),
    st.tuples(st.just("refresh")),
    st.tuples(st.just("kill"), st.integers(1, 6)),
    st.tuples(st.just("rebuild")),
)
# A first sync over three days (each id on its commission day), and its rollups built whole.
_START = [
    ("day", 0, [(0, 0, 40), (1, 0, 60), (2, 0, 10)]),
    ("day", 2, [(3, 2, 80), (4, 2, -20), (0, 0, 30)]),
    ("day", 5, [(5, 5, 15), (6, 4, 25), (1, 0, 0)]),
    ("agg", date(2026, 1, 1), 100),
    ("refresh",),
]


class Killed(BaseException):
    """Stands for a kill: nothing of the refresh may catch it."""


def _apply(data_dir: Path, step: tuple[Any, ...], monkeypatch: pytest.MonkeyPatch, site: str = SITE) -> None:
    kind = step[0]
    if kind in ("day", "loader"):
        day = DAYS[step[1]]
        by = "updateDate" if kind == "day" else "commissionDate"
        rows, seen = [], set()
        for cid_n, commission_n, revenue in step[2]:
            if cid_n in seen:
                continue
            seen.add(cid_n)
            commission = DAYS[commission_n] if commission_n is not None and commission_n <= step[1] else None
            rows.append(
                _row(
                    IDS[cid_n],
                    commission or (day if commission_n is not None else None),
                    day,
                    Decimal(revenue) / 4,  # exact: quarters of a unit
                    cid_n,
                )
            )
        table = pa.Table.from_pylist(rows, schema=TRANSACTION_SCHEMA)
        store_partition(data_dir, site, PartitionKey.transactions(day, by), table, _fetched())
    elif kind in ("drop", "damage"):
        part = site_root(data_dir, site) / PartitionKey.transactions(DAYS[step[1]]).relpath / "part.parquet"
        if part.exists():
            if kind == "drop":
                part.unlink()
            else:
                part.write_bytes(part.read_bytes()[: part.stat().st_size // 2])
    elif kind == "agg":  # a month's networks and merchandise windows (P9: a product never sold)
        windows = {
            "networks": [
                {
                    "network_name": n,
                    "revenue": Decimal(step[2]) / (i + 1),
                    "clicks": 10,
                    "sales": Decimal(1),
                    "actions": 1,
                }
                for i, n in enumerate(NETWORKS)
            ],
            "merchandise": [
                {
                    "product_name": p,
                    "merchant_group_id": 7,
                    "revenue": Decimal(step[2]) / 2,
                    "sales": Decimal(1),
                    "actions": 1,
                }
                for p in ("P0", "P9")
            ],
        }
        for dataset, rows in windows.items():
            key = PartitionKey.aggregate(dataset, step[1], Filters(), "month")
            table = pa.Table.from_pylist(
                [{**r, "window_start": key.start, "window_end": key.end} for r in rows],
                schema=AGGREGATE_SCHEMAS[dataset],
            )
            store_partition(data_dir, site, key, table, _fetched())
    elif kind == "refresh":
        refresh_rollups(data_dir)
    elif kind == "rebuild":
        rebuild_rollups(data_dir)
    else:  # killed between two files put in place (each write stages all its files, then moves them)
        moved = itertools.count(1)
        real = buckets_module.move_into_place

        def dying(moves: Iterable[tuple[Path, Path]]) -> None:
            for move in moves:
                if next(moved) >= step[1]:
                    raise Killed
                real([move])

        monkeypatch.setattr(buckets_module, "move_into_place", dying)
        try:
            refresh_rollups(data_dir)
        except Killed:
            pass
        finally:
            monkeypatch.setattr(buckets_module, "move_into_place", real)


def _differences(left: Path, right: Path, site: str = SITE) -> dict[str, str]:
    """How each rollup differs between the two (as `verify --deep` compares them): rows, keys, columns."""
    with duckdb.connect() as con:
        return rollup_differences(con, left, right, site)


@pytest.fixture
def lakes(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    yield tmp_path / "incremental", tmp_path / "full"


@settings(
    max_examples=int(os.environ.get("DB_EXAMPLES", "8")),
    deadline=None,
    derandomize="DB_RANDOM" not in os.environ,  # the same sequences in CI; DB_RANDOM=1 explores
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(steps=st.lists(_step, min_size=1, max_size=8), share=st.sampled_from([0.0, 0.25, 100.0]))
# A refresh killed after its first file, and one half way through a day with returns, a new day
# and a month's reports: the next refresh finishes what they left (drawn sequences rarely kill
# a refresh that has something to write).
@example(steps=[("day", 8, [(7, 8, 40), (2, 0, -10)]), ("kill", 1)], share=0.25)
@example(
    steps=[("day", 9, [(5, 5, 0), (0, 0, 12), (6, 9, 30)]), ("agg", date(2026, 2, 1), 90), ("kill", 4)],
    share=0.0,
)
# An id that moves from January to February: its stored row, in January, is found only by the
# index of the files that held it before (the new day's versions name February alone).
@example(steps=[("day", 13, [(0, 12, 70)])], share=0.25)
# February 9th packs January's index (`ledger_index.PACKED_AFTER`); then a January day synced again:
# its id's other version, in a January file unchanged, is found in the pack written before (the
# month's new pack is not written yet), and the last day changes another packed day.
@example(
    steps=[
        ("day", 20, [(1, 15, 30)]),
        ("refresh",),
        ("day", 2, [(0, 0, 99), (3, 2, 10)]),
        ("refresh",),
        ("day", 0, [(2, 0, 5)]),
    ],
    share=0.25,
)
# A refresh that packs January killed midway, then a packed day changed in a killed refresh.
@example(steps=[("day", 21, [(6, 4, 12)]), ("kill", 1), ("day", 5, [(5, 5, 1)]), ("kill", 3)], share=0.0)
# A packed month's file removed and another one damaged: the month packed again without them.
@example(
    steps=[
        ("day", 22, [(7, 22, 10)]),
        ("refresh",),
        ("drop", 2),
        ("damage", 5),
        ("refresh",),
        ("day", 2, [(0, 2, 44)]),
    ],
    share=0.25,
)
def test_incremental_rollups_equal_a_full_rebuild(
    steps: list[tuple[Any, ...]],
    share: float,
    lakes: tuple[Path, Path],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """`share` moves the line between rewriting a day and patching it: small lakes try both. No
    refresh may fall back to a full rebuild because its incremental build failed (that would hide
    the failure from this comparison)."""
    caplog.clear()
    monkeypatch.setattr(plan_module, "PATCH_SHARE", share)
    incremental, full = lakes
    for folder in lakes:
        shutil.rmtree(folder, ignore_errors=True)
    for step in [*_START, *steps]:
        _apply(incremental, step, monkeypatch)
    refresh_rollups(incremental)
    assert fresh_rollups(incremental) == [SITE]
    shutil.copytree(incremental / "lake", full / "lake")
    rebuild_rollups(full)
    assert _differences(incremental, full) == {}
    assert not [r.getMessage() for r in caplog.records if "could not be updated" in r.getMessage()]


@pytest.mark.parametrize("site", ["epoch", "2024"])
def test_a_site_named_like_a_date_or_a_number_keeps_its_name_in_every_rollup(
    site: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DuckDB reads a `key=value` folder above a file as a column, typed by how the value looks:
    below `site=epoch/` a site is the date 1970-01-01, below `site=2024/` a number. Rollups stored
    there hold the site's name as text, and the same rows, whether updated for a day of returns and
    a month's reports, or built whole a slice of ids at a time (as a large lake's are)."""
    updated, sliced = tmp_path / "updated", tmp_path / "sliced"
    day = ("day", 8, [(7, 8, 40), (2, 0, -10), (3, 2, 5)])
    for step in [*_START, day, ("agg", date(2026, 1, 1), 90), ("refresh",)]:
        _apply(updated, step, monkeypatch, site)
    shutil.copytree(updated / "lake", sliced / "lake")
    monkeypatch.setattr(build_module, "SLICE_ROWS", 4)
    rebuild_rollups(sliced)
    for lake in (updated, sliced):
        assert fresh_rollups(lake) == [site]
        with connect(lake) as con:
            for view in VIEW_LIST:
                names = con.sql(f"SELECT DISTINCT site FROM {view.name}").fetchall()
                assert names in ([(site,)], []), (lake.name, view.name, names)
        stored = str(lake / "rollups" / f"site={site}" / "**" / "*.parquet")
        with duckdb.connect() as con:
            kinds = con.execute(f"SELECT DISTINCT type FROM parquet_schema('{stored}') WHERE name = 'site'")
            assert kinds.fetchall() == [("BYTE_ARRAY",)], lake.name
    assert _differences(updated, sliced, site) == {}
