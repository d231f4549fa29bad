"""Settings come from the environment or .env; secrets never show."""

from __future__ import annotations

import re
from datetime import date, timedelta
from pathlib import Path

import dotenv
import httpx
import pytest

from commerce_reports import config
from commerce_reports.client import ReportsClient
from commerce_reports.config import Settings, parse_pace
from commerce_reports.errors import ConfigurationError, ServerError
from commerce_reports.redaction import excerpt, mask_record, redact
from commerce_reports.secret import Secret


def test_no_key_means_the_sandbox() -> None:
    settings = Settings.from_env()
    assert settings.secret_key is None and settings.pace == {
        "transactions": 60.0,
        "networks": 60.0,
        "merchandise": 60.0,
    }


def test_env_file_is_read_and_the_environment_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".env").write_text(
        "COMMERCE_REPORTS_SECRET_KEY=from-dotenv-1234\nCOMMERCE_REPORTS_BASE_URL=https://a.example\n"
        "COMMERCE_REPORTS_PACE=networks=10\n"
    )
    monkeypatch.setenv("COMMERCE_REPORTS_BASE_URL", "https://b.example/")
    settings = Settings.from_env()
    assert settings.secret_key == Secret("from-dotenv-1234")
    assert settings.base_url == "https://b.example"
    assert settings.pace["networks"] == 10 and settings.pace["transactions"] == 60
    assert "from-dotenv-1234" not in repr(settings)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("5", {"transactions": 5.0, "networks": 5.0, "merchandise": 5.0}),
        (
            "transactions=60,networks=10,merchandise=60",
            {"transactions": 60.0, "networks": 10.0, "merchandise": 60.0},
        ),
        ("networks=0", {"transactions": 60.0, "networks": 0.0, "merchandise": 60.0}),
    ],
)
def test_pace_forms(text: str, expected: dict[str, float]) -> None:
    assert parse_pace(text) == expected


@pytest.mark.parametrize("text", ["fast", "-1", "networks", "network=10", "networks=ten", "inf", "", " "])
def test_bad_pace_is_a_clear_configuration_error(text: str) -> None:
    with pytest.raises(ConfigurationError):
        parse_pace(text)


def test_bad_base_url_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMMERCE_REPORTS_BASE_URL", "api.example.com")
    with pytest.raises(ConfigurationError, match="not an http"):
        Settings.from_env()


@pytest.mark.parametrize(
    "url", ["http://me:pw1secretXYZ@127.0.0.1:18765/v1", "https://me@x.org:pw1secretXYZ@api.example.com"]
)
def test_a_base_url_holding_a_password_is_refused_without_showing_it(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It was accepted, kept in every manifest of the lake as written and shown by the client's
    repr: the service is reached with its key, never with a password in its address."""
    monkeypatch.setenv("COMMERCE_REPORTS_BASE_URL", url)
    with pytest.raises(ConfigurationError, match="a user or a password before the host") as refused:
        Settings.from_env()
    assert "pw1secretXYZ" not in str(refused.value) and ":***@" in str(refused.value)
    with pytest.raises(ConfigurationError, match="a user or a password before the host"):
        ReportsClient(Secret("sk-live-0123456789abcdef"), url)


def test_secret_never_prints_and_is_redacted_from_messages(caplog: pytest.LogCaptureFixture) -> None:
    secret = Secret("s3cr3t-value-xyz")
    assert "s3cr3t" not in repr(secret) and "s3cr3t" not in str(secret) and "s3cr3t" not in f"{secret}"
    error = ServerError(500, "server error", body=b"echo: s3cr3t-value-xyz", endpoint="networks")
    assert "s3cr3t" not in str(error) and "***" in str(error)
    assert redact("Authorization: secret abc123") == "Authorization: secret ***"


@pytest.mark.parametrize("key", ["Zq7sk3Lm\nN9pX2vB8", "Zq7sk3Lm\rN9pX2vB8", "Zq7sk3Lm\x00N9pX2vB8"])
def test_a_key_holding_a_line_break_is_refused_before_any_request_and_never_shown(key: str) -> None:
    """No header can carry it: the HTTP library's error quoted the header, key and all (its
    escaped form, which no mask matched)."""
    with pytest.raises(ConfigurationError, match="one line of printable characters") as raised:
        ReportsClient(key, "http://127.0.0.1:9")
    assert "N9pX2vB8" not in str(raised.value)


def test_error_excerpts_are_short_single_line_and_readable_for_html() -> None:
    html = (
        b"<html><head><title>502 Bad Gateway</title><style>p{}</style></head><body><h1>Bad</h1></body></html>"
    )
    assert excerpt(html, "text/html") == "HTML page: 502 Bad Gateway: 502 Bad Gateway Bad"
    assert len(excerpt(b"x" * 5000)) <= 301
    assert excerpt(b"line one\nline two") == "line one line two"


@pytest.mark.parametrize("before", [269, 280, 299, 0])
def test_an_excerpt_masks_a_key_that_crosses_its_cut(before: int) -> None:
    """The excerpt was cut first and masked second: a key across the 300th character kept all
    but its last characters (31 of 32 shown)."""
    key = "sbx-deals-write-0000000000000001"
    Secret(key)
    for body in ("x" * before + key, "y" * before + key + "z" * 5000, f"{key} " * 400):
        shown = excerpt(body.encode())
        assert not any(key[:n] in shown for n in range(8, len(key) + 1)), shown
        assert len(shown) <= 301


@pytest.mark.parametrize(
    "hint",
    [
        "Check COMMERCE_REPORTS_SECRET_KEY: the site's secret key, sent as 'secret <key>'",
        "a secret must be a non-empty string",
        "the secret key of site alpha is read from $ALPHA_KEY",
    ],
)
def test_redaction_leaves_the_toolkits_own_words_alone(hint: str) -> None:
    assert redact(hint) == hint


def test_redaction_masks_values_and_key_shaped_tokens() -> None:
    Secret("registered-value-42")
    text = "echo registered-value-42; Authorization: secret tok; x-api-key: k9; /p?token=Ab12345678901234"
    assert redact(text) == "echo ***; Authorization: secret ***; x-api-key: ***; /p?token=***"


def test_the_lake_is_found_by_one_rule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from commerce_reports.locate import where

    project = tmp_path / "project"
    (project / "notebooks" / "deep").mkdir(parents=True)
    (project / "commerce-reports.toml").write_text('data_dir = "lake-data"\n')
    monkeypatch.chdir(project / "notebooks" / "deep")
    found = where()
    assert found.path == project / "lake-data" and "commerce-reports.toml" in found.reason
    monkeypatch.setenv("COMMERCE_REPORTS_DATA_DIR", str(tmp_path / "elsewhere"))
    assert where().path == tmp_path / "elsewhere" and "COMMERCE_REPORTS_DATA_DIR" in where().reason
    monkeypatch.delenv("COMMERCE_REPORTS_DATA_DIR")
    (project / "commerce-reports.toml").unlink()
    (project / "pyproject.toml").write_text('[tool.commerce-reports]\ndata_dir = "from-pyproject"\n')
    assert where().path == project / "from-pyproject"
    (project / "pyproject.toml").unlink()
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert where().path == tmp_path / "xdg" / "commerce-reports" and "user data folder" in where().reason


def test_a_relative_data_folder_in_env_is_relative_to_that_file_from_any_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same lake from the project folder (where a scheduled job runs) and from notebooks/."""
    (tmp_path / "commerce-reports.toml").write_text("")
    (tmp_path / ".env").write_text("COMMERCE_REPORTS_DATA_DIR=lake-of-env\n")
    (tmp_path / "notebooks").mkdir()
    for folder in (tmp_path, tmp_path / "notebooks"):
        monkeypatch.chdir(folder)
        assert Settings.from_env().data_dir == tmp_path / "lake-of-env"
    monkeypatch.setenv("COMMERCE_REPORTS_DATA_DIR", "mine")  # the shell's: relative to where it runs
    assert Settings.from_env().data_dir == tmp_path / "notebooks" / "mine"


def test_a_notebook_folder_reads_the_projects_env_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "commerce-reports.toml").write_text("")
    (tmp_path / ".env").write_text("COMMERCE_REPORTS_DIALECT=published\n")
    (tmp_path / "notebooks").mkdir()
    monkeypatch.chdir(tmp_path / "notebooks")
    settings = Settings.from_env()
    assert settings.dialect == "published" and settings.data_dir == tmp_path / "data"


@pytest.mark.parametrize("name", [".env", "commerce-reports.toml", "data/sites.toml"])
def test_a_settings_file_not_saved_as_utf8_is_named_with_its_line_and_the_fix(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Latin-1 `é` in `.env` made every command say "unexpected UnicodeDecodeError" naming no
    file, and the package raise a bare UnicodeDecodeError; the TOML files' error said no fix."""
    import commerce_reports as cr
    from commerce_reports.cli import main

    (tmp_path / "commerce-reports.toml").write_text('data_dir = "data"\n')
    (tmp_path / "data").mkdir()
    path = tmp_path / name
    with path.open("ab") as file:
        file.write(b"# caf\xe9, as Latin-1 writes it\n")
    line = path.read_bytes().count(b"\n")
    said = f"{path}: not readable as UTF-8 (byte 0xe9 on line {line}); save it as UTF-8"
    with pytest.raises(ConfigurationError, match=re.escape(said)):
        cr.status()
    assert main(["status"]) == 2
    assert capsys.readouterr().err.startswith(f"error: {said}")


def _count_reads(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every `.env` file read from now on (the calls to `read_settings_file` by `config`, which
    reads a `.env` through it)."""
    reads: list[Path] = []
    real = config.read_settings_file

    def counting(path: Path) -> str:
        reads.append(path)
        return real(path)

    monkeypatch.setattr(config, "read_settings_file", counting)
    return reads


def test_a_sync_reads_dotenv_once_and_again_only_when_something_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import commerce_reports as cr

    (tmp_path / ".env").write_text(f"COMMERCE_REPORTS_DATA_DIR={tmp_path / 'lake-a'}\n")
    reads = _count_reads(monkeypatch)
    quiet = cr.SyncOptions(progress=False, say=lambda _: None)
    today = date.today()
    result = cr.sync(today - timedelta(days=1), today, options=quiet)  # the embedded sandbox
    assert result.stored and not result.failed
    assert reads == [tmp_path / ".env"], "one sync: .env read once (it was six times)"
    cr.status()
    cr.connect().close()
    cr.plan_sync(today, today)
    monkeypatch.setenv("_RJEM_MALLOC_CONF", "set-by-a-library")  # polars sets it as it loads
    cr.status()
    assert len(reads) == 1, "the process keeps what it read"
    (tmp_path / ".env").write_text(f"COMMERCE_REPORTS_DATA_DIR={tmp_path / 'lake-edited'}\n")
    cr.status()
    assert len(reads) == 2, "an edited .env is read again"
    assert config.current_settings().data_dir == tmp_path / "lake-edited"
    monkeypatch.setenv("COMMERCE_REPORTS_DATA_DIR", str(tmp_path / "lake-c"))
    cr.status()
    assert len(reads) == 3, "so is a changed environment (it wins over .env)"
    assert config.current_settings().data_dir == tmp_path / "lake-c"


def test_the_client_never_reads_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Everything of the client comes from its arguments. The one process-wide setting below it,
    the mode of the folders it creates for the pace state, comes from the settings the process
    resolved (given here), never from a read of its own."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the client read the environment")

    resolved = Settings()
    monkeypatch.setattr(config, "current_settings", lambda: resolved)
    monkeypatch.setattr(config, "environment", refuse)
    monkeypatch.setattr(dotenv, "dotenv_values", refuse)
    monkeypatch.setattr(Settings, "from_env", refuse)
    monkeypatch.setenv("COMMERCE_REPORTS_PACE", "7")
    monkeypatch.setenv("COMMERCE_REPORTS_DIALECT", "published")
    transport = httpx.MockTransport(lambda request: httpx.Response(200, json={"transactions": []}))
    with ReportsClient(
        "key-handed-in-123", "https://api.example.com", transport=transport, pace_dir=tmp_path / "pace"
    ) as client:
        assert client.transactions(update_date="2026-11-20").num_rows == 0
        assert client.dialect == "contract" and client.pace == parse_pace(None)


def test_without_a_project_the_lake_says_how_to_point_at_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a notebook prints at its top: papermill started elsewhere finds no project, and says so."""
    from commerce_reports.locate import where

    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    told = where().describe()
    assert told.startswith(f"lake: {tmp_path / 'data-home' / 'commerce-reports'} (the user data folder")
    assert f"No project was found from {tmp_path / 'elsewhere'}" in told
    assert "COMMERCE_REPORTS_DATA_DIR" in told and "--cwd" in told
    (tmp_path / "commerce-reports.toml").write_text("")
    assert (
        where().describe()
        == f"lake: {tmp_path / 'data'} (from the project marker {tmp_path / 'commerce-reports.toml'})"
    )


def test_mask_record_masks_a_log_records_message_and_exception() -> None:
    import logging
    import sys

    key = "logged-key-0000000000000001"
    Secret(key)
    try:
        raise RuntimeError(f"failed with {key}")
    except RuntimeError:
        record = logging.LogRecord(
            "httpcore", 10, "f", 1, "got %r", ((b"X-Echo", key.encode()),), sys.exc_info()
        )
    assert mask_record(record)
    line = logging.Formatter().format(record)
    assert key not in line and "got (b'X-Echo', b'***')" in line and "RuntimeError: failed with ***" in line


def test_an_excerpt_writes_control_characters_out() -> None:
    assert excerpt(b"a\x1b[31mred\x1b[0m\x07b") == "a\\x1b[31mred\\x1b[0m\\x07b"
