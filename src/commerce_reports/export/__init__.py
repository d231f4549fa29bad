"""Reports that travel: notebooks run by papermill into self-contained HTML, charts as images."""

from .html import chart_specs, notebook_html, standalone_chart_html
from .markdown import escape_markdown
from .notebook import ExportResult, checked_parameters, export_notebook, output_stem
from .parameters import Parameter, notebook_parameters

__all__ = [
    "ExportResult",
    "Parameter",
    "chart_specs",
    "checked_parameters",
    "escape_markdown",
    "export_notebook",
    "notebook_html",
    "notebook_parameters",
    "output_stem",
    "standalone_chart_html",
]
