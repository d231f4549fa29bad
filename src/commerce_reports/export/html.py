"""Self-contained HTML: Vega, Vega-Lite and vega-embed inlined once, nothing loaded from off the page.

Altair's notebook outputs load their JavaScript from a CDN, and nbconvert's lab template loads
require.js, MathJax and mermaid from CDNs too, none of which a scheduled report opened offline (or
in a locked-down mail client) can reach. Each chart's spec is taken out of its output and embedded
with the bundle vl-convert ships, in the `offline` template (templates/offline: the lab template
without those scripts); the same specs give PNG or SVG images.
"""

from __future__ import annotations

import html
import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

import nbformat
import vl_convert
from nbconvert import HTMLExporter

from ..charts.offline import chart_html, vega_bundle_html

__all__ = ["chart_specs", "notebook_html", "save_images", "spec_of_output", "standalone_chart_html"]

_VEGALITE_MIME = re.compile(r"^application/vnd\.vegalite\.v\d+\+json$")
_TEMPLATES = resources.files("commerce_reports.export").joinpath("templates")


def spec_of_output(output: dict[str, Any]) -> dict[str, Any] | None:
    """The Vega-Lite spec of a notebook output, whether a vega-lite mime bundle or Altair's HTML."""
    data = output.get("data") or {}
    for mime, value in data.items():
        if _VEGALITE_MIME.match(mime):
            return value if isinstance(value, dict) else json.loads(value)
    text = data.get("text/html")
    if not isinstance(text, str) or ("vega-embed" not in text and "vegaEmbed" not in text):
        return None
    start = text.rfind("})(")  # Altair's template ends: (function(spec, embedOpt){...})(SPEC, OPT);
    if start < 0:
        return None
    try:
        spec, _ = json.JSONDecoder().raw_decode(text, start + 3)
    except ValueError:
        return None
    return spec if isinstance(spec, dict) and "$schema" in spec else None


def chart_specs(notebook: nbformat.NotebookNode) -> list[dict[str, Any]]:
    """Every chart spec among the notebook's outputs, in order."""
    return [
        spec
        for cell in notebook.cells
        for output in cell.get("outputs", [])
        if (spec := spec_of_output(output)) is not None
    ]


def notebook_html(notebook: nbformat.NotebookNode, title: str, *, show_code: bool = False) -> str:
    """The executed notebook as one HTML file that renders its charts with no network."""
    copy = nbformat.from_dict(json.loads(json.dumps(notebook)))
    copy.metadata["title"] = title
    number = 0
    for cell in copy.cells:
        for output in cell.get("outputs", []):
            spec = spec_of_output(output)
            if spec is not None:
                output["data"] = {"text/html": chart_html(spec, f"commerce-chart-{number}")}
                number += 1
    exporter = HTMLExporter(
        extra_template_basedirs=[str(_TEMPLATES)],
        template_name="offline",
        exclude_input=not show_code,
        exclude_input_prompt=True,
        exclude_output_prompt=True,
    )
    body, _ = exporter.from_notebook_node(copy, resources={"vega_bundle": vega_bundle_html()})
    return str(body)


def standalone_chart_html(spec: dict[str, Any], title: str = "chart") -> str:
    """One chart as a self-contained page (Altair's `chart.to_dict()` is a spec)."""
    return (
        f"<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>{html.escape(title)}</title>\n"
        f"{vega_bundle_html()}\n</head>\n"
        f"<body>\n{chart_html(spec, 'commerce-chart-0')}\n</body></html>"
    )


def save_images(specs: list[dict[str, Any]], out_dir: Path, stem: str, *, png: bool, svg: bool) -> list[Path]:
    """Each chart as `<stem>_chart-N.png` / `.svg`, rendered offline by vl-convert."""
    written: list[Path] = []
    for number, spec in enumerate(specs, start=1):
        if svg:
            path = out_dir / f"{stem}_chart-{number}.svg"
            path.write_text(vl_convert.vegalite_to_svg(spec))
            written.append(path)
        if png:
            path = out_dir / f"{stem}_chart-{number}.png"
            path.write_bytes(vl_convert.vegalite_to_png(spec, scale=2))
            written.append(path)
    return written
