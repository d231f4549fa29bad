"""The bench scripts still run: each imports against today's layout and answers `--help`.

They are not run in full here (they take minutes on big lakes), but a renamed module or function
breaks them without this check: the rollup bench once imported a module that no longer existed.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted((ROOT / "bench").glob("*.py"))


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.stem)
def test_a_bench_script_imports_and_answers_help(
    script: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    if script.stem == "spark_bench":
        pytest.importorskip("pyspark", reason="the spark extra is not installed")
    monkeypatch.syspath_prepend(str(ROOT))  # soak.py reuses the lake tests' hostile server
    monkeypatch.setattr(sys, "argv", [script.name, "--help"])
    spec = importlib.util.spec_from_file_location(f"bench_{script.stem}", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)  # as `python script.py` does: dataclasses look it up
    spec.loader.exec_module(module)
    with pytest.raises(SystemExit) as exited:
        module.main()
    assert exited.value.code == 0
    assert "usage:" in capsys.readouterr().out
