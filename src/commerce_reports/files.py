"""Every file the toolkit writes goes through `save_atomic`: readers and crashes see old or new, never half.

The content is written to a temporary file in the target's own folder, flushed to disk, renamed
over the target with `os.replace`, and the folder itself is flushed so the rename survives a power
cut. Temporary files are named `.<name>.<host>-<pid>.<hex>.tmp`, so a later run on the same machine
can tell the debris of a killed writer (`remove_stray_files`) from the work of a live one, and a
lake on shared storage never loses a file another machine is writing.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import secrets
import socket
from collections.abc import Callable
from pathlib import Path

__all__ = ["move_atomic", "remove_stray_files", "save_atomic", "sha256_of", "temp_path"]

_TEMP = re.compile(r"^\..+\.(?:([A-Za-z0-9-]+)-)?(\d+)\.[0-9a-f]+\.tmp$")  # no host: round 1's names
_HOST = re.sub(r"[^A-Za-z0-9-]", "-", socket.gethostname().split(".")[0])[:40] or "host"


def temp_path(target: Path) -> Path:
    """A fresh temporary name beside `target`, marked with this machine and process."""
    return target.with_name(f".{target.name}.{_HOST}-{os.getpid()}.{secrets.token_hex(6)}.tmp")


def save_atomic(target: Path, content: bytes | str | Callable[[Path], None], *, durable: bool = True) -> Path:
    """Replace `target` with `content` (bytes, text, or a function that writes the file it is given).

    `durable=False` skips the flushes, for small state whose loss costs nothing but a short wait
    (the pace files); the replace stays atomic either way.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    temp = temp_path(target)
    try:
        if callable(content):
            content(temp)
        else:
            temp.write_bytes(content.encode() if isinstance(content, str) else content)
        if durable:
            _fsync(temp, os.O_RDONLY)
        os.replace(temp, target)
    finally:
        for leftover in (temp, temp.with_name(temp.name + ".wal")):
            with contextlib.suppress(FileNotFoundError):
                leftover.unlink()
    if durable:
        _fsync(target.parent, os.O_RDONLY)
    return target


def move_atomic(source: Path, target: Path) -> Path:
    """Move a finished file (written and flushed elsewhere on the same file system) over `target`."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    _fsync(Path(source), os.O_RDONLY)
    os.replace(source, target)
    _fsync(target.parent, os.O_RDONLY)
    return target


def _fsync(path: Path, flags: int) -> None:
    try:
        fd = os.open(path, flags)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # a file system without fsync on folders (some network mounts): the rename is still atomic
    finally:
        os.close(fd)


def sha256_of(path: Path) -> str:
    """The hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as source:
        for block in iter(lambda: source.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def remove_stray_files(folder: Path) -> list[Path]:
    """Delete the temporary files below `folder` left by writers of this machine that no longer
    run (another machine's are its own to clean: its pids mean nothing here)."""
    root = Path(folder)
    removed: list[Path] = []
    if not root.is_dir():
        return removed
    for temp in root.rglob(".*.tmp"):
        match = _TEMP.match(temp.name)
        if match and match.group(1) in (None, _HOST) and not _alive(int(match.group(2))):
            with contextlib.suppress(FileNotFoundError):
                temp.unlink()
                removed.append(temp)
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
