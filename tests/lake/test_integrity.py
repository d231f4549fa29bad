"""A lake that proves its contents, attacked as a campaign would: a forged partition (its mtime
changed, or put back), a forged rollup (its size, mtime and inode kept), a lake copied with `cp -a`,
`cp -r`, `rsync` and `tar`, a client clock four days ahead of the service. Each through real files,
real HTTP to the sandbox and the real command, and each ends with the views equal to the service
and `verify` telling the truth."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import tarfile
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from commerce_reports.api import sync
from commerce_reports.cli import main
from commerce_reports.contract import PartitionKey
from commerce_reports.db import connect, fresh_rollups, published
from commerce_reports.db.snapshot import take_snapshot
from commerce_reports.db.state import load_state, site_places
from commerce_reports.lake import Manifest
from commerce_reports.params import Filters
from commerce_reports.sandbox.runner import RunningSandbox
from commerce_reports.sites import SiteProfile
from tests.lake.conftest import options_for, profiles

DAYS = 6


def _sync(running: RunningSandbox, data_dir: Path, start: date, **options: object):  # type: ignore[no-untyped-def]
    alpha = profiles(running)[0]
    return sync(
        start,
        sites=[alpha],
        data_dir=data_dir,
        options=options_for(running, **options),
        networks=[Filters()],
        merchandise=[],
    )


def _synced(running: RunningSandbox, data_dir: Path) -> tuple[SiteProfile, date]:
    start = running.sandbox.now.date() - timedelta(days=DAYS - 1)
    result = _sync(running, data_dir, start)
    assert result.ok, result.summary()
    return profiles(running)[0], start


def view_differences(running: RunningSandbox, data_dir: Path, start: date) -> list[str]:
    """The commission days whose revenue or transaction count in the `transactions` view (what
    users read) differ from the sandbox's truth; empty when the views tell the truth."""
    end = running.sandbox.now.date()
    with connect(data_dir) as con:
        rows = con.execute(
            "SELECT commission_date, sum(publisher_net_revenue), count(*) FROM transactions "
            "WHERE site = 'alpha' AND commission_date BETWEEN ? AND ? GROUP BY 1",
            [start, end],
        ).fetchall()
    ours = {day: (revenue, n) for day, revenue, n in rows}
    truth = running.sandbox.ground_truth("alpha", start, end, by="commission_date", group_by=("day",))
    theirs = {
        row["day"]: (Decimal(repr(round(row["revenue"], 2))), row["transactions"])
        for row in truth.iter_rows(named=True)
    }
    return [
        f"{d}: views {ours.get(d)}, truth {theirs.get(d)}"
        for d in sorted(ours | theirs)
        if ours.get(d) != theirs.get(d)
    ]


def _part(data_dir: Path, key: PartitionKey) -> Path:
    return data_dir / "lake" / "site=alpha" / key.relpath / "part.parquet"


def _forge(path: Path, column: str, factor: int, *, keep_times: bool, same_size: bool = False) -> None:
    """Multiply `column` by `factor` in the Parquet file at `path`, rewritten in place (the same
    inode, as any Parquet writer does); `keep_times` puts its times back, `same_size` pads the
    forgery to the original size (key-value metadata), so that only its change time and content
    tell it apart."""
    before = path.stat()
    table = pq.read_table(path)
    index = table.schema.get_field_index(column)
    kind = table.schema.field(index).type
    values = [None if v is None else v * factor for v in table[column].to_pylist()]
    forged = table.set_column(index, table.schema.field(index), pa.array(values, kind))
    data = _parquet_bytes(forged, before.st_size if same_size else None)
    with path.open("r+b") as file:
        file.write(data)
        file.truncate()
    if keep_times:
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert after.st_ino == before.st_ino
    if keep_times:
        assert after.st_mtime_ns == before.st_mtime_ns
    if same_size:
        assert after.st_size == before.st_size


def _parquet_bytes(table: pa.Table, size: int | None) -> bytes:
    """`table` as Parquet bytes; with `size`, padded to exactly that many bytes (zeros between
    the last page and the footer, which readers find from the end of the file)."""
    sink = io.BytesIO()
    pq.write_table(table, sink, compression="zstd", store_schema=False, write_statistics=False)
    data = sink.getvalue()
    if size is None:
        return data
    assert len(data) <= size, "the forgery is larger than the original"
    footer = len(data) - 8 - int.from_bytes(data[-8:-4], "little")
    return data[:footer] + bytes(size - len(data)) + data[footer:]


def test_a_forged_partition_is_quarantined_and_fetched_again_never_adopted(
    running: RunningSandbox, tmp_path: Path
) -> None:
    _, start = _synced(running, tmp_path)
    assert view_differences(running, tmp_path, start) == []
    moved, kept = (
        PartitionKey.transactions(start + timedelta(days=1)),
        PartitionKey.transactions(start + timedelta(days=3)),
    )
    _forge(_part(tmp_path, moved), "publisher_net_revenue", 100, keep_times=False)
    _forge(_part(tmp_path, kept), "publisher_net_revenue", 100, keep_times=True)
    published._checks.clear()  # a reader's next check (at most two seconds later) finds them
    unread = {str(key.start) for key in (moved, kept)}
    differences = view_differences(running, tmp_path, start)  # the forged days are not read at all
    assert sorted(line.split(":")[0] for line in differences) == sorted(unread)
    assert all(": views None," in line for line in differences), differences
    (held,) = take_snapshot(tmp_path).coverage  # and no period holding them is said to be whole
    assert not any(first <= key.start <= last for key in (moved, kept) for first, last in held.runs)

    again = _sync(running, tmp_path, running.sandbox.now.date())  # a sync of other days
    assert sorted((r.action, r.key) for r in again.repairs if r.key) == sorted(
        [("quarantined", moved), ("quarantined", kept)], key=str
    )
    assert all("not what the sync stored" in r.detail for r in again.repairs)
    assert {moved, kept} <= {r.key for r, _ in again.stored}  # fetched again, whatever the range
    assert view_differences(running, tmp_path, start) == []
    assert main(["verify", "--data-dir", str(tmp_path)]) == 0
    quarantined = sorted((tmp_path / "quarantine").rglob("part.*.parquet"))
    assert len(quarantined) == 2  # kept for inspection, outside the lake


def test_verify_finds_a_forged_partition_whose_times_were_put_back(
    running: RunningSandbox, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, start = _synced(running, tmp_path)
    key = PartitionKey.transactions(start + timedelta(days=2))
    _forge(_part(tmp_path, key), "publisher_net_revenue", 100, keep_times=True)
    assert main(["verify", "--fast", "--data-dir", str(tmp_path)]) == 1  # its change time gave it away
    assert "not what the sync stored" in capsys.readouterr().out
    assert Manifest.load(tmp_path, "alpha").get(key) is None  # fetched again by the next sync
    _sync(running, tmp_path, start)
    assert view_differences(running, tmp_path, start) == []
    assert main(["verify", "--data-dir", str(tmp_path)]) == 0


def test_a_forged_rollup_with_its_size_mtime_and_inode_kept_is_never_served(
    running: RunningSandbox,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(published, "_CHECK_EVERY", 0.0)  # readers check their generation's seal every time
    _, start = _synced(running, tmp_path)
    assert fresh_rollups(tmp_path) == ["alpha"]
    with connect(tmp_path) as con:
        revenue = con.sql("SELECT sum(revenue) FROM site_performance").fetchall()
    month = running.sandbox.now.date().strftime("%Y-%m")
    rollup = tmp_path / "rollups" / "site=alpha" / "site_performance" / f"{month}.parquet"
    _forge(rollup, "revenue", 3, keep_times=True, same_size=True)
    with connect(tmp_path) as con:  # a reader finds its generation's seal broken: never the forgery
        assert con.sql("SELECT sum(revenue) FROM site_performance").fetchall() == revenue

    assert main(["catalog", "--data-dir", str(tmp_path)]) == 0  # any writer looks by content
    assert "rollups of alpha: rebuilt" in capsys.readouterr().out
    with connect(tmp_path) as con:
        assert con.sql("SELECT sum(revenue) FROM site_performance").fetchall() == revenue

    _forge(rollup, "revenue", 3, keep_times=True, same_size=True)  # again, and verify finds it
    assert main(["verify", "--data-dir", str(tmp_path)]) == 1
    assert "rollup files differ from what their refresh wrote" in capsys.readouterr().out
    with connect(tmp_path) as con:
        assert con.sql("SELECT sum(revenue) FROM site_performance").fetchall() == revenue
    assert main(["verify", "--data-dir", str(tmp_path)]) == 0
    assert view_differences(running, tmp_path, start) == []


def _copies(source: Path, root: Path) -> dict[str, Path]:
    """The data folder copied as people copy it: `cp -a`, `cp -r`, `rsync -a`, and a tar archive."""
    made = {"cp -a": root / "cp-a", "cp -r": root / "cp-r", "tar": root / "tar"}
    subprocess.run(["cp", "-a", str(source), str(made["cp -a"])], check=True)
    subprocess.run(["cp", "-r", str(source), str(made["cp -r"])], check=True)
    if shutil.which("rsync"):
        made["rsync -a"] = root / "rsync"
        subprocess.run(["rsync", "-a", f"{source}/", str(made["rsync -a"])], check=True)
    archive = root / "lake.tar"
    with tarfile.open(archive, "w") as tar:
        tar.add(source, arcname="data")
    with tarfile.open(archive) as tar:
        tar.extractall(made["tar"], filter="tar")
    made["tar"] = made["tar"] / "data"
    return made


def test_a_copied_moved_or_restored_lake_verifies_clean_without_rebuilding(
    running: RunningSandbox, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data_dir = tmp_path / "data"
    _, start = _synced(running, data_dir)
    built = load_state(site_places(data_dir, "alpha"))
    assert built is not None
    capsys.readouterr()
    for how, copy in _copies(data_dir, tmp_path).items():
        assert fresh_rollups(copy) == ["alpha"], how  # the same content: its rollups still answer
        assert main(["verify", "--data-dir", str(copy)]) == 0, how
        out = capsys.readouterr().out
        assert "all intact" in out and "rebuilt" not in out, (how, out)
        state = load_state(site_places(copy, "alpha"))
        assert state is not None and state.files == built.files, how  # nothing was rebuilt
        assert main(["verify", "--fast", "--data-dir", str(copy)]) == 0, how
        assert view_differences(running, copy, start) == [], how


def test_a_client_clock_ahead_of_the_service_never_settles_a_day_the_service_is_filling(
    running: RunningSandbox, tmp_path: Path
) -> None:
    start = running.sandbox.now.date() - timedelta(days=DAYS - 1)
    first = _sync(running, tmp_path, start, now=lambda: running.sandbox.now + timedelta(days=4))
    assert [(site, skew) for site, skew in first.clock_skews] == [("alpha", timedelta(days=4))]
    assert "this machine's clock is 4 days ahead of the service's" in first.summary()
    today = PartitionKey.transactions(running.sandbox.now.date())
    entry = Manifest.load(tmp_path, "alpha").get(today)
    assert entry is not None and not entry.settled  # the service's own day: still being filled
    assert entry.fetched_at == running.sandbox.now  # dated by the service's clock

    running.sandbox.set_now(running.sandbox.now + timedelta(days=2))  # the service moves on
    _sync(running, tmp_path, start, now=lambda: running.sandbox.now + timedelta(days=4))
    assert view_differences(running, tmp_path, start) == []
    assert main(["verify", "--data-dir", str(tmp_path)]) == 0


def test_a_clock_off_the_services_is_said_once_per_site(caplog: pytest.LogCaptureFixture) -> None:
    """The sync command said it four times (a log line per lane, then its warning); the lanes log
    it only when the caller says nothing itself (the result's warning is then the one line)."""
    from commerce_reports.syncing.run import _Lane

    def lane(logs: bool) -> _Lane:
        return _Lane(Path(), [], {}, lambda: None, None, None, None, None, logs_skews=logs)  # type: ignore[arg-type]

    quiet, logging_one = lane(False), lane(True)
    for each in (quiet, logging_one):
        each.skewed("alpha", timedelta(days=10))
        each.skewed("alpha", timedelta(days=10))
    assert quiet.skews == logging_one.skews == [("alpha", timedelta(days=10))]
    (said,) = [r.getMessage() for r in caplog.records]
    assert said.startswith("alpha: this machine's clock is 10 days ahead of the service's")
