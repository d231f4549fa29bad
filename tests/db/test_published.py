"""A published generation: made whole in a new folder (each of its folders with the house's mode,
whatever the umask), and the old ones pruned, never the newest two nor the one readers follow."""

from __future__ import annotations

import json
import os
import shutil
import stat
from collections.abc import Iterator
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pytest

from commerce_reports.contract import TRANSACTION_SCHEMA, PartitionKey
from commerce_reports.db import published
from commerce_reports.db.published import publish, published_problems, published_reading, views_root
from commerce_reports.lake.manifest import store_partition

DAY = date(2026, 3, 1)


@pytest.fixture
def strict_umask() -> Iterator[None]:
    """A umask that narrows every mode the house asks for to the owner's alone."""
    before = os.umask(0o077)
    yield
    os.umask(before)


def _store(data_dir: Path, day: date = DAY) -> None:
    row = {
        "commission_id": "a",
        "commission_date": day,
        "update_date": day,
        "publisher_net_revenue": Decimal("10"),
        "order_value": Decimal("100"),
        "products": [],
    }
    at = datetime(2026, 3, 1, 12, tzinfo=UTC)
    table = pa.Table.from_pylist([row], TRANSACTION_SCHEMA)
    store_partition(data_dir, "s", PartitionKey.transactions(day), table, at)


def test_a_new_generation_keeps_the_newest_two_and_the_one_readers_follow(tmp_path: Path) -> None:
    root = views_root(tmp_path)
    old = [f"2020010{n}T000000-0000000{n}" for n in range(1, 5)]  # far older than a day
    for name in old:
        (root / name).mkdir(parents=True)
    (root / "current.json").write_text(json.dumps({"generation": old[0], "digest": "-"}))
    made = publish(tmp_path)
    assert made is not None and (made / "sealed.json").is_file()
    kept = sorted(p.name for p in root.iterdir() if p.is_dir())
    assert kept == sorted([old[0], old[-1], made.name])  # readers' own, the newest old one, the new one
    assert json.loads((root / "current.json").read_text())["generation"] == made.name


def test_a_generation_shared_with_the_group_is_group_readable_under_a_strict_umask(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, strict_umask: None
) -> None:
    monkeypatch.setenv("COMMERCE_REPORTS_SHARE_GROUP", "1")
    _store(tmp_path)
    made = publish(tmp_path)
    assert made is not None
    folders = [made, *(p for p in made.rglob("*") if p.is_dir())]
    assert any(p.name.startswith("day=") for p in folders)  # the links' own folders are among them
    assert {stat.S_IMODE(p.stat().st_mode) for p in folders} == {0o750}
    (link,) = made.rglob("part.parquet")
    assert link.stat().st_nlink == 2  # a hard link to the lake's file, not a copy


def test_a_generation_is_read_only_while_it_is_what_its_seal_says(tmp_path: Path) -> None:
    """Each way a generation stopped being what was checked, which readers followed as if it were:
    a file it holds that its seal does not list (the views' globs read it: a month counted twice),
    its seal emptied (every check was then skipped), the pointer turned to an older generation.
    Readers then read the lake (None here), `verify` says why, the next publication replaces it."""
    _store(tmp_path)
    first = publish(tmp_path)
    assert first is not None and published_problems(tmp_path) == [] and published_reading(tmp_path)
    part = next(first.rglob("part.parquet"))
    extra = part.parent.parent / "day=2026-03-09" / "part.parquet"
    extra.parent.mkdir()
    shutil.copy(part, extra)
    published._checks.clear()  # (a reader looks again at most every two seconds)
    listed = extra.relative_to(first).as_posix()
    assert published_problems(tmp_path) == [f"{listed}: not listed in the seal"]
    assert published_reading(tmp_path) is None
    shutil.rmtree(extra.parent)
    seal = first / "sealed.json"
    kept = seal.read_bytes()
    seal.write_text("")
    published._checks.clear()
    assert published_problems(tmp_path) == [f"{first.name}/sealed.json: missing or unreadable"]
    assert published_reading(tmp_path) is None
    seal.write_bytes(kept)
    _store(tmp_path, date(2026, 3, 2))
    second = publish(tmp_path)
    pointer = views_root(tmp_path) / "current.json"
    turned = json.loads(pointer.read_text()) | {"generation": first.name}
    pointer.write_text(json.dumps(turned))
    published._checks.clear()
    assert published_problems(tmp_path) == [
        f"current.json: it names {first.name}, sealed for another state of the lake"
    ]
    assert published_reading(tmp_path) is None
    again = publish(tmp_path)
    assert again not in (None, first) and published_problems(tmp_path) == []
    older = json.loads((again / "sealed.json").read_text())
    del older["digest"]  # as a version before this one sealed: its publisher's word, no alarm
    (again / "sealed.json").write_text(json.dumps(older))
    published._checks.clear()
    assert published_problems(tmp_path) == []
    assert second is not None and published_reading(tmp_path) is not None
