"""The named parts of an executed report: outputs whose metadata says which part of the report they
are (`{"commerce-reports": {"part": "title", ...}}`, set by `commerce_reports.report`). The title
names the exported files after the period and sites the notebook resolved; the title, summary and
alerts make the body of the report's mail. Plain Python over the notebook's JSON (no papermill).
"""

from __future__ import annotations

from typing import Any

__all__ = ["OUTPUT_KEY", "Part", "report_name", "report_parts"]

OUTPUT_KEY = "commerce-reports"

Part = tuple[str, dict[str, Any], str]  # the part's name, its metadata, its HTML


def report_parts(notebook: dict[str, Any] | Any, mime: str = "text/html") -> list[Part]:
    """Every named part among the notebook's outputs, in order: (part, metadata, its `mime`
    output: the HTML, or with "text/plain" its plain-text twin)."""
    found: list[Part] = []
    for cell in notebook.get("cells", []):
        for output in cell.get("outputs", []):
            meta = (output.get("metadata") or {}).get(OUTPUT_KEY)
            html = (output.get("data") or {}).get(mime)
            if isinstance(meta, dict) and isinstance(meta.get("part"), str) and isinstance(html, str | list):
                found.append((meta["part"], dict(meta), html if isinstance(html, str) else "".join(html)))
    return found


def report_name(notebook: dict[str, Any] | Any) -> str | None:
    """The name the report's title gives its files (sites and resolved dates), if it has one."""
    for part, meta, _ in report_parts(notebook):
        if part == "title" and isinstance(meta.get("name"), str) and meta["name"]:
            return str(meta["name"])
    return None
