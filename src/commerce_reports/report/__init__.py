"""The report's sections: title, alerts, the period against the previous one, top tables. The
report notebook (`notebooks/report.ipynb`) is made of them; each is a display object whose output
metadata names its part, so an export can name its files after the period and mail its summary.

    from commerce_reports import report
    report.summary(con, Selection(site="alpha", start="2026-11-16", end="2026-11-22"))

Names load on first use (PEP 562).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names

if TYPE_CHECKING:
    from .sections import METADATA_KEY, Section, alerts_section, comparison, summary, title, top_table
    from .tables import comparison_table, ranking_table, summary_table

__all__ = [
    "METADATA_KEY",
    "Section",
    "alerts_section",
    "comparison",
    "comparison_table",
    "ranking_table",
    "summary",
    "summary_table",
    "title",
    "top_table",
]

_HOMES = {
    "METADATA_KEY": "sections",
    "Section": "sections",
    "alerts_section": "sections",
    "comparison": "sections",
    "summary": "sections",
    "title": "sections",
    "top_table": "sections",
    "comparison_table": "tables",
    "ranking_table": "tables",
    "summary_table": "tables",
}


__getattr__, __dir__ = lazy_names(__name__, _HOMES, __all__)
