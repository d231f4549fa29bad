"""The README runs: every Python block, as a user would paste it into a fresh notebook in a new
project folder, against the embedded sandbox (the Spark block runs in tests/spark/test_readme.py,
beside a Spark session). What cannot run here is checked as far as it can be: every
`commerce-reports` command line of the shell, cron and YAML blocks is one the command's own parser
takes, the TOML blocks are read by the code that reads them, and the settings table is the one the
declaration writes. (The shell blocks themselves are not run: `make demo` and `pip install` build
and install the whole package, which tests/test_wheel.py does once.)"""

from __future__ import annotations

import itertools
import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from commerce_reports.project import init_project

README = Path(__file__).resolve().parents[1] / "README.md"


def python_blocks(text: str | None = None) -> list[str]:
    """The README's ```python blocks, in order."""
    return blocks("python", text)


def blocks(language: str, text: str | None = None) -> list[str]:
    """The README's blocks of `language` (```sh, ```toml...), in order."""
    return re.findall(
        rf"^```{language}\n(.*?)^```", text or README.read_text(), flags=re.MULTILINE | re.DOTALL
    )


def command_lines(text: str) -> list[list[str]]:
    """Every `commerce-reports ...` command in `text`, as its arguments: up to a comment, `&&`,
    `;`, `|` or a redirection."""
    found = []
    for match in re.finditer(r"(?:^|[\s/])commerce-reports((?: [^\n]*)?)", text):
        lexer = shlex.shlex(match[1], posix=True, punctuation_chars=True)
        lexer.whitespace_split, lexer.commenters = True, "#"
        arguments = list(itertools.takewhile(lambda word: not set(word) <= set("();<>|&"), lexer))
        if arguments and not arguments[0].startswith("*"):
            found.append(arguments)
    return found


def test_every_command_line_of_the_readme_is_one_the_command_takes() -> None:
    from commerce_reports.cli import build_parser

    text = "".join(blocks("sh") + blocks("cron") + blocks("yaml"))
    commands = command_lines(text)
    assert len(commands) >= 10 and ["schedule", "list"] in commands
    parser = build_parser()
    for arguments in commands:
        try:
            parser.parse_args(arguments)
        except SystemExit as stop:
            assert stop.code == 0, f"the README's `commerce-reports {shlex.join(arguments)}` is refused"


DOCS = sorted((README.parent / "docs").rglob("*.md"))


def test_every_command_line_of_the_docs_is_one_the_command_takes() -> None:
    from commerce_reports.cli import build_parser

    parser = build_parser()
    checked = 0
    for page in DOCS:
        text = page.read_text()
        for arguments in command_lines(
            "".join(blocks("sh", text) + blocks("cron", text) + blocks("yaml", text))
        ):
            checked += 1
            try:
                parser.parse_args(arguments)
            except SystemExit as stop:
                assert stop.code == 0, f"{page.name}'s `commerce-reports {shlex.join(arguments)}` is refused"
    assert checked >= 20


def test_every_alerts_table_of_the_readme_and_the_docs_is_one_alerts_reads() -> None:
    """A block pasted into commerce-reports.toml must not stop `alerts`; each shows the defaults."""
    from commerce_reports.alerting import Thresholds

    tables = [
        (page.name, b)
        for page in [README, *DOCS]
        for b in blocks("toml", page.read_text())
        if "[alerts]" in b
    ]
    assert len(tables) >= 2
    for name, block in tables:
        assert Thresholds.from_table(tomllib.loads(block)["alerts"]) == Thresholds(), name


def test_the_readmes_toml_blocks_are_read_as_they_say(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from commerce_reports.alerting import Thresholds
    from commerce_reports.config import Settings
    from commerce_reports.sites import configured_sites

    sites, alerts = (
        (b for b in blocks("toml") if "[sites." in b),
        (b for b in blocks("toml") if "[alerts]" in b),
    )
    (tmp_path / "sites.toml").write_text(next(sites))
    monkeypatch.setenv("COMMERCE_REPORTS_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("COMMERCE_REPORTS_BASE_URL", "https://api.example.com/v1")
    for variable in re.findall(r'secret_key_env = "(\w+)"', (tmp_path / "sites.toml").read_text()):
        monkeypatch.setenv(variable, f"{variable.lower()}-0123456789")
    profiles = configured_sites(Settings.from_env())
    assert profiles["gadgets"].dialect == "published" and profiles["gadgets"].revision_days == 60
    # "Thresholds ... (defaults shown)": the table as written is the defaults
    assert Thresholds.from_table(tomllib.loads(next(alerts))["alerts"]) == Thresholds()


def test_the_readmes_settings_table_is_the_declarations() -> None:
    from commerce_reports.settings import settings_table

    text = README.read_text()
    start = text.index("<!-- settings table:")
    table = text[text.index("\n", start) + 1 : text.index("<!-- end of settings table -->")]
    assert table == settings_table(), "write it again from commerce_reports.settings.settings_table()"


def test_the_readme_has_python_blocks() -> None:
    blocks = python_blocks()
    assert len(blocks) >= 2 and any("register_views(spark" in b for b in blocks)
    assert python_blocks("```python\nx = 1\n```\n```sh\nls\n```\n") == ["x = 1\n"]


@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.usefixtures("kept_vega_bundle")  # bundling it is the offline charts' tests' work
def test_every_python_block_runs_in_a_new_project(tmp_path: Path) -> None:
    project = init_project(tmp_path / "my-reports").folder
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMMERCE_REPORTS_")}
    blocks = [b for b in python_blocks() if "spark" not in b]
    assert blocks
    for number, block in enumerate(blocks):
        done = subprocess.run(
            [sys.executable, "-c", block], cwd=project, env=env, capture_output=True, text=True, timeout=540
        )
        assert done.returncode == 0, f"README python block {number}:\n{block}\n{done.stdout}\n{done.stderr}"
        assert "Traceback" not in done.stderr
    assert (project / "data" / "lake" / "site=alpha" / "manifest.json").is_file()  # the project's lake
