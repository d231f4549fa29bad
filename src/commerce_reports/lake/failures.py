"""Partitions that keep failing: per site, each partition a sync could not store, how many syncs in a
row failed it, since when, and the last reason (secrets masked). The manifest holds what is stored;
this holds what is not, so that alerts can tell a partition failing day after day from one bad
request. `failures.json` beside the manifest, rewritten after each sync of the site (a partition
stored again leaves it).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path

from ..contract import PartitionKey, site_root
from ..files import save_atomic
from ..redaction import redact
from .locks import site_lock

__all__ = ["FAILURES", "FailureRecord", "load_failures", "record_failures"]

FAILURES = "failures.json"


@dataclass(frozen=True)
class FailureRecord:
    """One partition's run of failed syncs: `count` syncs in a row, from `first` to `last`."""

    relpath: str
    what: str  # the partition as people read it (`PartitionKey.describe`)
    count: int
    first: datetime
    last: datetime
    reason: str


def _path(data_dir: Path, site: str) -> Path:
    return site_root(data_dir, site) / FAILURES


def load_failures(data_dir: Path, site: str) -> dict[str, FailureRecord]:
    """The site's failing partitions by path (none when nothing failed; a damaged file counts as
    none: it only ever holds what the next sync records again)."""
    try:
        data = json.loads(_path(data_dir, site).read_text())
        return {
            item["relpath"]: FailureRecord(
                str(item["relpath"]),
                str(item["what"]),
                int(item["count"]),
                datetime.fromisoformat(item["first"]),
                datetime.fromisoformat(item["last"]),
                str(item["reason"]),
            )
            for item in data["failures"]
        }
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def record_failures(
    data_dir: Path,
    site: str,
    failed: Iterable[tuple[PartitionKey, str]],
    stored: Iterable[PartitionKey],
    at: datetime,
) -> dict[str, FailureRecord]:
    """Count one more failed sync for each partition of `failed` (with its reason), forget the
    partitions stored again, and write the result (nothing when there is nothing to keep)."""
    failures, done = list(failed), {key.relpath for key in stored}
    with site_lock(data_dir, site):
        records = load_failures(data_dir, site)
        if not failures and not (done & set(records)):
            return records
        for relpath in done:
            records.pop(relpath, None)
        for key, reason in failures:
            before = records.get(key.relpath)
            records[key.relpath] = FailureRecord(
                key.relpath,
                key.describe(),
                before.count + 1 if before else 1,
                before.first if before else at,
                at,
                redact(reason)[:500],
            )
        payload = [
            {**asdict(r), "first": r.first.isoformat(), "last": r.last.isoformat()}
            for r in sorted(records.values(), key=lambda r: r.relpath)
        ]
        save_atomic(_path(data_dir, site), json.dumps({"site": site, "failures": payload}, indent=1))
    return records
