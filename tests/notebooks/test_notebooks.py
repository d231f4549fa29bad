"""Every notebook, executed by a real kernel (the export's kernel manager, kernelspec `python3`:
jupyter_client runs it with this interpreter) against a lake prepared once per session, which the
notebooks find on their own (nothing in them says where it is)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import nbformat
import pytest

from commerce_reports.charts import Selection, daily_chart
from commerce_reports.db import connect
from commerce_reports.export import chart_specs, notebook_parameters, report_name, report_parts
from commerce_reports.export.kernel import run_notebook
from tests.charts.specs import figures
from tests.notebooks.conftest import DAYS

NOTEBOOKS = Path(__file__).parents[2] / "notebooks"
NAMES = (
    "01_getting_started.ipynb",
    "02_link_performance.ipynb",
    "03_devices_and_countries.ipynb",
    "report.ipynb",
)


def outputs(notebook: Any) -> list[dict[str, Any]]:
    return [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]


def charts(notebook: Any) -> list[dict[str, Any]]:
    """The Vega-Lite specs among the outputs (Altair's html or mime bundles)."""
    return chart_specs(notebook)


def subtitles(spec: dict[str, Any]) -> str:
    titles = [spec.get("title")] + [part.get("title") for part in spec.get("vconcat", [])]
    return " | ".join(line for t in titles if isinstance(t, dict) for line in t.get("subtitle", []))


def run(name: str, out_dir: Path, **parameters: Any) -> Any:
    target = out_dir / name
    run_notebook(NOTEBOOKS / name, target, parameters, cwd=NOTEBOOKS, timeout=120)
    return nbformat.read(target, as_version=4)


@pytest.mark.parametrize("name", NAMES)
def test_saved_without_outputs_with_one_typed_parameters_cell(name: str) -> None:
    notebook = nbformat.read(NOTEBOOKS / name, as_version=4)
    nbformat.validate(notebook)
    tagged = [c for c in notebook.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1 and "secret" not in tagged[0].source.lower()
    assert all(
        not c.get("outputs") and not c.get("execution_count") for c in notebook.cells if c.cell_type == "code"
    )
    assert "data_dir" not in json.dumps(notebook.cells) and "data/" not in json.dumps(notebook.cells)
    declared = notebook_parameters(NOTEBOOKS / name)
    assert declared["start"].kinds == declared["end"].kinds == ("date", "None")
    days = "7" if name == "report.ipynb" else str(DAYS)  # the report: a week against the week before
    assert declared["days"].kinds == ("int",) and declared["days"].default == days
    assert declared["site"].default == "None"  # every configured site, never a sandbox name


def test_getting_started(in_the_lake: Path, tmp_path: Path) -> None:
    notebook = run("01_getting_started.ipynb", tmp_path)
    texts = "".join(o.get("text", "") for o in outputs(notebook))
    assert "0 requests" in texts  # the lake was current: the sync fetched nothing
    assert len(charts(notebook)) == 1
    widgets = [
        o for o in outputs(notebook) if "application/vnd.jupyter.widget-view+json" in o.get("data", {})
    ]
    assert widgets, "the dashboard was not displayed"
    assert not [o for o in outputs(notebook) if o.output_type == "error"]
    # The lake holds the last DAYS days: the DAYS before them, compared against, are not in it.
    (compared,) = [c for c in notebook.cells if c.cell_type == "code" and "cr.compare(" in c.source]
    said, table = compared.outputs
    assert said["text"].startswith("The lake holds only part of the previous period")
    assert "previous_complete" in table["data"]["text/html"]


@pytest.mark.xdist_group("published-lake")
def test_getting_started_on_the_published_lake_shows_the_contract_lakes_figures(
    in_the_published_lake: Path, notebook_lake: Path, tmp_path: Path
) -> None:
    """Unchanged, on a lake synced in the published dialect: nothing to fetch, no error, and the
    weekly table and the daily chart hold the figures of the contract lake of the same world."""
    notebook = run("01_getting_started.ipynb", tmp_path)
    assert not [o for o in outputs(notebook) if o.output_type == "error"]
    assert "0 requests" in "".join(o.get("text", "") for o in outputs(notebook))
    (weekly,) = [c for c in notebook.cells if c.cell_type == "code" and "FROM daily_performance" in c.source]
    (chart,) = charts(notebook)
    last = datetime.now(UTC).date()
    first = last - timedelta(days=DAYS - 1)
    with connect(notebook_lake) as con:  # the cell's own query, on the contract lake
        table = eval(weekly.source, {"con": con, "first_day": first, "last_day": last, "site": None})
        daily = daily_chart(con, Selection(start=first, end=last)).to_dict()
    assert table.height >= 8 and weekly.outputs[0]["data"]["text/html"] == table._repr_html_()
    assert figures(chart) and figures(chart) == figures(daily)


def test_getting_started_asks_duckdb_about_the_notebook_s_site(notebook_lake: Path) -> None:
    """The "Ask DuckDB" cell read every site whatever the `site` parameter (beta's weeks shown with
    `-p site alpha`); it filters as the other cells do, and None still means every site."""
    notebook = nbformat.read(NOTEBOOKS / "01_getting_started.ipynb", as_version=4)
    (weekly,) = [c for c in notebook.cells if c.cell_type == "code" and "FROM daily_performance" in c.source]
    last = datetime.now(UTC).date()
    scope = {"first_day": last - timedelta(days=DAYS - 1), "last_day": last}
    with connect(notebook_lake) as con:
        shown = {
            site: set(eval(weekly.source, {"con": con, **scope, "site": site})["site"])
            for site in ("alpha", "beta", None)
        }
    assert shown == {"alpha": {"alpha"}, "beta": {"beta"}, None: {"alpha", "beta"}}


def test_the_default_window_is_the_synced_one(in_the_lake: Path, tmp_path: Path) -> None:
    """Run with its defaults, a notebook syncs `days` days and every chart covers exactly those."""
    notebook = run("02_link_performance.ipynb", tmp_path, site="alpha", top_n=8)
    specs = charts(notebook)
    assert len(specs) == 2 and "min_revenue" in json.dumps(specs[0])
    today = datetime.now(UTC).date()
    window = f"alpha · {today - timedelta(days=DAYS - 1)} to {today}"
    for spec in specs:
        assert subtitles(spec).startswith(window) and "stored days of" not in subtitles(spec)
    assert "0 requests" in "".join(o.get("text", "") for o in outputs(notebook))


def test_devices_and_countries(in_the_lake: Path, tmp_path: Path) -> None:
    notebook = run("03_devices_and_countries.ipynb", tmp_path, sync=False)
    specs = [json.dumps(s) for s in charts(notebook)]
    assert len(specs) == 5 and '"type": "rule"' in specs[1] and "geoshape" in specs[2]
    assert "against the previous 30 days" in specs[1] and "network_pick" in specs[3]
    assert "the days both sides cover" in specs[4] or "No month window" in specs[4]


def test_report(in_the_lake: Path, tmp_path: Path) -> None:
    """The report syncs (nothing: the lake is current) without a word, then shows its parts: the
    title naming the site and the resolved week (its files' name), the alerts, the comparison."""
    notebook = run("report.ipynb", tmp_path, site="beta")
    assert not [o for o in outputs(notebook) if o.output_type in ("stream", "error")]  # no sync text
    parts = report_parts(notebook)
    last = datetime.now(UTC).date() - timedelta(days=1)
    first = last - timedelta(days=6)
    assert [p for p, _, _ in parts[:3]] == ["title", "alerts", "summary"]
    assert report_name(notebook) == f"beta_{first}_{last}"
    title = parts[0][2]
    assert title.startswith("<h1") and "Commerce report: beta</h1>" in title and f"{first} to {last}" in title
    summary = parts[2][2]
    assert (
        f"{first - timedelta(days=7)} to {first - timedelta(days=1)}" in summary
        and ">Revenue</td>" in summary
    )
    assert [p for p, meta, _ in parts if p == "comparison"] == ["comparison"] * 3
    assert len(charts(notebook)) == 7


def test_the_packaged_notebooks_are_what_the_generator_writes(tmp_path: Path) -> None:
    """One source of truth: notebooks/build_notebooks.py writes the notebooks the package ships."""
    import importlib.util

    script = Path(__file__).parents[2] / "notebooks" / "build_notebooks.py"
    spec = importlib.util.spec_from_file_location("build_notebooks", script)
    assert spec is not None and spec.loader is not None
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    assert generator.HERE == NOTEBOOKS
    written = tmp_path / "notebooks"
    written.mkdir()
    generator.HERE = written
    generator.main()
    assert (
        sorted(p.name for p in written.iterdir())
        == sorted(NAMES)
        == sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))
    )
    for name in NAMES:
        assert (written / name).read_text() == (NOTEBOOKS / name).read_text(), f"run {script} again"
