"""Building one site's rollups, whole or for what changed, inside one DuckDB connection.

`transactions` (the latest version of each commission id) is the expensive one. A full build
computes it from every ledger file into a file per commission month (`whole-<month>.parquet`). An
incremental build recomputes only the *dirty* ids: those in the changed ledger files now, and those
they held before (each ledger file's ids and commission dates are kept in an index file, see
`ledger_index.py`). Their versions are found by a narrow scan of the lake (the id column) and read
in full from the few files holding them; their stored rows, in the base files of the months those
versions (and the index) name. Their new rows then go:
- to a patch file per month, for a day held by a `whole-*` file (with a deleted row where an id
  leaves that day), or for a day of its own changing little: a day's returns touch some thirty
  earlier days, and rewriting each would cost seconds;
- to a file of its own, for a day first seen since the full build (the new day of a daily sync),
  rewritten whole when an id leaves it or its patches grow past a share of it.

Every other rollup is stored by month of its date column. For a month whose transactions or
aggregate windows changed, a rollup with a `Merge` is updated by the change alone: the dirty ids'
new rows added, their stored rows before (`inc.old_rows`) subtracted, the report side computed
again from the month's aggregate files (see `merge.py`). A rollup over another rollup
(`daily_performance`, whose distinct counts do not add up, reads `network_link_performance`) has
its changed days computed again from the rows this write gives the rollup it reads (a view of
them, `inc_written`, that both writes read): in the 100 M bench lake, December's 102,300 rows
where its stored transactions are 8.3 million. The months a killed refresh left pending are
recomputed from the stored `transactions` of those months (read once into a table, with the columns
those views name) and the months' files.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Collection, Iterable, Iterator, Mapping
from contextlib import contextmanager, nullcontext
from functools import cached_property
from pathlib import Path

import duckdb

from ..activity import said
from ..contract import DATASETS
from ..interrupts import on_ctrl_c
from .buckets import (
    NONE,
    Bucketed,
    day_bucket,
    in_list,
    month_bucket,
    remove_staging,
    staging,
    within,
    write_all,
)
from .ledger_index import IndexLayout, key_of
from .listing import Listing, dataset_of
from .merge import merged_sql
from .plan import SitePlan, TransactionChange, month_of, partition_month, plan_update
from .snapshot import stored_transactions_sql
from .sources import MIXED, UNBOUND, dataset_schemas, quote, read_sql, read_stored, sql_list
from .state import DERIVED_ROLLUPS, EMPTY, WHOLE_PREFIX, SitePlaces, SiteState
from .views import VIEW_LIST, View, read_rollups, reads_reports, reads_transactions, render, with_inputs

__all__ = ["SiteBuild", "build_connection", "reading_connection"]

_FULL_MEMORY = "3GB"
_FULL_SPILL = "12GB"  # at most, on disk: past it a full build fails (rather than fill the disk)
SLICE_ROWS = 12_000_000  # rows one statement of a full build reads at most (see `SiteBuild.full`)
IN_MEMORY_ROWS = 200_000  # a full build's slice of at most this many rows is read into memory once
_SLICE_COPY = "FORMAT parquet, COMPRESSION lz4_raw"  # a slice's file, read once: fast to write
_DELTA_MEMORY = "600MB"
_T = "transactions"
_VIEWS = {view.name: view for view in VIEW_LIST}
_DAY = day_bucket("commission_date")
_MERGING = tuple(v for v in DERIVED_ROLLUPS if v.merge is not None)  # a month updated by its change alone
_REPORTED = frozenset(v for v in DERIVED_ROLLUPS if reads_reports(v))  # with a report side to compute
_OVER_ROLLUPS = frozenset(v for v in DERIVED_ROLLUPS if read_rollups(v))  # computed from rollups' rows
_READ = frozenset(r for v in _OVER_ROLLUPS for r in read_rollups(v))  # the rollups those read
_WRITTEN = "inc_written"  # the rows an update writes to each rollup in `_READ`, and those over them
# The SQL computing each rollup reads (its own, its inputs'): where the columns it needs are named.
_READS = {v: "\n".join(w.sql for w in with_inputs([v])) for v in DERIVED_ROLLUPS}
_DIRTY = "commission_id IN (SELECT commission_id FROM inc.dirty)"
_NOT_DIRTY = "commission_id NOT IN (SELECT commission_id FROM inc.dirty)"
_SAME_ROW = (
    "u.commission_id = {t}.commission_id AND u.commission_date IS NOT DISTINCT FROM {t}.commission_date"
)


_KEYS = ["site", "commission_id", "commission_date"]
# An id's key in the index files: DuckDB's hash, 8 bytes to scan where the id is a string (a new
# DuckDB may hash otherwise: its version is part of the rollups' code, `state.CODE`).
_ID_KEY = "hash(commission_id)"


def _date_column(view: View) -> str:
    """The date column a rollup is bucketed by."""
    assert view.rollup is not None, view.name
    return view.rollup.date_column


def _base_month(path: Path) -> str:
    """The commission month of a base file: `whole-<month>` or a day of its own."""
    return month_of(path.stem.removeprefix(WHOLE_PREFIX))


@contextmanager
def build_connection(places: SitePlaces, *, full: bool) -> Iterator[duckdb.DuckDBPyConnection]:
    """A DuckDB connection for one site's build, closed at exit: a scheduled sync must not take the
    machine's memory, so past a limit (larger for a `full` build) DuckDB spills to a staging folder
    of the site's rollups (removed at exit; those a killed writer left, first)."""
    remove_staging(places.folder)
    with (
        staging(places.folder, "spill") as spill,
        _spilling(_FULL_MEMORY if full else _DELTA_MEMORY, spill) as con,
    ):
        if full:
            con.execute(f"SET max_temp_directory_size = '{_FULL_SPILL}'")
        con.execute("SET partitioned_write_flush_threshold = 65536")
        yield con


@contextmanager
def reading_connection() -> Iterator[duckdb.DuckDBPyConnection]:
    """A DuckDB connection that reads a site's change and writes nothing in the data folder (it
    spills, if it must, to a temporary folder of the system's): for a plan shown, not carried out."""
    with (
        tempfile.TemporaryDirectory(prefix="commerce-reports-plan-") as spill,
        _spilling(_DELTA_MEMORY, spill) as con,
    ):
        yield con


@contextmanager
def _spilling(memory: str, spill: Path | str) -> Iterator[duckdb.DuckDBPyConnection]:
    """A DuckDB connection of its own that keeps within `memory` by spilling to the folder `spill`
    (no progress bar: a build says what it does itself), closed at exit; Ctrl-C stops its query."""
    con = duckdb.connect(
        config={"memory_limit": memory, "preserve_insertion_order": False, "temp_directory": str(spill)}
    )
    on_ctrl_c(con)
    try:
        con.execute("SET enable_progress_bar = false")
        yield con
    finally:
        con.close()


class SiteBuild:
    """The rollups of one site (at `places`), written through `con` (a DuckDB connection of its own),
    from its `readable` lake files and the state `basis` (NOTHING for a whole build)."""

    def __init__(
        self, con: duckdb.DuckDBPyConnection, places: SitePlaces, readable: Listing, basis: SiteState
    ) -> None:
        self.con = con
        self.site = places.site
        self.root = places.lake
        self.index = places.index
        self.readable = readable
        self.basis = basis
        self.whole_days = basis.whole_days
        self.base = places.base
        self.patch = places.patch
        self.folders = places.views
        # the month of each readable report file: which months' report side it is read for
        self.report_months = {r: partition_month(r) for r in readable if dataset_of(r) != _T}
        con.execute("CREATE SCHEMA IF NOT EXISTS inc")

    # ------------------------------------------------------------------ inputs

    @cached_property
    def schemas(self) -> dict[str, str]:
        """Each dataset's schema signature over the readable files (the footers changed since the
        basis only), read through the build's connection: one of their own costs more than a few
        footers."""
        basis = self.basis
        return dataset_schemas(self.root, self.readable, basis.listing, basis.schemas, self.con)

    def of(self, dataset: str) -> list[str]:
        """The readable files of `dataset` (relpaths)."""
        return sorted(r for r in self.readable if dataset_of(r) == dataset)

    def _paths(self, relpaths: Iterable[str]) -> list[Path]:
        return [self.root / r for r in sorted(relpaths)]

    def _source(self, dataset: str, relpaths: Iterable[str]) -> str:
        return read_sql(dataset, self._paths(relpaths), by_name=self.schemas.get(dataset) == MIXED)

    def _versions(self, relpaths: Iterable[str]) -> str:
        """The SQL of every version of the transactions in these ledger files (`transaction_versions`
        over them)."""
        return render(_VIEWS["transaction_versions"], "inc", {_T: self._source(_T, relpaths)})

    def _report_sources(self, months: Collection[str] | None) -> dict[str, str]:
        """The SQL of each report dataset's readable files of `months` (None: of every month)."""
        return {
            d: self._source(d, [r for r in self.of(d) if months is None or self.report_months[r] in months])
            for d in DATASETS
            if d != _T
        }

    @cached_property
    def layout(self) -> IndexLayout:
        """Where the index rows of each readable ledger file's version belong (worked out once)."""
        return self.index_layout(self.readable)

    def index_layout(self, listing: Listing) -> IndexLayout:
        """Where the index rows of the ledger file versions of `listing` belong."""
        return IndexLayout(self.index, {r: d for r, d in listing.items() if dataset_of(r) == _T})

    def _existing(self, folder: Path, buckets: Iterable[str]) -> list[Path]:
        return [folder / f"{b}.parquet" for b in sorted(buckets) if (folder / f"{b}.parquet").exists()]

    def _base_files(self, months: Collection[str]) -> list[Path]:
        """The base files holding commission days of `months`, and the empty one."""
        held = [p for p in self.base.glob("*.parquet") if p.name != EMPTY and _base_month(p) in months]
        return [*sorted(held), self.base / EMPTY]

    def _patches(self, months: Iterable[str]) -> list[Path]:
        """The patch files of `months` that exist, and the empty one (so the list reads)."""
        return [*self._existing(self.patch, months), self.patch / EMPTY]

    def _columns(self, folder: Path) -> dict[str, str]:
        """The columns of the rollup files in `folder` (name -> type), from its `_empty.parquet`."""
        described = self.con.execute(f"DESCRIBE SELECT * FROM {read_stored([folder / EMPTY])}")
        return {str(name): str(kind) for name, kind, *_ in described.fetchall()}

    @cached_property
    def _stored_columns(self) -> dict[str, str]:
        """The columns of the stored `transactions` (read once: an update names them twice)."""
        return self._columns(self.base)

    def _named_columns(self, views: Iterable[View]) -> str:
        """The columns of `transactions` that `views` name, with its keys: all that computing them
        reads (a column missing here fails the build loudly, never silently)."""
        sql = "\n".join(_READS[v] for v in views)
        named = [c for c in self._stored_columns if c not in _KEYS and re.search(rf"\b{re.escape(c)}\b", sql)]
        return ", ".join([*_KEYS, *named])

    def _rows(self, sql: str) -> dict[str, int]:
        return {str(k): int(v) for k, v in self.con.execute(sql).fetchall()}

    # ------------------------------------------------------------------ shared steps

    @cached_property
    def earlier(self) -> IndexLayout:
        """Where the index rows of the ledger file versions the state `basis` reflects belong: its
        listing but the files it skipped (worked out once, for the change read and the index write)."""
        basis = self.basis
        return self.index_layout({r: d for r, d in basis.listing.items() if r not in basis.skipped})

    def _index(self, relpaths: Iterable[str], earlier: IndexLayout | None) -> tuple[Bucketed, Bucketed]:
        """The index files these ledger files' versions need (`IndexLayout.needed`: files of their
        own, packs), and the stale ones deleted."""
        writes = self.layout.needed(relpaths, earlier)
        return (
            self._index_rows(writes.own_read, "%Y-%m-%d", writes.own, stale=writes.stale),
            self._index_rows(writes.packs_read, "%Y-%m", writes.packs, writes.stored),
        )

    def _index_rows(
        self,
        relpaths: list[str],
        days: str,
        names: dict[str, Path],
        stored: Collection[str] = (),
        *,
        stale: Collection[Path] = (),
    ) -> Bucketed:
        """The index rows of the ledger files `relpaths` (read from them) and those `stored` (SELECTs
        of index rows), a file per `<by>_<days>` bucket (a strftime format of their day), each at
        its path in `names`."""
        read = (
            f"SELECT commission_id, commission_date, {_ID_KEY} AS id_key, partition_by, partition_day "
            f"FROM ({self._versions(relpaths)}) WHERE commission_id IS NOT NULL"
        )
        select = " UNION ALL BY NAME ".join([*stored, read])
        bucket = f"partition_by || '_' || strftime(partition_day, '{days}')"
        return Bucketed(select, bucket, self.index, only=set(names), names=names, stale=stale)

    def _install(
        self, schema: str, views: Iterable[View], transactions: str | None, sources: Mapping[str, str]
    ) -> None:
        """`views` in `schema`, over the rows of `transactions` (None: views over other rollups,
        whose rows are in `schema` already) and the report `sources` (a dataset left out has no
        rows)."""
        self.con.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
        if transactions is not None:
            self.con.execute(f"CREATE OR REPLACE VIEW {schema}.{_T}{UNBOUND} AS {transactions}")
        reading: dict[str, str] = {d: sources.get(d) or self._source(d, []) for d in DATASETS}
        for view in with_inputs(views):
            sql = render(view, schema, reading)
            self.con.execute(f"CREATE OR REPLACE VIEW {schema}.{view.name}{UNBOUND} AS {sql}")

    def _downstream(self, base: list[Path]) -> set[str]:
        """Recompute every rollup but `transactions`, whole, from the stored one (the `base` files
        of a full build: no patch), a slice of months at a time (`_month_slices`). A slice of at
        most `IN_MEMORY_ROWS` stored transactions is read into memory once: its rollups then bind
        and read it there, rather than each read the footers and rows of its files again. A rollup
        that others read (`network_link_performance`) is computed once into a table, which it and
        the rollups over it read: not once for itself and again under each of them."""
        slices = self._month_slices(base)
        parts: list[dict[str, str]] = []
        one = len(slices) == 1
        for number, (months, rows) in enumerate(slices):
            schema = f"inc_{number}"
            files = [p for p in base if one or _base_month(p) in months]
            stored = stored_transactions_sql([*files, self.base / EMPTY], [self.patch / EMPTY])
            stored = self._stored(schema, stored, in_memory=rows <= IN_MEMORY_ROWS)
            self._install(schema, DERIVED_ROLLUPS, stored, self._report_sources(None if one else months))
            for read in _READ:  # computed once, for itself and for the rollups over it
                self.con.execute(
                    f"CREATE OR REPLACE TABLE {schema}.rows_{read.name} AS FROM {schema}.{read.name}"
                )
                self.con.execute(
                    f"CREATE OR REPLACE VIEW {schema}.{read.name} AS FROM {schema}.rows_{read.name}"
                )
            parts.append({v.name: f"SELECT * FROM {schema}.{v.name}" for v in DERIVED_ROLLUPS})
        writes = [
            Bucketed(
                parts[0][v.name],
                month_bucket(_date_column(v)),
                self.folders[v.name],
                more=[part[v.name] for part in parts[1:]],
            )
            for v in DERIVED_ROLLUPS
        ]
        return set().union(*write_all(self.con, writes))

    def _month_slices(self, base: list[Path]) -> list[tuple[set[str], int]]:
        """The months of the rollups (of the `base` files, and of the report windows) in slices of
        at most `SLICE_ROWS` stored transactions (a month larger than that alone), in order, each
        with its stored transactions' count."""
        rows: dict[str, int] = {}
        counts = f"SELECT file_name, num_rows FROM parquet_file_metadata({sql_list(base)})"
        for name, count in (self._rows(counts) if base else {}).items():
            month = _base_month(Path(name))
            rows[month] = rows.get(month, 0) + count
        for month in self.report_months.values():
            rows.setdefault(month, 0)
        slices: list[tuple[set[str], int]] = []
        for month in sorted(rows):
            if not slices or slices[-1][1] + rows[month] > SLICE_ROWS:
                slices.append((set(), 0))
            months, total = slices[-1]
            months.add(month)
            slices[-1] = (months, total + rows[month])
        return slices or [(set(), 0)]

    def _id_buckets(self, ledger: list[str]) -> int:
        """How many slices of commission ids the `transactions` of a full build are computed in: each
        reads at most about `SLICE_ROWS` versions (its ids' versions all in it)."""
        if not ledger:
            return 1
        (versions,) = self.con.execute(
            f"SELECT sum(num_rows) FROM parquet_file_metadata({sql_list(self._paths(ledger))})"
        ).fetchall()[0]
        return max(1, -(-int(versions or 0) // SLICE_ROWS))

    def _by_id_slices(self, folder: Path, versions: str, transactions: str, buckets: int) -> str:
        """Compute `transactions` a slice of ids at a time, in `folder`: the `versions` first
        written once by slice (a statement reading each ledger file once), then each slice's
        transactions from its own versions into a file of its own (its versions then deleted).
        Returns the SELECT of their rows (`transactions` itself when no version has an id)."""
        by_slice = folder / "versions"
        self.con.execute(
            f"COPY (SELECT *, {_ID_KEY} % {buckets} AS _slice FROM ({versions}) WHERE commission_id "
            f"IS NOT NULL) TO {quote(str(by_slice))} ({_SLICE_COPY}, PARTITION_BY (_slice))"
        )
        slices = []
        for k in range(buckets):
            files = sorted((by_slice / f"_slice={k}").glob("*.parquet"))
            if not files:
                continue
            self.con.execute(
                f"CREATE OR REPLACE VIEW inc.transaction_versions{UNBOUND} AS "
                f"SELECT * FROM {read_stored(files)}"
            )
            slices.append(folder / f"{k}.parquet")
            self.con.execute(f"COPY ({transactions}) TO {quote(str(slices[-1]))} ({_SLICE_COPY})")
            shutil.rmtree(by_slice / f"_slice={k}")
        return f"SELECT * FROM {read_stored(slices)}" if slices else transactions

    # ------------------------------------------------------------------ full

    def full(self) -> tuple[frozenset[str], frozenset[str]]:
        """Rewrite every rollup of the site from its lake files; return the months written and the
        commission days of `whole.parquet`. A large lake's `transactions` (the latest version of
        each id: a sort of every version) is computed a slice of ids at a time (`_id_buckets`,
        by hash), each slice into a file of its own that the month files are then written from; and
        the other rollups a slice of months at a time: each statement's memory and spill are
        bounded whatever the lake's size."""
        versions = self._versions(self.of(_T))
        transactions = render(_VIEWS[_T], "inc", {})  # (over inc.transaction_versions)
        buckets = self._id_buckets(self.of(_T))
        with staging(self.base.parent, "slices") as folder:
            self.con.execute(f"CREATE OR REPLACE VIEW inc.transaction_versions{UNBOUND} AS {versions}")
            if buckets > 1:
                transactions = self._by_id_slices(folder, versions, transactions, buckets)
            whole = Bucketed(transactions, month_bucket("commission_date"), self.base, prefix=WHOLE_PREFIX)
            # no patch: the columns of `transactions` and `_deleted` (the transactions view's, when
            # every base file is new: the empty one is written in the same go)
            no_patch = f"SELECT *, false AS _deleted FROM ({transactions}) LIMIT 0"
            *_, months, _ = write_all(
                self.con,
                [*self._index(self.of(_T), None), whole, Bucketed(no_patch, f"'{NONE}'", self.patch)],
            )
        base = [whole.path(month) for month in sorted(months)]  # (every other base file deleted)
        held = read_stored([*base, self.base / EMPTY])  # (the empty one: a list that reads)
        days = frozenset(self._rows(f"SELECT DISTINCT {_DAY}, 0 FROM {held}"))
        return frozenset(self._downstream(base)), days

    # ------------------------------------------------------------------ incremental

    def read_change(self, ledger: list[str]) -> TransactionChange:
        """Read what the changed `ledger` files change since the state `basis`, writing no file: the
        changed ids (`inc.dirty`: those in the files now and those their index says they held
        before), their rows now (`inc.u`), their stored rows before (`inc.old_rows`, with what the
        merged rollups name), and the facts a plan decides from (`plan.TransactionChange`)."""
        now = [r for r in ledger if r in self.readable]
        earlier = self.earlier
        old = earlier.stored_rows([r for r in ledger if r in earlier.ledger])
        ids = [f"SELECT commission_id FROM {read_stored(self._paths(now), union_by_name=True)}"]
        ids = (ids if now else []) + ([f"SELECT commission_id FROM ({old})"] if old else [])
        if not ids:  # no transaction changed: none to add or subtract
            empty = f"SELECT * FROM {read_stored([self.base / EMPTY])}"
            for table, columns in (("dirty", "commission_id"), ("u", "*"), ("old_rows", "*"), ("old", "*")):
                self.con.execute(f"CREATE OR REPLACE TABLE inc.{table} AS SELECT {columns} FROM ({empty})")
            return TransactionChange()
        self._read_changed_rows(ids, old, now)
        return self._change()

    def planned(self, plan: SitePlan) -> SitePlan:
        """An update `plan` with its steps per rollup and month: the change its ledger files make
        (`read_change`, from the state `basis`; no file written), decided by `plan.plan_update`."""
        return plan_update(plan, self.read_change(plan.ledger))

    def _holding(self, changed: list[str]) -> tuple[list[str], set[str]]:
        """The ledger files holding a version of a dirty id, and the commission months of those
        versions (where their stored rows can be): the `changed` files (every id in them is dirty),
        and those whose index rows (`IndexLayout.present`, the layout before too) hold a dirty
        id's key (a scan of integers, not of the ids themselves: a key shared by two ids only makes
        a file and a month read for nothing)."""
        places = self.layout.present([r for r in self.layout.ledger if r not in changed], self.earlier)
        files = sorted({path for path in places.values() if path is not None})
        unindexed = [r for r, path in places.items() if path is None]  # (a refresh stopped)
        holding: set[str] = set()
        months: set[str] = set()
        if files:
            by_key = {(key.by, key.start): r for r in self.layout.ledger for key in [key_of(r)]}
            found = self.con.execute(
                f"SELECT DISTINCT partition_by, partition_day, {month_bucket('commission_date')} FROM "
                f"{read_stored(files)} WHERE id_key IN (SELECT {_ID_KEY} FROM inc.dirty)"
            ).fetchall()
            # (a pack's row of a version since changed names a file among `changed`, or none)
            holding = {by_key[by, day] for by, day, _ in found if (by, day) in by_key}
            months = {str(month) for *_, month in found}
        if unindexed:
            names, more = self._matching(self._paths(unindexed), _DIRTY, union_by_name=True)
            holding |= {str(Path(name).relative_to(self.root)) for name in names}
            months |= more
        if changed:
            month = month_bucket("commission_date")
            months |= set(self._rows(f"SELECT DISTINCT {month}, 0 FROM ({self._versions(changed)})"))
        return sorted({*changed, *holding}), months

    def _matching(
        self, paths: list[Path], where: str, *, union_by_name: bool = False
    ) -> tuple[set[str], set[str]]:
        """The files among `paths` with a row where `where` holds, and the commission months of
        those rows (none read when there is no path)."""
        if not paths:
            return set(), set()
        read = read_stored(paths, filename=True, union_by_name=union_by_name)
        found = self.con.execute(
            f"SELECT DISTINCT filename, {month_bucket('commission_date')} FROM {read} WHERE {where}"
        ).fetchall()
        return {name for name, _ in found}, {str(month) for _, month in found}

    def _read_changed_rows(self, ids: list[str], old: str | None, now: list[str]) -> None:
        """`inc.dirty`, `inc.u`, `inc.old_rows` and `inc.old` from the changed ids (`ids`: SELECTs of
        them) and the index rows of the changed files' versions before (`old`, SQL)."""
        con = self.con
        con.execute(
            "CREATE OR REPLACE TABLE inc.dirty AS SELECT DISTINCT commission_id FROM "
            f"({' UNION ALL '.join(ids)}) WHERE commission_id IS NOT NULL"
        )
        holding, stored_in = self._holding(now)
        versions = self._versions(holding)
        # Streamed, not read into a table first: `transactions` reads narrow rows to find each id's
        # latest version and whole rows only where it joins them (at 100 M: 1.4 -> 0.7 s).
        dirty_versions = f"SELECT * FROM ({versions}) WHERE {_DIRTY}"
        con.execute(f"CREATE OR REPLACE VIEW inc.transaction_versions{UNBOUND} AS {dirty_versions}")
        con.execute(f"CREATE OR REPLACE TABLE inc.u AS {render(_VIEWS[_T], 'inc', {})}")
        # A dirty id's stored row is one of its versions before the change: in a file holding it
        # now (`_holding`: the months of its versions there) or in a changed file's index. Only
        # the base files of those months are read.
        month = month_bucket("commission_date")
        if old:
            stored_in |= set(self._rows(f"SELECT DISTINCT {month}, 0 FROM ({old})"))
        # Their stored rows, with what the merged rollups name: the old rows a refresh subtracts.
        columns = self._named_columns(_MERGING)
        rows = stored_transactions_sql(self._base_files(stored_in), self._patches(stored_in), _DIRTY, columns)
        con.execute(f"CREATE OR REPLACE TABLE inc.old_rows AS {rows}")
        con.execute(
            f"CREATE OR REPLACE TABLE inc.old AS SELECT DISTINCT {', '.join(_KEYS[1:])} FROM inc.old_rows"
        )

    def _change(self) -> TransactionChange:
        """The facts of the change in `inc.u` and `inc.old`: rows per commission day, the days an id
        leaves, the rows of the touched days' own files and of their patch rows that stay."""
        new = self._rows(f"SELECT {_DAY}, count(*) FROM inc.u GROUP BY 1")
        leaving = self._rows(  # (days an id leaves: moved to another day, or gone)
            f"SELECT DISTINCT {_DAY}, 0 FROM inc.old o WHERE NOT EXISTS "
            f"(SELECT 1 FROM inc.u u WHERE {_SAME_ROW.format(t='o')})"
        )
        touched = set(new) | set(leaving)
        files = self._existing(self.base, touched - self.whole_days)
        sizes = (
            self._rows(f"SELECT file_name, num_rows FROM parquet_file_metadata({sql_list(files)})")
            if files
            else {}
        )
        patches = self._patches({month_of(d) for d in touched})
        kept = self._rows(
            f"SELECT {_DAY}, count(*) FROM {read_stored(patches)} WHERE {_NOT_DIRTY} GROUP BY 1"
        )
        (count,) = self.con.execute("SELECT count(*) FROM inc.dirty").fetchall()[0]
        return TransactionChange(
            transactions=int(count),
            new=new,
            leaving=frozenset(leaving),
            own_rows={p.stem: sizes.get(str(p), 0) for p in files},
            kept=kept,
            patch_months=frozenset(p.stem for p in patches if p.name != EMPTY),
        )

    def write(self, plan: SitePlan) -> None:
        """Carry out an update `plan` (its change read by `read_change`): index the changed ledger
        files, write the day files and patches of `transactions` it names, then each other rollup's
        months: computed again (`whole`) or updated by the change alone (`delta`, see `merge.py`)."""
        own, packs = self._index([r for r in plan.ledger if r in self.readable], self.earlier)
        writes = [own, packs]
        rewrite, patches = plan.buckets[_T].whole, plan.buckets[_T].patch
        if rewrite or patches:
            self._stage_transactions(rewrite, plan.patched)
            writes += [
                Bucketed("SELECT * FROM inc.base_rows", _DAY, self.base, only=rewrite),
                Bucketed(
                    "SELECT * FROM inc.patch_rows", month_bucket("commission_date"), self.patch, only=patches
                ),
            ]
        whole = {v: plan.buckets[v.name].whole for v in DERIVED_ROLLUPS}
        delta = {v: plan.buckets[v.name].delta for v in DERIVED_ROLLUPS}
        months = {month_of(b) for b in frozenset[str]().union(*whole.values(), *delta.values())}
        sources = self._report_sources(months)
        self._install_recomputed(whole, sources)
        self._install_merging(frozenset[str]().union(*delta.values()), sources)
        writes += self._rollup_writes(whole, delta, sources)
        settled = len(packs.only or ())  # months packed at once: an upgrade, or the first sync in months
        with (
            said(f"packing the index of {settled} settled months of site {self.site}")
            if settled > 1
            else nullcontext()
        ):
            write_all(self.con, writes, at_once=2)  # every write staged before any file is replaced

    def _rollup_writes(
        self,
        whole: Mapping[View, frozenset[str]],
        delta: Mapping[View, frozenset[str]],
        sources: Mapping[str, str],
    ) -> list[Bucketed]:
        """What each rollup but `transactions` writes (`_months`), in the views' order. The rows a
        rollup read by others writes are a view in `inc_written`, and the rollups over it are
        computed there, from those rows: what the read rollup will hold once this write is in
        place. (Each write computes them: in a table first, they would be computed alone, while
        the other writes wait.)"""
        self.con.execute(f"CREATE SCHEMA IF NOT EXISTS {_WRITTEN}")
        writes = []
        for view in DERIVED_ROLLUPS:
            if view in _OVER_ROLLUPS and whole[view]:
                self._install(_WRITTEN, [view], None, sources)
            write = self._months(view, whole[view], delta[view])
            if write is None:
                continue
            if view in _READ:
                self.con.execute(f"CREATE OR REPLACE VIEW {_WRITTEN}.{view.name}{UNBOUND} AS {write.select}")
            writes.append(write)
        return writes

    def _stage_transactions(self, rewrite: frozenset[str], patched: frozenset[str]) -> None:
        """The rows of the day files written again (`inc.base_rows`) and of the patch files
        (`inc.patch_rows`): the stored rows that stay, the changed ids' rows now, and a deleted row
        where an id leaves a day the last full build's file holds."""
        touched = rewrite | patched
        own_files = self._existing(self.base, rewrite)
        own_patches = self._patches({month_of(d) for d in rewrite})
        self.con.execute(
            f"CREATE OR REPLACE VIEW inc.base_rows{UNBOUND} AS SELECT * FROM "
            f"({stored_transactions_sql([*own_files, self.base / EMPTY], own_patches)}) "
            f"WHERE {_DAY} IN ({in_list(rewrite)}) AND {_NOT_DIRTY} "
            f"UNION ALL BY NAME SELECT * FROM inc.u WHERE {_DAY} IN ({in_list(rewrite)})"
        )
        patches = self._patches({month_of(d) for d in touched})
        self.con.execute(
            f"CREATE OR REPLACE TABLE inc.patch_rows AS SELECT * FROM {read_stored(patches)} AS p "
            f"WHERE {_DAY} NOT IN ({in_list(rewrite)}) AND ({_NOT_DIRTY} OR _deleted AND NOT EXISTS "
            f"(SELECT 1 FROM inc.u u WHERE {_SAME_ROW.format(t='p')})) "
            f"UNION ALL BY NAME SELECT *, false AS _deleted FROM inc.u WHERE {_DAY} IN ({in_list(patched)}) "
            f"UNION ALL BY NAME SELECT {quote(self.site)} AS site, commission_id, commission_date, "
            f"true AS _deleted FROM inc.old o WHERE {_DAY} IN ({in_list(patched & self.whole_days)}) "
            f"AND NOT EXISTS (SELECT 1 FROM inc.u u WHERE {_SAME_ROW.format(t='o')})"
        )

    def _install_recomputed(self, buckets: Mapping[View, frozenset[str]], sources: Mapping[str, str]) -> None:
        """The rollups over transactions computed again for some months or days (`buckets`; those
        over other rollups: `_rollup_writes`), over their stored transactions as this write leaves
        them (`inc.stored`) and their reports. A single rollup reading them reads them as it
        writes, in a stream: in a table, a month of a large lake would not fit in a build's memory,
        and DuckDB would spill it to disk. Several (the months a stopped refresh left) read them
        once into a table."""
        computed = [v for v in DERIVED_ROLLUPS if buckets[v] and v not in _OVER_ROLLUPS]
        if not computed:
            return
        read = frozenset[str]().union(*(buckets[v] for v in computed))
        months = {month_of(b) for b in read}
        columns = self._named_columns(computed)
        # What the stored transactions of these days will be once this write is in place: those
        # stored now but the changed ones, and the changed ones' rows now.
        where = within("commission_date", read)
        stored = stored_transactions_sql(self._base_files(months), self._patches(months), where, columns)
        changed = f"SELECT {columns} FROM inc.u WHERE {where}"
        stored = f"SELECT * FROM ({stored}) WHERE {_NOT_DIRTY} UNION ALL BY NAME {changed}"
        in_memory = sum(map(reads_transactions, computed)) > 1
        self._install("inc", computed, self._stored("inc", stored, in_memory=in_memory), sources)

    def _stored(self, schema: str, sql: str, *, in_memory: bool) -> str:
        """The stored transactions `sql` that rollups are computed from, as `{schema}.stored`: read
        into a table once (`in_memory`: several rollups read them, and they fit), else a view each
        reading rollup streams; the SELECT of them."""
        made = f"TABLE {schema}.stored" if in_memory else f"VIEW {schema}.stored{UNBOUND}"
        self.con.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
        self.con.execute(f"CREATE OR REPLACE {made} AS {sql}")
        return f"SELECT * FROM {schema}.stored"

    def _install_merging(self, months: frozenset[str], sources: Mapping[str, str]) -> None:
        """The merged rollups over the changed transactions' new rows (`inc_new`), their old rows
        (`inc_old`), and no transactions (`inc_reports`: the months' reports alone)."""
        if not months:
            return
        changed = within("commission_date", months)
        self._install("inc_new", _MERGING, f"SELECT * FROM inc.u WHERE {changed}", {})
        self._install("inc_old", _MERGING, f"SELECT * FROM inc.old_rows WHERE {changed}", {})
        self._install("inc_reports", _MERGING, "SELECT * FROM inc.old_rows WHERE false", sources)

    def _months(self, view: View, whole: frozenset[str], delta: frozenset[str]) -> Bucketed | None:
        """What `view`'s months become: those in `whole` computed again (a day of `whole`: that day
        computed again, the month's other days kept), those in `delta` merged (None: no month)."""
        folder = self.folders[view.name]
        date = _date_column(view)
        bucket = month_bucket(date)
        months = {b for b in whole if len(b) != len("YYYY-MM-DD")}
        days = whole - months
        selects = []  # each for its own months: the report sources hold the rows of both
        computed = f"{_WRITTEN if view in _OVER_ROLLUPS else 'inc'}.{view.name}"
        if months:
            selects.append(f"SELECT * FROM {computed} WHERE {bucket} IN ({in_list(months)})")
        if days:
            kept = self._existing(folder, {month_of(d) for d in days})
            if kept:
                selects.append(f"SELECT * FROM {read_stored(kept)} WHERE NOT ({within(date, days)})")
            selects.append(f"SELECT * FROM {computed} WHERE {within(date, days)}")
        if delta:
            stored_files = self._existing(folder, delta)
            reports = "inc_reports" if view in _REPORTED else None
            rows = merged_sql(view, stored_files, self._columns(folder), "inc_new", "inc_old", reports)
            selects.append(f"SELECT * FROM ({rows}) WHERE {bucket} IN ({in_list(delta)})")
        if not selects:
            return None
        written = months | {month_of(d) for d in days} | delta
        return Bucketed(" UNION ALL BY NAME ".join(selects), bucket, folder, only=written)
