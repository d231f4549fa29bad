"""Nothing slow without a word: a public function's slow part says what it is doing while it runs
(`activity.said`), in a terminal, a notebook or a log alike, and keeps quiet inside a caller that
says what it does itself (the report's export, the served page)."""

from __future__ import annotations

import contextlib
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

import commerce_reports as cr
from commerce_reports import activity
from commerce_reports.activity import said
from commerce_reports.charts import Selection
from commerce_reports.errors import ValidationError
from commerce_reports.report import alerts_section
from tests.test_startup import _small_lake

ENDED = re.compile(r"(?P<what>.+): done in \d+\.\d s")


def _ended(err: str) -> list[str]:
    """The steps that said they ended (a log's lines, or what follows a terminal's counter)."""
    return [found["what"] for line in err.splitlines() if (found := ENDED.search(line))]


def test_a_step_says_what_it_did_and_how_long_unless_told_not_to(capsys: pytest.CaptureFixture[str]) -> None:
    with said("reading the lake"):
        pass
    assert _ended(capsys.readouterr().err) == ["reading the lake"]
    with said("reading the lake", False):
        pass
    assert capsys.readouterr().err == ""


def test_alerts_say_that_they_judge_and_the_report_keeps_quiet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lake = tmp_path / "data"
    _small_lake(lake)
    cr.alerts(data_dir=lake)  # what a notebook's cell shows while it waits, as the command line does
    assert _ended(capsys.readouterr().err) == ["judging every series of the lake and its health"]
    cr.alerts(data_dir=lake, progress=False)
    assert capsys.readouterr().err == ""
    with cr.connect(lake) as con:  # a section of the report: its export says what it runs
        alerts_section(con, Selection(start="2026-03-01", end="2026-03-03"))
    assert capsys.readouterr().err == ""
    with pytest.raises(ValidationError, match="progress"):
        cr.alerts(data_dir=lake, progress="yes")  # type: ignore[arg-type]


def test_a_written_file_says_its_rows_and_a_terminal_of_no_size_still_shows_the_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # `sql --output big.xlsx` was silent for 10 s: no line in a log, and in a terminal nothing
    # while the workbook was packed; in a pty no one sized, tqdm drew nothing at all.
    monkeypatch.setattr(
        activity, "interactive", lambda: False
    )  # a log (a worker may hold a kernel's modules)
    cr.export(pl.DataFrame({"a": [1]}), tmp_path / "one.csv")
    said = capsys.readouterr().err.splitlines()
    assert said[0] == "writing one.csv ..." and re.fullmatch(
        r"writing one.csv: done in \d+\.\d s \(1 row\)", said[1]
    )
    cr.export(pl.DataFrame({"a": [1, 2]}), tmp_path / "two.csv", progress=False)
    assert capsys.readouterr().err == ""
    child = (
        "from commerce_reports.activity import Step\n"
        "with Step('writing x', unit='rows') as step:\n"
        "    step.advance(5)\n"
    )
    main, replica = pty.openpty()  # (a size of 0 x 0, as `script` and some CI runners give)
    done = subprocess.run(
        [sys.executable, "-c", child], stdin=replica, stdout=replica, stderr=replica, timeout=60
    )
    os.close(replica)
    shown = b""
    with contextlib.suppress(OSError):  # (EIO once the child's end is closed and all is read)
        while chunk := os.read(main, 4096):
            shown += chunk
    os.close(main)
    assert done.returncode == 0
    assert b"writing x: 0 rows ... 00:00" in shown and re.search(
        rb"writing x: done in \d+\.\d s \(5 rows\)", shown
    )


def test_a_sync_in_a_plain_script_says_its_plan_and_progress() -> None:
    # `python gs.py > out 2> err` synced for 12 s with nothing in err: the plan and progress went
    # to a log that no one had set up (the command line prints them).
    child = (
        "import logging, sys\n"
        "from commerce_reports.api import _heard\n"
        "from commerce_reports.activity import to_reader\n"
        "from commerce_reports import SyncOptions\n"
        "print(_heard(SyncOptions()).say is to_reader, _heard(SyncOptions(say=print)).say is print)\n"
        "logging.basicConfig()\n"
        "print(_heard(SyncOptions()).say is None)\n"  # a log set up: it gets them, as before
    )
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["True", "True", "True"], done.stderr


def test_a_sync_told_no_bars_in_a_notebook_says_its_plan_and_progress() -> None:
    # The shipped notebooks' `cr.sync(..., options=SyncOptions(progress=False))` sat silent for
    # 110 s at the service's pace: no bars, and its lines went to a log a kernel does not show.
    child = (
        "import commerce_reports.activity as activity\n"
        "from commerce_reports.api import _heard\n"
        "from commerce_reports import SyncOptions\n"
        "activity.interactive = lambda: True\n"  # (a notebook's kernel, or a terminal)
        "print(_heard(SyncOptions(progress=False)).say is activity.to_reader)\n"
        "print(_heard(SyncOptions()).say is None)\n"  # its bars say it
    )
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["True", "True"], done.stderr


def test_a_kernel_reads_the_plan_as_cell_output_not_as_an_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Jupyter shows a kernel's standard error as an error (a red box under the sync's cell).
    from commerce_reports.activity import to_reader

    monkeypatch.delitem(sys.modules, "ipykernel", raising=False)  # (another test may have loaded it)
    to_reader("outside a kernel")
    monkeypatch.setitem(sys.modules, "ipykernel", sys.modules[__name__])
    to_reader("in a kernel")
    said = capsys.readouterr()
    assert (said.err, said.out) == ("outside a kernel\n", "in a kernel\n")


def test_a_line_is_said_in_one_write_so_a_ctrl_c_never_leaves_it_unended(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # `print` wrote a step's line and its end apart; a Ctrl-C between the two (under load, at the
    # rollups' rebuild) glued the command's `interrupted` to the step's unended line.
    from commerce_reports.activity import to_stderr

    class Writes:
        def __init__(self) -> None:
            self.chunks: list[str] = []

        def write(self, text: str) -> int:
            self.chunks.append(text)
            return len(text)

        def flush(self) -> None:
            pass

    stream = Writes()
    monkeypatch.setattr(sys, "stderr", stream)
    to_stderr("building the rollups of site alpha whole ...")
    assert stream.chunks == ["building the rollups of site alpha whole ...\n"]
