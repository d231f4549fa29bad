"""Open a page in real headless Chromium with the network cut off, and read what it rendered."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from html.parser import HTMLParser
from pathlib import Path

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# Headless, and nothing of its own on the network (no updates, sync, QUIC or background fetches).
CHROMIUM_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def chromium_available() -> bool:
    return os.path.exists(CHROMIUM)


def rendered_dom(page: Path, budget_ms: int = 15000) -> str:
    """The DOM after scripts ran. Every request off the file goes to a dead proxy: no network."""
    with tempfile.TemporaryDirectory() as profile:
        done = subprocess.run(
            [
                CHROMIUM,
                *CHROMIUM_ARGS,
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


_ON_PAGE = ("data:", "#", "about:blank", "blob:")
_LOADING_ATTRIBUTES = {"src", "srcset", "data", "poster", "background"}
_SCRIPT_LOADS = re.compile(
    r"""\bimport\s*\(|\bimportScripts\s*\(|\bfrom\s*["'`](?:https?:)?//|\bimport\s*["'`](?:https?:)?//"""
)
_CSS_LOADS = re.compile(r"""url\(\s*(?!["']?(?:data:|#))[^)]*\)|@import\b""")


class _References(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self._in: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            value = (value or "").strip()
            loads = name in _LOADING_ATTRIBUTES or (tag == "link" and name == "href")
            if loads and value and not value.startswith(_ON_PAGE):
                self.found.append(f"<{tag} {name}={value[:120]}>")
            if name == "style":
                self.found += [f"<{tag} style> {m[:120]}" for m in _CSS_LOADS.findall(value)]
        self._in = tag if tag in ("script", "style") else None

    def handle_endtag(self, tag: str) -> None:
        self._in = None

    def handle_data(self, data: str) -> None:
        if self._in == "script":  # the call and what it loads
            self.found += [f"<script> {data[m.start() : m.end() + 80]}" for m in _SCRIPT_LOADS.finditer(data)]
        elif self._in == "style":
            self.found += [f"<style> {m.group()}" for m in _CSS_LOADS.finditer(data)]


def external_references(page: str) -> list[str]:
    """Everything in the page that would load a script, style, image or module from off the page:
    `src=` (and srcset, data, poster), `<link href=>`, `import(...)`, `from "https://..."`, CSS
    `url(...)` and `@import`. Data URIs and fragment references (`url(#clip)`) stay on the page."""
    parser = _References()
    parser.feed(page)
    parser.close()
    return parser.found
