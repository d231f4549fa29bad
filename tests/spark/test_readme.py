"""The README's Spark block runs as written, in a project folder whose `data` is a synced lake."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path
from typing import Any

import pytest

from tests.spark.conftest import Lake
from tests.test_readme import python_blocks

pytestmark = pytest.mark.xdist_group("spark")  # the worker whose Spark session is already up


def test_the_readme_spark_block_runs_as_written(spark: Any, lake: Lake, tmp_path: Path) -> None:
    """Nothing handed in: the block makes its own session (`getOrCreate`: this worker's, already up)."""
    (block,) = [b for b in python_blocks() if "register_views(spark" in b]
    (tmp_path / "data").symlink_to(lake.data_dir)
    shown = io.StringIO()
    names: dict[str, Any] = {}
    with contextlib.chdir(tmp_path), contextlib.redirect_stdout(shown):
        exec(compile(block, "README.md (Spark block)", "exec"), names)
    assert names["spark"] is spark
    assert "window_start" in shown.getvalue() and "alpha" in shown.getvalue()
