"""Every file the toolkit writes goes through `save_atomic`: readers and crashes see old or new, never half.

The content is written to a temporary file in the target's own folder, flushed to disk, renamed
over the target with `os.replace`, and the folder itself is flushed so the rename survives a power
cut. Temporary files are named `.<name>.<host>-<pid>.<hex>.tmp`, so a later run on the same machine
can tell the debris of a killed writer (`remove_stray_files`) from the work of a live one, and a
lake on shared storage never loses a file another machine is writing.

What the toolkit writes holds a business's revenue: files are created readable by their owner
only (0600, folders 0700: `make_folder`), or by the owner's group too (0640/0750) when the user
shares the data with their group (`modes`). The file locks every writer and the pace hold are
taken by `held`, which says so when another process keeps one for more than a few seconds.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import posixpath
import re
import shutil
import stat
from collections.abc import Callable, Collection, Iterable, Iterator
from contextlib import contextmanager
from functools import cache, lru_cache
from pathlib import Path
from typing import NamedTuple

from ._lazy import LazyLogger

__all__ = [
    "GROUP",
    "LOCK_PATIENCE",
    "PRIVATE",
    "Modes",
    "apply_mode",
    "describe_os_error",
    "held",
    "make_folder",
    "make_folders",
    "modes",
    "move_atomic",
    "move_into_place",
    "remove_folder",
    "remove_stray_files",
    "save_atomic",
    "sha256_of",
    "temp_path",
    "user_cache_dir",
    "writing_in",
]

log = LazyLogger(__name__)
LOCK_PATIENCE = 2.0  # seconds: a lock another process holds longer than this is said before waiting on
_MARK = "writing"  # a writer's mark in the folder it writes (`writing_in`): `.writing.<host>-<pid>.<hex>.tmp`
_FLUSHERS = 8  # threads flushing the files of one writer at once


class Modes(NamedTuple):
    """The permission bits of the folders and files the toolkit creates."""

    folder: int
    file: int


PRIVATE = Modes(folder=0o700, file=0o600)
GROUP = Modes(folder=0o750, file=0o640)


def modes() -> Modes:
    """PRIVATE, or GROUP when the user shares with their group: `COMMERCE_REPORTS_SHARE_GROUP=1`
    (the environment or `.env`) or `share_group = true` in the project's `commerce-reports.toml`."""
    from .config import ENV_SHARE_GROUP

    return _modes(os.getcwd(), os.environ.get(ENV_SHARE_GROUP))


@lru_cache(maxsize=8)
def _modes(cwd: str, variable: str | None) -> Modes:
    """`.env` and the project marker are read once per working folder and value of the variable."""
    from .config import share_group  # the settings layer reads `.env` and the marker

    return GROUP if share_group() else PRIVATE


def user_cache_dir() -> Path:
    """The user's own folder for what every process of theirs shares and can rebuild (the pace
    state, the learned request costs, the offline Vega bundle): `$XDG_CACHE_HOME/commerce-reports`,
    else `~/.cache/commerce-reports`."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "commerce-reports"


def make_folder(folder: Path) -> Path:
    """`folder` and its missing parents, created with the folder mode of `modes` (an existing
    folder is left as it is). Raises OSError, e.g. when a part of the path is a file."""
    folder = Path(folder)
    missing: list[str] = []
    part = os.fspath(folder)
    while part and not os.path.isdir(part):  # (strings: a publisher makes a folder per partition)
        missing.insert(0, part)
        parent = os.path.dirname(part)
        if parent == part:
            break
        part = parent
    _make(missing, made_meanwhile_ok=True)
    return folder


def make_folders(root: Path, below: Iterable[str]) -> None:
    """A new folder `root` and the folders `below` it (relative paths; their parents are made too),
    each made once, with the folder mode of `modes`: a publisher's new generation holds a lake's
    worth of folders, which need no "is it there already" walk (`make_folder`). Raises
    FileExistsError when `root` exists."""
    make_folder(Path(root).parent)
    wanted: set[str] = set()
    for relpath in below:
        while relpath and relpath not in wanted:  # (an ancestor already wanted has its own)
            wanted.add(relpath)
            relpath = posixpath.dirname(relpath)
    top = os.fspath(root)
    _make([top, *(os.path.join(top, relpath) for relpath in sorted(wanted))], made_meanwhile_ok=False)


def _make(folders: list[str], *, made_meanwhile_ok: bool) -> None:
    """Make `folders` (parents first) with the folder mode of `modes`, exactly: where the umask
    narrowed it (checked on the first one made), each is given it (`chmod`). A folder another
    writer made meanwhile is left as it is when `made_meanwhile_ok`; else it raises FileExistsError."""
    mode = modes().folder
    made: list[str] = []
    for folder in folders:
        try:
            os.mkdir(folder, mode)
        except FileExistsError:
            if not made_meanwhile_ok or not os.path.isdir(folder):
                raise  # (or a file where a folder belongs)
            continue
        made.append(folder)
    if made and stat.S_IMODE(os.stat(made[0]).st_mode) != mode:
        for folder in made:
            os.chmod(folder, mode)  # the umask may not narrow a mode the user asked to share


@contextmanager
def held(lock: Path, waiting: str) -> Iterator[None]:
    """Hold the file lock `lock` across processes (re-entrant in one thread). When another process
    holds it for more than LOCK_PATIENCE seconds, `waiting` (what is waited for, and why) is logged
    as a warning before waiting on."""
    from filelock import FileLock, Timeout  # with the first lock: reading takes none

    make_folder(lock.parent)
    handle = FileLock(str(lock), mode=modes().file, is_singleton=True)
    try:
        handle.acquire(timeout=LOCK_PATIENCE)
    except Timeout:
        log.warning("%s (%s is held)", waiting, lock)
        handle.acquire()
    try:
        yield
    finally:
        handle.release()


def apply_mode(path: Path) -> Path:
    """Give a file another library wrote (papermill's notebook, an exported image) the file mode of
    `modes`, as if `save_atomic` had written it."""
    os.chmod(path, modes().file)
    return path


def describe_os_error(error: OSError) -> str:
    """An operating system's refusal in words, naming the path: what a user can act on."""
    path = error.filename if error.filename is not None else ""
    reasons = {
        errno.EROFS: "the file system is read-only",
        errno.EACCES: "permission denied",
        errno.EPERM: "the operation is not permitted",
        errno.ENOTDIR: "a part of the path is a file, not a folder",
        errno.EEXIST: "it exists and is not a folder",
        errno.EISDIR: "it is a folder, not a file",
        errno.ENOSPC: "the disk is full",
        errno.EDQUOT: "the disk quota is used up",
    }
    why = reasons.get(error.errno or 0, error.strerror or str(error))
    return f"{path}: {why}" if path else why


# A temporary file's name (no host: round 1's names), compiled by `re` when a sync sweeps debris
_TEMP = r"^\..+\.(?:([A-Za-z0-9-]+)-)?(\d+)\.[0-9a-f]+\.tmp$"


@cache
def _host() -> str:
    """This machine's name as temporary names carry it: its first label, in safe characters."""
    import socket  # a millisecond of set-up: paid when a file is written, not by every import

    return re.sub(r"[^A-Za-z0-9-]", "-", socket.gethostname().split(".")[0])[:40] or "host"


def temp_path(target: Path) -> Path:
    """A fresh temporary name beside `target`, marked with this machine and process."""
    return target.with_name(f".{target.name}.{_host()}-{os.getpid()}.{os.urandom(6).hex()}.tmp")


def save_atomic(target: Path, content: bytes | str | Callable[[Path], None], *, durable: bool = True) -> Path:
    """Replace `target` with `content` (bytes, text, or a function that writes the file it is given),
    with the file mode of `modes`.

    `durable=False` skips the flushes, for small state whose loss costs nothing but a short wait
    (the pace files); the replace stays atomic either way.
    """
    given = Path(target)
    target = _written_through(given)
    make_folder(target.parent)
    if callable(content):
        write = content
    else:
        data = content.encode() if isinstance(content, str) else content

        def write(path: Path) -> None:
            path.write_bytes(data)

    # Written in a folder of its own, private from the start: no one else can read a file half
    # written (a format's writer, DuckDB, makes its file with the usual mode).
    box = temp_path(target)
    temp = box / target.name
    mode = modes()
    try:
        os.mkdir(box, mode.folder)
        write(temp)
        os.chmod(temp, mode.file)
        if durable:
            _fsync(temp, os.O_RDONLY)
        _replace(temp, target)
    finally:
        _remove_box(box)
    if durable:
        _fsync(target.parent, os.O_RDONLY)
    return given


def _remove_box(box: Path) -> None:
    """Remove a private writing folder: empty once its file moved out (one `rmdir`, no walk of
    it), else with what a writer left in it (a failed one's file, DuckDB's .wal)."""
    try:
        os.rmdir(box)
    except OSError:
        shutil.rmtree(box, ignore_errors=True)


def _written_through(target: Path) -> Path:
    """The file `target` names: a symbolic link's target (a report linked into a shared folder is
    that folder's file, not a link to replace). A pipe, socket or device is refused: replacing it
    would leave its reader with nothing, and exit as if written."""
    if target.is_symlink():
        target = Path(os.path.realpath(target))
    if target.exists() and not target.is_file() and not target.is_dir():
        raise OSError(errno.EINVAL, "a pipe, socket or device, not a file: nothing written", str(target))
    return target


def move_atomic(source: Path, target: Path) -> Path:
    """Move a finished file (written and flushed elsewhere on the same file system) over `target`."""
    move_into_place([(Path(source), Path(target))])
    return Path(target)


def move_into_place(moves: Iterable[tuple[Path, Path]]) -> None:
    """Move finished files (each written elsewhere on the same file system) over their targets,
    one after another, each flushed before it is moved; each target folder is flushed once, after
    the last file moved into it (a writer of many files flushes each folder once, not per file)."""
    moves = list(moves)
    folders: dict[Path, None] = {}
    mode = modes().file
    for source, target in moves:
        if target.parent not in folders:
            make_folder(target.parent)
            folders[target.parent] = None
        os.chmod(source, mode)
    _fsync_all([source for source, _ in moves])  # every file flushed before any is moved
    for source, target in moves:
        _replace(source, target)
    _fsync_all(list(folders))


def _replace(source: Path, target: Path) -> None:
    """`os.replace`; where a folder stands in the file's place, an error naming that folder (the
    system's named the temporary file, which is gone by the time anyone reads it)."""
    try:
        os.replace(source, target)
    except IsADirectoryError:
        raise IsADirectoryError(
            errno.EISDIR, "a folder stands where this file belongs: move it aside", str(target)
        ) from None


def _fsync_all(paths: list[Path]) -> None:
    """Flush each of `paths` (files or folders), in parallel: the file system commits its journal
    once for flushes that wait together, rather than once per file."""
    if len(paths) < 2:
        for path in paths:
            _fsync(path, os.O_RDONLY)
        return
    from concurrent.futures import ThreadPoolExecutor  # only for a writer of several files

    with ThreadPoolExecutor(min(len(paths), _FLUSHERS)) as pool:
        list(pool.map(lambda path: _fsync(path, os.O_RDONLY), paths))


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


def sha256_of(path: Path | str) -> str:
    """The hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as source:
        for block in iter(lambda: source.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def remove_stray_files(
    folder: Path, *, shallow: Collection[str] = (), depth: int | None = None
) -> list[Path]:
    """Delete the temporary files below `folder` left by writers of this machine that no longer
    run (another machine's are its own to clean: its pids mean nothing here). The subfolders named
    in `shallow` are searched two levels deep only: folders of folders of hard links (the published
    generations, a lake's worth of folders each, whose own debris goes when they are pruned). With
    `depth`, no folder deeper than that below `folder` is searched (None: all are)."""
    removed: list[Path] = []
    top = os.path.normpath(folder)
    for parent, below, names in os.walk(top):  # (a lake has thousands of folders: no pathlib here)
        if (
            os.path.dirname(os.path.dirname(parent)) == top
            and os.path.basename(os.path.dirname(parent)) in shallow
        ) or (depth is not None and parent.count(os.sep) - top.count(os.sep) >= depth):
            below[:] = []
        for name in [name for name in below if _left_behind(name)]:  # (`remove_folder`'s)
            below.remove(name)
            shutil.rmtree(Path(parent, name), ignore_errors=True)
            removed.append(Path(parent, name))
        for name in filter(_left_behind, names):
            temp = Path(parent, name)
            with contextlib.suppress(FileNotFoundError):
                temp.unlink()
                removed.append(temp)
    return removed


@contextmanager
def writing_in(folder: Path, *, top: int, shallow: Collection[str] = ()) -> Iterator[list[Path]]:
    """Write deep in `folder` (a writer of its sites, holding their locks), first removing the
    debris of this machine's writers that stopped (given back: what was removed). Only such a
    writer writes below the `top` levels, and it marks the folder while it does (a file with a
    temporary name of its process, left behind if it is killed): the whole folder (but `shallow`,
    see `remove_stray_files`) is searched when a stopped writer's mark is found, else its `top`
    levels alone. That spares a sync or a refresh a walk of every folder of the lake: 0.10-0.16 s
    on a cold cache for the bench lakes of 1 M to 100 M rows, their top two levels 0.01-0.05 s.
    A mark that cannot be made (a full disk) is no error: this writer's debris is then found by
    the next search of the whole folder."""
    removed = remove_stray_files(folder, depth=top)
    if any(path.name.startswith(f".{_MARK}.") for path in removed):
        removed += remove_stray_files(folder, shallow=shallow)
    mark = temp_path(folder / _MARK)
    try:
        mark.touch()
    except OSError:
        log.debug("could not mark %s as being written", folder)
    try:
        yield removed
    finally:
        mark.unlink(missing_ok=True)


def _left_behind(name: str) -> bool:
    """Whether `name` is a temporary name (`temp_path`) of a writer of this machine that no longer runs."""
    match = re.match(_TEMP, name) if name.startswith(".") and name.endswith(".tmp") else None
    return match is not None and match.group(1) in (None, _host()) and not _alive(int(match.group(2)))


def remove_folder(folder: Path) -> None:
    """Delete `folder` and all it holds in one step, as a reader sees it: renamed first to a
    temporary name beside it (which nothing reads), then removed. What a crash leaves in between,
    the next writer's sweep (`remove_stray_files`) removes."""
    doomed = temp_path(folder)
    os.rename(folder, doomed)
    shutil.rmtree(doomed)


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
