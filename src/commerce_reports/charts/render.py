"""Charts in a notebook drawn with the Vega the package ships: an Altair renderer.

Altair's default renderer writes HTML that loads Vega from a CDN: offline the chart shows
"Error loading script", online every view of it tells a third party. Its offline options do not
fit a notebook: the `inline` HTML template repeats a whole page and 0.9 MB of JavaScript per chart
(and declares the same global names in each, so a second chart on the page fails), and the
`jupyter` renderer needs a widget library and a live kernel to draw anything. This renderer sends
the bundle vl-convert ships once per kernel, with the first chart; every chart then draws from it
(`charts.offline.chart_html`, the same call the dashboard and the exported HTML use). Each output
also carries the Vega-Lite spec, which the export reads to render the chart again in its page.

Importing any chart module enables it, unless another renderer was chosen (Altair's default is the
only one it replaces): `alt.renderers.enable("default")` goes back to Altair's own.
"""

from __future__ import annotations

import threading
import uuid
from typing import Any

import altair as alt

from .offline import chart_html, vega_bundle_html

__all__ = ["RENDERER", "offline_renderer", "use_offline_renderer"]

RENDERER = "commerce-reports"
_MIME = f"application/vnd.vegalite.{alt.SCHEMA_VERSION.split('.')[0]}+json"
_lock = threading.Lock()
_bundle_sent = False


def offline_renderer(spec: dict[str, Any], **metadata: Any) -> dict[str, Any]:
    """The mime bundle of one chart: HTML that draws it with the package's Vega (the bundle itself
    travels with the first chart of the process), and the spec."""
    global _bundle_sent
    with _lock:
        bundle = "" if _bundle_sent else vega_bundle_html() + "\n"
        _bundle_sent = True
    element = f"commerce-chart-{uuid.uuid4().hex[:12]}"
    return {"text/html": bundle + chart_html(spec, element, wait=True), _MIME: spec}


def use_offline_renderer() -> None:
    """Register the renderer and enable it, unless a renderer other than Altair's default is on."""
    if RENDERER not in alt.renderers.names():
        alt.renderers.register(RENDERER, offline_renderer)
    if alt.renderers.active == "default":
        alt.renderers.enable(RENDERER)
