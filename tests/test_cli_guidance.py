"""A command line that guides, checked for every command the parser declares (commands added later
are covered as they land): an example and the exit codes in every `--help`, the date format
wherever a date is taken, one line and exit 2 for every usage error with a "did you mean" when
something close exists, and every row of the exit-code table produced through the real CLI."""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import threading
from datetime import date, timedelta
from pathlib import Path
from typing import IO

import pytest

from commerce_reports.cli import HOMES, MODULES, build_parser, main
from commerce_reports.cli.options import DATE_FORMAT, day
from commerce_reports.cli.parser import COMMON_EXITS, CommandParser, every_command
from commerce_reports.lake.manifest import Manifest
from tests.test_startup import _small_lake

COMMANDS = dict(every_command(build_parser()))
DATE_NAMES = ("start", "end", "as_of", "today", "first_day", "day", "date")


def _one_line_usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    err = capsys.readouterr().err
    assert exited.value.code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    return err


@pytest.mark.parametrize("words", list(COMMANDS))
def test_every_help_has_examples_and_exit_codes(words: str) -> None:
    command = COMMANDS[words]
    assert command.description, f"`commerce-reports {words} --help` has no description"
    text = command.format_help()
    examples = text.split("examples:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert examples and all(f"commerce-reports {words}" in line for line in examples), text
    for code, meaning in command.exits.items():
        assert f"  {code:<4}{meaning.split()[0]}" in text, (words, code)


@pytest.mark.parametrize("words", list(COMMANDS))
def test_every_date_says_its_format_and_is_checked(words: str, capsys: pytest.CaptureFixture[str]) -> None:
    for action in COMMANDS[words]._actions:
        if action.dest in DATE_NAMES:
            assert action.type is day, f"{words} {action.dest}: a date not read by options.day"
        if action.type is day:
            assert DATE_FORMAT in f"{action.metavar} {action.help}", (words, action.dest)
            if action.option_strings:
                err = _one_line_usage_error([*words.split(), action.option_strings[0], "11/01/2026"], capsys)
                assert "expected a date YYYY-MM-DD" in err


def _required(command: CommandParser) -> list[str]:
    """Values for the command's required arguments, so that only the mistake under test is wrong."""
    values: list[str] = []
    for action in command._actions:
        if action.required and not isinstance(action, argparse._SubParsersAction):
            value = "2026-11-01" if action.type is day else "x"
            values += [action.option_strings[0], value] if action.option_strings else [value]
    return values


@pytest.mark.parametrize("words", list(COMMANDS))
def test_a_mistyped_option_is_one_line_with_the_right_one(
    words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    command = COMMANDS[words]
    options = [o for a in command._actions for o in a.option_strings if o.startswith("--") and o != "--help"]
    if not options:
        pytest.skip(f"{words} takes no option")
    wanted = max(options, key=len)
    typo = wanted[:3] + wanted[4:]  # a letter dropped: --dta-dir
    err = _one_line_usage_error([*words.split(), *_required(command), typo], capsys)
    assert f"did you mean {wanted!r}?" in err and f"`commerce-reports {words} --help`" in err


def _commands(parser: argparse.ArgumentParser) -> list[str]:
    return [words for words, _ in every_command(parser) if " " not in words]


def test_a_command_line_loads_the_module_of_its_command_alone() -> None:
    """`HOMES` names the module declaring each command: the parser of a command line that names
    one declares that module's commands only, and every command is in `HOMES`, in --help's order."""
    assert _commands(build_parser()) == [c for m in MODULES for c in HOMES if HOMES[c] == m]
    for command, module in HOMES.items():
        assert _commands(build_parser(command)) == [c for c in HOMES if HOMES[c] == module], command


def test_a_mistyped_command_or_choice_names_the_right_one(capsys: pytest.CaptureFixture[str]) -> None:
    assert "unknown command 'snyc'; did you mean 'sync'?" in _one_line_usage_error(["snyc"], capsys)
    err = _one_line_usage_error(["sql", "SELECT 1", "--format", "xslx"], capsys)
    assert "did you mean 'xlsx'?" in err
    err = _one_line_usage_error(["sync", "--country", "USA"], capsys)
    assert "'USA' is not a country code" in err


def test_a_mistyped_site_names_the_right_one(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sync", "--plan", "--site", "alpah"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown site 'alpah' (sync ran nothing); did you mean 'alpha'?" in err


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (
            ["sync", "--start", "2026-11-10", "--end", "2026-11-01"],
            "--end: 2026-11-01 is before --start 2026-11-10",
        ),
        (
            ["invalidate", "2026-11-10", "2026-11-01"],
            "END: 2026-11-01 is before START 2026-11-10",
        ),  # positional
        (["status", "--data-dir", "/no/such/folder"], "there is no data folder at /no/such/folder"),
        (["sql", "SELECT 1", "--output", "/no/such/dir/x.parquet"], "the folder /no/such/dir does not exist"),
        (
            ["sql", "SELECT 1", "--output", "x.unknown"],
            "has no suffix of an output format; end it with .csv, .json, .jsonl, .ndjson, .parquet, "
            ".xlsx, or give --format csv",
        ),
        (["sql", "SELECT 1", "--format", "parquet"], "parquet is not text: it needs --output FILE"),
        (["sql", "COPY transactions TO 'x.csv'"], "error: "),
        (["demo", "--days", "0"], "expected a whole number from 1 to 3660"),
        (["export", "--notebook", "nope.ipynb"], "nope.ipynb does not exist"),
    ],
)
def test_usage_errors_exit_2_in_one_line(
    argv: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        code = main(argv)
    except SystemExit as exited:  # argparse's own checks
        code = int(str(exited.code))
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and said in err, err
    assert not Path("/no/such/dir").exists()


def test_a_setting_that_cannot_be_used_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COMMERCE_REPORTS_PACE", "fast")
    assert main(["sync", "--plan"]) == 2
    assert capsys.readouterr().err == "error: COMMERCE_REPORTS_PACE: 'fast' is not a number of seconds\n"


# The exit-code table, row by row, through the real CLI: the common rows once each, and each
# command's own rows (the deal commands' own codes are walked by tests/deals/test_cli_and_api.py).
def _table() -> set[tuple[str, int]]:
    rows = {(words, code) for words, command in COMMANDS.items() for code in command.exits}
    return {
        (words, code)
        for words, code in rows
        if code not in COMMON_EXITS or COMMANDS[words].exits[code] != COMMON_EXITS[code]
    }


WALKED = {
    ("sync", 1),  # a partition not stored: tests/lake/test_failures.py (a file where a day folder belongs)
    ("sync", 3),
    ("status", 1),
    ("verify", 1),
    ("check", 1),
    ("alerts", 3),
    ("export", 1),  # a failed cell: tests/export/test_export.py (a kernel: slow)
    ("config list", 1),  # a setting that does not pass its check: tests/test_config_command.py
    ("config get", 1),  # a setting not set: tests/test_config_command.py
    ("schedule add", 1),  # no crontab, no systemd user manager: tests/test_schedule.py
    ("schedule run", 1),  # the command's own failure: tests/test_schedule.py
}


def test_every_declared_exit_code_is_walked() -> None:
    declared = {(w, c) for w, c in _table() if not w.startswith("deals")}
    assert declared == WALKED


def test_the_exit_codes_through_the_real_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    lake = tmp_path / "data"
    _small_lake(lake)
    data = ["--data-dir", str(lake)]
    assert main(["sql", "--views"]) == 0
    assert main(["sql", "SELECT error('boom')", *data]) == 1  # a failure while running
    assert "boom" in capsys.readouterr().err
    assert main(["alerts", *data]) == 3  # synced in March 2026: stale, an alert of the lake's health
    assert "the lake was last synced" in capsys.readouterr().out
    part = next((lake / "lake" / "site=alpha" / "transactions").rglob("*.parquet"))
    part.write_bytes(part.read_bytes()[:-20])
    assert main(["status", "--verify", *data]) == 1  # damaged, quarantined: the next sync refetches it
    assert main(["verify", *data]) == 0  # repaired already
    monkeypatch.setenv("COMMERCE_REPORTS_SECRET_KEY", "probe-key-0123456789")
    monkeypatch.setenv("COMMERCE_REPORTS_BASE_URL", "http://127.0.0.1:9")  # nothing listens: refused
    # no pace: at the default (60 s) the sync below first waits out a minute since `check` asked
    monkeypatch.setenv("COMMERCE_REPORTS_PACE", "0")
    assert main(["check", *data]) == 1
    capsys.readouterr()
    assert main(["sync", "--no-progress", "--start", "2026-11-01", "--end", "2026-11-02", *data]) == 3
    assert "127.0.0.1:9" in capsys.readouterr().err


def test_a_reader_that_stops_reading_stops_the_command_quietly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`commerce-reports status | head -1`: exit 141, as a shell reports a command SIGPIPE stopped,
    and no `error: Broken pipe`."""
    lake = tmp_path / "data"
    _small_lake(lake)
    # and `sql ... | head`, as `sql --help` says (it said 0 in every format but the table)
    for command in (["status"], ["sql", "SELECT * FROM transactions", "--format", "csv"]):
        read, write = os.pipe()
        os.close(read)  # the reader is gone before the first line
        with os.fdopen(write, "w", buffering=1) as closed:  # a line written as printed, as to a pipe
            monkeypatch.setattr(sys, "stdout", closed)
            assert main([*command, "--data-dir", str(lake)]) == 141, command
    assert capsys.readouterr().err == ""


def test_a_command_whose_output_is_closed_says_so_and_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`commerce-reports status >&-` (Python leaves `sys.stdout` None): `sql` said "unexpected
    AttributeError", the others exited 0 with all they had to say lost; now one line, exit 1."""
    lake = tmp_path / "data"
    _small_lake(lake)
    data = ["--data-dir", str(lake)]
    for command in (
        ["sql", "SELECT 1", *data],
        ["sql", "--views"],
        ["status", *data],
        ["config", "list"],
        ["alerts", *data],
        ["sync", "--plan", *data],
    ):
        monkeypatch.setattr(sys, "stdout", None)
        assert main(command) == 1, command
        err = capsys.readouterr().err
        assert err.endswith("\nerror: standard output is closed: nothing can be printed\n") or err == (
            "error: standard output is closed: nothing can be printed\n"
        ), (command, err)
        assert err.count("error:") == 1, (command, err)


class _Head:
    """Standard output into a pipe whose reader reads what the first `prints` prints wrote, then
    goes away (`| head`): everything written later meets a closed pipe, whichever thread writes it."""

    def __init__(self, prints: int) -> None:
        self.reader, writer = os.pipe()
        self.out = os.fdopen(writer, "w", buffering=1)  # a line written as printed, as to a pipe
        self.prints = prints

    def write(self, text: str) -> int:
        written = self.out.write(text)
        self.prints -= text.count("\n")  # (a line's end, written with it or on its own as print does)
        if self.prints <= 0 and self.reader >= 0:
            os.close(self.reader)
            self.reader = -1
        return written

    def flush(self) -> None:
        self.out.flush()

    def fileno(self) -> int:
        return self.out.fileno()


def test_a_sync_whose_reader_stops_reading_stores_all_and_exits_141(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`sync --no-progress | head`, the reader gone after the lake's line and the plan: the progress
    lines (said from the lanes' threads) meet the closed pipe; the sync still stores all it fetched,
    blames no lake, and exits 141 with no traceback from any thread."""
    lake = tmp_path / "data"
    thread_errors: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda hooked: thread_errors.append(hooked.exc_value))
    monkeypatch.delitem(sys.modules, "ipykernel", raising=False)  # a command's process: no kernel in it
    stdout = _Head(prints=2)
    yesterday = str(date.today() - timedelta(days=1))
    try:
        with monkeypatch.context() as piped:
            piped.setattr(sys, "stdout", stdout)
            code = main(
                ["sync", "--no-progress", "--site", "alpha", "--start", yesterday, "--data-dir", str(lake)]
            )
    finally:
        with contextlib.suppress(BrokenPipeError):  # (what the line buffer still holds)
            stdout.out.close()
    for lane in [t for t in threading.enumerate() if t.name.startswith("lane-")]:
        lane.join()  # its exception, if any, reaches the hook as the thread ends
    err = capsys.readouterr().err
    assert code == 141 and "error" not in err and "Traceback" not in err, err
    assert thread_errors == []
    assert Manifest.load(lake, "alpha").entries, "what the sync fetched is stored"
    assert list((lake / "rollups").rglob("*.parquet")), "and the sync finished: its rollups are built"


def _interrupted(command: list[str], ready: str) -> tuple[int, str]:
    """`commerce-reports COMMAND` in its own process, sent Ctrl-C once it printed a line starting
    with `ready` (the test waits for that event, not for a time): its exit code and standard error.
    What it still writes to standard output is read and dropped, so that a full pipe never blocks it
    (nor piles up here)."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    # Started as a terminal starts it, with Ctrl-C's default: a process inherits an ignored SIGINT,
    # and a test worker of the whole suite was found left ignoring it (the process then streamed on).
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "commerce_reports", *command],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
    finally:
        signal.signal(signal.SIGINT, previous)
    assert proc.stdout is not None and proc.stderr is not None
    for line in proc.stdout:
        if line.startswith(ready):
            break
    threading.Thread(target=_drop, args=(proc.stdout,), daemon=True).start()
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise AssertionError(
            f"still running 60 s after Ctrl-C; its standard error ends:\n{proc.stderr.read()[-2000:]}"
        ) from None
    return proc.returncode, proc.stderr.read()


def _drop(stream: IO[str]) -> None:
    """Read `stream` to its end, keeping nothing."""
    while stream.read(1 << 16):
        pass


def test_ctrl_c_exits_130(tmp_path: Path) -> None:
    lake = tmp_path / "data"
    _small_lake(lake)
    endless = "SELECT a.range FROM range(100000) a, range(100000) b"  # 10^10 rows, streamed
    code, err = _interrupted(["sql", endless, "--format", "csv", "--data-dir", str(lake)], "range")
    assert code == 130
    assert err.strip().splitlines()[-1] == "interrupted"


def test_the_table_in_the_docs_is_the_parsers() -> None:
    """docs/cli.md's table of exit codes is generated from the same declarations at each build."""
    hook = Path(__file__).parents[1] / "docs" / "hooks" / "cli_reference.py"
    spec = importlib.util.spec_from_file_location("cli_reference", hook)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    table = module.exit_codes_table()
    for words, code in _table():
        row = next(
            line
            for line in table.splitlines()
            if line.startswith(f"| {code} | {COMMANDS[words].exits[code]}")
        )
        assert f"`{words.split()[0] if words.startswith('deals') else words}`" in row, (words, code)
    for code, meaning in COMMON_EXITS.items():
        assert f"| {code} | {meaning} | every command |" in table


def test_serve_checks_its_address_before_it_loads(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A second `serve` on a taken port loaded Panel for 2 s, then said `error: Address already in
    use`, exit 1, naming neither; a host not of this machine, `Cannot assign requested address`."""
    lake = tmp_path / "data"
    _small_lake(lake)
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        port = other.getsockname()[1]
        assert main(["serve", "--port", str(port), "--data-dir", str(lake)]) == 2
    assert f"--port: 127.0.0.1:{port} is taken: another server listens there" in capsys.readouterr().err
    assert main(["serve", "--host", "nosuchhost.invalid", "--data-dir", str(lake)]) == 2
    assert "--host: nosuchhost.invalid does not resolve" in capsys.readouterr().err


def test_an_output_folder_that_cannot_be_written_is_refused_before_any_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """On a read-only file system, `export` ran its notebook's kernel for seconds before failing on
    a temporary file's name. The folder is asked first (the system's `access`, which a read-only
    mount answers EROFS even for root: the test stands in for one)."""
    import os

    from commerce_reports.cli import options

    folder = tmp_path / "read-only"
    folder.mkdir()
    real = os.access
    monkeypatch.setattr(options.os, "access", lambda path, mode: Path(path) != folder and real(path, mode))
    assert main(["demo", "--data-dir", str(folder / "data")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"--data-dir: the folder {folder} cannot be written" in err
    assert list(folder.iterdir()) == []
