"""Damage is found and repaired: bad files quarantined, manifests rebuilt, stale entries reconciled."""

from __future__ import annotations

import json
from datetime import date, timedelta
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from commerce_reports.api import status, sync
from commerce_reports.cli import main
from commerce_reports.contract import PartitionKey
from commerce_reports.errors import LakeError
from commerce_reports.files import sha256_of
from commerce_reports.lake import Manifest, verify, write_partition
from commerce_reports.sandbox.runner import RunningSandbox
from commerce_reports.sites import SiteProfile
from tests.lake.conftest import options_for, profiles

DAYS = 6


def ledger(running: RunningSandbox, data_dir: Path) -> tuple[SiteProfile, date, list[PartitionKey]]:
    """Sync alpha's last DAYS updateDate days (no aggregates); their keys, oldest first."""
    alpha = profiles(running)[0]
    start = running.sandbox.now.date() - timedelta(days=DAYS - 1)
    result = _sync(running, data_dir, alpha, start)
    assert result.ok and len(result.stored) == DAYS
    return alpha, start, [PartitionKey.transactions(start + timedelta(days=n)) for n in range(DAYS)]


def _sync(running: RunningSandbox, data_dir: Path, alpha: SiteProfile, start: date):  # type: ignore[no-untyped-def]
    options = options_for(running)
    return sync(start, sites=[alpha], data_dir=data_dir, options=options, networks=[], merchandise=[])


def part(data_dir: Path, key: PartitionKey) -> Path:
    return data_dir / "lake" / "site=alpha" / key.relpath / "part.parquet"


def test_verify_quarantines_truncated_and_altered_files_and_the_next_sync_refetches_them(
    running: RunningSandbox, tmp_path: Path
) -> None:
    alpha, start, keys = ledger(running, tmp_path)
    truncated, altered = keys[1], keys[3]
    data = part(tmp_path, truncated).read_bytes()
    part(tmp_path, truncated).write_bytes(data[: len(data) // 2])
    table = pq.read_table(part(tmp_path, altered))
    pq.write_table(table, part(tmp_path, altered), compression="snappy")  # readable, other bytes

    report = verify(tmp_path)
    assert report.checked == DAYS and not report.ok
    assert sorted(r.detail.split(":")[0] for r in report.quarantined) == [truncated.relpath, altered.relpath]
    moved = sorted((tmp_path / "quarantine" / "site=alpha").rglob("part.*.parquet"))
    assert [p.parent.relative_to(tmp_path / "quarantine" / "site=alpha").as_posix() for p in moved] == [
        truncated.relpath,
        altered.relpath,
    ]
    manifest = Manifest.load(tmp_path, "alpha")
    assert manifest.get(truncated) is None and manifest.get(altered) is None and len(manifest) == DAYS - 2
    glob = f"{tmp_path}/lake/site=*/transactions/by=*/day=*/part.parquet"
    assert duckdb.connect().execute(f"SELECT count(DISTINCT update_date) FROM '{glob}'").fetchone() == (
        DAYS - 2,
    )

    before = len(running.sandbox.request_log)
    again = _sync(running, tmp_path, alpha, start)
    assert sorted(r.key for r, _ in again.stored) == [truncated, altered]
    assert len(running.sandbox.request_log) - before == 2
    assert main(["verify", "--data-dir", str(tmp_path)]) == 0


def test_status_rebuild_skips_and_quarantines_a_truncated_file(
    running: RunningSandbox, tmp_path: Path
) -> None:
    alpha, _, keys = ledger(running, tmp_path)
    data = part(tmp_path, keys[0]).read_bytes()
    part(tmp_path, keys[0]).write_bytes(data[:100])
    frame = status(sites=[alpha], data_dir=tmp_path, rebuild=True)
    assert frame["partitions"].to_list() == [DAYS - 1]
    assert list((tmp_path / "quarantine").rglob("part.*.parquet"))
    assert Manifest.load(tmp_path, "alpha").get(keys[0]) is None


@pytest.mark.parametrize(
    "text",
    [
        "[]",
        '{"partitions": []}',
        '{"partitions": {"x": {"relpath": 5}}}',
        '{"partitions": {"x": {}}}',
        '{"partitions": {"x": {"relpath": "transactions/by=updateDate/day=2026-03-01", "params": [], '
        '"fetched_at": "2026-03-01T00:00:00+00:00", "rows": 1, "sha256": "x", "schema_version": 2, '
        '"settled": true}}}',
        '{"partitions": {"x": {"relpath": "elsewhere", "params": {}, "fetched_at": "2026-03-01", '
        '"rows": 1, "sha256": "x", "schema_version": 2, "settled": true}}}',
        "null",
    ],
)
def test_a_manifest_of_the_wrong_shape_is_a_clear_lake_error(tmp_path: Path, text: str) -> None:
    path = tmp_path / "lake" / "site=alpha" / "manifest.json"
    path.parent.mkdir(parents=True)
    path.write_text(text)
    with pytest.raises(LakeError, match="is damaged"):
        Manifest.load(tmp_path, "alpha")


@pytest.mark.parametrize("damage", ["missing", "wrong shape"])
def test_a_lost_or_damaged_manifest_is_rebuilt_from_the_files_without_refetching(
    running: RunningSandbox, tmp_path: Path, damage: str
) -> None:
    alpha, start, _ = ledger(running, tmp_path)
    before = {e.relpath: (e.rows, e.sha256, e.fetched_at) for e in Manifest.load(tmp_path, "alpha")}
    manifest = tmp_path / "lake" / "site=alpha" / "manifest.json"
    if damage == "missing":
        manifest.unlink()
    else:
        manifest.write_text(json.dumps({"partitions": {"a": {"relpath": 1}}}))
    requests = len(running.sandbox.request_log)
    result = _sync(running, tmp_path, alpha, start)
    assert result.ok and result.plan.requests == []
    assert len(running.sandbox.request_log) == requests  # nothing fetched again
    assert [r.action for r in result.repairs] == ["rebuilt"]
    assert f"rebuilt from {DAYS} partition files" in result.summary()
    after = {e.relpath: (e.rows, e.sha256, e.fetched_at) for e in Manifest.load(tmp_path, "alpha")}
    assert after == before


def test_a_kill_between_the_file_and_the_manifest_is_reconciled_at_the_next_start(
    running: RunningSandbox, tmp_path: Path
) -> None:
    alpha, start, keys = ledger(running, tmp_path)
    replaced, old_style = keys[2], keys[4]
    stale = Manifest.load(tmp_path, "alpha").get(replaced)
    assert stale is not None
    # The kill point: a newer copy replaced the file, then the process died before the manifest write.
    newer = pq.read_table(part(tmp_path, replaced)).slice(0, 3)
    later = stale.fetched_at + timedelta(minutes=5)
    write_partition(tmp_path, "alpha", replaced, newer.drop_columns(["fetched_at"]), later)
    # An entry written by an older version (no size or time): checked by hash, then left alone.
    path = tmp_path / "lake" / "site=alpha" / "manifest.json"
    payload = json.loads(path.read_text())
    for name in ("size", "mtime_ns"):
        del payload["partitions"][old_style.relpath][name]
    path.write_text(json.dumps(payload))

    result = _sync(running, tmp_path, alpha, start)
    assert [(r.action, r.detail.split(":")[0]) for r in result.repairs] == [("reconciled", replaced.relpath)]
    manifest = Manifest.load(tmp_path, "alpha")
    entry = manifest.get(replaced)
    assert entry is not None and entry.sha256 == sha256_of(part(tmp_path, replaced))
    assert entry.rows == 3 and entry.fetched_at == later
    backfilled = manifest.get(old_style)
    assert backfilled is not None and backfilled.size == part(tmp_path, old_style).stat().st_size


def test_a_file_truncated_since_it_was_recorded_is_quarantined_when_a_sync_starts(
    running: RunningSandbox, tmp_path: Path
) -> None:
    alpha, start, keys = ledger(running, tmp_path)
    data = part(tmp_path, keys[5]).read_bytes()
    part(tmp_path, keys[5]).write_bytes(data[:-40])
    result = _sync(running, tmp_path, alpha, start)
    assert [r.action for r in result.repairs] == ["quarantined"]
    assert [r.key for r, _ in result.stored] == [keys[5]]
    assert pq.read_table(part(tmp_path, keys[5])).num_rows > 0


def test_a_folder_of_the_lake_that_cannot_be_listed_is_named_and_its_partitions_keep_their_entries(
    running: RunningSandbox,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A partition folder the user cannot list (its mode changed by hand, say) looked as if its
    file were gone: the check passed it over (as `Path.rglob` does) and dropped its entry, to fetch
    it again into a folder it cannot read. It is named, with what to do, and nothing is dropped."""
    import os

    alpha, start, keys = ledger(running, tmp_path)
    hidden = os.fspath(part(tmp_path, keys[2]).parent)
    scandir = os.scandir

    def refusing(path: str | os.PathLike[str] = ".") -> object:
        if os.fspath(path) == hidden:
            raise PermissionError(13, "Permission denied", hidden)
        return scandir(path)

    monkeypatch.setattr(os, "scandir", refusing)
    assert main(["verify", "--data-dir", str(tmp_path)]) != 0
    said = capsys.readouterr().err
    assert f"the folder {hidden} of site 'alpha' cannot be listed (Permission denied)" in said
    assert "chmod u+rx" in said and "Traceback" not in said
    with pytest.raises(LakeError, match="cannot be listed"):  # before any request: nothing fetched
        _sync(running, tmp_path, alpha, start)
    monkeypatch.setattr(os, "scandir", scandir)
    assert len(Manifest.load(tmp_path, "alpha")) == DAYS  # every entry kept
    assert main(["verify", "--data-dir", str(tmp_path)]) == 0
