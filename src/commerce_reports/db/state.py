"""Where a site's rollups live, and the state saying which lake files they reflect.

    <data_dir>/rollups/site=<site>/state.json
    <data_dir>/rollups/site=<site>/transactions/base/whole-<YYYY-MM|none>.parquet  the last full build
    <data_dir>/rollups/site=<site>/transactions/base/<YYYY-MM-DD|none>.parquet     days added since
    <data_dir>/rollups/site=<site>/transactions/patch/<YYYY-MM|none>.parquet     changes since
    <data_dir>/rollups/site=<site>/<view>/<YYYY-MM|none>.parquet                  by month of its date
    <data_dir>/rollups/site=<site>/index/<by>_<day>.<digest>.parquet             ids and commission
                                                                                 dates of one ledger file
    <data_dir>/rollups/site=<site>/index/<by>_<YYYY-MM>.<hash>.parquet           those of a settled
                                                                                 month's ledger files

A commission day's rows live in one base file: `whole-<month>.parquet` (by month of commission
date) for the days the last full build saw (`whole_days`), a file of its own for a day first seen
later. A patch row (T's columns and
`_deleted`) replaces the base row of the same (site, commission_id, commission_date), or, deleted,
hides it: `transactions` is the base without the patched rows, plus the patch rows not deleted.
Every folder also holds `_empty.parquet` (no rows, the columns), so that its glob always matches
and a view over it never depends on which buckets exist.

`state.json` is written last: the listing of the lake files the rollups reflect (by content), the
files left out (unreadable, or vouched for by no manifest entry), each dataset's schema signature
(so readers need not read every footer), the sha256 of every rollup and index file the refresh
wrote (`files`), and, while a refresh is writing, the months it is rewriting (`pending_months`;
`rebuilding` for a full build). A rollup counts only while its state matches the lake listing
exactly, nothing is pending, and every rollup file holds what the refresh wrote (a file changed by
anything else, a forged rollup, is read by no view and rebuilt by the next refresh or `verify`).

`site_places` works these paths out once per site, with the site's `SiteDigests` (what its listing,
its rollup files and their publication read by content); a refresh hands the `SitePlaces` down.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from ..contract import DATASETS, check_site_name, dataset_schema, site_root
from ..files import save_atomic
from ..lake.digests import SiteDigests
from .listing import Digest, Listing, dataset_of
from .views import VIEW_LIST, with_inputs

__all__ = [
    "CODE",
    "DERIVED_ROLLUPS",
    "EMPTY",
    "NOTHING",
    "WHOLE_PREFIX",
    "SitePlaces",
    "SiteState",
    "changed_rollups",
    "load_state",
    "rollup_files",
    "rollups_root",
    "save_state",
    "site_places",
]

STATE_FILE = "state.json"
EMPTY = "_empty.parquet"
WHOLE_PREFIX = "whole-"  # whole-<YYYY-MM|none>.parquet: the last full build, by commission month

_LAYOUT = "buckets-7"  # bump when the files' layout changes: every rollup is rebuilt
CODE = hashlib.sha256(
    "\n".join(
        [
            _LAYOUT,
            duckdb.__version__,  # its hash keys the index files' ids
            *(v.sql + repr(v.rollup) for v in with_inputs(v for v in VIEW_LIST if v.rollup)),
            *(str(dataset_schema(d)) for d in DATASETS),
        ]
    ).encode()
).hexdigest()  # a change to a view a rollup is computed from, or to a stored schema, makes every
# rollup stale (a view no rollup reads, such as `ledger_coverage`, is not part of it)


DERIVED_ROLLUPS = tuple(v for v in VIEW_LIST if v.rollup and v.name != "transactions")
"""The rollups computed from the stored `transactions` rollup, each in a folder of its own."""


def rollups_root(data_dir: Path) -> Path:
    return Path(data_dir) / "rollups"


@dataclass(frozen=True)
class SitePlaces:
    """Where one site's lake files and rollups are: found once (`site_places`) and handed down,
    so that no step of a refresh works a path out of (data_dir, site) again."""

    data_dir: Path
    site: str
    lake: Path  # the site's partition files
    folder: Path  # its rollups (and their state, index, staging)
    state_file: Path
    index: Path  # the index files of its ledger files
    base: Path  # the base files of `transactions`
    patch: Path  # its patch files
    views: dict[str, Path] = field(hash=False)  # the folder of every other rollup view (derived)
    # The digests of its files by content, with the stamps that vouch for them: one per site, so
    # that its listing, its rollup files and its publication share what was read.
    digests: SiteDigests = field(compare=False, hash=False, repr=False)


def site_places(data_dir: Path, site: str) -> SitePlaces:
    """The places of `site` in the data folder `data_dir` (the site's name checked)."""
    folder = rollups_root(data_dir) / f"site={check_site_name(site)}"
    lake = site_root(data_dir, site)
    views = {view.name: folder / view.name for view in DERIVED_ROLLUPS}
    transactions = folder / "transactions"
    return SitePlaces(
        Path(data_dir),
        site,
        lake,
        folder,
        folder / STATE_FILE,
        folder / "index",
        transactions / "base",
        transactions / "patch",
        views,
        SiteDigests(data_dir, site),
    )


@dataclass(frozen=True)
class SiteState:
    """What a site's rollups reflect: `listing` (the lake files), minus `skipped` (unreadable ones).

    `pending_months` are months a refresh began to rewrite and did not finish; `rebuilding` marks a
    full rebuild in progress. Either makes the rollups unusable until the next refresh completes.
    """

    listing: Listing
    skipped: dict[str, str] = field(default_factory=dict)
    schemas: dict[str, str] = field(default_factory=dict)  # dataset -> signature of its files, or MIXED
    code: str = CODE
    pending_months: frozenset[str] = frozenset()
    rebuilding: bool = False
    whole_days: frozenset[str] = frozenset()  # the commission days held by the `whole-*` files
    # The rollup files as the refresh left them (relpath below the site's rollup folder -> sha256):
    # a file changed since by anything else (a forged rollup) makes the rollups unusable.
    files: dict[str, Digest] = field(default_factory=dict)

    def matches(self, listing: Listing) -> bool:
        """Whether the rollups are complete and reflect exactly `listing`."""
        return (
            self.code == CODE and not self.rebuilding and not self.pending_months and self.listing == listing
        )

    def outdated(self, listing: Listing) -> bool:
        """Whether the rollups must be built whole to reflect `listing`: other views' code, a full
        build unfinished, or most ledger files differing from what they reflect (a lake copied to
        another file system, a refetch of everything: a full build then costs less)."""
        if self.code != CODE or self.rebuilding:
            return True
        ledger = [r for r in listing if dataset_of(r) == "transactions"]
        changed = sum(1 for r in ledger if self.listing.get(r) != listing[r])
        return changed > max(50, len(ledger) // 2)

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "listing": dict(sorted(self.listing.items())),
            "skipped": self.skipped,
            "schemas": self.schemas,
            "pending_months": sorted(self.pending_months),
            "rebuilding": self.rebuilding,
            "whole_days": sorted(self.whole_days),
            "files": dict(sorted(self.files.items())),
        }

    @classmethod
    def from_json(cls, data: Any) -> SiteState | None:
        """The state in `data`, or None when it is not a state of this layout (then: rebuild)."""
        try:
            listing = {str(k): _digest(v) for k, v in data["listing"].items()}
            return cls(
                listing=listing,
                skipped={str(k): str(v) for k, v in data["skipped"].items()},
                schemas={str(k): str(v) for k, v in data["schemas"].items()},
                code=str(data["code"]),
                pending_months=frozenset(map(str, data["pending_months"])),
                rebuilding=bool(data["rebuilding"]),
                whole_days=frozenset(map(str, data["whole_days"])),
                files={str(k): _digest(v) for k, v in data["files"].items()},
            )
        except (KeyError, TypeError, ValueError, AttributeError, IndexError):
            return None


def _digest(value: Any) -> Digest:
    if not isinstance(value, str):  # a state of an older layout (stats, not digests): rebuild
        raise TypeError(f"{value!r} is not a digest")
    return value


NOTHING = SiteState(listing={})
"""What rollups not built yet reflect: no lake file, none skipped, no schema known."""

_cache: dict[str, tuple[tuple[int, int, int], SiteState | None]] = {}


def load_state(places: SitePlaces) -> SiteState | None:
    """The site's rollup state, or None when there is none (or it is unreadable: then rebuild).

    Parsed once per version of the file (size, mtime, inode), so checking freshness at every query
    costs a `stat`.
    """
    path = places.state_file
    try:
        stat = path.stat()
    except OSError:
        return None
    key = str(path)
    stamp = (stat.st_size, stat.st_mtime_ns, stat.st_ino)
    cached = _cache.get(key)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    try:
        state = SiteState.from_json(json.loads(path.read_text()))
    except (OSError, ValueError):
        state = None
    _cache[key] = (stamp, state)
    return state


def rollup_files(places: SitePlaces, *, read_all: bool = False) -> dict[str, Digest]:
    """The rollup and index files of a site (below its rollup folder) with the sha256 of each:
    what a refresh records in the state, and what the views and `verify` compare with it.
    `read_all` reads every file (`verify`); else an unchanged stamp vouches for a known digest."""
    folder = str(places.folder)
    below_folder = len(os.path.join(folder, ""))  # (strings, not Paths: a lake's worth of files)
    digests = places.digests
    found: dict[str, Digest] = {}
    for parent, below, names in os.walk(folder):
        below[:] = [name for name in below if not name.startswith(".")]  # staging, spill: not rollups
        for name in names:
            if name.startswith(".") or not name.endswith(".parquet"):
                continue
            path = os.path.join(parent, name)
            relpath = path[below_folder:].replace(os.sep, "/")
            try:
                found[relpath] = digests.read(path) if read_all else digests.of(path)
            except FileNotFoundError:
                continue
            except OSError as error:
                found[relpath] = f"unreadable:{error.errno}"
    return found


def changed_rollups(state: SiteState, files: Mapping[str, Digest]) -> list[str]:
    """The rollup files added, removed or rewritten since `state` recorded them (by content; `files`:
    as they are now, `rollup_files`), sorted: a rollup changed by anything but a refresh must not
    answer for the lake."""
    return sorted(r for r in state.files.keys() | files.keys() if state.files.get(r) != files.get(r))


def save_state(places: SitePlaces, state: SiteState) -> None:
    """Write the site's state atomically."""
    save_atomic(places.state_file, json.dumps(state.to_json(), separators=(",", ":")))
