"""Open a page in real headless Chromium with the network cut off, and read what it rendered."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


def chromium_available() -> bool:
    return os.path.exists(CHROMIUM)


def rendered_dom(page: Path, budget_ms: int = 15000) -> str:
    """The DOM after scripts ran. Every request off the file goes to a dead proxy: no network."""
    with tempfile.TemporaryDirectory() as profile:
        done = subprocess.run(
            [
                CHROMIUM,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                f"--user-data-dir={profile}",
                "--proxy-server=127.0.0.1:9",
                "--proxy-bypass-list=<-loopback>",
                f"--virtual-time-budget={budget_ms}",
                "--dump-dom",
                page.resolve().as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
    if done.returncode != 0:
        raise RuntimeError(f"chromium failed ({done.returncode}): {done.stderr[-2000:]}")
    return done.stdout


def chart_marks(dom: str) -> list[int]:
    """For each chart container of the page, how many marks its SVG drew (0: nothing rendered)."""
    parts = re.split(r'<div class="commerce-chart[^"]*" id="commerce-chart-\d+"', dom)[1:]
    counts = []
    for part in parts:
        chart = re.split(r'<div class="commerce-chart', part, maxsplit=1)[0]
        svg = "<svg" in chart
        counts.append(len(re.findall(r'class="mark-[^"]*role-mark[^"]*"', chart)) if svg else 0)
    return counts
