"""A chart on the served page, drawn in the browser with the Vega the package ships: the bundle
vl-convert provides (`charts.offline`), served by the dashboard's own server as one file
(`BUNDLE_ROUTE`), never a CDN's. Panel's own Vega pane would load Vega from a CDN.

The page loads the bundle as a script of its own (`use_package_vega` names it in Panel's
`js_files`); the component is a Panel `JSComponent`: a spec (`chart.to_dict()`) travels to the page as a
parameter, and a few lines of JavaScript draw it with `vegaEmbed` as SVG, again whenever it
changes; a chart drawn before the bundle has loaded waits for its ready event.
"""

from __future__ import annotations

import panel as pn
import param
import tornado.web
from panel.custom import JSComponent

from ..charts.offline import READY_EVENT, vega_bundle_script

__all__ = ["BUNDLE_ROUTE", "BundleHandler", "VegaChart", "use_package_vega"]

BUNDLE_ROUTE = "/commerce-reports/vega.js"


class BundleHandler(tornado.web.RequestHandler):
    """Serves the Vega bundle (about 1 MB of JavaScript, made once per process) to a signed-in
    visitor (the cookie the sign-in form sets), cached by the browser for a day."""

    def get(self) -> None:
        if not self.get_secure_cookie("user"):
            raise tornado.web.HTTPError(403, "sign in first")
        self.set_header("Content-Type", "application/javascript; charset=utf-8")
        self.set_header("Cache-Control", "private, max-age=86400")
        self.write(vega_bundle_script())


class VegaChart(JSComponent):
    """A Vega-Lite spec drawn in the page with the package's Vega."""

    spec = param.Dict(default={}, doc="The Vega-Lite spec (chart.to_dict()); {} draws nothing.")
    key = param.String(default="", doc="What the spec shows: the drawn chart's `data-drawn` says it.")

    _esm = f"""
export function render({{ model, el }}) {{
  const draw = () => {{
    const spec = model.spec;
    if (!spec || Object.keys(spec).length === 0) {{ el.replaceChildren(); return; }}
    window.vegaEmbed(el, spec, {{mode: "vega-lite", renderer: "svg", actions: false}})
      .then(() => {{ el.dataset.drawn = model.key; }})
      .catch((error) => {{ el.textContent = "chart failed: " + error; }});
  }};
  if (window.vegaEmbed) {{ draw(); }}
  else {{ window.addEventListener("{READY_EVENT}", draw, {{once: true}}); }}
  model.on("spec", draw);
}}
"""


def use_package_vega() -> None:
    """Make every page of this process load the package's Vega bundle (from `BUNDLE_ROUTE`)."""
    pn.config.js_files = {**pn.config.js_files, "commerce-reports-vega": BUNDLE_ROUTE.lstrip("/")}
