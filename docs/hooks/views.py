"""mkdocs hook: the list of views, written from their declaration (`db/views.py`, `VIEW_LIST`).

A page holding the marker below gets, in its place, a row per view: what one row is, the period it
covers (its `complete` and `final` columns), and how it is kept. Adding a view adds its row on the
next build; `tests/db/test_views.py` checks every view is listed.
"""

from __future__ import annotations

from typing import Any

from commerce_reports.db.views import PERIOD_KINDS, VIEW_LIST, View, read_rollups

MARKER = "<!-- commerce-reports views -->"


def on_page_markdown(markdown: str, **_: Any) -> str:
    """mkdocs event: replace the marker with the list."""
    return markdown.replace(MARKER, view_list()) if MARKER in markdown else markdown


def _kept(view: View) -> str:
    if view.rollup is None:
        return "computed from the lake at each query"
    by = f"Parquet rollup, a file per month of `{view.rollup.date_column}`"
    if view.name == "transactions":
        return f"{by}, updated for the changed transactions (base and patch files)"
    if view.merge is None:
        read = "".join(f" from the rows of `{r.name}`" for r in read_rollups(view))
        return f"{by}, a changed month (or day) computed again{read}"
    return f"{by}, a changed month updated by its changed transactions alone"


def view_list() -> str:
    """A markdown table of every view, in the order they are declared."""
    rows = ["| view | one row | period | kept as |", "| --- | --- | --- | --- |"]
    for view in VIEW_LIST:
        period = PERIOD_KINDS[view.period].about if view.period else "none"
        comment = " ".join(view.comment.split()).replace("|", "\\|")
        rows.append(f"| `{view.name}` | {comment} | {period} | {_kept(view)} |")
    return "\n".join(rows) + "\n"
