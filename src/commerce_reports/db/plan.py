"""What a refresh of one site's rollups will do, and why: a value worked out before anything is written.

`plan_site` decides from the state of the lake alone (what it holds now, what the rollups' state
says they reflect, whether their files are the ones the last refresh wrote, what a sync says it
stored): nothing to do, a build whole, or an update for what changed, each with its reason.

An update's detail depends on the changed transactions themselves: the commission days they fall
in now and fell in before, and how large the day files they touch are. The build reads those from
the lake without writing anything (`build.SiteBuild.read_change`, a `TransactionChange`), and
`plan_update` decides, for each rollup and month (each day, for the `transactions` day files):

- `whole`: written again from what it reads (a day file of `transactions`; a month of a rollup
  that cannot be updated by its changes, or that a stopped refresh left half written);
- `delta`: a month updated by its changed transactions alone (see `merge.py`), its report side
  computed again when its report windows changed;
- `patch`: a month's patch file of `transactions` written again with the changed rows;
- `nothing`: left as it is.

The build carries a plan out and decides nothing (`build.SiteBuild.write`); `commerce-reports
rollups --plan` prints it. Every function here is pure: the tests need no file.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace

from ..contract import PartitionKey
from .buckets import NONE
from .listing import dataset_of
from .state import CODE, DERIVED_ROLLUPS, WHOLE_PREFIX, SiteState
from .views import PERIOD_KINDS, View, read_rollups, reads_reports, reads_transactions

__all__ = [
    "DELTA",
    "EVERY",
    "NOTHING",
    "PATCH",
    "PATCH_SHARE",
    "UPDATE",
    "WHOLE",
    "Buckets",
    "SitePlan",
    "Step",
    "TransactionChange",
    "foreign_rollups",
    "month_of",
    "partition_month",
    "plan_site",
    "plan_update",
]

WHOLE, DELTA, PATCH, NOTHING = "whole", "delta", "patch", "nothing"
UPDATE = "update"  # a site's plan: write what changed (its steps say what)
EVERY = "every month"  # a step over all of a rollup's buckets
_T = "transactions"
PATCH_SHARE = 0.25  # a day of its own whose changed and patched rows pass this share of its rows is rewritten
_STOPPED = "a stopped refresh left it half written: computed again"
_NO_MERGE = "its distinct counts do not add up, computed again"  # (a rollup of transactions without a Merge)
_REPORTED = "computed again from them"  # (a rollup that reads no transaction)
_MOST = 50  # past this many changed ledger files, and past half of them, a full build costs less


def month_of(bucket: str) -> str:
    """The month (`YYYY-MM`) of a day or month bucket (`none` stays `none`)."""
    return bucket if bucket == NONE else bucket[:7]


def _was_being_written(relpath: str, pending: frozenset[str]) -> bool:
    """Whether a refresh stopped while writing the `pending` months wrote the rollup file at
    `relpath`: a file of one of those months (`<view>/<month>.parquet`, `transactions/base/
    whole-<month>.parquet`, `transactions/base/<day>.parquet`, ...), or an index file (an update
    indexes its changed ledger files first)."""
    if not pending:
        return False
    name = relpath.rsplit("/", 1)[-1].removesuffix(".parquet").removeprefix(WHOLE_PREFIX)
    return relpath.startswith("index/") or month_of(name) in pending


def foreign_rollups(before: SiteState, changed: Collection[str]) -> list[str]:
    """The `changed` rollup files (`state.changed_rollups`) that no update stopped midway explains,
    sorted: those outside the months it was writing. Anything else changed them. (A stopped full
    build explains every file: the planner and verify ask `before.rebuilding` first.)"""
    return sorted(r for r in changed if not _was_being_written(r, before.pending_months))


def partition_month(relpath: str) -> str:
    """The month of a partition file's first day."""
    return PartitionKey.from_relpath(relpath.rsplit("/", 1)[0]).start.strftime("%Y-%m")


@dataclass(frozen=True)
class Step:
    """One rollup's bucket (a month, a `transactions` day, or every month) and what happens to it."""

    rollup: str
    bucket: str
    action: str
    reason: str

    def __str__(self) -> str:
        return f"{self.rollup:<24} {self.bucket:<12} {self.action:<8} {self.reason}"


@dataclass(frozen=True)
class TransactionChange:
    """What the changed ledger files change, read from the lake without writing: the rows of the
    changed transactions now, per commission day; the days one of them leaves (moved to another
    day, or gone); the rows of each touched day's own base file (a day first seen since the last
    full build), and of its patch rows that stay; the months that hold a patch file already."""

    transactions: int = 0
    new: Mapping[str, int] = field(default_factory=dict)
    leaving: frozenset[str] = frozenset()
    own_rows: Mapping[str, int] = field(default_factory=dict)
    kept: Mapping[str, int] = field(default_factory=dict)
    patch_months: frozenset[str] = frozenset()

    @property
    def days(self) -> frozenset[str]:
        """The commission days the change touches."""
        return frozenset(self.new) | self.leaving


@dataclass(frozen=True)
class Buckets:
    """What an update writes of one rollup: the buckets computed again (`whole`), updated by the
    change alone (`delta`), and the months whose patch file is written again (`patch`)."""

    whole: frozenset[str] = frozenset()
    delta: frozenset[str] = frozenset()
    patch: frozenset[str] = frozenset()


@dataclass(frozen=True)
class SitePlan:
    """What a refresh does for one site: `action` (whole, update or nothing) and why, the lake files
    that changed (relpath -> how), the months a stopped refresh left half written, and the steps per
    rollup (an update's, once `plan_update` has its `TransactionChange`), and the same by rollup as
    the writer takes them (`buckets`: rollup -> its buckets per action)."""

    site: str
    action: str
    reason: str
    changes: Mapping[str, str] = field(default_factory=dict)
    pending: frozenset[str] = frozenset()
    steps: tuple[Step, ...] = ()
    whole_days: frozenset[str] = frozenset()  # the commission days the last full build's files hold
    patched: frozenset[str] = frozenset()  # the commission days of `transactions` an update patches
    buckets: Mapping[str, Buckets] = field(default_factory=dict)  # an update's steps, by rollup

    @property
    def writes(self) -> bool:
        """Whether carrying the plan out writes anything (its action is not `nothing`)."""
        return self.action != NOTHING

    @property
    def ledger(self) -> list[str]:
        """The changed ledger files (relpaths), sorted."""
        return sorted(r for r in self.changes if dataset_of(r) == _T)

    @property
    def report_months(self) -> frozenset[str]:
        """The months of the changed aggregate windows."""
        return frozenset(partition_month(r) for r in self.changes if dataset_of(r) != _T)

    @property
    def months(self) -> frozenset[str]:
        """Every month the plan writes, of any rollup (what the state marks pending meanwhile)."""
        return frozenset(month_of(s.bucket) for s in self.steps if s.action != NOTHING and s.bucket != EVERY)

    def describe(self) -> list[str]:
        """The plan as lines for people: the decision, the changed files, a line per step."""
        lines = [f"rollups of {self.site}: {self.action} ({self.reason})"]
        lines += [f"  {how}: {relpath}" for relpath, how in sorted(self.changes.items())]
        lines += [f"  {step}" for step in self.steps]
        return lines


def _every(site: str, action: str, reason: str) -> SitePlan:
    """The plan that does `action` to every rollup of `site`, for `reason`."""
    steps = tuple(Step(name, EVERY, action, reason) for name in (_T, *(v.name for v in DERIVED_ROLLUPS)))
    return SitePlan(site, action, reason, steps=steps)


def plan_site(
    site: str,
    listing: Mapping[str, object],
    before: SiteState | None,
    unreadable: Collection[str] = (),
    changed_rollups: Collection[str] = (),
    stored: Collection[str] = (),
    *,
    force: bool = False,
) -> SitePlan:
    """What a refresh of `site` does, from the lake's state: its files now (`listing`, relpath ->
    version) and those found `unreadable`; the rollups' state (`before`; None: none, or unreadable);
    the rollup files that differ from what the last refresh wrote (`changed_rollups`); the partition
    files a sync says it `stored` (perhaps rewritten the same); `force`: build whole."""
    whole = _why_whole(listing, before, changed_rollups, force)
    if whole or before is None:
        return _every(site, WHOLE, whole)
    changes = _changes(listing, before, set(unreadable), set(stored))
    if not changes and not before.pending_months:
        return _every(site, NOTHING, f"the rollups reflect the lake's {len(listing)} files")
    reason = f"{len(changes)} lake files changed" if changes else "a refresh was stopped half way"
    return SitePlan(site, UPDATE, reason, changes, before.pending_months, whole_days=before.whole_days)


def _why_whole(
    listing: Mapping[str, object], before: SiteState | None, changed_rollups: Collection[str], force: bool
) -> str:
    """Why the rollups are built whole rather than updated ('' when they are not)."""
    if force:
        return "asked to rebuild them whole"
    if before is None:
        return "no rollups yet (or their state cannot be read)"
    if before.code != CODE:
        return "the views' definitions or DuckDB's version changed since the rollups were built"
    if before.rebuilding:
        return "a full build was stopped before it finished"
    foreign = foreign_rollups(before, changed_rollups)
    if foreign:
        shown = ", ".join(foreign[:3]) + (", ..." if len(foreign) > 3 else "")
        return f"{len(foreign)} rollup files differ from what the last refresh wrote ({shown})"
    ledger = [r for r in listing if dataset_of(r) == _T]
    rewritten = sum(1 for r in ledger if before.listing.get(r) != listing[r])
    if rewritten > max(_MOST, len(ledger) // 2):
        differ = f"{rewritten} of {len(ledger)} ledger files differ from what the rollups reflect"
        return f"{differ}: a full build costs less"
    return ""


def _changes(
    listing: Mapping[str, object], before: SiteState, unreadable: set[str], stored: set[str]
) -> dict[str, str]:
    """Each lake file that differs from what the rollups reflect, and how."""
    found = {}
    for relpath in sorted(before.listing.keys() | listing.keys()):
        if relpath not in before.listing:
            found[relpath] = "added"
        elif relpath not in listing:
            found[relpath] = "removed"
        elif listing[relpath] != before.listing[relpath]:
            found[relpath] = "rewritten"
        elif (relpath in unreadable) != (relpath in before.skipped):
            found[relpath] = "left out" if relpath in unreadable else "no longer left out"
        elif relpath in stored:
            found[relpath] = "stored again"
    return found


def plan_update(plan: SitePlan, change: TransactionChange, share: float | None = None) -> SitePlan:
    """`plan` (an update) with its steps, given what its changed transactions are: which day files
    of `transactions` are written again and which months patched (a day of its own is written again
    when a transaction leaves it, or when its changed and patched rows pass `share` of its rows,
    `PATCH_SHARE` unless given), and for each other rollup, each month it reads that changed."""
    share = PATCH_SHARE if share is None else share
    rewrite = {d: why for d in sorted(change.days) if (why := _rewrite(d, change, plan.whole_days, share))}
    patched = change.days - rewrite.keys()
    patch_months = change.patch_months & {month_of(d) for d in change.days} | {month_of(d) for d in patched}
    steps = [Step(_T, day, WHOLE, why) for day, why in rewrite.items()]
    for month in sorted(patch_months):
        days = sorted(d for d in patched if month_of(d) == month)
        rows = sum(change.new.get(d, 0) for d in days)
        what = (
            f"{rows} changed rows on {len(days)} days" if days else "rows of days now written whole dropped"
        )
        steps.append(Step(_T, month, PATCH, f"{what} ({_held(days, plan.whole_days)})"))
    if not steps:
        steps = [Step(_T, EVERY, NOTHING, "no transaction changed")]
    steps += _derived_steps(plan, change.days, change.transactions)
    return replace(plan, steps=tuple(steps), patched=frozenset(patched), buckets=_by_rollup(steps))


def _by_rollup(steps: Iterable[Step]) -> dict[str, Buckets]:
    """The buckets of each rollup per action, from its steps (every rollup has an entry)."""
    found: dict[str, dict[str, set[str]]] = {_T: {}, **{v.name: {} for v in DERIVED_ROLLUPS}}
    for step in steps:
        found[step.rollup].setdefault(step.action, set()).add(step.bucket)
    return {
        rollup: Buckets(*(frozenset(actions.get(a, ())) for a in (WHOLE, DELTA, PATCH)))
        for rollup, actions in found.items()
    }


def _rewrite(day: str, change: TransactionChange, whole_days: frozenset[str], share: float) -> str:
    """Why the day file of `day` is written again ('' when it is patched instead)."""
    if day in whole_days:
        return ""
    if day in change.leaving:
        return "a transaction left this day: its file written again"
    if day not in change.own_rows:
        return "first seen since the last full build: a file of its own"
    rows, total = change.new.get(day, 0) + change.kept.get(day, 0), change.own_rows[day]
    if rows > share * total:
        return f"{rows} of its {total} rows changed or patched, over {share:.0%}: its file written again"
    return ""


def _held(days: Iterable[str], whole_days: frozenset[str]) -> str:
    days = list(days)
    held = sum(1 for d in days if d in whole_days)
    if held == len(days):
        return "held by the last full build's month file"
    return f"{held} held by the last full build's month file, {len(days) - held} by files of their own"


def _derived_steps(plan: SitePlan, days: frozenset[str], transactions: int) -> list[Step]:
    """Each rollup computed from the stored transactions or the reports, for each month it reads
    that changed (a rollup of days that cannot be updated by its changes: each changed day)."""
    steps = []
    touched = {month_of(d) for d in days}
    for view in DERIVED_ROLLUPS:
        months = touched if reads_transactions(view) else set()
        reports = plan.report_months if reads_reports(view) else frozenset()
        changed = sorted(months | reports | plan.pending)
        for month in changed:
            why = [f"{transactions} changed transactions"] if month in months else []
            why += ["its report windows changed"] if month in reports else []
            steps += _month_steps(view, month, " and ".join(why), month in reports, plan.pending, days)
        if not changed:
            steps.append(Step(view.name, EVERY, NOTHING, "none of the months it reads changed"))
    return steps


def _month_steps(
    view: View, month: str, why: str, reported: bool, pending: frozenset[str], days: frozenset[str]
) -> list[Step]:
    """The steps of one changed month of a rollup computed from the stored transactions (`reported`:
    its report windows changed)."""
    if month in pending:
        return [Step(view.name, month, WHOLE, _STOPPED)]
    if view.merge is not None:
        return [Step(view.name, month, DELTA, f"{why}: updated by the change alone")]
    if _by_day(view) and not reported:  # each changed day, its month's other days kept
        return [
            Step(view.name, d, WHOLE, f"{why}: {_recomputed(view)}")
            for d in sorted(days)
            if month_of(d) == month
        ]
    return [Step(view.name, month, WHOLE, f"{why}: {_recomputed(view)}")]


def _recomputed(view: View) -> str:
    """How a changed day or month of a rollup without a Merge is computed again, in words."""
    read = read_rollups(view)
    if read:
        return f"{_NO_MERGE} from the rows written to {', '.join(r.name for r in read)}"
    return _NO_MERGE if reads_transactions(view) else _REPORTED


def _by_day(view: View) -> bool:
    """Whether `view`'s rows are days (its month files can be written again a day at a time)."""
    return view.period is not None and PERIOD_KINDS[view.period].date_column == "day"
