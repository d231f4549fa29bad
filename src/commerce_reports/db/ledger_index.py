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
from functools import cache, cached_property, lru_cache
from pathlib import Path

from ..contract import PartitionKey, next_month
from .listing import Digest
from .sources import quote, read_stored

__all__ = ["PACKED_AFTER", "IndexLayout", "IndexWrites", "key_of"]

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
class IndexWrites:
    """What an index write stores: files of their own (`own`, by `<by>_<day>`, read from the ledger
    files `own_read`) and packs (`packs`, by `<by>_<YYYY-MM>`: from the rows already `stored`,
    SELECTs, and from the ledger files `packs_read`); the index files it makes `stale`."""

    own: dict[str, Path]
    own_read: list[str]
    packs: dict[str, Path]
    packs_read: list[str]
    stored: list[str]
    stale: list[Path]


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

    def needed(self, relpaths: Iterable[str], before: IndexLayout | None) -> IndexWrites:
        """The index rows that these ledger files' versions need, and those the layout lacks: a
        file of its own each in a month not packed, and the pack of a packed month whose versions
        have none, its rows read where they are (`before`: the layout before an update; None, a
        full build: from the ledger files alone). The index files of versions no longer in the
        lake, and those a pack replaces, are stale."""
        kept = {self.target(r) for r in self.ledger}
        stale = [path for path in self.folder.glob("*.parquet") if path not in kept]
        exists = cache(Path.exists)  # (a pack is asked for once per version it holds)
        wanted = set(relpaths) | {r for r in self.ledger if not exists(self.target(r))}
        own = sorted(r for r in wanted if group_of(r) not in self.packed)
        packs = {group_of(r) for r in wanted} & self.packed
        packed = [r for r in self.ledger if group_of(r) in packs]
        found = {r: p for r, p in self.present(packed, before).items() if p} if before else {}
        return IndexWrites(
            own={self.own(r).name.split(".", 1)[0]: self.own(r) for r in own},
            own_read=own,
            packs={g: self.packs[g] for g in packs},
            packs_read=[r for r in packed if r not in found],
            stored=self._rows(found),
            stale=stale,
        )

    def stored_rows(self, relpaths: Iterable[str]) -> str | None:
        """The SQL of the index rows of these versions (None: none is indexed)."""
        return " UNION ALL ".join(self._rows(self.present(relpaths, self))) or None

    def present(self, relpaths: Iterable[str], before: IndexLayout) -> dict[str, Path | None]:
        """Where the rows of these versions are now (None: nowhere, e.g. a refresh stopped before
        indexing them): the pack of their month's versions, else the pack of its versions `before`
        where this version was one of them, else a file of its own."""
        exists = cache(Path.exists)  # (a pack is asked for once per version it holds)
        found: dict[str, Path | None] = {}
        for relpath in relpaths:
            group = group_of(relpath)
            unchanged = before.ledger.get(relpath) == self.ledger[relpath]
            places = [self.packs[group], before.packs.get(group) if unchanged else None, self.own(relpath)]
            found[relpath] = next((p for p in places if p is not None and exists(p)), None)
        return found

    def _rows(self, places: Mapping[str, Path | None]) -> list[str]:
        """SELECTs of the index rows of the versions found at `places` (`present`): their files of
        their own, read whole, and their own rows of the packs holding them (a pack written before
        also holds the earlier rows of versions since changed)."""
        found = {r: p for r, p in places.items() if p is not None}
        own = sorted({p for r, p in found.items() if p == self.own(r)})
        selects = [f"SELECT * FROM {read_stored(own)}"] if own else []
        for pack in sorted({p for r, p in found.items() if p != self.own(r)}):
            held = " OR ".join(
                f"(partition_by = {quote(str(k.by))} AND partition_day = DATE '{k.start}')"
                for k in (key_of(r) for r, p in found.items() if p == pack)
            )
            selects.append(f"SELECT * FROM {read_stored([pack])} WHERE {held}")
        return selects


def _named(lines: list[str]) -> str:
    """A pack's name for the versions it holds (a line each)."""
    return hashlib.sha256("".join(lines).encode()).hexdigest()[:24]


def _first_day(group: str) -> date:
    """The first day of a month group's month."""
    return date.fromisoformat(f"{group.rsplit('_', 1)[1]}-01")
