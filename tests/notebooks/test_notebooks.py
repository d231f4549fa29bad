"""Every notebook, executed by a real kernel (papermill, kernelspec `python3`: jupyter_client runs it
with this interpreter) against a lake prepared once per session."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nbformat
import papermill
import pytest

NOTEBOOKS = Path(__file__).parents[2] / "notebooks"
NAMES = (
    "01_getting_started.ipynb",
    "02_link_performance.ipynb",
    "03_devices_and_countries.ipynb",
    "report.ipynb",
)


def outputs(notebook: Any) -> list[dict[str, Any]]:
    return [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]


def charts(notebook: Any) -> list[str]:
    """The Vega-Lite specs among the outputs (Altair's html or mime bundles)."""
    found = []
    for output in outputs(notebook):
        data = output.get("data", {})
        found += [json.dumps(v) for k, v in data.items() if k.startswith("application/vnd.vegalite")]
        html = data.get("text/html", "")
        if "vegaEmbed" in html or "vega-embed" in html:
            found.append(html)
    return found


def run(name: str, out_dir: Path, **parameters: Any) -> Any:
    target = out_dir / name
    papermill.execute_notebook(
        str(NOTEBOOKS / name),
        str(target),
        parameters=parameters,
        kernel_name="python3",
        cwd=str(out_dir),
        progress_bar=False,
        execution_timeout=120,
    )
    return nbformat.read(target, as_version=4)


@pytest.mark.parametrize("name", NAMES)
def test_saved_without_outputs_with_one_parameters_cell(name: str) -> None:
    notebook = nbformat.read(NOTEBOOKS / name, as_version=4)
    nbformat.validate(notebook)
    tagged = [c for c in notebook.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1 and "data_dir = None" in tagged[0].source
    assert all(
        not c.get("outputs") and not c.get("execution_count") for c in notebook.cells if c.cell_type == "code"
    )
    assert "secret" not in tagged[0].source.lower()


def test_getting_started(notebook_lake: Path, tmp_path: Path) -> None:
    notebook = run("01_getting_started.ipynb", tmp_path, data_dir=str(notebook_lake))
    texts = "".join(o.get("text", "") for o in outputs(notebook))
    assert "0 requests" in texts  # the lake was current: the sync fetched nothing
    assert len(charts(notebook)) == 1
    widgets = [
        o for o in outputs(notebook) if "application/vnd.jupyter.widget-view+json" in o.get("data", {})
    ]
    assert widgets, "the dashboard was not displayed"
    assert not [o for o in outputs(notebook) if o.output_type == "error"]


def test_link_performance(notebook_lake: Path, tmp_path: Path) -> None:
    notebook = run("02_link_performance.ipynb", tmp_path, data_dir=str(notebook_lake), site="alpha", top_n=8)
    specs = charts(notebook)
    assert len(specs) == 2 and "min_revenue" in specs[0]


def test_devices_and_countries(notebook_lake: Path, tmp_path: Path) -> None:
    notebook = run("03_devices_and_countries.ipynb", tmp_path, data_dir=str(notebook_lake), sync=False)
    specs = charts(notebook)
    assert len(specs) == 4 and "geoshape" in specs[1] and "network_pick" in specs[2]


def test_report(notebook_lake: Path, tmp_path: Path) -> None:
    notebook = run("report.ipynb", tmp_path, data_dir=str(notebook_lake), site="beta")
    markdown = [o["data"]["text/markdown"] for o in outputs(notebook) if "text/markdown" in o.get("data", {})]
    assert len(markdown) == 1 and markdown[0].startswith("# beta:") and "orders" in markdown[0]
    assert len(charts(notebook)) == 6
    assert "0 requests" in "".join(o.get("text", "") for o in outputs(notebook))
