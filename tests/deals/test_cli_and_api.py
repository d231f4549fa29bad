"""The `deals` CLI (one line on stderr, a distinct exit status per kind, JSON on stdout), the
public API, secrets never shown, and the sandbox's own entry points."""

from __future__ import annotations

import threading
from pathlib import Path

import httpx
import orjson
import pytest

import commerce_reports as cr
import commerce_reports.deals as deals
import commerce_reports.deals.sandbox as sandbox_deals
from commerce_reports.cli import main
from commerce_reports.cli.deals import exit_codes
from commerce_reports.cli.parser import COMMON_EXITS, USAGE
from commerce_reports.deals import DealsClient
from commerce_reports.deals.sandbox import (
    DEFAULT_READ_KEY,
    DEFAULT_WRITE_KEY,
    DealsSandbox,
    RunningDealsSandbox,
    run_deals_sandbox,
)
from commerce_reports.errors import ConfigurationError

from .conftest import TODAY, valid_deal


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, deals_sandbox: RunningDealsSandbox) -> Path:
    monkeypatch.chdir(tmp_path)  # no stray .env
    monkeypatch.setenv("COMMERCE_REPORTS_DEALS_API_KEY", DEFAULT_WRITE_KEY)
    monkeypatch.setenv("COMMERCE_REPORTS_DEALS_BASE_URL", deals_sandbox.base_url)
    deal = valid_deal(targeting=[{"adUnit.size": ["300X250"]}])
    deal["schedule"] = {"startDate": "2099-01-01"}  # the CLI's client uses the real date
    (tmp_path / "deal.json").write_bytes(orjson.dumps(deal))
    return tmp_path


def test_cli_create_prints_the_deal_and_warns(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["deals", "create", str(env / "deal.json")]) == 0
    out, err = capsys.readouterr()
    assert orjson.loads(out)["id"] == "2001"
    assert err.startswith("warning: body/targeting/0/adUnit.size") and err.count("\n") == 1


def test_cli_update_and_values(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (env / "changes.json").write_text('{"status": "paused"}')
    assert main(["deals", "update", "1001", str(env / "changes.json")]) == 0
    assert orjson.loads(capsys.readouterr().out)["status"] == "paused"
    assert main(["deals", "values", "device.deviceType"]) == 0
    assert orjson.loads(capsys.readouterr().out) == ["ctv", "desktop", "mobile", "tablet"]


@pytest.mark.parametrize(
    ("setup", "argv", "code"),
    [
        ("none", ["create", "{dir}/missing.json"], 4),
        ("none", ["update", "1001", "{dir}/deal.json"], 5),
        ("read", ["create", "{dir}/deal.json"], 30),
        ("none", ["update", "9001", "{dir}/changes.json"], 40),
        ("none", ["update", "x!", "{dir}/changes.json"], 11),
        ("nourl", ["values", "device.language"], 3),
    ],
)
def test_cli_errors_are_one_line_with_a_distinct_status(
    env: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    setup: str,
    argv: list[str],
    code: int,
) -> None:
    (env / "changes.json").write_text('{"status": "paused"}')
    if code == 5:  # an update whose buyer lists no seat
        (env / "deal.json").write_text('{"buyers": [{"dsp": "alphadsp"}]}')
    if setup == "read":
        monkeypatch.setenv("COMMERCE_REPORTS_DEALS_API_KEY", DEFAULT_READ_KEY)
    if setup == "nourl":
        monkeypatch.delenv("COMMERCE_REPORTS_DEALS_BASE_URL")
    assert main(["deals", *[a.format(dir=env) for a in argv]]) == code
    out, err = capsys.readouterr()
    errors = [line for line in err.splitlines() if not line.startswith("warning: ")]
    assert out == "" and len(errors) == 1 and errors[0].startswith("error: ")
    assert DEFAULT_WRITE_KEY not in err and DEFAULT_READ_KEY not in err
    if setup == "nourl":
        assert "commerce-reports sandbox --deals" in err


def test_exit_codes_are_distinct() -> None:
    """Each kind of its own has a code of its own; what cannot be used, a setting or a value, is the
    usage error every command exits with, said in the same words."""
    own = [code for code, _ in exit_codes().values() if code != USAGE]
    assert len(own) == len(set(own)) and not {0, 1} & set(own)
    assert {meaning for code, meaning in exit_codes().values() if code == USAGE} == {COMMON_EXITS[USAGE]}


def test_public_api_is_pinned() -> None:
    assert sorted(deals.__all__) == sorted(
        [
            "ENUMERATED_ATTRIBUTES", "STATUSES", "AdUnitSizeWarning", "Buyer", "CheckReport",
            "Commercial", "Deal", "DealsClient", "Schedule", "TargetingGroup", "check_create",
            "check_targeting_values", "check_update", "error_from_response",
        ]
    )  # fmt: skip
    for name in ("DEFAULT_WRITE_KEY", "DEFAULT_READ_KEY", "DEFAULT_DISABLED_KEY", "DealsSandbox",
                 "run_deals_sandbox", "serve_deals_forever"):  # fmt: skip
        assert name in sandbox_deals.__all__


def test_the_key_never_shows(client: DealsClient) -> None:
    assert DEFAULT_WRITE_KEY not in repr(client) and "***" in repr(client)


def test_client_without_key_says_how_to_get_one(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("COMMERCE_REPORTS_DEALS_API_KEY", raising=False)
    with pytest.raises(ConfigurationError, match="COMMERCE_REPORTS_DEALS_API_KEY"):
        DealsClient(base_url="http://127.0.0.1:1")


def test_the_client_never_reads_the_environment_the_entry_point_hands_it_the_settings(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, deals_sandbox: RunningDealsSandbox
) -> None:
    """Given a key and URL, the client reads nothing else (not `.env`'s limits); with none, it is
    `cr.open_deals_client()` that resolves them, from the environment over `.env`."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".env").write_text("COMMERCE_REPORTS_MAX_BODY_MB=1\n")
    assert (
        DealsClient(DEFAULT_WRITE_KEY, deals_sandbox.base_url)._exchange.session.limits.max_body_bytes > 2**20
    )
    with pytest.raises(ConfigurationError, match="COMMERCE_REPORTS_DEALS_API_KEY"):
        DealsClient()  # the environment is not read, even with the variables set
    (tmp_path / ".env").write_text(
        f"COMMERCE_REPORTS_DEALS_API_KEY={DEFAULT_WRITE_KEY}\nCOMMERCE_REPORTS_DEALS_BASE_URL={deals_sandbox.base_url}\n"
        "COMMERCE_REPORTS_MAX_BODY_MB=1\n"
    )
    with cr.open_deals_client() as client:
        assert client.base_url == deals_sandbox.base_url
        assert client._exchange.session.limits.max_body_bytes == 2**20
        assert client.targeting_values("device.deviceType")


def test_run_deals_sandbox_serves_and_stores_two_letter_countries_as_three() -> None:
    with (
        run_deals_sandbox(today=TODAY) as running,
        DealsClient(DEFAULT_WRITE_KEY, running.base_url, today=lambda: TODAY) as client,
    ):
        deal = client.create(valid_deal(targeting=[{"device.geo.country": ["fr"]}]))
        assert deal.targeting and deal.targeting[0].criteria == {"device.geo.country": ["FRA"]}
        stored = running.sandbox.deal(deal.id or "")
        assert stored is not None and stored["targeting"] == [{"device.geo.country": ["FRA"]}]


def test_serve_deals_forever_announces_url_and_keys() -> None:
    lines: list[str] = []
    thread = threading.Thread(
        target=sandbox_deals.serve_deals_forever,
        kwargs={"port": 0, "announce": lines.append},
        daemon=True,
    )
    thread.start()
    for _ in range(100):
        if len(lines) >= 7:
            break
        threading.Event().wait(0.02)
    text = "\n".join(lines)
    assert DEFAULT_WRITE_KEY in text and DEFAULT_READ_KEY in text
    url = lines[0].split()[3]
    response = httpx.get(f"{url}/targeting-attributes/device.language/values")
    assert response.status_code == 401  # it really serves; the thread dies with the test run


def test_sandbox_refuses_malformed_keys() -> None:
    with pytest.raises(ConfigurationError, match="malformed"):
        DealsSandbox(write_key="bad key")
