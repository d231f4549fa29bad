"""A stand-in for the `crontab` command, for the schedule tests: this machine has no cron, and a
test must never touch the user's real crontab. It keeps the table in the file `$FAKE_CRONTAB` and
answers as cron's `crontab -l` and `crontab -` do."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

SCRIPT = """\
import os, sys
path = os.environ["FAKE_CRONTAB"]
if sys.argv[1:] == ["-l"]:
    if not os.path.exists(path):
        sys.stderr.write("no crontab for " + os.environ.get("USER", "user") + "\\n")
        sys.exit(1)
    sys.stdout.write(open(path).read())
elif sys.argv[1:] == ["-"]:
    open(path, "w").write(sys.stdin.read())
else:
    sys.exit(2)
"""


def fake_crontab(folder: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Put a `crontab` command first on PATH that keeps the table in `folder/crontab`; its path."""
    bin_dir = folder / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    program = bin_dir / "crontab"
    program.write_text(f"#!{sys.executable}\n{SCRIPT}")
    program.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_CRONTAB", str(folder / "crontab"))
    return folder / "crontab"
