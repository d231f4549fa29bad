"""Where the lake is: one rule, the same from the CLI, a notebook in any folder, an export, cron and tests.

1. `COMMERCE_REPORTS_DATA_DIR` (the environment, or a `.env` beside the working folder).
2. Else a project marker found upward from the working folder: a `commerce-reports.toml` (its
   `data_dir`, default `data`, is relative to the marker's folder), or a `pyproject.toml` with a
   `[tool.commerce-reports]` table (same key).
3. Else the user's data folder (platformdirs), so a notebook anywhere shares one lake.

`where()` also says which rule chose the folder, for `commerce-reports status`.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any, NamedTuple

from .errors import ConfigurationError

__all__ = [
    "ENV_DATA_DIR",
    "MARKER",
    "LakeLocation",
    "check_folder_path",
    "data_dir",
    "marker_table",
    "project_root",
    "read_settings_file",
    "read_toml",
    "where",
]

ENV_DATA_DIR = "COMMERCE_REPORTS_DATA_DIR"
MARKER = "commerce-reports.toml"
_PYPROJECT_TABLE = "commerce-reports"


class LakeLocation(NamedTuple):
    """The data folder and why it was chosen (`reason` reads as a sentence's end); `in_project` is
    False when no rule named a folder and it is the user data folder."""

    path: Path
    reason: str
    in_project: bool = True

    def __str__(self) -> str:
        return f"{self.path} ({self.reason})"

    def describe(self) -> str:
        """`lake: <folder> (<reason>)`, and when no project was found, how to point at one: what a
        notebook prints at its top, so a second lake is never built unnoticed."""
        line = f"lake: {self}"
        if self.in_project:
            return line
        return (
            f"{line}\nNo project was found from {Path.cwd()}, so this uses your user data folder, "
            f"not a project's lake. To use a project's lake, start Jupyter (or papermill, with "
            f"--cwd <project>/notebooks) inside the project's folder, or set {ENV_DATA_DIR} to its "
            f"data folder (e.g. {ENV_DATA_DIR}=~/my-reports/data); `commerce-reports init <folder>` "
            f"makes a project."
        )


def project_root(start: Path | None = None) -> Path | None:
    """The nearest folder at or above `start` (default: the working folder) holding a project marker."""
    folder = (start or Path.cwd()).resolve()
    for candidate in (folder, *folder.parents):
        if (candidate / MARKER).is_file() or _pyproject_table(candidate / "pyproject.toml") is not None:
            return candidate
    return None


def where(explicit: str | os.PathLike[str] | None = None, env: dict[str, str] | None = None) -> LakeLocation:
    """The data folder by the rule above; `explicit` (a caller's `data_dir=`) wins over all of it.
    A path that exists and is not a folder (a file, a device) is a ConfigurationError naming it."""
    return _folder(_where(explicit, env))


def _where(explicit: str | os.PathLike[str] | None, env: dict[str, str] | None) -> LakeLocation:
    if explicit is not None:
        if not isinstance(explicit, str | os.PathLike) or not str(explicit).strip():
            raise ConfigurationError(f"data_dir: {explicit!r} is not a folder path; give a str or Path")
        return LakeLocation(Path(explicit).expanduser().absolute(), "given by the caller")
    variables = env if env is not None else os.environ
    chosen = variables.get(ENV_DATA_DIR, "").strip()
    if chosen:
        return LakeLocation(Path(chosen).expanduser().absolute(), f"from {ENV_DATA_DIR}")
    root = project_root()
    if root is not None:
        relative, source = _marker_setting(root)
        return LakeLocation((root / relative).absolute(), f"from the project marker {source}")
    from platformdirs import user_data_path

    return LakeLocation(
        user_data_path("commerce-reports", appauthor=False),
        f"the user data folder: no {ENV_DATA_DIR} and no {MARKER} above {Path.cwd()}",
        in_project=False,
    )


def check_folder_path(path: Path, what: str = "data_dir") -> Path:
    """`path` when the operating system could take it as a folder's path; else a
    ConfigurationError saying what is wrong with it (a NUL byte, a name or a path too long), so
    no raw ValueError or OSError escapes from wherever it is used next."""
    text = str(path)
    if "\x00" in text:
        raise ConfigurationError(
            f"{what}: {text[:80]!r} holds a NUL byte, which no path can; give a folder path"
        )
    longest = _limit("PC_PATH_MAX", 4096)
    if len(os.fsencode(text)) >= longest:
        raise ConfigurationError(
            f"{what}: the path is {len(text):,} characters long, over this system's {longest:,}; give a "
            "shorter folder path"
        )
    name_max = _limit("PC_NAME_MAX", 255)
    for part in path.parts:
        if len(os.fsencode(part)) > name_max:
            raise ConfigurationError(
                f"{what}: a folder name in it is {len(part):,} characters long, over this system's "
                f"{name_max}; give a shorter folder path"
            )
    return path


def _limit(name: str, default: int) -> int:
    try:
        return os.pathconf("/", name)
    except (OSError, ValueError):
        return default


def _folder(location: LakeLocation) -> LakeLocation:
    check_folder_path(location.path)
    if location.path.exists() and not location.path.is_dir():
        raise ConfigurationError(
            f"the data folder {location.path} ({location.reason}) is a file, not a folder; give a "
            f"folder (--data-dir, {ENV_DATA_DIR} or data_dir in {MARKER})"
        )
    return location


def data_dir(explicit: str | os.PathLike[str] | None = None, env: dict[str, str] | None = None) -> Path:
    """The data folder (see `where`)."""
    return where(explicit, env).path


def marker_table(root: Path) -> tuple[dict[str, Any], Path]:
    """The settings of the project marker in `root` (its `commerce-reports.toml`, else the
    `[tool.commerce-reports]` table of its `pyproject.toml`) and the file's path."""
    marker = root / MARKER
    if marker.is_file():
        return read_toml(marker), marker
    marker = root / "pyproject.toml"
    return _pyproject_table(marker) or {}, marker


def _marker_setting(root: Path) -> tuple[Path, Path]:
    table, marker = marker_table(root)
    value = table.get("data_dir", "data")
    if not isinstance(value, str) or not value.strip():
        raise ConfigurationError(f'{marker}: data_dir must be a folder path, e.g. data_dir = "data"')
    return Path(value).expanduser(), marker


def _pyproject_table(path: Path) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    tool = read_toml(path).get("tool")
    table = tool.get(_PYPROJECT_TABLE) if isinstance(tool, dict) else None
    return table if isinstance(table, dict) else None


def read_toml(path: Path) -> dict[str, Any]:
    """A settings file's TOML (the project marker, `sites.toml`), or a ConfigurationError naming it."""
    text = read_settings_file(path)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigurationError(f"{path}: not readable TOML ({error})") from None


def read_settings_file(path: Path) -> str:
    """The text of a settings file (`.env`, the project marker, `sites.toml`), which is UTF-8; else
    a ConfigurationError naming the file, the byte and its line, and the fix: a file saved in
    another encoding (a Latin-1 `é`) broke every command with a message naming no file."""
    try:
        return path.read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigurationError(f"{path}: not readable ({error.strerror or error})") from None
    except UnicodeDecodeError as error:  # `object` is the whole file: `read_text` decodes it at once
        line = error.object.count(b"\n", 0, error.start) + 1
        raise ConfigurationError(
            f"{path}: not readable as UTF-8 (byte 0x{error.object[error.start]:02x} on line {line}); "
            'save it as UTF-8 (your editor\'s "save with encoding", or `iconv -f latin1 -t utf-8`)'
        ) from None
