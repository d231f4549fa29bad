"""Reports that travel: tables written in each format of `OUTPUT_FORMATS` (csv, json, jsonl, parquet,
xlsx), notebooks run by papermill into self-contained HTML, charts as images, the report mailed with its
summary and alerts.

This package is also the function `cr.export(data, path)` (calling it calls `export_table`):
`cr.export` names this package whichever was imported first, so it is callable.

Names load on first use (PEP 562): `from commerce_reports.export import escape_markdown` does not
load papermill or nbconvert.
"""

from __future__ import annotations

import sys
import types
from typing import TYPE_CHECKING, Any

from .._lazy import lazy_names
from .formats import OUTPUT_FORMATS, export_table

if TYPE_CHECKING:
    from .html import chart_specs, notebook_html, standalone_chart_html
    from .mail import MailSettings, mail_report, report_message
    from .markdown import escape_markdown
    from .notebook import ExportResult, checked_parameters, export_notebook, output_stem
    from .parameters import Parameter, notebook_parameters
    from .parts import report_name, report_parts

__all__ = [
    "OUTPUT_FORMATS",
    "ExportResult",
    "MailSettings",
    "Parameter",
    "chart_specs",
    "checked_parameters",
    "escape_markdown",
    "export_notebook",
    "export_table",
    "mail_report",
    "notebook_html",
    "notebook_parameters",
    "output_stem",
    "report_message",
    "report_name",
    "report_parts",
    "standalone_chart_html",
]

_HOMES = {
    "ExportResult": "notebook",
    "MailSettings": "mail",
    "mail_report": "mail",
    "report_message": "mail",
    "report_name": "parts",
    "report_parts": "parts",
    "Parameter": "parameters",
    "chart_specs": "html",
    "checked_parameters": "notebook",
    "escape_markdown": "markdown",
    "export_notebook": "notebook",
    "notebook_html": "html",
    "notebook_parameters": "parameters",
    "output_stem": "notebook",
    "standalone_chart_html": "html",
}


__getattr__, __dir__ = lazy_names(__name__, _HOMES, __all__)


class _CallablePackage(types.ModuleType):
    """`commerce_reports.export(data, path, ...)` is `export_table(data, path, ...)`."""

    __call__ = staticmethod(export_table)

    @property
    def __signature__(self) -> Any:  # `help(cr.export)`, `cr.export?`: export_table's parameters
        import inspect

        return inspect.signature(export_table)


sys.modules[__name__].__class__ = _CallablePackage
