"""A chart on the served page, drawn in the browser with the Vega the package ships: the bundle
vl-convert provides (`charts.offline`), served by the dashboard's own server as one file
(`BUNDLE_ROUTE`), never a CDN's. Panel's own Vega pane would load Vega from a CDN.

The page loads the bundle as a script of its own (`use_package_vega` names it in Panel's
`js_files`); the component is a Panel `JSComponent`: a spec (`chart.to_dict()`) travels to the page as a
parameter, and a few lines of JavaScript draw it with `vegaEmbed` as SVG, or give its rows and
title to the view already drawn for a spec of the same shape; a chart drawn before the bundle has
loaded waits for its ready event.
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
    """A Vega-Lite spec drawn in the page with the package's Vega.

    Drawing a spec anew (compiling it, building a Vega view, laying out its SVG) took 30 to 170 ms
    of the browser's time on 2 busy cores; giving a drawn view new rows and a new title, 10 to 14.
    So the page keeps the view of each shape of spec it drew (the spec without its rows and title:
    one per leaderboard of a comparison), a few at most, and a spec of a shape drawn before only
    updates that view: its title becomes two signals (`crTitle`, `crSubtitle`) for that."""

    spec = param.Dict(default={}, doc="The Vega-Lite spec (chart.to_dict()); {} draws nothing.")
    key = param.String(default="", doc="What the spec shows: the drawn chart's `data-drawn` says it.")

    _esm = f"""
const KEPT = 6;  // views of different shapes kept (a comparison has one per leaderboard)

function parts(spec) {{
  // The spec's shape (without its rows, found by name, and its title, made two signals: what a
  // view drawn for the same shape is given), and what to draw when no view has that shape yet.
  const {{datasets, title, params, ...rest}} = spec;
  const name = spec.data && spec.data.name;
  const rows = datasets && name ? datasets[name] : undefined;
  if (rows === undefined || !title || typeof title !== "object") {{
    return {{key: JSON.stringify(spec), embed: spec}};
  }}
  const texts = {{crTitle: title.text || "", crSubtitle: title.subtitle || []}};
  const shape = {{...rest, title: {{...title, text: {{expr: "crTitle"}}, subtitle: {{expr: "crSubtitle"}}}}}};
  const signals = Object.entries(texts).map(([signal, value]) => ({{name: signal, value}}));
  const embed = {{...shape, params: [...(params || []), ...signals], datasets}};
  return {{key: JSON.stringify({{...shape, params}}), embed, name, rows, texts}};
}}

export function render({{ model, el }}) {{
  const views = new Map();  // shape -> {{box, view}}, the least recently shown first
  let drawing = Promise.resolve();

  const show = async (spec) => {{
    if (model.spec !== spec) return;  // a newer spec came meanwhile: it is drawn next
    if (!spec || Object.keys(spec).length === 0) {{
      el.replaceChildren();
      return;
    }}
    const part = parts(spec);
    let kept = views.get(part.key);
    if (kept === undefined) {{
      const box = document.createElement("div");
      el.replaceChildren(box);
      const options = {{mode: "vega-lite", renderer: "svg", actions: false}};
      const result = await window.vegaEmbed(box, part.embed, options);
      kept = {{box, view: result.view, result}};
      if (views.size >= KEPT) {{
        const [oldest, dropped] = views.entries().next().value;
        views.delete(oldest);
        dropped.result.finalize();
      }}
    }} else if (part.rows !== undefined) {{
      kept.view.data(part.name, part.rows).signal("crTitle", part.texts.crTitle);
      await kept.view.signal("crSubtitle", part.texts.crSubtitle).runAsync();
    }}
    views.delete(part.key);
    views.set(part.key, kept);  // the most recently shown last
    if (kept.box.parentNode !== el) el.replaceChildren(kept.box);  // the others kept off the page
    if (model.spec === spec) el.dataset.drawn = model.key;  // read now: the page sets it beside the spec
  }};

  const draw = () => {{
    const spec = model.spec;
    drawing = drawing
      .then(() => show(spec))
      .catch((error) => {{
        for (const kept of views.values()) kept.result.finalize();
        views.clear();
        el.textContent = "chart failed: " + error;
      }});
  }};
  if (window.vegaEmbed) {{ draw(); }}
  else {{ window.addEventListener("{READY_EVENT}", draw, {{once: true}}); }}
  model.on("spec", draw);
}}
"""


def use_package_vega() -> None:
    """Make every page of this process load the package's Vega bundle (from `BUNDLE_ROUTE`)."""
    pn.config.js_files = {**pn.config.js_files, "commerce-reports-vega": BUNDLE_ROUTE.lstrip("/")}
