"""Charts drawn in a page with no network: the Vega bundle vl-convert ships, inlined, and one call
per chart. Altair's own HTML loads vega from a CDN, which an exported report opened offline, or a
notebook front end without internet, cannot reach.

The bundle defines `vegaEmbed` and then fires the window event `commerce-vega-ready`; a chart
drawn with `wait=True` waits for that event when the bundle is not there yet (in a notebook, the
outputs holding the bundle and the chart may render in either order).
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import re
from importlib.metadata import version
from typing import Any

import vl_convert

from ..errors import ValidationError
from ..files import save_atomic, user_cache_dir

__all__ = ["READY_EVENT", "chart_html", "vega_bundle_html", "vega_bundle_script"]

log = logging.getLogger(__name__)

READY_EVENT = "commerce-vega-ready"
_BUNDLE_END = "\n// commerce-reports: the whole bundle\n"
_ELEMENT_ID = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,80}")


@functools.cache
def _bundle() -> str:
    """vega, vega-lite and vega-embed as one script (about 1 MB), offline, from vl-convert. Bundling
    takes a second, so the bundle is kept in the user's cache per vl-convert version: a notebook
    kernel's first chart, or an export, reads it instead (a cache that cannot be written is no
    error: the bundle is made again next time)."""
    kept = user_cache_dir() / "vega" / f"bundle-{version('vl-convert-python')}.js"
    with contextlib.suppress(OSError, UnicodeDecodeError):
        text = kept.read_text()
        if text.endswith(_BUNDLE_END):  # written whole (save_atomic), by this code
            return text[: -len(_BUNDLE_END)]
    bundle: str = vl_convert.javascript_bundle()  # type: ignore[call-arg]  # optional, though its stub says not
    try:
        save_atomic(kept, bundle + _BUNDLE_END, durable=False)
    except OSError as error:
        log.debug("could not keep the Vega bundle in %s: %s", kept, error)
    return bundle


def vega_bundle_script() -> str:
    """JavaScript defining `vegaEmbed` (and the rest of Vega) on the page, then announcing it:
    what a served page loads as a file of its own."""
    return f'{_bundle()}\nwindow.dispatchEvent(new Event("{READY_EVENT}"));'


def vega_bundle_html() -> str:
    """A <script> defining `vegaEmbed` (and the rest of Vega) on the page, then announcing it."""
    return f'<script type="text/javascript">{vega_bundle_script()}</script>'


def chart_html(spec: dict[str, Any], element_id: str, *, wait: bool = False) -> str:
    """A <div> and the <script> that draws `spec` (a Vega-Lite dict, e.g. `chart.to_dict()`) in it
    as SVG; with `wait`, after the bundle has loaded if it has not yet."""
    if not isinstance(spec, dict):
        raise ValidationError(
            "spec", f"{type(spec).__name__} is not a Vega-Lite spec", "give chart.to_dict()"
        )
    if not isinstance(element_id, str) or not _ELEMENT_ID.fullmatch(element_id):
        raise ValidationError(
            "element_id", f"{element_id!r} is not an element id", "give letters, digits, - or _"
        )
    payload = json.dumps(spec).replace("</", "<\\/")  # a string in the data must not end the script
    draw = (
        f'function () {{ vegaEmbed("#{element_id}", {payload}, '
        '{"mode": "vega-lite", "renderer": "svg", "actions": false}).catch(function (e) {'
        f' document.getElementById("{element_id}").textContent = "chart failed: " + e; }}); }}'
    )
    later = f'window.addEventListener("{READY_EVENT}", draw, {{once: true}});'
    call = (
        f"(function (draw) {{ if (window.vegaEmbed) {{ draw(); }} else {{ {later} }} }})({draw});"
        if wait
        else f"({draw})();"
    )
    element = f'<div class="commerce-chart" id="{element_id}"></div>'
    return f'{element}\n<script type="text/javascript">{call}</script>'
