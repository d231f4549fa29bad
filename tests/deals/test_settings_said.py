"""What the deal settings lack or get wrong is said in the words of whoever gave them: the command
line's option, variables and `.env`, or Python's arguments; and a base URL no request could use
(a port out of range, a query that sent every request to `/`) is refused, as the reports' is."""

from __future__ import annotations

from pathlib import Path

import pytest

from commerce_reports.cli import main
from commerce_reports.deals import DealsClient
from commerce_reports.errors import ConfigurationError

KEY = "sbx-deals-write-0000000000000001"


@pytest.fixture
def bare(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.chdir(tmp_path)  # no stray .env
    monkeypatch.delenv("COMMERCE_REPORTS_DEALS_API_KEY", raising=False)
    monkeypatch.delenv("COMMERCE_REPORTS_DEALS_BASE_URL", raising=False)
    return tmp_path


def _error(argv: list[str], capsys: pytest.CaptureFixture[str], code: int = 3) -> str:
    assert main(["deals", *argv]) == code
    return capsys.readouterr().err


def test_the_command_line_names_variables_and_its_option_not_python(
    bare: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # it said "pass api_key=..., or open the client with `cr.open_deals_client()`"
    no_key = _error(["values", "device.language"], capsys)
    assert "api_key=" not in no_key and "cr.open_deals_client" not in no_key
    assert "set COMMERCE_REPORTS_DEALS_API_KEY (in the environment, or in the project's .env)" in no_key
    monkeypatch.setenv("COMMERCE_REPORTS_DEALS_API_KEY", KEY)
    no_url = _error(["values", "device.language"], capsys)
    assert (
        "base_url=" not in no_url and "pass --base-url URL, or set COMMERCE_REPORTS_DEALS_BASE_URL" in no_url
    )
    # a setting given that cannot be used is a usage error, as on every command (it exited 3, the
    # code of a missing one)
    wrong = _error(["--base-url", "not a url", "values", "device.language"], capsys, 2)
    assert wrong.startswith("error: --base-url: 'not a url' is not an http(s) URL")


def test_a_setting_of_the_project_file_is_named_where_it_is_written(
    bare: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """It was named as the variable COMMERCE_REPORTS_DEALS_BASE_URL, which was not set."""
    monkeypatch.setenv("COMMERCE_REPORTS_DEALS_API_KEY", KEY)
    (bare / "commerce-reports.toml").write_text('deals_base_url = "5"\n')
    said = _error(["values", "device.language"], capsys, 2)
    assert said.startswith(
        f"error: {bare / 'commerce-reports.toml'}: deals_base_url: '5' is not an http(s) URL"
    )


def test_a_value_that_cannot_be_used_is_a_usage_error_not_an_unreadable_file(
    bare: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`deals values ''` exited 4, which the table gives as "input file unreadable"."""
    monkeypatch.setenv("COMMERCE_REPORTS_DEALS_API_KEY", KEY)
    monkeypatch.setenv("COMMERCE_REPORTS_DEALS_BASE_URL", "http://127.0.0.1:9")  # never asked
    assert _error(["values", ""], capsys, 2) == "error: attribute: is empty; e.g. device.geo.country\n"


def test_python_still_hears_python(bare: Path) -> None:
    with pytest.raises(ConfigurationError, match=r"pass api_key=\.\.\."):
        DealsClient(None, "http://deals.test")
    with pytest.raises(ConfigurationError, match=r"^base_url: 'x' is not"):
        DealsClient(KEY, "x")


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("http://127.0.0.1:99999", "port must be a number from 1 to 65535"),
        ("http://host:43477?x=1", "has a query or fragment"),
        ("http://host:43477/#top", "has a query or fragment"),
    ],
)
def test_a_base_url_no_request_could_use_is_refused(url: str, said: str) -> None:
    with pytest.raises(ConfigurationError, match=said):
        DealsClient(KEY, url)
