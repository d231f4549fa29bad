"""A full disk, or a file system out of inodes, under a real `commerce-reports sync`: every
partition not stored is named on a `failed:` line, the exit code says so, and once there is room
again the next sync completes and `verify` finds the lake intact.

The sync runs in a private mount namespace (`unshare`) on a small tmpfs, so the disk it fills is its
own; a machine that cannot make one (no user namespaces, not root) skips these tests, saying why.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from datetime import date, timedelta
from pathlib import Path

import pytest

SCRIPT = """
set -u
mount -t tmpfs -o {options} tmpfs "$LAKE_DIR"
cd "$LAKE_DIR"
run() {{ "$PYTHON" -m commerce_reports "$@"; echo "exit $?"; }}
echo "== first"; run sync --start "$START" --end "$END" --no-progress 2>&1
if [ -n "${{VERIFY_FULL:-}}" ]; then echo "== verify full"; run verify 2>&1; fi
mount -o remount,size=200m,nr_inodes=100000 "$LAKE_DIR"
echo "== second"; run sync --start "$START" --end "$END" --no-progress 2>&1
echo "== verify"; run verify 2>&1
"""


def _namespace() -> list[str]:
    """The command that runs a script in a mount namespace of its own, or skip."""
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("no unshare(1): cannot make a private file system to fill")
    command = [unshare, "-m"] if os.geteuid() == 0 else [unshare, "-rm"]
    probe = subprocess.run([*command, "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        pytest.skip(f"cannot make a mount namespace here: {probe.stderr.decode().strip()}")
    return command


def _run(tmp_path: Path, options: str, *, verify_full: bool) -> dict[str, str]:
    folder = tmp_path / "full"
    folder.mkdir()
    today = date.today()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("COMMERCE_REPORTS_")},
        "LAKE_DIR": str(folder),
        "PYTHON": sys.executable,
        "START": str(today - timedelta(days=8)),
        "END": str(today - timedelta(days=1)),
        "COMMERCE_REPORTS_DATA_DIR": str(folder / "data"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        **({"VERIFY_FULL": "1"} if verify_full else {}),
    }
    done = subprocess.run(
        [*_namespace(), "sh", "-c", SCRIPT.format(options=options)],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    parts = done.stdout.split("== ")[1:]
    return {part.split("\n", 1)[0]: part.split("\n", 1)[1] for part in parts}


@pytest.mark.timeout(900)
@pytest.mark.parametrize("options", ["size=150k", "size=50m,nr_inodes=60"], ids=["disk", "inodes"])
def test_a_full_file_system_names_every_partition_not_stored(tmp_path: Path, options: str) -> None:
    runs = _run(tmp_path, options, verify_full=options.startswith("size=150k"))  # (once is enough)
    first = runs["first"]
    assert "exit 1" in first, first[-3000:]
    assert "Traceback" not in first
    planned = int(first.split(" requests (", 1)[0].rsplit("\n", 1)[-1])
    summary = next(line for line in first.splitlines() if line.startswith("stored "))
    stored = int(summary.split()[1])
    failed = [line for line in first.splitlines() if line.startswith("failed: ")]
    assert stored < planned and len(failed) == planned - stored  # each one named
    assert all(("full" in line or "inodes" in line or "space" in line) for line in failed), failed[:3]
    # verify reads the partitions on a full disk and says so, whatever it could not do after (the
    # rollups' rebuild failed it before it said anything, and its message sent you to verify)
    full = runs.get("verify full", "exit 0\nverified (not run on this file system)")
    assert "\nverified " in f"\n{full}" and "Traceback" not in full, full
    if "exit 0" not in full:  # the verdict, then one error line on what it could not do after
        assert "error: the rollups were not brought up to date: " in full and "exit 1" in full, full
        assert "commerce-reports verify" not in full.split("error:")[1], full
    second, checked = runs["second"], runs["verify"]
    assert "exit 0" in second and "failed:" not in second, second[-3000:]
    assert "exit 0" in checked and "all intact" in checked, checked
