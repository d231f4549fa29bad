"""Ctrl-C is a stop, wherever it lands. A SIGINT that arrives while DuckDB runs a query is taken by
DuckDB, which ends the query with its own error (a RuntimeError in duckdb 2), not Python's
KeyboardInterrupt: a step says it stopped and raises KeyboardInterrupt, and a command exits 130 with
"interrupted", as for a Ctrl-C anywhere else (CI found a sync that said "unexpected RuntimeError"
when Ctrl-C came while it refreshed the rollups).

A command also stops DuckDB's query at once: DuckDB alone missed about one Ctrl-C in three, on a
query its other threads ran (`interrupts.py`; a rebuild of 10 M transactions took up to 4 s to stop).

Each case runs in a process of its own, as a command does: DuckDB takes a SIGINT only while Python's
default handler is in place, and a test worker's process is not a fair place for signals."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import pytest

from commerce_reports.cli import _failed
from commerce_reports.errors import is_ctrl_c
from tests.test_startup import _small_lake

# In the child: Ctrl-C pressed (by a thread of its own) once the main thread has stood at one
# instruction for STUCK seconds, i.e. is inside a call to C: the query, a scan of ten trillion
# numbers (a scan looks for an interrupt between its chunks; a cross product did not). DuckDB looks
# for a pending signal only when its own thread (Python's main one) comes back from a task, so
# with more threads it can miss one: the scan, which is not parallel, may be on another thread
# while the main one waits for it, to the end of the statement. The query and the step run on one
# thread, where DuckDB always sees the signal. The command's query runs on the toolkit's own
# connection, with DuckDB's threads: there the command's watcher interrupts it (`interrupts.py`).
CHILD = textwrap.dedent(
    """
    import json, os, signal, sys, threading, time
    import duckdb
    from commerce_reports.activity import Step
    from commerce_reports.cli import main
    from commerce_reports.errors import is_ctrl_c

    ENDLESS = "SELECT count(*) FROM range(10000000000000) t(i) WHERE i % 7 = 3"
    STUCK = 0.3

    pressed = []  # when Ctrl-C was pressed

    def press_once_stuck():
        main_thread, since, spot = threading.get_ident(), 0.0, None
        def watch():
            nonlocal since, spot
            while True:
                time.sleep(0.01)
                frame = sys._current_frames().get(main_thread)
                now = (frame.f_code, frame.f_lasti) if frame is not None else None
                if now != spot:
                    since, spot = time.monotonic(), now
                elif time.monotonic() - since >= STUCK:
                    pressed.append(time.monotonic())
                    os.kill(os.getpid(), signal.SIGINT)
                    return
        threading.Thread(target=watch, daemon=True).start()

    def attempts(run, by_duckdb):
        for _ in range(5):  # one that Python took, before the call, is pressed again
            press_once_stuck()
            try:
                run()
            except BaseException as error:
                if by_duckdb(error):
                    return error
        raise SystemExit("Ctrl-C never landed inside DuckDB")

    case = sys.argv[1]
    con = duckdb.connect(config={"threads": 1})
    if case == "query":
        query = lambda: con.execute(ENDLESS).fetchall()
        error = attempts(query, lambda e: not isinstance(e, KeyboardInterrupt))
        print(json.dumps({"type": type(error).__name__, "text": str(error), "is_ctrl_c": is_ctrl_c(error)}))
    elif case == "step":
        lines = []
        def step():
            with Step("counting", shown=False, say=lines.append):
                con.execute(ENDLESS).fetchall()
        error = attempts(step, lambda e: e.__cause__ is not None)
        print(json.dumps({"type": type(error).__name__, "cause": repr(error.__cause__), "lines": lines}))
    else:  # a lake: the command's query, pressed eight times
        import faulthandler
        stops = []
        for _ in range(8):
            faulthandler.dump_traceback_later(30, exit=True)  # a Ctrl-C missed: the scan never ends
            pressed.clear()
            press_once_stuck()
            code = main(["sql", ENDLESS, "--data-dir", case])
            stops.append([code, time.monotonic() - pressed[0]])
        faulthandler.cancel_dump_traceback_later()
        print(json.dumps(stops))
    """
)


def _child(case: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", CHILD, case],
        capture_output=True,
        text=True,
        timeout=120,
        # started as a terminal starts it: a process inherits an ignored SIGINT
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def test_duckdb_s_word_for_ctrl_c_is_ctrl_c() -> None:
    done = _child("query")
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout)
    assert said["type"] != "KeyboardInterrupt"  # DuckDB's own: the reason for is_ctrl_c
    assert said["is_ctrl_c"], said
    assert is_ctrl_c(KeyboardInterrupt())
    assert is_ctrl_c(duckdb.InterruptException("INTERRUPT Error: Interrupted!"))  # (the watcher's)

    class InterruptException(Exception):  # another library's, of the same name
        pass

    others = [RuntimeError("Query interrupted by the disk"), OSError("Query interrupted")]
    for other in [*others, duckdb.IOException("Query interrupted"), InterruptException()]:
        assert not is_ctrl_c(other)


def test_a_step_that_duckdb_stopped_says_stopped_and_raises_keyboard_interrupt() -> None:
    done = _child("step")
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout)
    assert said["type"] == "KeyboardInterrupt", said
    assert said["cause"] == "RuntimeError('Query interrupted')"
    assert said["lines"][0] == "counting ..."
    assert said["lines"][-1].startswith("counting: stopped in "), said


@pytest.mark.parametrize(
    "error",
    [RuntimeError("Query interrupted"), duckdb.InterruptException("INTERRUPT Error: Interrupted!")],
    ids=["duckdb's own word", "the watcher's interrupt"],
)
def test_a_command_that_duckdb_stopped_exits_130_saying_interrupted(
    error: Exception, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _failed(error) == 130
    assert capsys.readouterr().err == "interrupted\n"


def test_every_ctrl_c_stops_a_command_s_query_within_two_seconds(tmp_path: Path) -> None:
    """On the toolkit's own connection, with DuckDB's threads: DuckDB alone missed about one Ctrl-C
    in three (the scan on a worker thread while the main one waits for it, to the end of the
    statement, here never); the command's watcher interrupts the query (`interrupts.py`)."""
    lake = tmp_path / "data"
    _small_lake(lake)
    done = _child(str(lake))
    assert done.returncode == 0, done.stderr[-2000:]
    stops = json.loads(done.stdout)
    assert [code for code, _ in stops] == [130] * 8, stops
    assert max(seconds for _, seconds in stops) < 2, stops
    assert "unexpected" not in done.stderr
