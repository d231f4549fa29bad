"""Reports that travel: notebooks run by papermill into self-contained HTML, charts as images."""

from .html import chart_specs, notebook_html, standalone_chart_html
from .notebook import ExportResult, export_notebook, output_stem

__all__ = [
    "ExportResult",
    "chart_specs",
    "export_notebook",
    "notebook_html",
    "output_stem",
    "standalone_chart_html",
]
