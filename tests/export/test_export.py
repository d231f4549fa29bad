"""Scheduled exports: executed by a real kernel, self-contained HTML checked in real Chromium offline."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from commerce_reports.errors import ExportError, ValidationError
from commerce_reports.export import export_notebook
from tests.browser import chart_marks, chromium_available, rendered_dom

REPORT = Path(__file__).resolve().parents[2] / "notebooks" / "report.ipynb"
SECRET = "sk-live-export-test-5f4e3d2c1b"
needs_chromium = pytest.mark.skipif(
    not chromium_available() and not os.environ.get("CI"), reason="Debian's chromium is not installed"
)


def small_notebook(folder: Path) -> Path:
    """A parameters cell, one chart from inline data, and switches to fail or to print a secret."""
    cells = [
        nbformat.v4.new_code_cell(
            "fail = False\nleak = False\npoints = 3", metadata={"tags": ["parameters"]}
        ),
        nbformat.v4.new_code_cell(
            "import altair as alt, os\n"
            "data = alt.Data(values=[{'x': i, 'y': i * i} for i in range(points)])\n"
            "alt.Chart(data).mark_bar().encode(x='x:O', y='y:Q', tooltip=['x:O', 'y:Q'])"
        ),
        nbformat.v4.new_code_cell("if fail:\n    raise RuntimeError('the data looked wrong')"),
        nbformat.v4.new_code_cell("if leak:\n    print(os.environ['COMMERCE_REPORTS_SECRET_KEY'])"),
    ]
    notebook = nbformat.v4.new_notebook(
        cells=cells,
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    )
    path = folder / "small.ipynb"
    nbformat.write(notebook, path)
    return path


@pytest.fixture
def with_secret(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("COMMERCE_REPORTS_SECRET_KEY", SECRET)
    return SECRET


@needs_chromium
def test_the_report_exports_to_html_whose_charts_render_offline(
    notebook_lake: Path, tmp_path: Path, with_secret: str
) -> None:
    result = export_notebook(
        REPORT, tmp_path / "out", {"data_dir": str(notebook_lake), "site": "alpha", "sync": False}, png=True
    )
    assert result.html.name == "report_site-alpha.html"
    page = result.html.read_text()
    assert "cdn.jsdelivr" not in page and 'src="http' not in page and "require.js" not in page
    marks = chart_marks(rendered_dom(result.html))
    assert len(marks) >= 5 and all(count > 0 for count in marks), marks
    assert len([p for p in result.images if p.suffix == ".png"]) == len(marks)
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in result.images)
    for path in (tmp_path / "out").iterdir():
        assert with_secret.encode() not in path.read_bytes()


def test_a_small_notebook_exports_html_and_svg(tmp_path: Path) -> None:
    result = export_notebook(small_notebook(tmp_path), tmp_path / "out", {"points": 4}, svg=True)
    assert result.html.name == "small_points-4.html" and result.notebook.name == "small_points-4.ipynb"
    assert [p.name for p in result.images] == ["small_points-4_chart-1.svg"]
    assert result.images[0].read_text().lstrip().startswith("<svg")
    assert result.html.read_text().count('id="commerce-chart-') == 1


def test_a_failed_cell_raises_names_the_cell_and_keeps_the_executed_notebook(tmp_path: Path) -> None:
    with pytest.raises(ExportError, match="RuntimeError: the data looked wrong") as caught:
        export_notebook(small_notebook(tmp_path), tmp_path / "out", {"fail": True})
    kept = tmp_path / "out" / "small.ipynb"
    assert str(kept) in str(caught.value) and kept.is_file()
    assert "the data looked wrong" in kept.read_text()


def test_an_output_that_would_hold_a_secret_is_deleted(tmp_path: Path, with_secret: str) -> None:
    with pytest.raises(ExportError, match="would contain a secret"):
        export_notebook(small_notebook(tmp_path), tmp_path / "out", {"leak": True})
    assert list((tmp_path / "out").iterdir()) == []


@pytest.mark.parametrize("params", [{"secret_key": "x"}, {"api_token": "x"}, {"bad name": 1}])
def test_secret_like_or_bad_parameters_are_refused_before_running(
    params: dict[str, object], tmp_path: Path
) -> None:
    with pytest.raises(ValidationError):
        export_notebook(small_notebook(tmp_path), tmp_path / "out", params)
    assert not (tmp_path / "out").exists() or list((tmp_path / "out").iterdir()) == []


def test_the_cli_exits_non_zero_on_a_failed_cell_and_prints_the_html_path_on_success(tmp_path: Path) -> None:
    notebook = small_notebook(tmp_path)
    base = [
        sys.executable,
        "-m",
        "commerce_reports",
        "export",
        "--notebook",
        str(notebook),
        "--out",
        str(tmp_path / "o"),
    ]
    failed = subprocess.run([*base, "--param", "fail=true"], capture_output=True, text=True, timeout=120)
    assert failed.returncode == 1 and "the data looked wrong" in failed.stderr
    done = subprocess.run([*base, "--param", "points=5"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("small_points-5.html")
