"""Every public function and command that takes a data folder answers a hostile path with the
package's own error (what is wrong, what would be right), never a raw ValueError or OSError: a
path holding NUL, a path too long, a name too long, a file where a folder belongs, a folder below
one named like a partition key (DuckDB would read `site=shop` as the site of every file below), a
name that is not UTF-8, a `?` (DuckDB's database files could never be written below it)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest

import commerce_reports as cr
from commerce_reports.api import verify
from commerce_reports.cli import main
from commerce_reports.db import fresh_rollups, rebuild_rollups, refresh_rollups, verify_rollups

CALLS: dict[str, Callable[[Any], object]] = {
    "connect": lambda d: cr.connect(d),
    "connect(read_only=False)": lambda d: cr.connect(d, read_only=False),
    "write_catalog": lambda d: cr.write_catalog(d),
    "alerts": lambda d: cr.alerts(data_dir=d),
    "status": lambda d: cr.status(data_dir=d),
    "plan_sync": lambda d: cr.plan_sync(data_dir=d),
    "invalidate": lambda d: cr.invalidate("2026-01-01", "2026-01-02", data_dir=d),
    "lake_location": lambda d: cr.lake_location(d),
    "load_transactions": lambda d: cr.load_transactions("2026-01-01", "2026-01-02", data_dir=d),
    "verify": lambda d: verify(data_dir=d),
    "refresh_rollups": lambda d: refresh_rollups(d),
    "rebuild_rollups": lambda d: rebuild_rollups(d),
    "verify_rollups": lambda d: verify_rollups(d),
    "fresh_rollups": lambda d: fresh_rollups(d),
}


def hostile(tmp_path: Path) -> dict[str, str]:
    a_file = tmp_path / "a-file"
    a_file.write_text("not a folder")
    return {
        "NUL": str(tmp_path / "a\x00b"),
        "path too long": str(tmp_path / ("x" * 100_000)),
        "name too long": str(tmp_path / ("y" * 300)),
        "a file": str(a_file),
        "below a file": str(a_file / "data"),
        "below a folder named like a partition key": str(tmp_path / "site=shop" / "data"),
        "a backslash (DuckDB's separator)": str(tmp_path / "shop\\data"),
        "a name in Latin-1, not UTF-8": str(tmp_path / os.fsdecode(b"caf\xe9")),
        "a '?' (DuckDB reads a database path's options after it)": str(tmp_path / "shop?" / "data"),
    }


@pytest.mark.parametrize("name", CALLS)
def test_every_public_function_answers_a_hostile_data_folder_with_its_own_error(
    name: str, tmp_path: Path
) -> None:
    for what, path in hostile(tmp_path).items():
        if name == "lake_location" and what in ("below a file",):
            continue  # a location only names a folder: nothing is read there yet
        with pytest.raises(cr.CommerceReportsError) as raised:
            CALLS[name](path)
        assert str(raised.value), (name, what)


@pytest.mark.parametrize("command", ["status", "verify", "catalog", "sql", "alerts", "invalidate"])
def test_every_command_answers_a_hostile_data_folder_with_one_line(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    extra = {"sql": ["SELECT 1"], "invalidate": ["2026-01-01", "2026-01-02"]}.get(command, [])
    for what, path in hostile(tmp_path).items():
        if what == "NUL":
            continue  # no command line can hold one
        code = main([command, *extra, "--data-dir", path])
        err = capsys.readouterr().err
        assert code != 0, (command, what)
        assert "Traceback" not in err and err.startswith("error:"), (command, what, err[:300])


def test_a_data_folder_below_one_named_like_a_partition_key_is_refused_saying_why(tmp_path: Path) -> None:
    """DuckDB reads the first `key=value` folder of a path as that column: below `day=monday/`, every
    ledger file's day would read as 'monday'. The folder is refused before anything is read."""
    folder = tmp_path / "day=monday" / "commerce"
    folder.mkdir(parents=True)
    with pytest.raises(cr.ConfigurationError, match=r"named 'day=monday': DuckDB would read it as the day"):
        cr.connect(folder)
    assert list(folder.iterdir()) == []


def test_a_lake_in_a_folder_whose_name_is_not_utf8_is_refused_and_nothing_is_moved(tmp_path: Path) -> None:
    """Arrow and DuckDB open UTF-8 paths only: `verify` found every partition of such a lake
    unreadable, quarantined each (the whole lake, which a sync then asked the service for again,
    days of requests) and ended on DuckDB's `std::bad_cast`."""
    import pyarrow as pa

    from commerce_reports.contract import TRANSACTION_SCHEMA, PartitionKey
    from commerce_reports.lake.manifest import store_partition

    day = date(2026, 3, 2)
    rows = [{"commission_id": "c1", "commission_date": day, "update_date": day}]
    table = pa.Table.from_pylist(rows, schema=TRANSACTION_SCHEMA)
    store_partition(
        tmp_path / "ok", "s", PartitionKey.transactions(day), table, datetime(2026, 3, 3, tzinfo=UTC)
    )
    folder = tmp_path / os.fsdecode(b"lake\xe9")  # named on a Latin-1 system
    shutil.copytree(tmp_path / "ok", folder)
    before = sorted(p.relative_to(folder) for p in folder.rglob("*"))
    with pytest.raises(cr.ConfigurationError, match=r"lake\\xe9 has a name in its path that is not UTF-8"):
        verify(data_dir=folder)
    assert main(["verify", "--data-dir", str(folder)]) == 2
    assert sorted(p.relative_to(folder) for p in folder.rglob("*")) == before
