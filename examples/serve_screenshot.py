"""Make the served dashboard's screenshot for the docs from the sandbox's lake.

    .venv/bin/python examples/serve_screenshot.py [--out docs/images/serve.png]

Syncs 60 days of the sandbox's two demo sites (a world frozen at a fixed moment: the figures change
only with the code; the freshness line and the lake's health count from the day it runs) into a
temporary folder, starts `commerce-reports serve` over it,
signs in with headless Chromium (Debian's, driven by playwright; nothing off loopback), picks the
last 28 days, waits for the chart and the alerts, and writes a full-page PNG.
"""

from __future__ import annotations

import argparse
import os
import re
import secrets
import subprocess
import sys
import tempfile
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

from commerce_reports.api import SyncOptions, sync
from commerce_reports.embedded import sandbox_sites
from commerce_reports.sandbox import SandboxConfig, run_sandbox

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository: tests.browser
from tests.browser import CHROMIUM_ARGS

NOW = datetime(2026, 11, 24, 12, tzinfo=UTC)
DAYS = 60


def sandbox_lake(folder: Path) -> None:
    """60 days of the demo sites, with device and country slices, as `commerce-reports demo` syncs."""
    first = NOW.date() - timedelta(days=DAYS - 1)
    config = SandboxConfig(now=NOW, first_day=first - timedelta(days=60), pace=0.0)
    with run_sandbox(config) as running:
        options = SyncOptions(now=lambda: running.sandbox.now, pace=0, progress=False, say=lambda _: None)
        result = sync(
            first, sites=sandbox_sites(running), data_dir=folder, countries=["US", "GB"], options=options
        )
        if result.failed:
            raise SystemExit(f"the sandbox sync failed: {result.failed}")


def screenshot(folder: Path, out: Path) -> None:
    from playwright.sync_api import sync_playwright

    token = secrets.token_urlsafe(24)
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMMERCE_REPORTS_")}
    env["COMMERCE_REPORTS_SERVE_TOKEN"] = token
    command = [sys.executable, "-m", "commerce_reports", "serve", "--data-dir", str(folder), "--port", "0"]
    server = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True)
    assert server.stderr is not None
    url = next(m.group(1) for line in server.stderr if (m := re.search(r" at (http://\S+)", line)))
    threading.Thread(target=lambda: [None for _ in server.stderr or ()], daemon=True).start()
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 900}, device_scale_factor=1)
            page.set_default_timeout(300_000)
            page.route("**/*", lambda r: r.continue_() if r.request.url.startswith(url) else r.abort())
            page.goto(url)
            page.fill("input[name=password]", token)
            page.click("button[type=submit]")
            key = _answer(page, None)
            page.locator("select", has=page.locator("option", has_text="Last 7 days")).select_option(
                label="Last 28 days"
            )
            key = _answer(page, key)
            page.wait_for_selector(".cr-alerts")
            out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(out), full_page=True)
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=60)


def _answer(page: object, after: str | None) -> str:
    selector = ".cr-answer" if after is None else f".cr-answer:not([data-view='{after}'])"
    page.wait_for_selector(selector)  # type: ignore[attr-defined]
    key = str(page.get_attribute(".cr-answer", "data-view"))  # type: ignore[attr-defined]
    page.wait_for_selector(f"[data-drawn='{key}'] svg .role-mark")  # type: ignore[attr-defined]
    return key


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("docs/images/serve.png"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="serve-screenshot-") as folder:
        lake = Path(folder) / "data"
        sandbox_lake(lake)
        screenshot(lake, args.out.resolve())
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
