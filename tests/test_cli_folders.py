"""No command shows a raw traceback, whatever folder it is pointed at: a read-only data folder (a
real read-only mount: EROFS), a file instead of a folder, a folder it cannot read (an unprivileged
user), `/proc/self`. Each folder's commands run in one real process (its own mount namespace or
user where needed); a command that cannot do its work says so in one `error:` line and exits
non-zero. Exports of a file that is not a notebook, or into a file, are one line too."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from datetime import UTC, date, datetime, timedelta
from functools import cache
from pathlib import Path

import pytest

from commerce_reports.cli import main
from tests.lakes import sandbox_lake, shared

pytestmark = pytest.mark.xdist_group("cli-folders")  # one process per kind of folder, on one worker

ROOT = Path(__file__).resolve().parents[1]
DAY = (date.today() - timedelta(days=1)).isoformat()
WRITERS = ("sync", "verify", "invalidate", "catalog", "rollups")
COMMANDS = {
    "sync": ["sync", "--no-progress", "--start", DAY],
    "status": ["status"],
    "verify": ["verify"],
    "invalidate": ["invalidate", DAY, DAY],
    "catalog": ["catalog"],
    "rollups": ["rollups", "--rebuild"],
    "sql": ["sql", "SELECT count(*) FROM transactions"],
    "sql-views": ["sql", "--views"],
    "check": ["check"],
}
KINDS = ("read-only", "a file", "unreadable", "/proc/self")

_PROBE = textwrap.dedent(
    """
    import contextlib, io, json, sys, traceback
    from commerce_reports.cli import main

    folder, commands = sys.argv[1], json.loads(sys.argv[2])
    results = {}
    for name, argv in commands.items():
        err, out = io.StringIO(), io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            try:
                code = main([*argv, "--data-dir", folder])
            except BaseException:  # what a user would see: the traceback of an uncaught error
                traceback.print_exc()
                code = -1
        results[name] = {"code": code, "stderr": err.getvalue(), "stdout": out.getvalue()}
    print(json.dumps(results))
    """
)


@cache
def _works(*command: str) -> bool:
    return subprocess.run(command, capture_output=True, timeout=60).returncode == 0


def _confined(kind: str, folder: Path) -> list[str]:
    """The command prefix that makes `folder` what `kind` says, for the probe's process."""
    root = os.geteuid() == 0
    if kind == "read-only":
        if _works("unshare", "-rm", "true"):
            mount = f"mount --bind {folder} {folder} && mount -o remount,bind,ro {folder} {folder}"
            return ["unshare", "-rm", "sh", "-c", f'{mount} && exec "$0" "$@"']
        if root:
            pytest.skip("no user namespaces to mount a read-only folder in, and root writes anywhere")
        for path in [folder, *folder.rglob("*")]:
            path.chmod(path.stat().st_mode & ~0o222)
        return []
    if kind == "unreadable":
        folder.chmod(0)
        if not root:
            return []
        if _works("unshare", "-U", "true"):
            return ["unshare", "-U"]  # no capabilities over this folder: root's bits (none) apply
        pytest.skip("root reads anything, and there are no user namespaces to drop that in")
    return []


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    now = datetime.now(UTC).replace(microsecond=0)
    return shared("cli-folders-lake", tmp_path_factory, lambda f: sandbox_lake(f, now=now, days=2))


_results: dict[str, dict[str, dict[str, object]]] = {}


def _probe(kind: str, lake: Path, tmp_path: Path) -> dict[str, dict[str, object]]:
    """Every command over a folder of `kind`, in one process; their exit codes and stderr."""
    if kind in _results:
        return _results[kind]
    if kind == "a file":
        folder = tmp_path / "data.txt"
        folder.write_text("a file, not a folder")
    elif kind == "/proc/self":
        folder = Path("/proc/self")
    else:
        folder = tmp_path / "data"
        shutil.copytree(lake, folder)
    env = {
        **os.environ,
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "COMMERCE_REPORTS_SECRET_KEY": "probe-key-0123456789",  # a site that is never reached:
        "COMMERCE_REPORTS_BASE_URL": "http://127.0.0.1:9",  # no command here may need the network
        "COMMERCE_REPORTS_SITE": "alpha",
    }
    command = [*_confined(kind, folder), sys.executable, "-c", _PROBE, str(folder), json.dumps(COMMANDS)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    finally:
        if kind == "unreadable":
            folder.chmod(0o700)
    assert done.returncode == 0, done.stderr
    _results[kind] = json.loads(done.stdout.splitlines()[-1])
    return _results[kind]


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("kind", KINDS)
def test_no_command_shows_a_traceback_whatever_the_folder(
    kind: str, command: str, lake: Path, tmp_path: Path
) -> None:
    result = _probe(kind, lake, tmp_path)[command]
    code, err = result["code"], str(result["stderr"])
    assert "Traceback" not in err and code != -1, err
    if code != 0 and not (command == "check" and "PROBLEM" in str(result["stdout"])):  # check's report
        errors = [line for line in err.splitlines() if line.startswith("error:")]
        assert len(errors) == 1 and err.rstrip().endswith(errors[0].rstrip()), err
    must_fail = command in WRITERS and not (
        kind == "/proc/self" and command in ("verify", "invalidate")
    )  # no lake: none to verify, nothing to mark
    must_fail |= kind == "a file" and command != "sql-views"  # the views' list reads no lake
    if must_fail:
        assert code != 0, err


def test_what_the_commands_say_over_a_read_only_folder(lake: Path, tmp_path: Path) -> None:
    results = _probe("read-only", lake, tmp_path)
    assert "the file system is read-only" in str(results["sync"]["stderr"])
    assert all(
        results[name]["code"] == 0 for name in ("status", "sql", "sql-views")
    )  # reading needs no writing


def test_exports_that_cannot_run_say_why_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    listing = tmp_path / "list.json"
    listing.write_text("[1, 2]")
    a_file = tmp_path / "out.txt"
    a_file.write_text("a file, not a folder")
    report = ROOT / "notebooks" / "report.ipynb"
    for argv, said in (
        (["export", "--notebook", str(listing)], f"error: notebook: {listing} is not a notebook"),
        (
            ["export", "--notebook", str(report), "--out", str(a_file)],
            f"error: --out: {a_file}: it exists and is not a folder",
        ),
    ):
        code = main(argv)
        err = capsys.readouterr().err
        assert code != 0 and "Traceback" not in err and err.strip().splitlines()[-1].startswith(said), err
