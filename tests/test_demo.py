"""The main job: the demo runs the whole tour against the sandbox and says what it did."""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import pytest

from commerce_reports.config import current_settings
from commerce_reports.demo import _say_what_next, run_demo
from commerce_reports.syncing import CostBook


@pytest.mark.usefixtures("kept_vega_bundle")  # bundling it is the offline charts' tests' work
def test_the_demo_syncs_two_sites_then_needs_nothing_and_shows_the_views(tmp_path: Path) -> None:
    lines: list[str] = []
    result = run_demo(days=5, data_dir=tmp_path, reports=tmp_path / "reports", say=lines.append)
    text = "\n".join(lines)
    assert result["failed"] == 0 and result["stored"] > 0 and result["rows"] > 0
    # the plan's ETA, then progress while it syncs (at least the last line), then the summary
    plan = next(i for i, line in enumerate(lines) if ", ETA " in line)
    done = next(i for i, line in enumerate(lines) if line.startswith("stored "))
    said = re.compile(r"  \d+/\d+ requests, [\d,]+ rows stored")
    progress = [line for line in lines[plan:done] if said.match(line)]
    assert progress and progress[-1].startswith(f"  {result['stored']}/{result['stored']} requests"), lines
    book = CostBook()  # what it cost is kept for the next ETA: the requests, and the end work
    assert book.expected("sandbox contract", "transactions").learned_from == 10  # 5 days, 2 sites
    assert book.finish(1).learned_from == 1
    assert result["second_sync_requests"] == 0
    assert "sites alpha, beta" in text and "network_performance" in text and "country_performance" in text
    assert (tmp_path / "lake" / "site=alpha" / "manifest.json").is_file()
    assert (tmp_path / "lake" / "site=beta" / "manifest.json").is_file()
    assert "sandbox-alpha-key" not in text
    assert (tmp_path / "commerce.duckdb").is_file()
    assert result["report"] is not None and result["report"].is_file()
    assert re.search(r"exporting .+report\.ipynb \(papermill, a real kernel\): done in \d+\.\d s", text)
    assert result["report"].read_text().count('id="commerce-chart-') >= 5


def test_what_to_run_next_runs_as_printed_whatever_the_folder_is_named(tmp_path: Path) -> None:
    """The lines the demo ends with are copied into a shell: a folder with a space, brackets or a
    quote in its name is quoted, so that each command finds it."""
    folder = tmp_path / "Client [Acme] it's"
    said: list[str] = []
    _say_what_next(folder, current_settings(), said.append)
    (sql,) = [shlex.split(line) for line in said if "commerce-reports sql" in line]
    assert sql[0] == f"COMMERCE_REPORTS_DATA_DIR={folder}"
    (duckdb,) = [shlex.split(line) for line in said if line.lstrip().startswith("duckdb")]
    assert duckdb[:3] == ["duckdb", "-readonly", str(folder / "commerce.duckdb")]


def test_what_to_run_next_names_the_command_as_a_shell_here_finds_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`make demo` in a clone runs .venv/bin/commerce-reports, which the user's shell does not find
    by its name (`commerce-reports: command not found`, exit 127): its path is what to type."""
    script = tmp_path / ".venv" / "bin" / "commerce-reports"
    script.parent.mkdir(parents=True)
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", [str(script), "demo"])
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    said: list[str] = []
    _say_what_next(tmp_path / "data", current_settings(), said.append)
    assert any(f" {script} sql " in line for line in said), said
    monkeypatch.setenv("PATH", f"{script.parent}:/usr/bin:/bin")  # an activated venv
    said.clear()
    _say_what_next(tmp_path / "data", current_settings(), said.append)
    assert any(" commerce-reports sql " in line for line in said), said
