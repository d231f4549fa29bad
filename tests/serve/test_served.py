"""`commerce-reports serve` for real: the command in a process of its own over a copy of the sandbox
lake, headless Chromium (Debian's, driven by playwright) with every request off loopback refused.

Signing in, a period change, a leaderboard change and a drill into a network, each figure read
off the page and compared with `commerce-reports sql`; refused without the token, and nothing of
Jupyter's (tree, files, contents, kernels, terminals) served even with it; two browsers at once; a
sync publishing a new state of the lake while a visitor clicks (every answer is one state: its
devices add up to its total); and a clean stop on SIGTERM. One server for the module.
"""

from __future__ import annotations

import http.cookiejar
import importlib.util
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from commerce_reports.api import SyncOptions, sync
from commerce_reports.embedded import sandbox_sites
from commerce_reports.sandbox import SandboxConfig, run_sandbox
from tests.browser import CHROMIUM, CHROMIUM_ARGS, chromium_available
from tests.waiting import wait_for

from .conftest import NOW

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(600),  # a browser and a sync on a loaded machine: each step waits for its event
    pytest.mark.xdist_group("served-dashboard"),
    pytest.mark.skipif(not chromium_available(), reason="Debian's chromium is not installed"),
    pytest.mark.skipif(
        importlib.util.find_spec("playwright") is None or importlib.util.find_spec("panel") is None,
        reason="the browser and serve extras (playwright, panel) are not installed",
    ),
]

TOKEN = "served-dashboard-test-token-0123"
WAIT_MS = 120_000
COMMAND = [sys.executable, "-m", "commerce_reports"]


@dataclass
class Served:
    url: str
    data_dir: Path
    process: subprocess.Popen[str]
    log: list[str] = field(default_factory=list)


@pytest.fixture(scope="module")
def served(served_lake: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """The command serving a copy of the charts lake (a test syncs into it) on a free port."""
    folder = tmp_path_factory.mktemp("served") / "data"
    shutil.copytree(served_lake, folder)  # its published generation too (named relative to views/)
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMMERCE_REPORTS_")}
    env["COMMERCE_REPORTS_SERVE_TOKEN"] = TOKEN
    process = subprocess.Popen(
        [*COMMAND, "serve", "--data-dir", str(folder), "--port", "0"],
        env=env,
        cwd=folder.parent,
        stderr=subprocess.PIPE,
        text=True,
    )
    log: list[str] = []
    assert process.stderr is not None
    url = ""
    for line in process.stderr:
        log.append(line)
        found = re.search(r" at (http://127\.0\.0\.1:\d+/)", line)
        if found:
            url = found.group(1)
            break
    assert url, "".join(log)
    threading.Thread(target=lambda: log.extend(process.stderr or ()), daemon=True).start()
    yield Served(url, folder, process, log)
    if process.poll() is None:
        process.kill()
        process.wait(timeout=30)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=list(CHROMIUM_ARGS))
        yield chromium
        chromium.close()


@dataclass
class Visitor:
    page: Any
    refused: list[str]


def _visitor(browser: Any, served: Served, token: str = TOKEN) -> Visitor:
    """A new browser context signed in with `token`; requests off the server are refused (noted)."""
    refused: list[str] = []

    def local_only(route: Any) -> None:
        if route.request.url.startswith(served.url):
            route.continue_()
        else:
            refused.append(route.request.url)
            route.abort()

    page = browser.new_context(viewport={"width": 1300, "height": 1400}).new_page()
    page.set_default_timeout(WAIT_MS)
    page.route("**/*", local_only)
    page.goto(served.url)
    page.fill("input[name=password]", token)
    page.click("button[type=submit]")
    return Visitor(page, refused)


def _answered(page: Any, after: str | None = None) -> str:
    """The view key of the answer shown, once it is not `after` any more (and its chart drawn)."""
    selector = ".cr-answer" if after is None else f".cr-answer:not([data-view='{after}'])"
    page.wait_for_selector(selector)  # playwright's CSS enters Bokeh's shadow roots
    key = str(page.get_attribute(".cr-answer", "data-view"))
    page.wait_for_selector(f"[data-drawn='{key}'] svg .role-mark")
    return key


def _select(page: Any, holding: str) -> Any:
    return page.locator("select", has=page.locator("option", has_text=holding))


def _money(text: str) -> Decimal:
    return Decimal(re.sub(r"[^0-9.\-]", "", text))


def _total_revenue(page: Any) -> Decimal:
    row = page.locator(".cr-totals tr", has_text="Revenue").first
    return _money(row.locator("td").nth(1).inner_text())


def _sql_revenue(served: Served, key: str) -> Decimal:
    """The period's revenue as `commerce-reports sql` gives it (exact: CSV of a DECIMAL)."""
    site, start, end = key.split("|")[:3]
    where = f"commission_date BETWEEN '{start}' AND '{end}'" + (
        f" AND site = '{site}'" if site != "*" else ""
    )
    query = f"SELECT sum(publisher_net_revenue) FROM transactions WHERE {where}"
    arguments = ["sql", query, "--format", "csv", "--data-dir", str(served.data_dir)]
    done = subprocess.run([*COMMAND, *arguments], capture_output=True, text=True, check=True)
    return Decimal(done.stdout.splitlines()[1]).quantize(Decimal("0.01"))


def _signed_in_opener(served: Served) -> urllib.request.OpenerDirector:
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    form = urllib.parse.urlencode({"username": "visitor", "password": TOKEN}).encode()
    opener.open(served.url + "login", data=form, timeout=60).close()
    assert any(cookie.name == "user" for cookie in jar)
    return opener


def _status(opener: urllib.request.OpenerDirector, url: str) -> tuple[int, str]:
    try:
        with opener.open(url, timeout=60) as answer:
            return answer.status, answer.url
    except urllib.error.HTTPError as error:
        return error.code, url


def test_without_the_token_nothing_is_served_and_nothing_of_jupyter_with_it(
    browser: Any, served: Served
) -> None:
    plain = urllib.request.build_opener()
    status, landed = _status(plain, served.url)
    assert status == 200 and "/login" in landed  # the page: the sign-in form instead
    for path in ("ws", "commerce-reports/vega.js"):
        status, landed = _status(plain, served.url + path)
        assert status in (401, 403) or "/login" in landed, (path, status, landed)
    wrong = _visitor(browser, served, token="not-the-token-at-all")
    wrong.page.wait_for_selector(".errormessage:has-text('Invalid')")
    assert wrong.page.locator(".cr-answer").count() == 0
    opener = _signed_in_opener(served)
    assert _status(opener, served.url)[0] == 200
    jupyter = ("tree", "lab", "files/data/lake", "api/contents", "api/kernels", "api/sessions", "terminals/1")
    for path in (*jupyter, "api/terminals", "voila/files/x", "static/../../etc/passwd"):
        status, _ = _status(opener, served.url + path)
        assert status in (403, 404), (path, status)  # no file browser, kernel or terminal: not even routes
    # a session id sent empty: Bokeh refuses it, and the log said so with its whole traceback
    assert _status(opener, served.url + "?bokeh-session-id=")[0] == 500
    wait_for(lambda: any("Session ID must not be empty" in line for line in served.log), "the refusal's line")
    said = next(line for line in served.log if "Session ID must not be empty" in line)
    assert "Uncaught exception GET /?bokeh-session-id= (127.0.0.1)" in said and "Traceback" not in "".join(
        served.log
    )


def test_a_visitor_changes_the_period_reads_leaderboards_and_drills_into_a_network(
    browser: Any, served: Served
) -> None:
    visitor = _visitor(browser, served)
    page = visitor.page
    key = _answered(page)
    assert key.startswith("*|") and key.endswith("|network|")
    assert _total_revenue(page) == _sql_revenue(served, key)  # the figure, to the cent
    assert "alpha: ledger" in page.locator(".cr-freshness").inner_text()
    assert page.locator(".cr-status").inner_text()  # complete or not, final or not: said

    _select(page, "Last 7 days").select_option(label="Last 28 days")
    key = _answered(page, after=key)
    start, end = (date.fromisoformat(d) for d in key.split("|")[1:3])
    assert (end - start).days == 27
    assert _total_revenue(page) == _sql_revenue(served, key)

    page.get_by_role("button", name="Merchants", exact=True).click()
    key = _answered(page, after=key)
    assert page.locator(".cr-board[data-board='merchant'] tr").count() > 2

    page.get_by_role("button", name="Networks", exact=True).click()
    key = _answered(page, after=key)
    drill = _select(page, "(choose a network)")
    top = drill.locator("option").all_inner_texts()[1]
    drill.select_option(label=top)
    key = _answered(page, after=key)
    assert key.endswith(f"|network|{top}")
    assert page.locator(".cr-drill").inner_text().startswith(top)
    for board in ("merchant", "link"):
        assert page.locator(f".cr-board[data-board='{board}'] tr").count() > 2
    page.get_by_role("button", name="◂ All networks").click()
    _answered(page, after=key)
    page.wait_for_selector(".cr-alerts")  # the period's alerts arrive after the figures
    assert "series judged" in page.locator(".cr-alerts").inner_text()
    assert visitor.refused == []  # Vega came from the server, not a CDN


def test_two_browsers_at_once_each_see_their_own_site(browser: Any, served: Served) -> None:
    first, second = _visitor(browser, served), _visitor(browser, served)
    keys = [_answered(v.page) for v in (first, second)]
    _select(first.page, "All sites").select_option("alpha")  # both asked before either answers
    _select(second.page, "All sites").select_option("beta")
    for visitor, site, before in ((first, "alpha", keys[0]), (second, "beta", keys[1])):
        key = _answered(visitor.page, after=before)
        assert key.startswith(f"{site}|")
        assert _total_revenue(visitor.page) == _sql_revenue(served, key)


def _devices_add_up(page: Any) -> tuple[str, Decimal]:
    """(generation, total revenue) of the answer shown, after checking that its device rows add up
    to its total: the totals and the leaderboard of one answer come from one state of the lake."""
    generation = str(page.get_attribute(".cr-answer", "data-generation"))
    total = _total_revenue(page)
    rows = page.locator(".cr-board[data-board='device'] tr").all()[1:]
    devices = sum((_money(row.locator("td").nth(1).inner_text().splitlines()[0]) for row in rows), Decimal(0))
    assert devices == total, (generation, devices, total)
    return generation, total


def test_a_sync_beside_a_session_never_shows_a_half_written_state(browser: Any, served: Served) -> None:
    page = _visitor(browser, served).page
    key = _answered(page)
    page.get_by_role("button", name="Devices", exact=True).click()
    key = _answered(page, after=key)
    before, _ = _devices_add_up(page)
    done = threading.Event()
    failures: list[BaseException] = []

    def sync_a_day_later() -> None:
        """The same sandbox world a day on: the ledger gains a day, the lake a new generation."""
        later = NOW + timedelta(days=1)
        first = NOW.date() - timedelta(days=29)
        config = SandboxConfig(
            now=later, first_day=first - timedelta(days=30), pace=0.0, transactions_per_day=30
        )
        try:
            with run_sandbox(config) as running:
                options = SyncOptions(
                    now=lambda: running.sandbox.now, pace=0, progress=False, say=lambda _: None
                )
                sync(
                    NOW.date() - timedelta(days=2),
                    sites=sandbox_sites(running),
                    data_dir=served.data_dir,
                    countries=["US", "GB"],
                    options=options,
                )
        except BaseException as error:  # reported by the test, not lost in the thread
            failures.append(error)
        finally:
            done.set()

    threading.Thread(target=sync_a_day_later, daemon=True).start()
    seen = set()
    periods = ("Last 28 days", "Last 7 days")
    flips = 0
    while not done.is_set() or flips < 2:  # click on through the sync, every answer checked
        _select(page, "Last 7 days").select_option(label=periods[flips % 2])
        key = _answered(page, after=key)
        seen.add(_devices_add_up(page)[0])
        flips += 1
    assert not failures, failures
    wait_for(lambda: bool(_flip_until_new(page, before)), "an answer from the new generation", timeout=120)
    after, total = _devices_add_up(page)
    assert after != before
    assert total == _sql_revenue(served, str(page.get_attribute(".cr-answer", "data-view")))
    assert str(NOW.date() + timedelta(days=1)) in page.locator(".cr-freshness").inner_text()


def _flip_until_new(page: Any, before: str) -> bool:
    """Change the period once; True when the answer comes from a generation other than `before`."""
    key = str(page.get_attribute(".cr-answer", "data-view"))
    shown = page.get_attribute(".cr-answer", "data-view") or ""
    start, end = (date.fromisoformat(day) for day in shown.split("|")[1:3])
    other = "Last 7 days" if (end - start).days == 27 else "Last 28 days"
    _select(page, "Last 7 days").select_option(label=other)
    _answered(page, after=key)
    return page.get_attribute(".cr-answer", "data-generation") != before


def test_sigterm_stops_the_server_cleanly_and_the_token_never_reached_its_log(served: Served) -> None:
    served.process.send_signal(signal.SIGTERM)
    assert served.process.wait(timeout=60) == 0
    wait_for(lambda: any("stopped" in line for line in served.log), "the server's last line")
    text = "".join(served.log)
    assert "stopping (SIGTERM)" in text and "a visitor opened the dashboard" in text
    assert TOKEN not in text  # a token of one's own is never printed


def test_another_address_is_said_loudly_and_a_generated_token_is_printed_once(
    served_lake: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """What the command hands the server, without starting one: the address, and a new token."""
    import commerce_reports.serve
    from commerce_reports.cli import main

    handed: dict[str, Any] = {}

    def serve_dashboard(config: Any, **kwargs: Any) -> None:
        handed.update(kwargs, config=config)

    monkeypatch.setattr(commerce_reports.serve, "serve_dashboard", serve_dashboard)
    assert main(["serve", "--host", "0.0.0.0", "--port", "9", "--data-dir", str(served_lake)]) == 0
    error = capsys.readouterr().err
    assert "warning: serving on 0.0.0.0, reachable from other machines" in error
    token = handed["token"].reveal()
    assert len(token) >= 16 and error.count(token) == 1  # printed once, for the one who started it
    assert repr(handed["token"]) == "Secret('***')" and handed["host"] == "0.0.0.0" and handed["port"] == 9
    assert handed["config"].data_dir == served_lake
