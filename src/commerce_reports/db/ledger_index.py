"""Where the index rows of each ledger file version are: a file of its own, or its month's pack.

An update finds the stored rows a change touches through the index: each ledger file's ids (with
their keys) and commission dates, kept beside the rollups (see `build.py`). A version whose month
may still change has a file of its own, `<by>_<day>.<digest>.parquet`. Once its month ended
`PACKED_AFTER` before the newest ledger day (its days settled: a daily sync asks none again), the
month's versions share one pack, `<by>_<YYYY-MM>.<hash>.parquet`, named by the versions it holds.
A refresh then reads some forty index files, not one per day of the lake's history (the footers of
365 files: 0.08 s of a 1 M lake's one-day refresh, and more each year). A pack whose name no longer
matches its month's versions (a ledger file of that month changed) is written again, and until
then still answers for those of its versions that did not change.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date, timedelta
from functools import cached_property, lru_cache
from pathlib import Path

from ..contract import PartitionKey, next_month
from .listing import Digest

__all__ = ["PACKED_AFTER", "IndexLayout", "group_of", "key_of"]

# A ledger day settles a day or two after it ends (`syncing.plan.SettlePolicy`): a month that ended
# a week before the newest ledger day no longer changes in a daily sync; its versions share a pack.
PACKED_AFTER = timedelta(days=7)


@lru_cache(maxsize=4096)
def key_of(relpath: str) -> PartitionKey:
    """The partition of a ledger file (by its relpath below the site's lake; kept: a refresh asks
    for each of a year's files several times)."""
    return PartitionKey.from_relpath(relpath.rsplit("/", 1)[0])


def group_of(relpath: str) -> str:
    """The month group of a ledger file: `<by>_<YYYY-MM>`, the name its pack starts with."""
    key = key_of(relpath)
    return f"{key.by}_{key.start:%Y-%m}"


@dataclass(frozen=True)
class IndexLayout:
    """Where the index rows of the ledger file versions `ledger` (relpath -> digest) belong, in the
    index folder `folder`: the pack of a month that ended `PACKED_AFTER` before the newest ledger
    day, else a file of their own."""

    folder: Path
    ledger: Mapping[str, Digest]

    @cached_property
    def packs(self) -> dict[str, Path]:
        """The pack of every month group of `ledger`'s versions, named by them."""
        groups: dict[str, list[str]] = {}
        for relpath, digest in sorted(self.ledger.items()):
            groups.setdefault(group_of(relpath), []).append(f"{relpath} {digest}\n")
        return {group: self.folder / f"{group}.{_named(lines)}.parquet" for group, lines in groups.items()}

    @cached_property
    def packed(self) -> frozenset[str]:
        """The month groups whose versions share a pack: those that ended `PACKED_AFTER` or more
        before the newest ledger day."""
        if not self.ledger:
            return frozenset()
        newest = max(key_of(relpath).start for relpath in self.ledger)
        return frozenset(g for g in self.packs if next_month(_first_day(g)) + PACKED_AFTER <= newest)

    def own(self, relpath: str) -> Path:
        """The file of its own of `relpath`'s version in `ledger`."""
        key = key_of(relpath)
        return self.folder / f"{key.by}_{key.start}.{self.ledger[relpath][:24]}.parquet"

    def target(self, relpath: str) -> Path:
        """Where `relpath`'s version belongs: its month's pack, or a file of its own."""
        group = group_of(relpath)
        return self.packs[group] if group in self.packed else self.own(relpath)

    def present(self, relpaths: Iterable[str], before: IndexLayout) -> dict[str, Path | None]:
        """Where the rows of these versions are now (None: nowhere, e.g. a refresh stopped before
        indexing them): the pack of their month's versions, else the pack of its versions `before`
        where this version was one of them, else a file of its own."""
        exists: dict[Path, bool] = {}  # (a pack is asked for once per version it holds)

        def there(path: Path | None) -> bool:
            if path is not None and path not in exists:
                exists[path] = path.exists()
            return path is not None and exists[path]

        found: dict[str, Path | None] = {}
        for relpath in relpaths:
            group = group_of(relpath)
            unchanged = before.ledger.get(relpath) == self.ledger[relpath]
            places = [self.packs[group], before.packs.get(group) if unchanged else None, self.own(relpath)]
            found[relpath] = next((p for p in places if there(p)), None)
        return found


def _named(lines: list[str]) -> str:
    """A pack's name for the versions it holds (a line each)."""
    return hashlib.sha256("".join(lines).encode()).hexdigest()[:24]


def _first_day(group: str) -> date:
    """The first day of a month group's month."""
    return date.fromisoformat(f"{group.rsplit('_', 1)[1]}-01")
