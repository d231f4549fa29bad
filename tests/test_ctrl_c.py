"""Ctrl-C is a stop, wherever it lands. A SIGINT that arrives while DuckDB runs a query is taken by
DuckDB, which ends the query with its own error (a RuntimeError in duckdb 2), not Python's
KeyboardInterrupt: a step says it stopped and raises KeyboardInterrupt, and a command exits 130 with
"interrupted", as for a Ctrl-C anywhere else (CI found a sync that said "unexpected RuntimeError"
when Ctrl-C came while it refreshed the rollups).

Each case runs in a process of its own, as a command does: DuckDB takes a SIGINT only while Python's
default handler is in place, and a test worker's process is not a fair place for signals."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from commerce_reports.errors import is_ctrl_c
from tests.test_startup import _small_lake

# In the child: Ctrl-C pressed (by a thread of its own) once the main thread has stood at one
# instruction for STUCK seconds, i.e. is inside a call to C: the query, a scan of ten trillion
# numbers (a scan looks for an interrupt between its chunks; a cross product did not). DuckDB looks
# for a pending signal only when its own thread (Python's main one) comes back from a task, so
# with more threads it can miss one: the scan, which is not parallel, may be on another thread
# while the main one waits for it. The query and the step run on one thread, where DuckDB always
# sees the signal; the command's query, on the toolkit's own connection, is a scan of a billion
# (a few seconds: one that DuckDB missed ends, and Python takes the signal then; made again).
CHILD = textwrap.dedent(
    """
    import json, os, signal, sys, threading, time
    import duckdb
    from commerce_reports.activity import Step
    from commerce_reports.cli import main
    from commerce_reports.errors import is_ctrl_c

    ENDLESS = "SELECT count(*) FROM range(10000000000000) t(i) WHERE i % 7 = 3"
    LONG = "SELECT count(*) FROM range(1000000000) t(i) WHERE i % 7 = 3"
    STUCK = 0.3

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
    else:
        import commerce_reports.cli as cli
        answered, caught = cli._failed, []
        def seen(error):
            caught.append(type(error).__name__)
            return answered(error)
        cli._failed = seen  # (a spy: what main answered; it still answers)
        def command():
            caught.clear()
            code = main(["sql", LONG, "--data-dir", case])
            raise SystemExit(code)
        error = attempts(command, lambda e: caught == ["RuntimeError"])
        print(json.dumps({"code": error.code, "caught": caught}))
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
    for other in (RuntimeError("Query interrupted by the disk"), OSError("Query interrupted")):
        assert not is_ctrl_c(other)


def test_a_step_that_duckdb_stopped_says_stopped_and_raises_keyboard_interrupt() -> None:
    done = _child("step")
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout)
    assert said["type"] == "KeyboardInterrupt", said
    assert said["cause"] == "RuntimeError('Query interrupted')"
    assert said["lines"][0] == "counting ..."
    assert said["lines"][-1].startswith("counting: stopped in "), said


def test_a_command_that_duckdb_stopped_exits_130_saying_interrupted(tmp_path: Path) -> None:
    lake = tmp_path / "data"
    _small_lake(lake)
    done = _child(str(lake))
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout)
    assert said == {"code": 130, "caught": ["RuntimeError"]}  # DuckDB's error, answered as Ctrl-C
    assert done.stderr.strip().splitlines()[-1] == "interrupted"
    assert "unexpected" not in done.stderr
