"""Building one site's rollups, whole or for what changed, inside one DuckDB connection.

`transactions` (the latest version of each commission id) is stored by commission day. A full
build computes it from every ledger file. An incremental one recomputes only the *dirty* ids: those
in the changed ledger files now, and those they held before (each ledger file's ids are kept in a
small index file). Their versions are found by a narrow scan of the lake (ids only) and read in
full from the few files holding them; their new rows replace the old ones. A commission day is
rewritten when it is new, loses an id, or changes a lot; otherwise its new rows go to its month's
patch file (a day's returns touch some thirty earlier days: rewriting each would cost seconds).

Every other rollup is stored by month of its date column, and recomputed for the months whose
transactions or aggregate windows changed, from the stored `transactions` and those months' files.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import duckdb

from ..lake.layout import DATASETS, PartitionKey, site_root
from .buckets import NONE, day_bucket, month_bucket, place, staged_buckets, write_buckets
from .listing import Listing, dataset_of
from .snapshot import stored_transactions_sql
from .sources import MIXED, quote, read_sql, sql_list
from .state import EMPTY, index_folder, rollup_folder
from .views import VIEW_LIST, View, render

__all__ = ["PATCH_SHARE", "Plan", "SiteBuild"]

PATCH_SHARE = 0.25  # a day whose new and patched rows exceed this share of its stored rows is rewritten
_T = "transactions"
_VIEWS = {view.name: view for view in VIEW_LIST}
_DAY = day_bucket("commission_date")
_DIRTY = "commission_id IN (SELECT commission_id FROM inc.dirty)"
_NOT_DIRTY = "commission_id NOT IN (SELECT commission_id FROM inc.dirty)"


def _date_column(view: View) -> str:
    """The date column a rollup is bucketed by: the key after `site` in its sort order."""
    return view.order_by.split(",")[1].strip()


def _month(relpath: str) -> str:
    """The month (`YYYY-MM`) of a partition's first day."""
    return PartitionKey.from_relpath(relpath.rsplit("/", 1)[0]).start.strftime("%Y-%m")


def _in(values: Iterable[str]) -> str:
    """A SQL IN list (`NULL` when empty: matches nothing)."""
    return ", ".join(quote(v) for v in sorted(values)) or "NULL"


@dataclass(frozen=True)
class Plan:
    """What an incremental build writes: commission days rewritten whole, days whose new rows go
    to a patch, the patch months rewritten, and the months of every other rollup."""

    rewrite: frozenset[str] = frozenset()
    patched: frozenset[str] = frozenset()
    patch_months: frozenset[str] = frozenset()
    months: frozenset[str] = frozenset()


class SiteBuild:
    """The rollups of one site, written through `con` (a DuckDB connection of its own)."""

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        data_dir: Path,
        site: str,
        readable: Listing,
        schemas: Mapping[str, str],
    ) -> None:
        self.con = con
        self.data_dir = data_dir
        self.site = site
        self.root = site_root(data_dir, site)
        self.readable = readable
        self.schemas = schemas
        self.base = rollup_folder(data_dir, site, _T, "base")
        self.patch = rollup_folder(data_dir, site, _T, "patch")
        con.execute("CREATE SCHEMA IF NOT EXISTS inc")

    # ------------------------------------------------------------------ inputs

    def of(self, dataset: str) -> list[str]:
        """The readable files of `dataset` (relpaths)."""
        return sorted(r for r in self.readable if dataset_of(r) == dataset)

    def _paths(self, relpaths: Iterable[str]) -> list[Path]:
        return [self.root / r for r in sorted(relpaths)]

    def _source(self, dataset: str, relpaths: Iterable[str]) -> str:
        return read_sql(dataset, self._paths(relpaths), by_name=self.schemas.get(dataset) == MIXED)

    def index_path(self, relpath: str, stat: tuple[int, int]) -> Path:
        """The index file of one version (size, mtime) of a ledger file."""
        key = PartitionKey.from_relpath(relpath.rsplit("/", 1)[0])
        return index_folder(self.data_dir, self.site) / f"{key.by}_{key.start}.{stat[0]}-{stat[1]}.parquet"

    def _stored(self, base: list[Path], patch: list[Path]) -> str:
        """The stored `transactions` over these base and patch files (and the empty ones)."""
        return stored_transactions_sql([*base, self.base / EMPTY], [*patch, self.patch / EMPTY])

    def _existing(self, folder: Path, buckets: Iterable[str]) -> list[Path]:
        return [folder / f"{b}.parquet" for b in sorted(buckets) if (folder / f"{b}.parquet").exists()]

    def _rows(self, sql: str) -> dict[str, int]:
        return {str(k): int(v) for k, v in self.con.execute(sql).fetchall()}

    # ------------------------------------------------------------------ shared steps

    def _write_index(self, relpaths: list[str]) -> None:
        """Keep the ids of these ledger files, one small file each."""
        if not relpaths:
            return
        versions = render(_VIEWS["transaction_versions"], "inc", {_T: self._source(_T, relpaths)})
        select = (
            f"SELECT commission_id, partition_by, partition_day FROM ({versions}) "
            "WHERE commission_id IS NOT NULL"
        )
        bucket = "partition_by || '_' || strftime(partition_day, '%Y-%m-%d')"
        named = {self.index_path(r, self.readable[r]).name.split(".", 1)[0]: r for r in relpaths}
        with staged_buckets(self.con, select, bucket, index_folder(self.data_dir, self.site)) as files:
            place(files, lambda value: self.index_path(named[value], self.readable[named[value]]))

    def remove_old_index(self) -> None:
        """Delete the index files of ledger file versions no longer in the lake."""
        folder = index_folder(self.data_dir, self.site)
        keep = {self.index_path(r, self.readable[r]).name for r in self.of(_T)}
        for path in folder.glob("*.parquet"):
            if path.name not in keep:
                path.unlink(missing_ok=True)

    def _downstream(
        self, transactions: str, sources: dict[str, str], months: frozenset[str] | None
    ) -> set[str]:
        """Recompute every rollup but `transactions` (for `months`, or all) from the stored one."""
        self.con.execute(f"CREATE OR REPLACE VIEW inc.{_T} AS {transactions}")
        for view in VIEW_LIST:
            if view.name != _T:
                self.con.execute(f"CREATE OR REPLACE VIEW inc.{view.name} AS {render(view, 'inc', sources)}")
        written: set[str] = set()
        for view in VIEW_LIST:
            if view.rollup and view.name != _T:
                folder = rollup_folder(self.data_dir, self.site, view.name)
                bucket = month_bucket(_date_column(view))
                written |= write_buckets(
                    self.con, f"SELECT * FROM inc.{view.name}", bucket, folder, only=months
                )
        return written

    # ------------------------------------------------------------------ full

    def full(self) -> frozenset[str]:
        """Rewrite every rollup of the site from its lake files; return the months written."""
        sources: dict[str, str] = {d: self._source(d, self.of(d)) for d in DATASETS}
        versions = render(_VIEWS["transaction_versions"], "inc", sources)
        self.con.execute(f"CREATE OR REPLACE VIEW inc.transaction_versions AS {versions}")
        current = render(_VIEWS[_T], "inc", sources)
        write_buckets(self.con, current, _DAY, self.base, only=None)
        none = f"SELECT * FROM read_parquet({quote(str(self.base / EMPTY))})"
        write_buckets(self.con, none, f"'{NONE}'", self.patch, only=None)  # no patches
        self._write_index(self.of(_T))
        stored = stored_transactions_sql([self.base / "*.parquet"], [self.patch / EMPTY])
        return frozenset(self._downstream(stored, sources, None))

    # ------------------------------------------------------------------ incremental

    def plan(self, before: Listing, skipped_before: Mapping[str, str], changed: set[str]) -> Plan:
        """Find what the `changed` files change, writing nothing: the dirty ids' rows (`inc.u`), the
        rows of each rewritten day (`inc.base_rows`) and of each patch month (`inc.patch_rows`)."""
        months = {_month(r) for r in changed if dataset_of(r) != _T}
        ledger = sorted(r for r in changed if dataset_of(r) == _T)
        now = [r for r in ledger if r in self.readable]
        old = [
            path
            for r in ledger
            if r in before and r not in skipped_before
            for path in [self.index_path(r, before[r])]
            if path.exists()
        ]
        ids = (
            [f"SELECT commission_id FROM read_parquet({sql_list(self._paths(now))}, union_by_name = true)"]
            if now
            else []
        )
        ids += [f"SELECT commission_id FROM read_parquet({sql_list(old)})"] if old else []
        if not ids:
            return Plan(months=frozenset(months))
        con = self.con
        con.execute(
            "CREATE OR REPLACE TABLE inc.dirty AS SELECT DISTINCT commission_id FROM "
            f"({' UNION ALL '.join(ids)}) WHERE commission_id IS NOT NULL"
        )
        holding: list[str] = []
        if self.of(_T):  # the ledger files holding a version of a dirty id: a scan of the ids alone
            holding = [
                str(Path(name).relative_to(self.root))
                for (name,) in con.execute(
                    f"SELECT DISTINCT filename FROM read_parquet({sql_list(self._paths(self.of(_T)))}, "
                    f"filename = true, union_by_name = true) WHERE {_DIRTY}"
                ).fetchall()
            ]
        versions = render(_VIEWS["transaction_versions"], "inc", {_T: self._source(_T, holding)})
        con.execute(f"CREATE OR REPLACE TABLE inc.dv AS SELECT * FROM ({versions}) WHERE {_DIRTY}")
        con.execute("CREATE OR REPLACE VIEW inc.transaction_versions AS SELECT * FROM inc.dv")
        con.execute(f"CREATE OR REPLACE TABLE inc.u AS {render(_VIEWS[_T], 'inc', {})}")
        stored = stored_transactions_sql([self.base / "*.parquet"], [self.patch / "*.parquet"])
        con.execute(
            f"CREATE OR REPLACE TABLE inc.old AS SELECT commission_id, commission_date FROM ({stored}) "
            f"WHERE {_DIRTY}"
        )
        return self._decide(months)

    def _decide(self, months: set[str]) -> Plan:
        new = self._rows(f"SELECT {_DAY}, count(*) FROM inc.u GROUP BY 1")
        left = self._rows(  # days an id leaves (moved to another day, or gone): rewritten whole
            f"SELECT DISTINCT {day_bucket('o.commission_date')}, 0 FROM inc.old o LEFT JOIN inc.u u "
            f"USING (commission_id) WHERE u.commission_id IS NULL "
            f"OR {day_bucket('u.commission_date')} <> {day_bucket('o.commission_date')}"
        )
        touched = set(new) | set(left)
        stored = self._existing(self.base, touched)
        sizes = (
            self._rows(f"SELECT file_name, num_rows FROM parquet_file_metadata({sql_list(stored)})")
            if stored
            else {}
        )
        base_rows = {p.stem: sizes.get(str(p), 0) for p in stored}
        patches = self._existing(self.patch, {d[:7] for d in touched if d != NONE})
        kept = self._rows(
            f"SELECT {_DAY}, count(*) FROM read_parquet({sql_list([*patches, self.patch / EMPTY])}) "
            f"WHERE {_NOT_DIRTY} GROUP BY 1"
        )
        rewrite = {
            d
            for d in touched
            if d == NONE
            or d in left
            or d not in base_rows
            or new.get(d, 0) + kept.get(d, 0) > PATCH_SHARE * base_rows[d]
        }
        patched = touched - rewrite
        patch_months = {p.stem for p in patches} | {d[:7] for d in patched}
        r_base = [p for p in stored if p.stem in rewrite]
        r_patch = self._existing(self.patch, {d[:7] for d in rewrite if d != NONE})
        self.con.execute(
            f"CREATE OR REPLACE TABLE inc.base_rows AS SELECT * FROM ({self._stored(r_base, r_patch)}) "
            f"WHERE {_DAY} IN ({_in(rewrite)}) AND {_NOT_DIRTY} "
            f"UNION ALL BY NAME SELECT * FROM inc.u WHERE {_DAY} IN ({_in(rewrite)})"
        )
        self.con.execute(
            f"CREATE OR REPLACE TABLE inc.patch_rows AS SELECT * FROM "
            f"read_parquet({sql_list([*patches, self.patch / EMPTY])}) "
            f"WHERE {_NOT_DIRTY} AND {_DAY} NOT IN ({_in(rewrite)}) "
            f"UNION ALL BY NAME SELECT * FROM inc.u WHERE {_DAY} IN ({_in(patched)})"
        )
        t_months = {d[:7] if d != NONE else NONE for d in touched}
        return Plan(
            frozenset(rewrite), frozenset(patched), frozenset(patch_months), frozenset(months | t_months)
        )

    def apply(self, plan: Plan, months: frozenset[str], ledger: Iterable[str]) -> None:
        """Write what `plan` found, index the changed ledger files, recompute the other rollups for
        `months` (the plan's, and any a killed refresh left pending)."""
        if plan.rewrite or plan.patched:
            write_buckets(self.con, "SELECT * FROM inc.base_rows", _DAY, self.base, only=plan.rewrite)
            patch_bucket = month_bucket("commission_date")
            write_buckets(
                self.con, "SELECT * FROM inc.patch_rows", patch_bucket, self.patch, only=plan.patch_months
            )
        self._write_index([r for r in ledger if r in self.readable])
        if not months:
            return
        base = [
            p
            for p in self.base.glob("*.parquet")
            if p.name != EMPTY and (p.stem if p.stem == NONE else p.stem[:7]) in months
        ]
        sources = {_T: self._source(_T, [])}
        for dataset in DATASETS:
            if dataset != _T:
                sources[dataset] = self._source(dataset, [r for r in self.of(dataset) if _month(r) in months])
        self._downstream(self._stored(sorted(base), self._existing(self.patch, months)), sources, months)
