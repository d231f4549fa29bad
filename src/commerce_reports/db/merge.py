"""A month of a rollup updated by its changed transactions alone (the views with a `Merge`).

A rollup's rows for a month are sums over the month's transactions, joined for some views with the
aggregate reports of the month. When a refresh changes some transactions of a month and none of its
aggregate windows, its new rows are the stored ones, plus the rollup of the changed transactions'
new rows, minus the rollup of their old rows, added up by the view's keys. A row left without
transactions keeps only its report side: the rollup over no transactions. So the cost grows with the
change, not with the month: the month's stored transactions are never read. In a view that reads no
reports, a stored row whose keys the change does not name is kept as it is, not added up again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from ..errors import LakeError
from .sources import read_stored
from .views import View

__all__ = ["merged_sql"]


def merged_sql(
    view: View, stored: Sequence[Path], types: Mapping[str, str], new: str, old: str, reports: str | None
) -> str:
    """SQL: the rows of `view` for some months, updated by the changed transactions.

    `stored`: the view's stored files of those months; `types`: its columns (name -> DuckDB type,
    in order); `new`, `old`, `reports`: schemas holding the view over the changed transactions' new
    rows, over their old rows, and over no transactions (the months' aggregate reports only; None
    for a view that reads no reports).
    """
    merge = view.merge
    if view.rollup is None or merge is None:
        raise LakeError(f"the rollup {view.name} cannot be updated by its changes: it has no Merge")
    key_columns = view.rollup.keys
    keys = ", ".join(key_columns)
    carried = [*merge.sums, *merge.firsts]

    def part(source: str, sign: str) -> str:
        sums = ", ".join(f"{sign}{c} AS {c}" for c in merge.sums)
        firsts = "".join(f", {c if sign == '' else 'NULL'} AS {c}" for c in merge.firsts)
        return f"SELECT {keys}, {sums}{firsts} FROM {source} WHERE transactions > 0"

    change = [part(f"{new}.{view.name}", ""), part(f"{old}.{view.name}", "-")]  # + new - old
    read = read_stored(stored) if stored else None
    stored_rows, untouched = read, None
    if read is not None and reports is None:
        # A stored row whose keys the change does not name stays as it is: only the rows it names
        # are added up again (a month of `link_performance` holds tens of thousands of rows, a day's
        # change touches a few thousand; grouping them all by its 15 keys was most of its refresh).
        named = f"(SELECT DISTINCT {keys} FROM ({' UNION ALL '.join(change)}))"
        same = " AND ".join(f"s.{c} IS NOT DISTINCT FROM d.{c}" for c in key_columns)
        stored_rows = f"{read} AS s SEMI JOIN {named} AS d ON {same}"
        columns = ", ".join(f"s.{c}" for c in types)
        untouched = (
            f"SELECT {columns} FROM {read} AS s ANTI JOIN {named} AS d ON {same} WHERE s.transactions > 0"
        )
    parts = ([part(stored_rows, "")] if stored_rows is not None else []) + change
    sums = [f"sum({c}) AS {c}" for c in merge.sums]
    added = ", ".join([*sums, *(f"min({c}) AS {c}" for c in merge.firsts)])
    derived = dict(merge.derived)
    joined = ", ".join(
        c if c in key_columns else f"coalesce(m.{c}, r.{c}) AS {c}" if c in carried else f"r.{c} AS {c}"
        for c in types
        if c not in derived
    )
    final = ", ".join(f"CAST(({derived.get(c, c)}) AS {kind}) AS {c}" for c, kind in types.items())
    merged = (
        f"(SELECT {keys}, {added} FROM ({' UNION ALL '.join(parts)}) GROUP BY {keys} "
        "HAVING sum(transactions) > 0) AS m"
    )
    if reports is None:
        rows = f"SELECT {final} FROM {merged}"
        return rows if untouched is None else f"{rows} UNION ALL BY NAME {untouched}"
    joined_rows = f"SELECT {joined} FROM {merged} FULL JOIN {reports}.{view.name} AS r USING ({keys})"
    return f"SELECT {final} FROM ({joined_rows})"
