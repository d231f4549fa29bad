"""`commerce-reports check` against the real sandbox over loopback: a good key, a wrong key, an
address that refuses, one that answers HTML or 404, the other dialect; one transactions request
per site at most, in the pace's turn, and a non-zero exit when something is wrong."""

from __future__ import annotations

import contextlib
import re
import socket
import socketserver
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from commerce_reports.checkup import check, dialect_of
from commerce_reports.cli import main
from commerce_reports.sandbox import SandboxConfig, run_sandbox
from commerce_reports.sandbox.runner import RunningSandbox
from tests.servers import serving

KEY = "sandbox-alpha-key"


def _sandbox(dialect: str = "contract") -> Iterator[RunningSandbox]:
    now = datetime.now(UTC).replace(microsecond=0)
    config = SandboxConfig(
        now=now, first_day=now.date() - timedelta(days=5), pace=0.0, transactions_per_day=5, dialect=dialect
    )
    with run_sandbox(config) as running:
        yield running


@pytest.fixture
def sandbox() -> Iterator[RunningSandbox]:
    yield from _sandbox()


@pytest.fixture
def configure(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Callable[..., None]:
    def set_up(url: str, key: str = KEY, **more: str) -> None:
        monkeypatch.setenv("COMMERCE_REPORTS_SECRET_KEY", key)
        monkeypatch.setenv("COMMERCE_REPORTS_BASE_URL", url)
        monkeypatch.setenv("COMMERCE_REPORTS_DATA_DIR", str(tmp_path / "data"))
        for name, value in more.items():
            monkeypatch.setenv(f"COMMERCE_REPORTS_{name}", value)

    return set_up


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["check", *args])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, err + out  # as they came: each site's step while it is asked, then the report


def test_a_good_key_on_the_reporting_api_is_all_good_and_says_where_the_lake_is(
    sandbox: RunningSandbox,
    configure: Callable[..., None],
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    configure(sandbox.base_url)
    code, out = _run(capsys)
    assert code == 0, out
    assert f"lake: {tmp_path / 'data'} (from COMMERCE_REPORTS_DATA_DIR)" in out
    assert f"site default: {sandbox.base_url}" in out
    assert "address  answers as the reporting API (HTTP 200 in " in out
    assert "key      accepted" in out and "dialect  contract (nested transactions), as configured" in out
    assert "pace     transactions 60 s, networks 60 s, merchandise 60 s" in out
    assert "this check asked 1 transactions request" in out and out.rstrip().endswith("accept their keys")
    assert [(r.endpoint, r.status) for r in sandbox.sandbox.request_log] == [("transactions", 200)]
    assert not (tmp_path / "data").exists()  # a check writes no lake


def test_a_second_check_within_the_pace_asks_nothing_and_says_why(
    sandbox: RunningSandbox, configure: Callable[..., None], capsys: pytest.CaptureFixture[str]
) -> None:
    configure(sandbox.base_url)
    assert _run(capsys)[0] == 0
    code, out = _run(capsys)
    assert code == 1 and "address  not asked" in out
    assert "not asked: this key's next transactions request may start in 6" in out and "--wait" in out
    assert len(sandbox.sandbox.request_log) == 1  # the pace held: one request in all


def test_a_wrong_key_is_refused(
    sandbox: RunningSandbox, configure: Callable[..., None], capsys: pytest.CaptureFixture[str]
) -> None:
    configure(sandbox.base_url, key="not-the-key-0123456")
    code, out = _run(capsys)
    assert code == 1
    assert "address  answers as the reporting API (HTTP 401" in out and "key      refused" in out
    assert "PROBLEM  the key is refused (HTTP 401)" in out and "not-the-key-0123456" not in out


def test_an_address_that_refuses_connections(
    configure: Callable[..., None], capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}"
    configure(url)
    code, out = _run(capsys)
    assert code == 1 and "address  does not answer as the reporting API" in out
    assert f"PROBLEM  {url} cannot be reached: connection refused" in out


def test_an_address_holding_the_key_is_masked_on_every_line(
    configure: Callable[..., None], capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}"
    configure(f"{url}/{KEY}/v1")  # the key in the address's path: a user's paste
    code, out = _run(capsys)
    assert code == 1 and KEY not in out
    assert f"site default: {url}/***/v1" in out


class _Page(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


@pytest.fixture
def page_server() -> Iterator[Callable[[bytes], str]]:
    servers = contextlib.ExitStack()

    def start(answer: bytes) -> str:
        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                self.request.recv(65536)
                self.request.sendall(answer)

        server = servers.enter_context(serving(_Page(("127.0.0.1", 0), Handler)))
        return f"http://127.0.0.1:{server.server_address[1]}"

    with servers:
        yield start


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        (
            b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nConnection: close\r\n\r\n"
            b"<html><body>Sign in</body></html>",
            "answered an HTML page",
        ),
        (
            b"HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\nConnection: close\r\n\r\nnot found",
            "answered HTTP 404",
        ),
    ],
    ids=["html", "404"],
)
def test_an_address_that_is_not_the_reporting_api(
    page_server: Callable[[bytes], str],
    configure: Callable[..., None],
    capsys: pytest.CaptureFixture[str],
    answer: bytes,
    said: str,
) -> None:
    url = page_server(answer)
    configure(url)
    code, out = _run(capsys)
    assert code == 1 and "address  does not answer as the reporting API" in out
    assert f"{said}: the address is not the reporting API" in out and "key      not known" in out


@pytest.mark.parametrize("configured", ["contract", "published"])
def test_the_dialect_is_read_from_what_the_service_sends(
    configure: Callable[..., None], capsys: pytest.CaptureFixture[str], configured: str
) -> None:
    for running in _sandbox("published"):
        configure(running.base_url, DIALECT=configured)
        code, out = _run(capsys)
    if configured == "published":
        assert code == 0 and "dialect  published (TransactionModel), as configured" in out
    else:
        assert (
            code == 1
            and "dialect  published (TransactionModel), but the site is configured for contract" in out
        )
        assert "COMMERCE_REPORTS_DIALECT=published" in out


def test_no_key_checks_the_embedded_sandbox(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = check(data_dir=tmp_path)
    assert report.ok and {s.site for s in report.sites} == {"alpha", "beta"}, report.describe()
    assert all(s.address.startswith("the embedded sandbox at http://127.0.0.1:") for s in report.sites)
    assert all(s.asked == 1 and s.key_accepted for s in report.sites)
    asked = re.findall(r"asking site (\w+) one transactions request: done in", capsys.readouterr().err)
    assert asked == ["alpha", "beta"]  # each site's request is said while it runs (seconds each)


def test_the_dialect_of_a_body() -> None:
    assert dialect_of(b'{"transactions": []}') is None and dialect_of(b"<html>") is None
    assert dialect_of(b'{"transactions": [{"commission": {"commissionId": "1"}}]}').startswith("contract")
    assert dialect_of(b'{"transactions": [{"clickSid": "", "revenueId": 1}]}').startswith("published")
    assert (
        dialect_of(b'{"transactions": [{"revenueId": "rv1", "publisherRevenue": 1}]}')
        == "contract (the flat shape)"
    )
