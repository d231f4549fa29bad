"""What a sync did: partitions stored, failures with their reasons, repairs, untyped partitions."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, NamedTuple

from ..contract import PartitionKey
from ..errors import CommerceReportsError, LakeError, UnreachableError
from ..lake import Repair
from ..locate import LakeLocation
from .clock import skew_sentence
from .costs import shares
from .plan import PlannedRequest, SyncPlan

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["Failure", "SyncResult", "disagreements", "doubts"]

_AGAIN = "stored unsettled: a sync asks for it again once this copy is an hour old (`status` says from when)"


def doubts(request: PlannedRequest, untyped: int, foreign: int, collapsed: int) -> list[str]:
    """The `warning:` lines of a stored partition whose answer held what its day cannot: values
    that could not be typed (kept in extra), rows of another day, a commission more than once."""
    where = f"warning: {request.site} {request.key.describe()}"
    lines = []
    if untyped:
        lines.append(f"{where}: {untyped} rows hold values that could not be typed (kept in extra); {_AGAIN}")
    if foreign:
        field = request.key.by or "date"
        lines.append(f"{where}: {foreign} rows carry another {field} than the day asked; {_AGAIN}")
    if collapsed:
        lines.append(
            f"{where}: {collapsed} duplicate rows of a commission collapsed (the last in the answer kept)"
        )
    return lines


_TOTALLED = ("revenue", "sales", "clicks", "actions")  # the measures an answer's totals give


def disagreements(request: PlannedRequest, table: pa.Table) -> list[str]:
    """The `warning:` lines of an aggregate answer whose own totals disagree with its rows by more
    than rounding (over 1% and over 1): which of the two is right cannot be told from here, and
    `report_totals` shows both beside their difference."""
    import pyarrow.compute as pc

    where = f"warning: {request.site} {request.key.describe()}"
    lines = []
    for measure in _TOTALLED:
        if table.num_rows == 0 or {measure, f"total_{measure}"} - set(table.column_names):
            continue
        reported = pc.min(table[f"total_{measure}"]).as_py()  # (the same on every row)
        if reported is None:
            continue
        summed = Decimal(str(pc.sum(table[measure]).as_py() or 0))
        gap = abs(Decimal(str(reported)) - summed)
        if gap > max(Decimal(1), abs(summed) / 100):
            lines.append(
                f"{where}: the service's total {measure} is {reported}, its rows sum to {summed} "
                "(report_totals shows both)"
            )
    return lines


class Failure(NamedTuple):
    """A planned partition that was not stored, and why (it stays due for the next sync).

    `attempted` is False for the rest of a lane that stopped after a failure that would repeat
    (a rejected key, a full disk): those were never asked for.
    """

    request: PlannedRequest
    error: CommerceReportsError
    attempted: bool = True

    def __str__(self) -> str:
        why = str(self.error) if self.attempted else f"not fetched, its lane stopped after: {self.error}"
        return f"{self.request.site} {self.request.key.describe()}: {why}"


@dataclass
class SyncResult:
    """What a sync did. `ok` is False when any planned partition was not stored."""

    plan: SyncPlan
    stored: list[tuple[PlannedRequest, int]] = field(default_factory=list)
    failed: list[Failure] = field(default_factory=list)
    interrupted: bool = False
    repairs: list[Repair] = field(default_factory=list)  # damage found and repaired before planning
    untyped: list[tuple[PlannedRequest, int]] = field(default_factory=list)  # stored, but unsettled
    foreign: list[tuple[PlannedRequest, int]] = field(default_factory=list)  # rows of another day: likewise
    collapsed: list[tuple[PlannedRequest, int]] = field(default_factory=list)  # duplicate rows dropped
    # When each stored request kept the machine busy (clock times, without the pace's waits).
    spans: list[tuple[PlannedRequest, float, float]] = field(default_factory=list)
    lake: LakeLocation | None = None  # the lake synced into, and why it is that one
    # Per site, how far this machine's clock was from the service's (its Date headers), when past
    # the tolerance: (site, local minus service). See `syncing.clock`.
    clock_skews: list[tuple[str, timedelta]] = field(default_factory=list)
    # Why the DuckDB side (rollups, catalog) could not be brought up to date after the partitions
    # were stored (a full disk, say); empty when it was, or nothing was to be done.
    unfinished: str = ""

    @property
    def rows(self) -> int:
        return sum(rows for _, rows in self.stored)

    @property
    def ok(self) -> bool:
        return not self.failed and not self.interrupted and not self.unfinished

    def changed(self) -> dict[str, list[PartitionKey]]:
        """The partitions this sync stored, per site: what the DuckDB side must bring up to date."""
        changed: dict[str, list[PartitionKey]] = {}
        for request, _ in self.stored:
            changed.setdefault(request.site, []).append(request.key)
        return changed

    @property
    def unreachable(self) -> list[str]:
        """The addresses given up during the sync (refused, DNS, TLS, or no answer several times in
        a row): their sites' remaining partitions were not asked for."""
        found = {f.error.base_url for f in self.failed if isinstance(f.error, UnreachableError)}
        return sorted(found)

    def failure_lines(self) -> list[str]:
        """The failures, for people: a line per partition, except that a cause that cannot change
        from one request to the next (a refused key, an address given up) is said once per site,
        with how many partitions it left unstored (each lane of the site met it)."""
        groups: dict[tuple[str, str, str], list[Failure]] = {}
        for number, failure in enumerate(self.failed):
            error, site = failure.error, failure.request.site
            if error.retriable or isinstance(error, LakeError):  # its own partition's (a 5xx, a full disk)
                groups[(site, str(number), "")] = [failure]
            else:
                reason = str(getattr(error, "reason", error))
                groups.setdefault((site, type(error).__name__, reason), []).append(failure)
        lines = []
        for (site, _, reason), failures in groups.items():
            if len(failures) == 1:
                lines.append(str(failures[0]))
                continue
            asked = sum(f.attempted for f in failures)
            lines.append(
                f"{site}: {len(failures)} partitions not stored ({asked} asked, "
                f"{len(failures) - asked} not asked): {reason}"
            )
        return lines

    def request_costs(self) -> dict[tuple[str, str], list[float]]:
        """Per lane (site, endpoint), what each stored request cost this machine: its busy time,
        shared with the requests busy beside it (so the costs add up to the sync's busy time)."""
        costs: dict[tuple[str, str], list[float]] = {}
        split = shares([(start, end) for _, start, end in self.spans])
        for (request, _, _), share in zip(self.spans, split, strict=True):
            costs.setdefault((request.site, request.key.endpoint), []).append(share)
        return costs

    def summary(self) -> str:
        """A few lines for people: counts first, then repairs and untyped partitions by name."""
        text = f"stored {len(self.stored)} partitions ({self.rows:,} rows)"
        if self.failed:
            text += f"; {len(self.failed)} failed and stay due for the next sync"
        if self.interrupted:
            text += "; interrupted: the next sync resumes from here"
        lines = [text]
        counts: dict[int, list[int]] = {}  # per stored request: untyped, foreign, collapsed rows
        for index, found in enumerate((self.untyped, self.foreign, self.collapsed)):
            for request, n in found:
                counts.setdefault(id(request), [0, 0, 0])[index] += n
        for request, _ in self.stored:
            lines += doubts(request, *counts.pop(id(request), [0, 0, 0]))
        lines += [f"warning: {site}: {skew_sentence(skew)}" for site, skew in self.clock_skews]
        if self.unfinished:
            lines.append(
                f"error: the rollups and the catalog could not be brought up to date ({self.unfinished}); "
                "what was stored is kept, the views read the lake files meanwhile, and the next sync "
                "brings them up to date"
            )
        if self.repairs:
            lines.append(f"repaired before syncing ({len(self.repairs)}):")
            lines += [f"  {repair}" for repair in self.repairs]
        return "\n".join(lines)

    def __repr__(self) -> str:
        """A line per site and dataset (requests planned, partitions stored, rows, failures); the
        detail stays on `plan`, `stored` and `failed` (a notebook must not print every request)."""
        table: dict[tuple[str, str], list[int]] = {}  # planned, stored, rows, failed
        for request in self.plan.requests:
            table.setdefault((request.site, request.key.dataset), [0, 0, 0, 0])[0] += 1
        for request, rows in self.stored:
            counts = table.setdefault((request.site, request.key.dataset), [0, 0, 0, 0])
            counts[1], counts[2] = counts[1] + 1, counts[2] + rows
        for failure in self.failed:
            table.setdefault((failure.request.site, failure.request.key.dataset), [0, 0, 0, 0])[3] += 1
        head = self.summary().splitlines()[0]
        lines = [f"SyncResult: {head}; {self.plan.current_said()}"]
        if self.lake is not None:
            lines.append(f"  lake: {self.lake}")
        lines += [
            f"  {site:<12} {dataset:<12} {planned:>4} planned {stored:>4} stored {rows:>10,} rows "
            f"{failed:>3} failed"
            for (site, dataset), (planned, stored, rows, failed) in sorted(table.items())
        ]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        """The same lines as a table, for Jupyter."""
        from html import escape

        # Cells are the repr's words: site names hold no spaces (layout's rule), counts no spaces.
        head, *lines = repr(self).splitlines()
        names = ("site", "dataset", "planned", "stored", "rows", "failed")
        header = "<tr>" + "".join(f"<th>{name}</th>" for name in names) + "</tr>"
        body = "".join(
            "<tr>"
            + "".join(f"<td>{escape(cell)}</td>" for cell in line.split()[:2] + line.split()[2::2])
            + "</tr>"
            for line in lines
        )
        return f"<div><p>{escape(head)}</p><table>{header}{body}</table></div>"
