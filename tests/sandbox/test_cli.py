"""`commerce-reports sandbox`: options become the config handed to the server functions."""

from __future__ import annotations

import argparse
import sys
import types
from datetime import UTC, date, datetime
from typing import Any

import pytest

from commerce_reports import sandbox
from commerce_reports.cli import sandbox as cli
from commerce_reports.cli.parser import CommandParser


def parse(*argv: str) -> argparse.Namespace:
    parser = CommandParser(prog="commerce-reports")
    cli.register(parser.add_subparsers(dest="command"))
    return parser.parse_args(["sandbox", *argv])


def served(monkeypatch: pytest.MonkeyPatch, *argv: str) -> dict[str, Any]:
    seen: dict[str, Any] = {}

    def fake(config: sandbox.SandboxConfig, **kwargs: Any) -> None:
        seen.update(kwargs, config=config)

    monkeypatch.setattr(sandbox, "serve_sandbox_forever", fake, raising=False)
    args = parse(*argv)
    assert args.handler(args) == 0
    return seen


def test_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = served(monkeypatch)
    config = seen["config"]
    assert (seen["host"], seen["port"]) == ("127.0.0.1", 8765)
    assert config.sites == sandbox.DEMO_SITES and config.pace == 60.0 and config.now is None
    assert config.faults.rate == 0 and config.shape == "nested"
    assert (config.dialect, config.date_style) == ("contract", "iso")


def test_every_option(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = served(
        monkeypatch,
        "--host",
        "0.0.0.0",
        "--port",
        "9000",
        "--site",
        "shop=k1",
        "--site",
        "blog=k2",
        "--fast",
        "--today",
        "2026-05-01",
        "--seed",
        "3",
        "--first-day",
        "2026-01-01",
        "--faults",
        "500,drop,truncate:0.3",
        "--shape",
        "flat",
        "--transactions-per-day",
        "50",
    )
    config = seen["config"]
    assert [s.name for s in config.sites] == ["shop", "blog"]
    assert config.pace == sandbox.FAST_PACE
    assert config.now == datetime(2026, 5, 1, 12, tzinfo=UTC)
    assert (config.seed, config.first_day, config.shape) == (3, date(2026, 1, 1), "flat")
    assert config.faults.kinds == {"500", "drop", "truncate"} and config.faults.rate == 0.3
    assert config.transactions_per_day == 50
    assert served(monkeypatch, "--faults", "0.2")["config"].faults.kinds == sandbox.FAULT_KINDS


@pytest.mark.parametrize(
    "argv",
    [
        ("--site", "alpha"),
        ("--site", "Alpha=k"),
        ("--pace", "-1"),
        ("--pace", "soon"),
        ("--today", "2026-02-30"),
        ("--faults", "teapot:0.1"),
        ("--faults", "2"),
        ("--faults", "500"),
        ("--shape", "wide"),
        ("--dialect", "openapi"),
        ("--date-style", "julian"),
        ("--transactions-per-day", "0"),
    ],
)
def test_bad_values_are_argparse_errors(argv: tuple[str, ...], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        parse(*argv)
    assert exit_info.value.code == 2
    assert "sandbox: error: argument" in capsys.readouterr().err


def test_the_published_dialect_and_its_date_styles(monkeypatch: pytest.MonkeyPatch) -> None:
    config = served(monkeypatch, "--dialect", "published", "--date-style", "mixed")["config"]
    assert (config.dialect, config.date_style, config.shape) == ("published", "mixed", "nested")


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (("--date-style", "us"), "date_style: the contract dialect writes yyyy-mm-dd only"),
        (("--dialect", "published", "--shape", "flat"), "shape: the published dialect has one shape"),
    ],
)
def test_options_of_the_other_dialect_exit_2(
    argv: tuple[str, ...], named: str, capsys: pytest.CaptureFixture[str]
) -> None:
    args = parse(*argv)
    assert args.handler(args) == 2
    assert named in capsys.readouterr().err


def test_duplicate_sites_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    args = parse("--site", "a=k", "--site", "a=j")
    assert args.handler(args) == 2
    assert "unique" in capsys.readouterr().err


def test_deals_flag_serves_the_deals_sandbox(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}
    fake = types.ModuleType("commerce_reports.deals.sandbox")
    fake.serve_deals_forever = lambda **kwargs: seen.update(kwargs)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "commerce_reports.deals.sandbox", fake)
    args = parse("--deals", "--port", "9100", "--write-key", "w", "--read-key", "r")
    assert args.handler(args) == 0
    assert seen == {
        "host": "127.0.0.1",
        "port": 9100,
        "write_key": "w",
        "read_key": "r",
        "disabled_key": None,
        "announce": print,
    }


def test_serve_forever_announces_url_pace_and_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    from commerce_reports.sandbox import runner
    from commerce_reports.sandbox.http import ServerHandle

    def fake_serve(app: object, host: str, port: int, on_ready: Any) -> None:
        on_ready(ServerHandle(host, port))

    monkeypatch.setattr(runner, "serve_forever", fake_serve)
    lines: list[str] = []
    config = sandbox.SandboxConfig(now=datetime(2026, 5, 1, 12, tzinfo=UTC), pace=0.05)
    runner.serve_sandbox_forever(config, port=9999, announce=lines.append)
    text = "\n".join(lines)
    assert "http://127.0.0.1:9999" in text and "pace 0.05" in text and "contract dialect" in text
    assert "alpha=sandbox-alpha-key" in text and "beta=sandbox-beta-key" in text


def test_a_port_out_of_range_or_in_use_is_a_one_line_error() -> None:
    import subprocess
    import sys

    from commerce_reports.sandbox import SandboxConfig, run_sandbox

    bad = subprocess.run(
        [sys.executable, "-m", "commerce_reports", "sandbox", "--port", "99999"],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2 and "not a TCP port" in bad.stderr and "Traceback" not in bad.stderr
    with run_sandbox(SandboxConfig(pace=0)) as running:
        port = running.base_url.rsplit(":", 1)[1]
        taken = subprocess.run(
            [sys.executable, "-m", "commerce_reports", "sandbox", "--port", port],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert taken.returncode == 2 and f"cannot listen on 127.0.0.1:{port}" in taken.stderr
    assert "Traceback" not in taken.stderr


@pytest.mark.parametrize(
    ("host", "warned"),
    [
        ("127.0.0.1", False),
        ("localhost", False),
        ("::1", False),
        ("0.0.0.0", True),
        ("192.0.2.7", True),
        ("reports.example", True),
    ],
)
def test_a_host_other_than_loopback_is_served_with_a_warning(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], host: str, warned: bool
) -> None:
    assert served(monkeypatch, "--host", host)["host"] == host
    err = capsys.readouterr().err
    assert ("warning: --host" in err and "beyond this machine" in err) is warned, err
