"""Every command starts at once: light imports, and a Ctrl-C during start-up is a quiet exit 130."""

from __future__ import annotations

import subprocess
import sys

import pytest

_INTERRUPT_WHILE_IMPORTING = """
import sys

class Interrupt:
    def find_spec(self, name, path=None, target=None):
        if name == {module!r}:
            raise KeyboardInterrupt  # as if Ctrl-C arrived while this module loads
        return None

sys.meta_path.insert(0, Interrupt())
sys.argv = ["commerce-reports", "status"]
import runpy
runpy.run_module("commerce_reports", run_name="__main__")
"""


@pytest.mark.parametrize("module", ["commerce_reports.cli", "commerce_reports.cli.reports", "polars"])
def test_ctrl_c_during_start_up_exits_130_without_a_traceback(module: str) -> None:
    code = _INTERRUPT_WHILE_IMPORTING.format(module=module)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 130, done.stderr
    assert "Traceback" not in done.stderr


def test_the_package_and_the_help_load_no_heavy_library() -> None:
    code = (
        "import sys, commerce_reports, commerce_reports.cli as cli\n"
        "cli.build_parser()\n"
        "heavy = {'polars', 'pyarrow', 'duckdb', 'altair', 'papermill', 'nbconvert', 'httpx'}\n"
        "heavy &= set(sys.modules)\n"
        "print(sorted(heavy))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
