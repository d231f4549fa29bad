"""`commerce-reports serve`'s words checked before anything heavy loads: a wrong port, address,
token or data folder exits 2 with one line saying what would be right (no Panel, no DuckDB)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from commerce_reports.cli import main


@pytest.mark.parametrize(
    ("arguments", "environment", "said"),
    [
        (["--port", "99999"], {}, "is not a TCP port"),
        (["--host", "not a host!"], {}, "is not an address or host name"),
        ([], {"COMMERCE_REPORTS_SERVE_TOKEN": "short"}, "at least 16 characters"),
        ([], {"COMMERCE_REPORTS_SERVE_PORT": "http"}, "is not a TCP port"),
        (["--token-file", "missing-token"], {}, "cannot read missing-token"),
        (["--data-dir", "no-such-folder"], {}, "there is no data folder"),
        (["--allow-origin", ""], {}, "--allow-origin: '' is not an origin; give HOST:PORT"),
        (["--allow-origin", "garbage"], {}, "'garbage' is not an origin; give HOST:PORT"),
        # any free port: the host was bound only for a port named, and said unnamed after the token
        (["--host", "nosuchhost.invalid", "--port", "0"], {}, "--host: nosuchhost.invalid does not resolve"),
    ],
)
def test_wrong_words_exit_2_before_anything_runs(
    arguments: list[str],
    environment: dict[str, str],
    said: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    (tmp_path / "data").mkdir()
    folder = [] if "--data-dir" in arguments else ["--data-dir", str(tmp_path / "data")]
    try:
        code = main(["serve", *folder, *arguments])
    except SystemExit as refused:  # argparse's own refusal of an option's value
        code = refused.code
    assert code == 2
    error = capsys.readouterr().err
    assert said in error and "Traceback" not in error and "access token" not in error


def test_a_usage_error_loads_neither_panel_nor_duckdb(tmp_path: Path) -> None:
    probe = (
        "import sys; from commerce_reports.cli import main; "
        "code = main(['serve', '--host', 'bad host', '--data-dir', '.']); "
        "print(code, 'panel' in sys.modules, 'duckdb' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path, check=True
    )
    assert done.stdout.split() == ["2", "False", "False"], done.stderr


def test_an_empty_lake_is_refused_with_the_command_that_fills_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "data").mkdir()
    assert main(["serve", "--data-dir", str(tmp_path / "data")]) == 1
    assert "is empty: run `commerce-reports sync` first" in capsys.readouterr().err
