"""Partitions on disk: atomic, typed, evolving without breaking older files."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from commerce_reports.api import SyncOptions, load_transactions
from commerce_reports.contract import PartitionKey, dataset_schema, untyped_rows
from commerce_reports.errors import LakeError, NotAPartition, ValidationError
from commerce_reports.files import remove_stray_files, temp_path
from commerce_reports.lake import rebuild
from commerce_reports.lake.locks import writing_sites
from commerce_reports.lake.manifest import Manifest
from commerce_reports.lake.store import (
    foreign_rows,
    inspect_partition,
    one_version_per_commission,
    scrub_table,
    write_partition,
)
from commerce_reports.params import Filters
from commerce_reports.parse import parse_transactions
from commerce_reports.redaction import holds_secret, redact
from commerce_reports.secret import Secret
from commerce_reports.sites import SiteProfile
from commerce_reports.syncing.plan import SettlePolicy
from tests.factories import body, nested
from tests.lakes import record_as_stored

FETCHED = datetime(2026, 3, 10, 12, tzinfo=UTC)


def test_partition_paths_round_trip_and_name_their_request() -> None:
    key = PartitionKey.aggregate(
        "networks", date(2026, 2, 1), Filters(country="us", device_type="MBL"), "month"
    )
    assert key.relpath == "networks/slice=country%3DUS%26deviceType%3DMBL/grain=month/start=2026-02-01"
    assert PartitionKey.from_relpath(key.relpath) == key
    assert key.params() == {
        "clickDateStart": "2026-02-01",
        "clickDateEnd": "2026-03-01",
        "deviceType": "MBL",
        "country": "US",
    }
    day = PartitionKey.transactions(date(2026, 2, 3), "commissionDate")
    assert day.relpath == "transactions/by=commissionDate/day=2026-02-03" and day.end == date(2026, 2, 4)
    with pytest.raises(ValidationError):
        PartitionKey.aggregate("networks", date(2026, 2, 2), Filters(), "month")
    with pytest.raises(LakeError):
        PartitionKey.from_relpath("transactions/by=someDate/day=2026-01-01")


def test_writes_are_typed_zstd_and_leave_no_temporary_file(tmp_path: Path) -> None:
    key = PartitionKey.transactions(date(2026, 3, 3))
    written = write_partition(
        tmp_path, "alpha", key, parse_transactions(body([nested(1), nested(2)])), FETCHED
    )
    assert written.rows == 2 and written.path.name == "part.parquet"
    assert os.listdir(written.path.parent) == ["part.parquet"]
    stored = pq.read_table(written.path)
    assert stored.schema == dataset_schema("transactions")
    assert stored["fetched_at"].to_pylist() == [FETCHED, FETCHED]
    assert pq.ParquetFile(written.path).metadata.row_group(0).column(0).compression == "ZSTD"


def test_only_debris_of_dead_writers_of_this_machine_is_removed(tmp_path: Path) -> None:
    folder = tmp_path / "lake" / "site=alpha" / "transactions" / "by=updateDate" / "day=2026-03-03"
    folder.mkdir(parents=True)
    live = temp_path(folder / "part.parquet")  # this process: alive
    host = live.name.removeprefix(".part.parquet.").split(".")[0].rsplit("-", 1)[0]
    dead = folder / f".part.parquet.{host}-999999.abc123.tmp"
    older = folder / ".part.parquet.999998.abc123.tmp"  # round 1's names carried no host
    elsewhere = folder / ".part.parquet.another-machine-999999.abc123.tmp"  # its pid means nothing here
    for path in (live, dead, older, elsewhere):
        path.write_bytes(b"half a file")
    assert sorted(remove_stray_files(tmp_path)) == sorted([dead, older])
    assert live.exists() and elsewhere.exists() and not dead.exists() and not older.exists()


def test_published_generations_are_searched_for_debris_two_levels_deep(tmp_path: Path) -> None:
    # A generation is a lake's worth of folders of hard links (never written through a temporary
    # file): its record's debris is found, its links' folders are not walked.
    generation = tmp_path / "views" / "20261127T190000-abcd"
    linked = generation / "lake" / "site=alpha" / "transactions" / "by=updateDate" / "day=2026-03-03"
    linked.mkdir(parents=True)
    host = temp_path(tmp_path / "x").name.removeprefix(".x.").split(".")[0].rsplit("-", 1)[0]
    pointer = tmp_path / "views" / f".current.json.{host}-999999.abc123.tmp"
    record = generation / f".reading.json.{host}-999999.abc123.tmp"
    deep = linked / f".part.parquet.{host}-999999.abc123.tmp"
    for path in (pointer, record, deep):
        path.write_bytes(b"half a file")
    assert sorted(remove_stray_files(tmp_path, shallow=["views"])) == sorted([pointer, record])
    assert deep.exists()
    assert remove_stray_files(tmp_path) == [deep]  # searched whole when not said otherwise


def test_a_writer_searches_the_whole_folder_for_debris_only_after_a_writer_was_stopped(
    tmp_path: Path,
) -> None:
    # Deep in the folder only a writer of sites writes, and it marks the data folder while it
    # does: a killed writer's mark (a dead pid's temporary name) makes the next writer search it
    # all; otherwise a writer searches the top levels, where readers keep their records.
    host = temp_path(tmp_path / "x").name.removeprefix(".x.").split(".")[0].rsplit("-", 1)[0]
    day = tmp_path / "lake" / "site=alpha" / "transactions" / "by=updateDate" / "day=2026-03-03"
    day.mkdir(parents=True)
    deep = day / f".part.parquet.{host}-999999.abc123.tmp"
    record = tmp_path / "lake" / "site=alpha" / f".digests.json.{host}-999999.abc123.tmp"
    for path in (deep, record):
        path.write_bytes(b"half a file")
    with writing_sites(tmp_path, ["alpha"]):
        marks = list(tmp_path.glob(".writing.*.tmp"))
        assert len(marks) == 1 and temp_path(tmp_path / "writing").name.split(".")[2] in marks[0].name
    assert not record.exists() and deep.exists()  # no writer was stopped: the top alone
    assert not list(tmp_path.glob(".writing.*"))  # a writer that ends takes its mark away
    (tmp_path / f".writing.{host}-999999.abc123.tmp").touch()  # the mark of a writer killed
    with writing_sites(tmp_path, ["beta"]):
        pass
    assert not deep.exists()
    assert not [p for p in tmp_path.rglob("*") if p.name.endswith(".tmp")]


def test_a_lost_manifest_is_rebuilt_from_the_files(tmp_path: Path) -> None:
    keys = [PartitionKey.transactions(date(2026, 3, d)) for d in (1, 2)]
    for key in keys:
        row = nested(1, commission={"updateDate": key.start.isoformat()})  # a row of its day
        written = write_partition(tmp_path, "alpha", key, parse_transactions(body([row])), FETCHED)
        Manifest.record(tmp_path, "alpha", key, written, FETCHED, settled=True)
    before = {e.relpath: (e.rows, e.sha256) for e in Manifest.load(tmp_path, "alpha")}
    (tmp_path / "lake" / "site=alpha" / "manifest.json").unlink()
    rebuilt, repairs = rebuild(tmp_path, "alpha", SettlePolicy())
    assert {e.relpath: (e.rows, e.sha256) for e in rebuilt} == before
    assert [r.action for r in repairs] == ["rebuilt"]
    assert all(e.settled for e in Manifest.load(tmp_path, "alpha"))


def test_a_rebuilt_manifest_takes_in_no_file_that_nobody_checked(tmp_path: Path) -> None:
    """A file copied into the lake (a day of another site's, at a day never fetched, or into a site
    folder no sync made) was taken in by the next rebuild of a manifest, and became what every view
    read; a rebuild now takes in only what a record vouches for: a stopped sync's intent, or what
    was last published (a file nobody checked is quarantined, and fetched again)."""
    key, copied = PartitionKey.transactions(date(2026, 3, 1)), PartitionKey.transactions(date(2026, 3, 5))
    row = nested(1, commission={"updateDate": key.start.isoformat()})
    written = write_partition(tmp_path, "alpha", key, parse_transactions(body([row])), FETCHED)
    Manifest.record(tmp_path, "alpha", key, written, FETCHED, settled=True)  # its intent vouches
    alpha = tmp_path / "lake" / "site=alpha"
    for target in (alpha / copied.relpath, tmp_path / "lake" / "site=gamma" / key.relpath):
        target.mkdir(parents=True)
        shutil.copy(written.path, target / "part.parquet")
    (alpha / "manifest.json").unlink()
    rebuilt, repairs = rebuild(tmp_path, "alpha", SettlePolicy())
    assert [e.key for e in rebuilt] == [key]
    assert [(r.action, r.key) for r in repairs] == [("rebuilt", None), ("quarantined", None)]
    assert "no record vouches for it" in repairs[1].detail
    gamma, repairs = rebuild(tmp_path, "gamma", SettlePolicy())
    assert list(gamma) == [] and [r.action for r in repairs] == ["rebuilt", "quarantined"]
    assert not (tmp_path / "lake" / "site=gamma" / key.relpath / "part.parquet").exists()


def test_swapped_site_folders_are_said_and_a_damaged_manifest_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Two site folders swapped relabelled each site's figures as the other's, verify and sync saying
    nothing (each manifest names its site); a damaged manifest said so once per file of its site
    at every query (thousands of lines for a few years of days): once now, naming the remedy."""
    from commerce_reports.db.listing import left_out_files, manifest_entries, site_listing
    from commerce_reports.lake.digests import SiteDigests
    from commerce_reports.lake.loading import load_or_rebuild
    from commerce_reports.lake.manifest import ForeignManifest

    days = [PartitionKey.transactions(date(2026, 3, d)) for d in (1, 2, 3)]
    for site in ("alpha", "beta"):
        for key in days:
            row = nested(1, commission={"updateDate": key.start.isoformat()})
            written = write_partition(tmp_path, site, key, parse_transactions(body([row])), FETCHED)
            Manifest.record(tmp_path, site, key, written, FETCHED, settled=True)
    lake = tmp_path / "lake"
    (lake / "site=alpha").rename(lake / "moved")
    (lake / "site=beta").rename(lake / "site=alpha")
    (lake / "moved").rename(lake / "site=beta")
    with pytest.raises(ForeignManifest, match=r"is site beta's, not alpha's: the site folders were renamed"):
        load_or_rebuild(tmp_path, "alpha")  # never rebuilt from the files: they are beta's
    assert manifest_entries(tmp_path, "alpha") is None
    (lake / "site=alpha" / "manifest.json").write_text('{"partitions": ')
    caplog.clear()
    folder = lake / "site=alpha"
    for _ in range(2):  # two queries
        listing = site_listing(folder, SiteDigests(tmp_path, "alpha"))
        left = left_out_files(folder, listing, manifest_entries(tmp_path, "alpha"), {}, {})
        assert len(left) == len(days)
    said = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(said) == 1 and "is damaged" in said[0] and "status --rebuild --site alpha" in said[0], said


def test_a_lake_of_a_newer_release_is_refused_and_left_as_it_is(tmp_path: Path) -> None:
    """A release that did not know a newer manifest's format called it damaged and quarantined
    every partition of the site at a mere `status` (the upgrades probe: a downgrade emptied a
    lake). The manifest says its format; a later one is refused in a line, nothing moved."""
    import json
    import os
    import subprocess
    import sys

    from commerce_reports.lake.loading import load_or_rebuild
    from commerce_reports.lake.manifest import FORMAT, NewerManifest

    key = PartitionKey.transactions(date(2026, 3, 1))
    row = nested(1, commission={"updateDate": key.start.isoformat()})
    written = write_partition(tmp_path, "alpha", key, parse_transactions(body([row])), FETCHED)
    Manifest.record(tmp_path, "alpha", key, written, FETCHED, settled=True)
    path = tmp_path / "lake" / "site=alpha" / "manifest.json"
    data = json.loads(path.read_text())
    assert data["format"] == FORMAT
    path.write_text(json.dumps({**data, "format": FORMAT + 1}))
    kept = path.read_bytes(), written.path.read_bytes()
    with pytest.raises(NewerManifest, match=r"a newer release of commerce-reports wrote .* upgrade"):
        load_or_rebuild(tmp_path, "alpha")
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMMERCE_REPORTS_")}
    for command in (["status"], ["verify"]):
        done = subprocess.run(
            [sys.executable, "-m", "commerce_reports", *command, "--data-dir", str(tmp_path)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode != 0 and "upgrade commerce-reports" in done.stdout + done.stderr, done
        assert "Traceback" not in done.stderr
    assert (path.read_bytes(), written.path.read_bytes()) == kept  # neither moved nor rewritten
    assert not (tmp_path / "quarantine").exists()


def test_a_file_this_user_may_not_read_is_said_so_not_called_damaged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A partition chmod 000 was said to hold "not what the sync stored (its sha256 differs)" by
    readers and "not readable Parquet" by verify: the fix is its permissions, not its content."""
    from commerce_reports.db.listing import left_out_files, manifest_entries
    from commerce_reports.lake import repair

    key = PartitionKey.transactions(date(2026, 3, 1))
    row = nested(1, commission={"updateDate": key.start.isoformat()})
    written = write_partition(tmp_path, "alpha", key, parse_transactions(body([row])), FETCHED)
    Manifest.record(tmp_path, "alpha", key, written, FETCHED, settled=True)
    folder, relpath = tmp_path / "lake" / "site=alpha", f"{key.relpath}/part.parquet"
    entries = manifest_entries(tmp_path, "alpha")
    left = left_out_files(folder, {relpath: "unreadable:(0, 0, 0, 0, 0)"}, entries, {}, {})
    assert "cannot be read (this user's permissions on it, or the disk)" in left[relpath]

    def refused(path: Path, relpath: str) -> None:
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(repair, "_inspect", refused)
    (found,) = repair.check_site(tmp_path, "alpha", None, read_all=True).repairs
    assert "not readable by this user (Permission denied: mend its permissions)" in found.detail


def test_parquet_of_other_columns_is_said_to_be_no_partition_not_unreadable(tmp_path: Path) -> None:
    """A valid Parquet file of other columns put at a partition's place was quarantined as "not
    readable Parquet" (a disk's damage, to its reader): it is Parquet, of something else."""
    from commerce_reports.lake.repair import check_site

    key = PartitionKey.transactions(date(2026, 3, 1))
    row = nested(1, commission={"updateDate": key.start.isoformat()})
    written = write_partition(tmp_path, "alpha", key, parse_transactions(body([row])), FETCHED)
    Manifest.record(tmp_path, "alpha", key, written, FETCHED, settled=True)
    pq.write_table(pa.table({"order": [1, 2], "total": ["9.99", "5.00"]}), written.path)
    (found,) = check_site(tmp_path, "alpha", None, read_all=True).repairs
    assert found.action == "quarantined"
    assert "Parquet but not a transactions partition; moved to" in found.detail, found.detail
    written.path.parent.mkdir(parents=True)
    pq.write_table(pa.table({"order": [1, 2]}), written.path)  # the same, found by a rebuild
    (tmp_path / "lake" / "site=alpha" / "manifest.json").unlink()
    _, repairs = rebuild(tmp_path, "alpha")
    assert [r.detail.split("; ")[0] for r in repairs if r.action == "quarantined"] == [
        f"{key.relpath}: Parquet but not a transactions partition"
    ]
    with pytest.raises(
        NotAPartition, match=r"part\.\w+\.parquet is Parquet but not a transactions partition \(columns order"
    ):
        inspect_partition(next((tmp_path / "quarantine").rglob("*.parquet")), "transactions")


def test_a_partition_replaced_by_a_link_is_never_read(tmp_path: Path) -> None:
    """A partition replaced by a symbolic link to a file outside the data folder (of the very same
    content) passed verify and was published as a link: the lake then read a file outside it."""
    from commerce_reports.db.listing import left_out_files, manifest_entries, site_listing
    from commerce_reports.lake.digests import SiteDigests
    from commerce_reports.lake.repair import check_site

    key = PartitionKey.transactions(date(2026, 3, 1))
    row = nested(1, commission={"updateDate": key.start.isoformat()})
    data_dir = tmp_path / "data"
    written = write_partition(data_dir, "alpha", key, parse_transactions(body([row])), FETCHED)
    Manifest.record(data_dir, "alpha", key, written, FETCHED, settled=True)
    outside = tmp_path / "elsewhere.parquet"
    shutil.copy(written.path, outside)
    written.path.unlink()
    written.path.symlink_to(outside)
    folder = data_dir / "lake" / "site=alpha"
    listing = site_listing(folder, SiteDigests(data_dir, "alpha"))
    (reason,) = left_out_files(folder, listing, manifest_entries(data_dir, "alpha"), {}, {}).values()
    assert reason.startswith("it is a symbolic link")
    (found,) = check_site(data_dir, "alpha", None, read_all=True).repairs
    assert found.action == "quarantined" and "a symbolic link where a sync writes a file" in found.detail
    assert not written.path.is_symlink() and outside.is_file() and found.key == key


def test_a_check_that_cannot_record_what_it_found_says_so_and_its_verdict_stands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a full disk, verify adopted a partition a sync stored but could not record, then failed
    to save the manifest: one error line, the verdict lost (a full disk shifts which case it meets)."""
    import errno

    from commerce_reports.lake.repair import check_site

    key = PartitionKey.transactions(date(2026, 3, 1))
    row = nested(1, commission={"updateDate": key.start.isoformat()})
    write_partition(tmp_path, "alpha", key, parse_transactions(body([row])), FETCHED)  # not recorded

    def full(self: Manifest) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Manifest, "save", full)
    found = check_site(tmp_path, "alpha", None, read_all=True)
    assert [r.action for r in found.repairs] == ["reconciled", "ignored"]
    assert "the manifest could not record this (the disk is full)" in found.repairs[1].detail


def test_older_partitions_without_newer_columns_stay_readable(tmp_path: Path) -> None:
    """A file written before a column existed reads with that column null; its money, a binary
    float then, reads as the Decimal it stood for."""
    old_key, new_key = (
        PartitionKey.transactions(date(2026, 3, 1)),
        PartitionKey.transactions(date(2026, 3, 2)),
    )
    for key in (old_key, new_key):
        row = nested(1, commission={"updateDate": key.start.isoformat(), "publisherNetRevenue": 0.1})
        written = write_partition(tmp_path, "alpha", key, parse_transactions(body([row])), FETCHED)
        Manifest.record(tmp_path, "alpha", key, written, FETCHED, settled=True)
    old_file = tmp_path / "lake" / "site=alpha" / old_key.relpath / "part.parquet"
    table = pq.read_table(old_file).drop_columns(["page_utm_content", "extra"])
    index = table.schema.get_field_index("publisher_net_revenue")
    table = table.set_column(
        index, "publisher_net_revenue", table["publisher_net_revenue"].cast(pa.float64())
    )
    pq.write_table(table, old_file)  # as an older version wrote it, and recorded it
    record_as_stored(tmp_path, "alpha", old_key, FETCHED)
    profile = SiteProfile("alpha", Secret("unused-key-123"), "http://127.0.0.1:9")
    frame = load_transactions(
        "2026-03-01",
        "2026-03-02",
        site=[profile],
        data_dir=tmp_path,
        options=SyncOptions(now=lambda: FETCHED, pace=0, progress=False),
    )
    assert frame.height == 2
    assert frame.sort("day")["page_utm_content"].to_list() == [None, "page-utmContent"]
    assert frame["publisher_net_revenue"].dtype == pl.Decimal(18, 4)
    assert frame["publisher_net_revenue"].to_list() == [Decimal("0.1")] * 2  # not 0.1000000000000000055


def test_a_commission_once_per_partition_and_rows_of_another_day_counted(tmp_path: Path) -> None:
    """The last row of a commission the answer holds twice is kept (rows without an id all); a
    row of another update day is kept and counted, in the manifest and in a rebuilt one too."""
    key = PartitionKey.transactions(date(2026, 11, 3))  # the factory's update day
    rows = [
        nested(1),
        nested(2),
        nested(1, commission={"publisherNetRevenue": 1.5}),  # a later version of c1 in the same day
        nested(3, commission={"commissionId": None}),
        nested(4, commission={"commissionId": None, "updateDate": "2026-11-02"}),
    ]
    table = parse_transactions(body(rows))
    kept, collapsed = one_version_per_commission(table)
    assert collapsed == 1 and kept["commission_id"].to_pylist() == ["c2", "c1", None, None]
    assert kept["publisher_net_revenue"][1].as_py() == Decimal("1.5")
    written = write_partition(tmp_path, "alpha", key, table, FETCHED)
    assert (written.rows, written.collapsed, written.foreign) == (4, 1, 1)
    entry = Manifest.record(tmp_path, "alpha", key, written, FETCHED, settled=False)
    assert (entry.collapsed, entry.foreign, entry.doubtful) == (1, 1, 1)
    assert foreign_rows(kept, key.params()) == 1 and foreign_rows(kept, None) == 0
    (tmp_path / "lake" / "site=alpha" / "manifest.json").unlink()
    rebuilt, _ = rebuild(tmp_path, "alpha", SettlePolicy())
    assert [(e.foreign, e.settled) for e in rebuilt] == [(1, False)]


def test_status_rebuilds_a_damaged_manifest_on_its_own(tmp_path: Path) -> None:
    from commerce_reports.api import status

    key = PartitionKey.transactions(date(2026, 3, 1))
    written = write_partition(tmp_path, "alpha", key, parse_transactions(body([nested(1)])), FETCHED)
    Manifest.record(tmp_path, "alpha", key, written, FETCHED, settled=True)
    manifest = tmp_path / "lake" / "site=alpha" / "manifest.json"
    manifest.write_text("{not json")
    with pytest.raises(LakeError, match="status --rebuild"):
        Manifest.load(tmp_path, "alpha")
    profile = SiteProfile("alpha", Secret("unused-key-123"), "http://127.0.0.1:9")
    frame = status(sites=[profile], data_dir=tmp_path)
    assert frame["partitions"].to_list() == [1] and frame["rows"].to_list() == [1]
    assert Manifest.load(tmp_path, "alpha").get(key) is not None  # written back


def test_no_known_secret_reaches_a_stored_file(tmp_path: Path) -> None:
    key_value = "site-key-4f9a0c77e1"
    Secret(key_value)  # every Secret registers its value: the store knows it
    rows = [
        nested(1, debug={"echo": f"Authorization: secret {key_value}"}),
        nested(2, account={"campaignName": f"campaign {key_value}"}),
        nested(
            3, product=[{"productId": "p", "productName": f"kettle {key_value}", "price": 1, "quantity": 1}]
        ),
        nested(4, debug={"header": "Authorization: secret tok3n-never-registered-42"}),
        nested(5),
    ]
    written = write_partition(
        tmp_path,
        "alpha",
        PartitionKey.transactions(date(2026, 3, 3)),
        parse_transactions(body(rows)),
        FETCHED,
    )
    stored = pq.read_table(written.path).to_pylist()
    text = json.dumps(stored, default=str)
    assert key_value not in text and "tok3n-never-registered-42" not in text
    assert (
        stored[1]["campaign_name"] == "campaign ***"
        and stored[2]["products"][0]["product_name"] == "kettle ***"
    )
    assert stored[4]["campaign_name"] == "Spring"  # what holds no secret is untouched


def test_a_short_key_the_extra_column_writes_escaped_is_masked_there_too(tmp_path: Path) -> None:
    """Unknown fields are kept in `extra` as JSON text: a key of 4-7 characters holding `"` or `\\`
    (no disguise is looked for at that length) was stored as JSON escapes it, where a plain search
    for it found nothing."""
    short = 'q"1\\z7k'
    Secret(short)
    table = parse_transactions(body([nested(1, debug={"echo": short}), nested(2)]))
    written = write_partition(tmp_path, "alpha", PartitionKey.transactions(date(2026, 3, 3)), table, FETCHED)
    stored = pq.read_table(written.path).to_pylist()
    assert not holds_secret(json.dumps(stored, default=str), [short])
    assert json.loads(stored[0]["extra"])["debug"] == {"echo": "***"}


TOKEN = "tok3nAbcdef0123456789"  # key-shaped: what `redact` masks after a key's label
LABELS = ("Authorization: secret ", "x-api-key: ", "secret ", "bearer ", "?key=", "&api_key=", "?token=")


def _stored_as(texts: list[str]) -> list[str]:
    """The texts as the store keeps them, each in a column of its own (the store screens a table's
    columns together, then scrubs each column that holds a suspect string, every value of it)."""
    stored = scrub_table(pa.table({f"c{n}": [text] for n, text in enumerate(texts)}))
    return [column[0].as_py() for column in stored.columns]


def test_the_store_masks_every_key_shape_that_redaction_masks_whatever_its_spaces_and_case() -> None:
    """A stored string is screened by Arrow's RE2, whose `\\s` is ASCII's six characters and whose
    case folding is not Python's, before `redact` masks it. Every space Python's `\\s` matches
    after a label, every letter its IGNORECASE matches in a label (`İ`, `ı`, `ſ`, the Kelvin sign),
    and a URL's password: each is masked in the table as in a log line."""
    every = "".join(map(chr, range(0x110000)))
    spaces = re.findall(r"\s", every)
    folded = {  # each non-ASCII character Python matches to an ASCII letter, ignoring case
        c: letter
        for c in re.findall("[a-z]", every[128:], re.IGNORECASE)
        for letter in "abcdefghijklmnopqrstuvwxyz"
        if re.fullmatch(letter, c, re.IGNORECASE)
    }
    assert folded == {"İ": "i", "ı": "i", "ſ": "s", "\u212a": "k"}  # what the screen is written for
    texts = [f"secret{space}{TOKEN}" for space in spaces] + [f"bearer{space * 2}{TOKEN}" for space in spaces]
    for label in LABELS:
        for at, letter in enumerate(label):
            texts += [
                f"{label[:at]}{c}{label[at + 1 :]}{TOKEN}" for c, to in folded.items() if to == letter.lower()
            ]
    texts += ["smtp://me:hunter2@mail.example", "see https://user:pa55word@host/x", "kettle, 2 l"]
    masked = [redact(text) for text in texts]
    assert _stored_as(texts) == masked
    assert sum(text != mask for text, mask in zip(texts, masked, strict=True)) == len(texts) - 1


@settings(max_examples=120, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from([*LABELS, TOKEN, "://", "u:p@", ":", "=", "/", "@", "İ", "ſ", "\u2003", "\x85"]),
            st.text(max_size=6),
        ),
        max_size=8,
    ).map("".join)
)
@example("Secret\u00a0" + TOKEN)
def test_a_stored_string_is_what_redaction_makes_of_it(text: str) -> None:
    assert _stored_as([text]) == [redact(text)]


def test_rows_the_parser_could_not_type_are_counted(tmp_path: Path) -> None:
    rows = [nested(1), nested(2, commission={"publisherNetRevenue": "lots", "updateDate": "yesterday"})]
    table = parse_transactions(body([*rows, nested(3, debug={"note": '"_unparsed": in a value'})]))
    assert untyped_rows(table) == 1
    written = write_partition(tmp_path, "alpha", PartitionKey.transactions(date(2026, 3, 3)), table, FETCHED)
    assert written.untyped == 1


def test_long_slice_names_are_bounded_and_recoverable(tmp_path: Path) -> None:
    long = Filters(page_utm_medium=["m" * 400], link_utm_source=["é&=%" * 30])
    key = PartitionKey.aggregate("networks", date(2026, 2, 1), long, "month")
    folder = key.relpath.split("/")[1]
    assert len(folder.encode()) <= 240 and folder.startswith("slice=~")
    assert PartitionKey.from_relpath(key.relpath, key.params()) == key
    with pytest.raises(LakeError, match="cut name"):
        PartitionKey.from_relpath(key.relpath)
    short = PartitionKey.aggregate("networks", date(2026, 2, 1), Filters(device_type="MBL"), "month")
    assert short.relpath == "networks/slice=deviceType%3DMBL/grain=month/start=2026-02-01"  # as ever


def test_a_flipped_bit_anywhere_in_a_partition_is_caught_or_harmless(tmp_path: Path) -> None:
    key = PartitionKey.transactions(date(2026, 3, 3))
    written = write_partition(
        tmp_path, "alpha", key, parse_transactions(body([nested(n) for n in range(5)])), FETCHED
    )
    original, data = pq.read_table(written.path), written.path.read_bytes()
    copy = tmp_path / "copy.parquet"
    chosen = random.Random(7)
    for position in sorted(chosen.sample(range(len(data)), 300)):
        damaged = bytearray(data)
        damaged[position] ^= 1 << chosen.randrange(8)
        copy.write_bytes(bytes(damaged))
        try:
            inspect_partition(copy, "transactions")
        except LakeError:
            continue
        assert pq.read_table(copy).equals(original), f"a flip at byte {position} passed for data"


def test_a_garbled_column_name_is_quarantined_not_a_traceback(tmp_path: Path) -> None:
    keys = [PartitionKey.transactions(date(2026, 3, d)) for d in (1, 2)]
    for key in keys:
        write_partition(tmp_path, "alpha", key, parse_transactions(body([nested(1)])), FETCHED)
    path = tmp_path / "lake" / "site=alpha" / keys[0].relpath / "part.parquet"
    data = path.read_bytes()
    names = [m.start() for m in re.finditer(rb"fetched_at|campaign_name|extra", data)]
    for position in sorted({p + d for p in names for d in range(-3, 16)}, reverse=True):
        damaged = bytearray(data)
        damaged[position] ^= 0x80
        path.write_bytes(bytes(damaged))
        try:
            pq.read_table(path).column_names  # noqa: B018
        except UnicodeDecodeError:
            break
        except Exception:  # other damage: look further
            continue
    else:
        pytest.fail("no byte of the footer garbles a column name")
    manifest, repairs = rebuild(tmp_path, "alpha")
    assert [r.action for r in repairs] == ["rebuilt", "quarantined"]
    assert [e.key for e in manifest] == [keys[1]]


def test_an_answer_whose_totals_disagree_with_its_rows_is_a_warning() -> None:
    """Totals doubled by a hostile proxy were stored without a word (report_totals showed the
    gap to whoever looked); rounding (cents over many rows) is not a disagreement."""
    from commerce_reports.syncing.plan import PlannedRequest
    from commerce_reports.syncing.result import disagreements

    window = PartitionKey.aggregate("networks", date(2026, 10, 1), Filters(), "month")
    request = PlannedRequest("alpha", window, "missing")

    def answer(revenue: list[str], total: str) -> pa.Table:
        money = pa.decimal128(18, 4)
        return pa.table(
            {
                "revenue": pa.array([Decimal(r) for r in revenue], money),
                "total_revenue": pa.array([Decimal(total)] * len(revenue), money),
                "clicks": pa.array([10.0] * len(revenue)),
                "total_clicks": pa.array([None] * len(revenue), pa.float64()),  # (not sent: nothing said)
            }
        )

    assert disagreements(request, answer(["12965.00", "12961.29"], "25926.34")) == []  # 0.05: rounding
    (said,) = disagreements(request, answer(["12965.00", "12961.29"], "51853.58"))
    assert said.startswith("warning: alpha networks") and said.endswith(
        "the service's total revenue is 51853.5800, its rows sum to 25926.2900 (report_totals shows both)"
    )
