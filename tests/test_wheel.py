"""The wheel stands alone: built from this repository, installed into a fresh virtual environment
that cannot see the repository, it lays out a project (`init`) and runs the tour there (`demo`),
the report notebook included."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from commerce_reports.project import NOTEBOOK_NAMES

REPOSITORY = Path(__file__).resolve().parents[1]


def _run(command: list[str | Path], cwd: Path, env: dict[str, str]) -> str:
    done = subprocess.run(
        [str(c) for c in command], cwd=cwd, env=env, capture_output=True, text=True, timeout=480
    )
    assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.usefixtures("kept_vega_bundle")  # bundling it is the offline charts' tests' work
def test_the_wheel_installs_anywhere_then_init_and_demo_run_the_tour(tmp_path: Path) -> None:
    # pip's own cache (the autouse fixture moved XDG_CACHE_HOME): installs from it where it can
    pip_cache = os.environ.get("PIP_CACHE_DIR") or str(Path.home() / ".cache" / "pip")
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("COMMERCE_REPORTS_", "PYTHON", "VIRTUAL_ENV"))
    }
    env |= {"PIP_CACHE_DIR": pip_cache, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    dist = tmp_path / "dist"
    _run([sys.executable, "-m", "build", "--outdir", dist, REPOSITORY], tmp_path, env)
    wheel = next(dist.glob("commerce_reports-*.whl"))
    sdist = next(dist.glob("commerce_reports-*.tar.gz"))
    assert sdist.stat().st_size > 0
    # The notebooks live at the top of the repository (notebooks/) and ship inside the package:
    # every one of them, and nothing else of that folder (its generator stays behind).
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    shipped = sorted(n for n in names if n.startswith("commerce_reports/notebooks/"))
    assert shipped == [f"commerce_reports/notebooks/{name}" for name in sorted(NOTEBOOK_NAMES)]
    assert "commerce_reports/py.typed" in names  # a user's mypy reads its types (PEP 561)
    assert sorted(p.name for p in (REPOSITORY / "notebooks").glob("*.ipynb")) == sorted(NOTEBOOK_NAMES)

    venv.create(tmp_path / "venv")  # no pip of its own: this pip installs into it (--python)
    bin_dir = tmp_path / "venv" / "bin"
    # --no-compile: byte-compiling the ~3600 modules installed was half of pip's CPU time; the
    # commands below compile the few they import, as a first run does
    pip: list[str | Path] = [sys.executable, "-m", "pip", "--python", bin_dir / "python"]
    _run([*pip, "install", "--quiet", "--no-compile", wheel], tmp_path, env)
    where = _run(
        [bin_dir / "python", "-c", "import commerce_reports; print(commerce_reports.__file__)"], tmp_path, env
    )
    assert str(tmp_path / "venv") in where and str(REPOSITORY) not in where

    work = tmp_path / "elsewhere"
    work.mkdir()
    said = _run([bin_dir / "commerce-reports", "init", "my-reports"], work, env)
    project = work / "my-reports"
    assert "project ready" in said
    assert (project / "commerce-reports.toml").read_text().count('data_dir = "data"') == 1
    assert stat.S_IMODE((project / ".env").stat().st_mode) == 0o600
    assert ".env" in (project / ".gitignore").read_text().splitlines()
    notebooks = sorted(p.name for p in (project / "notebooks").glob("*.ipynb"))
    assert notebooks == [
        "01_getting_started.ipynb",
        "02_link_performance.ipynb",
        "03_devices_and_countries.ipynb",
        "report.ipynb",
    ]

    tour = _run([bin_dir / "commerce-reports", "demo", "--days", "3"], project, env)
    assert f"the lake: {project / 'data'}" in tour, tour
    assert "skipped" not in tour and "Traceback" not in tour
    reports = list((project / "data" / "reports").glob("report_*.html"))  # beside the lake
    assert len(reports) == 1 and reports[0].read_text().count('id="commerce-chart-') >= 5, tour
    assert (project / "data" / "lake" / "site=alpha" / "manifest.json").is_file()
    assert f"open {project / 'notebooks' / '01_getting_started.ipynb'}" in tour
