"""The dashboard and the notebooks' charts in a real front end: JupyterLab on loopback, headless
Chromium driven by playwright (Debian's chromium: no browser download), every request off loopback
refused.

The notebook's cell runs in the page (JupyterLab's own run-all command), the Site filter is changed
in its <select>, and the chart must redraw with other data; the time that takes in the browser is
printed, and a full-page screenshot is kept (also copied to /tmp/dashboard.png). Notebook 01 runs
whole in the same server: every chart it shows must draw (Altair's own output would load Vega from
a CDN, refused here).
"""

from __future__ import annotations

import importlib.util
import json
import os
import queue
import re
import secrets
import shutil
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest

from tests.browser import CHROMIUM, CHROMIUM_ARGS, chromium_available

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not chromium_available(), reason="Debian's chromium is not installed"),
    pytest.mark.skipif(
        importlib.util.find_spec("playwright") is None or importlib.util.find_spec("jupyterlab") is None,
        reason="the browser extra (playwright, jupyterlab) is not installed",
    ),
]

SCREENSHOT_COPY = Path("/tmp/dashboard.png")
CELL = """import commerce_reports as cr
from commerce_reports.widgets import dashboard

dashboard(cr.connect(), site="alpha")"""
WAIT_MS = 60_000


def _server_url(lines: queue.Queue[str | None], log: list[str]) -> str:
    """The server's address, from its log (the line it prints once it listens)."""
    while True:
        line = lines.get(timeout=WAIT_MS / 1000)
        if line is None:
            raise AssertionError("jupyter lab exited:\n" + "".join(log[-40:]))
        log.append(line)
        found = re.search(r"(http://127\.0\.0\.1:\d+)/lab\?token=", line)
        if found:
            return found.group(1)


NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


@pytest.fixture(scope="module")
def jupyter_lab(notebook_lake: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """JupyterLab serving a folder with the dashboard notebook and notebook 01: (address, token).
    Its settings, runtime files and workspaces live under a folder of its own; its kernels find
    the lake through the environment they inherit."""
    tmp_path = tmp_path_factory.mktemp("lab")
    root, home = tmp_path / "root", tmp_path / "jupyter"
    root.mkdir()
    (home / "config" / "labconfig").mkdir(parents=True)
    # No "official Jupyter news?" prompt (it would fetch from the internet).
    disabled = {"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}}
    (home / "config" / "labconfig" / "page_config.json").write_text(json.dumps(disabled))
    notebook = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(CELL)],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    )
    nbformat.write(notebook, root / "dashboard.ipynb")
    shutil.copyfile(NOTEBOOKS / "01_getting_started.ipynb", root / "01_getting_started.ipynb")
    token = secrets.token_hex(16)
    env = {
        **os.environ,
        "COMMERCE_REPORTS_DATA_DIR": str(notebook_lake),
        "JUPYTER_CONFIG_DIR": str(home / "config"),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "JUPYTER_DATA_DIR": str(home / "data"),
        "IPYTHONDIR": str(home / "ipython"),
    }
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        "--ServerApp.port=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        f"--LabApp.workspaces_dir={home / 'workspaces'}",
        "--LabApp.expose_app_in_browser=True",  # window.jupyterapp: run cells with Lab's own commands
        "--LabApp.extension_manager=readonly",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")
    server = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        assert server.stderr is not None
        for line in server.stderr:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    try:
        url = _server_url(lines, [])
        yield url, token
        request = urllib.request.Request(f"{url}/api/shutdown", method="POST")
        request.add_header("Authorization", f"token {token}")
        urllib.request.urlopen(request, timeout=10).close()  # stops its kernels, then itself
        server.wait(timeout=30)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(timeout=10)


def _refusing(url: str, refused: list[str]) -> Any:
    """A playwright route handler: requests to the server pass, every other one is refused (and noted)."""

    def local_only(route: Any) -> None:
        if route.request.url.startswith(url):
            route.continue_()
        else:
            refused.append(route.request.url)
            route.abort()

    return local_only


def _run_all(page: Any, url: str, token: str, notebook: str) -> None:
    page.goto(f"{url}/lab/tree/{notebook}?reset&token={token}")
    page.wait_for_selector(".jp-Notebook .jp-Cell")
    page.evaluate(
        """async () => {
            const app = window.jupyterapp;
            await app.shell.currentWidget.sessionContext.ready;
            await app.commands.execute('notebook:run-all-cells');
        }"""
    )


def _chart(page: Any) -> dict[str, Any]:
    """The dashboard's chart as drawn: element id, axis labels, bars."""
    chart: dict[str, Any] = page.eval_on_selector(
        ".commerce-chart",
        """element => ({
            id: element.id,
            labels: Array.from(element.querySelectorAll('.role-axis-label text')).map(t => t.textContent),
            bars: element.querySelectorAll('.mark-rect.role-mark path').length,
            title: Array.from(element.querySelectorAll('.role-title text')).map(t => t.textContent),
        })""",
    )
    return chart


def test_the_dashboard_redraws_in_jupyterlab_when_a_filter_changes(
    jupyter_lab: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from playwright.sync_api import sync_playwright

    url, token = jupyter_lab
    refused: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=list(CHROMIUM_ARGS))
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1100})
            page.set_default_timeout(WAIT_MS)
            page.route("**/*", _refusing(url, refused))
            _run_all(page, url, token, "dashboard.ipynb")
            page.wait_for_selector(".commerce-chart svg .role-mark")
            before = _chart(page)
            assert before["bars"] == 15 and any(label.startswith("https://") for label in before["labels"])
            assert before["title"][0] == "Revenue by link, top 15"

            started = time.perf_counter()
            page.locator(".widget-dropdown", has_text="Site").locator("select").select_option("beta")
            page.wait_for_function(
                """previous => {
                    const chart = document.querySelector('.commerce-chart');
                    return chart && chart.id !== previous && chart.querySelector('svg .role-mark');
                }""",
                arg=before["id"],
            )
            seconds = time.perf_counter() - started
            after = _chart(page)

            shot = tmp_path / "dashboard.png"
            page.screenshot(path=str(shot), full_page=True)
            shutil.copyfile(shot, SCREENSHOT_COPY)
        finally:
            browser.close()
    with capsys.disabled():
        print(
            f"\ndashboard filter change in the browser (site alpha -> beta): {seconds * 1000:.0f} ms; {shot}"
        )
    assert after["bars"] > 0  # a chart is drawn
    assert after["labels"] != before["labels"]  # with other data: beta's links
    assert any(text.startswith("beta ·") for text in after["title"]), after["title"]
    assert refused == []  # Vega came with the dashboard, not from a CDN
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_every_chart_of_notebook_01_draws_in_jupyterlab_with_the_network_cut_off(
    jupyter_lab: tuple[str, str],
) -> None:
    """Its charts (Altair's, shown by the package's renderer, and the dashboard's) draw with the
    Vega the package ships: nothing is asked of a CDN, no chart says it failed, no cell errs."""
    from playwright.sync_api import sync_playwright

    url, token = jupyter_lab
    refused: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=list(CHROMIUM_ARGS))
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1100})
            page.set_default_timeout(WAIT_MS * 2)
            page.route("**/*", _refusing(url, refused))
            _run_all(page, url, token, "01_getting_started.ipynb")
            # the daily chart (a cell's output) and the dashboard's, each drawn as SVG marks
            page.wait_for_function(
                """() => {
                    const charts = [...document.querySelectorAll('.commerce-chart')];
                    return charts.length >= 2 && charts.every(c => c.querySelector('svg .role-mark'));
                }"""
            )
            charts = page.eval_on_selector_all(
                ".commerce-chart",
                """elements => elements.map(e => ({
                    marks: e.querySelectorAll('svg .role-mark').length,
                    title: Array.from(e.querySelectorAll('.role-title text')).map(t => t.textContent),
                    failed: e.textContent.includes('chart failed'),
                }))""",
            )
            errors = page.locator('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')
            tracebacks = page.locator(".jp-RenderedText[data-mime-type='application/vnd.jupyter.error']")
            error_count, traceback_count = errors.count(), tracebacks.count()
        finally:
            browser.close()
    assert len(charts) == 2 and all(c["marks"] > 0 and not c["failed"] for c in charts), charts
    assert charts[0]["title"][0] == "Revenue per day"
    assert refused == [] and traceback_count == 0 and error_count == 0
