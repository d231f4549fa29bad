"""Reports that travel: notebooks run by papermill into self-contained HTML, charts as images,
the report mailed with its summary and alerts.

Names load on first use (PEP 562): `from commerce_reports.export import escape_markdown` does not
load papermill or nbconvert.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names

if TYPE_CHECKING:
    from .html import chart_specs, notebook_html, standalone_chart_html
    from .mail import MailSettings, mail_report, report_message
    from .markdown import escape_markdown
    from .notebook import ExportResult, checked_parameters, export_notebook, output_stem
    from .parameters import Parameter, notebook_parameters
    from .parts import report_name, report_parts

__all__ = [
    "ExportResult",
    "MailSettings",
    "Parameter",
    "chart_specs",
    "checked_parameters",
    "escape_markdown",
    "export_notebook",
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
