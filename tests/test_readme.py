"""The README runs: every Python block, as a user would paste it into a fresh notebook in a new
project folder, against the embedded sandbox (the Spark block runs in tests/spark/test_readme.py,
beside a Spark session)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from commerce_reports.project import init_project

README = Path(__file__).resolve().parents[1] / "README.md"


def python_blocks(text: str | None = None) -> list[str]:
    """The README's ```python blocks, in order."""
    return re.findall(r"^```python\n(.*?)^```", text or README.read_text(), flags=re.MULTILINE | re.DOTALL)


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
