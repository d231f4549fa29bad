"""How whole and how final each period of the views is: the `complete` and `final` columns.

A period's transaction figures are *complete* when every `updateDate` day of the period is stored
and settled (a commission first appears on the day it was earned), and *final* when the ledger
also holds every day of the revision horizon after it (the service may still adjust the period's
transactions until then: returns, late commissions). A report window (networks, merchandise) is
complete once it was fetched after the window settled, and final once it was fetched after its
horizon had passed; neither while a window of the site ending the same day holds rows in doubt
(an amount that could not be typed: the sums of its period are short). Both come from the
manifests, which record what was stored and whether it settled: nothing here reads a Parquet file
or the settings.

The manifests also say which ledger days each site stores at all, settled or not, and when the last
one was fetched: `ledger_select` gives them to the `ledger_coverage` view. A day fetched with no
transaction in it is stored (its file holds no row), so this cannot come from the rows.

The rules become SQL over a view's own columns (`day`, or `window_start`/`window_end`, and
`fetched_at` or `report_fetched_at`), with each site's settled ledger runs written in as date
literals: a CASE per site, no join, so a filter on the view still prunes and Spark runs it alike.
The catalog file names them by macros instead (`status_macros`), so that its views' SQL stays the
same from one sync to the next and only the macros are written again.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path

from ..config import DEFAULT_REVISION_DAYS
from ..contract import AGGREGATES, PART_FILE
from ..errors import LakeError
from ..lake import Manifest
from .sources import quote

__all__ = [
    "SiteCoverage",
    "coverage_of",
    "ledger_select",
    "status_columns",
    "status_macros",
    "with_status",
]

REPORT_SETTLE_DAYS = 2  # a report window settles two days after it ends (the sync's settle policy)
# The columns each kind of period's status is worked out from (the catalog's macros take them).
_STATUS_FIELDS: dict[str, tuple[str, ...]] = {
    "day": ("site", "day"),
    "month": ("site", "window_start", "window_end", "report_fetched_at"),
    "window": ("site", "window_end", "fetched_at"),
}
_MACRO, _PARAMETER = "commerce", "row_"  # commerce_complete_day(row_site, row_day), ...
_LEDGER_MACRO = f"{_MACRO}_ledger"  # the catalog's table macro of the stored ledger days


def revision_days_of(manifest: Manifest | None) -> int:
    """The revision horizon the site's last sync used, in days (the manifest records it; the
    default before any sync has)."""
    if manifest is None or manifest.revision_days is None:
        return DEFAULT_REVISION_DAYS
    return manifest.revision_days


@dataclass(frozen=True)
class SiteCoverage:
    """One site's settled ledger days, as runs of consecutive days, and its revision horizon; and
    the first and last ledger day it stores, settled or not, with when the last was fetched."""

    site: str
    runs: tuple[tuple[date, date], ...]  # (first, last) day, both included
    revision_days: int
    stored: tuple[date, date, datetime] | None = None  # first day, last day, last day's fetched_at
    # The ends (excluded) of the report windows stored with rows in doubt (an amount that could not
    # be typed, a row of another day): figures of a window ending then are neither complete nor final.
    doubtful_ends: tuple[date, ...] = ()

    def to_json(self) -> dict[str, object]:
        return {
            "site": self.site,
            "runs": [[first.isoformat(), last.isoformat()] for first, last in self.runs],
            "revision_days": self.revision_days,
            "stored": None if self.stored is None else [value.isoformat() for value in self.stored],
            "doubtful_ends": [end.isoformat() for end in self.doubtful_ends],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> SiteCoverage:
        runs, stored = data["runs"], data["stored"]  # a KeyError: recorded by an older version
        if not isinstance(runs, list) or not (stored is None or isinstance(stored, list)):
            raise LakeError(f"coverage of {data.get('site')!r} is not lists of days")
        doubtful = data.get("doubtful_ends", [])  # (none recorded before they were)
        if not isinstance(doubtful, list):
            raise LakeError(f"coverage of {data.get('site')!r} is not lists of days")
        return cls(
            str(data["site"]),
            tuple((date.fromisoformat(first), date.fromisoformat(last)) for first, last in runs),
            int(str(data["revision_days"])),
            None if stored is None else _stored_of(stored),
            tuple(date.fromisoformat(end) for end in doubtful),
        )


def _stored_of(values: list[str]) -> tuple[date, date, datetime]:
    first, last, fetched = values
    return date.fromisoformat(first), date.fromisoformat(last), datetime.fromisoformat(fetched)


def coverage_of(data_dir: Path, site: str, read: Collection[str]) -> SiteCoverage:
    """The site's coverage from its manifest (none when it has no readable manifest: then no
    period is complete, which is what the views say until a sync has written one). A day is held
    only when the views read its file (`read`, relpaths of partition files): not one they leave
    out, nor one gone from the folder since its entry was written (removed by hand)."""
    try:
        manifest = Manifest.load(data_dir, site)
    except LakeError:
        return SiteCoverage(site, (), revision_days_of(None))
    held = sorted(
        (
            (entry.key.start, entry)
            for entry in manifest
            if entry.key.dataset == "transactions"
            and entry.key.by == "updateDate"
            and f"{entry.relpath}/{PART_FILE}" in read
        ),
        key=lambda held_day: held_day[0],
    )
    settled = [day for day, entry in held if entry.settled and not entry.doubtful]
    stored = (held[0][0], held[-1][0], held[-1][1].fetched_at) if held else None
    doubtful = sorted({e.key.end for e in manifest if e.key.dataset in AGGREGATES and e.doubtful})
    return SiteCoverage(site, tuple(_runs(settled)), revision_days_of(manifest), stored, tuple(doubtful))


def _runs(days: list[date]) -> list[tuple[date, date]]:
    runs: list[tuple[date, date]] = []
    for day in days:
        if runs and runs[-1][1] + timedelta(days=1) == day:
            runs[-1] = (runs[-1][0], day)
        else:
            runs.append((day, day))
    return runs


def _date(day: date) -> str:
    return f"DATE '{day.isoformat()}'"


def _ledger_covers(coverage: Iterable[SiteCoverage], row: str, first: str, within: str, horizon: bool) -> str:
    """SQL: the site's settled ledger holds every day of the period starting at `first`, and with
    `horizon` the revision horizon's days after it too. `within` is a format string saying, for the
    day after the last one the ledger holds (`{bound}`, a date literal), that the period ends by it;
    `row` prefixes the row's columns (`v.`, or a macro's parameters)."""
    cases = []
    for site in coverage:
        terms = []
        for run_first, run_last in site.runs:
            bound = run_last + timedelta(days=1 - (site.revision_days if horizon else 0))
            if bound > run_first:
                terms.append(f"({first} >= {_date(run_first)} AND {within.format(bound=_date(bound))})")
        cases.append(f"WHEN {quote(site.site)} THEN {' OR '.join(terms) or 'false'}")
    if not cases:
        return "false"
    return f"(CASE {row}site {' '.join(cases)} ELSE false END)"


def _fetched_after(coverage: Iterable[SiteCoverage], row: str, fetched: str, end: str, horizon: bool) -> str:
    """SQL: the report window ending (excluded) at `end` was fetched (`fetched`, a UTC timestamp)
    once it had settled, or with `horizon` once its revision horizon had passed. Epoch seconds
    keep the comparison free of the session's time zone."""
    lag = str(REPORT_SETTLE_DAYS)
    if horizon:
        days = " ".join(f"WHEN {quote(s.site)} THEN {s.revision_days}" for s in coverage)
        lag = (
            f"(CASE {row}site {days} ELSE {revision_days_of(None)} END)"
            if days
            else str(revision_days_of(None))
        )
    # A DATE's epoch counted in days: Spark's UNIX_TIMESTAMP of a date would use the session's zone.
    return f"(epoch({fetched}) >= (date_diff('day', DATE '1970-01-01', {end}) + {lag}) * 86400)"


def _clean(coverage: Iterable[SiteCoverage], row: str, end: str) -> str:
    """SQL: ` AND` no report window of the site ending (excluded) at `end` holds rows in doubt (of
    any dataset, slice or grain: the figures of that period may be short until it is fetched
    clean); nothing when no window of any site does."""
    cases = [
        f"WHEN {quote(s.site)} THEN {end} IN ({', '.join(map(_date, s.doubtful_ends))})"
        for s in coverage
        if s.doubtful_ends
    ]
    return f" AND NOT (CASE {row}site {' '.join(cases)} ELSE false END)" if cases else ""


def _status(period: str, coverage: Iterable[SiteCoverage], row: str) -> tuple[str, str]:
    """SQL: whether a row with a period of kind `period` is complete, and whether it is final
    (`row` prefixes its columns)."""
    coverage = list(coverage)
    if period == "day":
        day, within = f"{row}day", f"{row}day < {{bound}}"
        complete, final = (_ledger_covers(coverage, row, day, within, h) for h in (False, True))
    elif period == "month":
        start, end, fetched = f"{row}window_start", f"{row}window_end", f"{row}report_fetched_at"
        ledger = [_ledger_covers(coverage, row, start, f"{end} <= {{bound}}", h) for h in (False, True)]
        clean = _clean(coverage, row, end)
        reports = [
            f"({fetched} IS NULL OR {_fetched_after(coverage, row, fetched, end, h)}){clean}"
            for h in (False, True)
        ]
        complete, final = (f"({tx} AND {rp})" for tx, rp in zip(ledger, reports, strict=True))
    elif period == "window":
        fetched, end = f"{row}fetched_at", f"{row}window_end"
        clean = _clean(coverage, row, end)
        complete, final = (f"{_fetched_after(coverage, row, fetched, end, h)}{clean}" for h in (False, True))
    else:
        raise LakeError(f"{period!r} is not a kind of period: use day, month or window")
    return f"coalesce({complete}, false)", f"coalesce({final}, false)"


def status_columns(period: str, coverage: Iterable[SiteCoverage] | None) -> str:
    """SQL: the `complete` and `final` columns of a view row (alias `v`) with a period of kind
    `period`: `day` (transaction figures of one commission day), `month` (transaction figures
    by commission month joined with report windows: `report_fetched_at` NULL when none is
    stored) or `window` (a stored report window and its `fetched_at`). With no `coverage`, calls
    of the macros `status_macros` defines instead: SQL that stays the same as the coverage moves."""
    if coverage is not None:
        complete, final = _status(period, coverage, "v.")
        return f"{complete} AS complete, {final} AS final"
    if period not in _STATUS_FIELDS:
        raise LakeError(f"{period!r} is not a kind of period: use day, month or window")
    row = ", ".join(f"v.{name}" for name in _STATUS_FIELDS[period])
    return ", ".join(f"{_MACRO}_{column}_{period}({row}) AS {column}" for column in ("complete", "final"))


def ledger_select(coverage: Iterable[SiteCoverage] | None) -> str:
    """SQL: a row per site that stores ledger days: site, first_day and last_day (updateDate days
    stored, settled or not) and last_fetched_at (when the last was fetched), as date and time
    literals (no `coverage`: the catalog's table macro that `status_macros` defines instead)."""
    if coverage is None:
        return f"SELECT * FROM {_LEDGER_MACRO}()"
    rows = [
        f"SELECT CAST({quote(c.site)} AS VARCHAR) AS site, {_date(c.stored[0])} AS first_day, "
        f"{_date(c.stored[1])} AS last_day, "
        f"CAST({quote(c.stored[2].isoformat())} AS TIMESTAMPTZ) AS last_fetched_at"
        for c in coverage
        if c.stored is not None
    ]
    if not rows:
        return (
            "SELECT CAST(NULL AS VARCHAR) AS site, CAST(NULL AS DATE) AS first_day, "
            "CAST(NULL AS DATE) AS last_day, CAST(NULL AS TIMESTAMPTZ) AS last_fetched_at WHERE false"
        )
    return " UNION ALL ".join(rows)


def status_macros(coverage: Iterable[SiteCoverage]) -> list[str]:
    """The statements (re)defining the macros that `status_columns` and `ledger_select` call when
    given no coverage: for each kind of period, whether a row is complete and whether it is final,
    and the stored ledger days, by `coverage`."""
    coverage = list(coverage)
    statements = [f"CREATE OR REPLACE MACRO {_LEDGER_MACRO}() AS TABLE {ledger_select(coverage)}"]
    for period, fields in _STATUS_FIELDS.items():
        parameters = ", ".join(f"{_PARAMETER}{name}" for name in fields)
        for column, sql in zip(("complete", "final"), _status(period, coverage, _PARAMETER), strict=True):
            statements.append(f"CREATE OR REPLACE MACRO {_MACRO}_{column}_{period}({parameters}) AS {sql}")
    return statements


def with_status(period: str | None, sql: str, coverage: Iterable[SiteCoverage] | None) -> str:
    """The SELECT `sql` with its `complete` and `final` columns, when its rows are periods (no
    `coverage`: by the macros of `status_macros`, see `status_columns`)."""
    if period is None:
        return sql
    return f"SELECT v.*, {status_columns(period, coverage)} FROM ({sql}) AS v"
