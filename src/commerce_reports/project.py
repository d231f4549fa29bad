"""A project folder: where a user keeps the lake's marker, the settings and their notebooks.

`init_project("my-reports")` (the command `commerce-reports init my-reports`) lays one out:

    my-reports/commerce-reports.toml   the marker: every command and notebook below uses data/
    my-reports/.env                    settings and keys, readable by the owner only (0600)
    my-reports/.gitignore              keeps .env, data/ and reports/ out of version control
    my-reports/notebooks/*.ipynb       copies of the notebooks the package ships

The notebooks ship inside the package (`commerce_reports/notebooks/`, written by
`notebooks/build_notebooks.py` in the source repository): a wheel installed anywhere has them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from .errors import ValidationError
from .files import save_atomic
from .locate import MARKER, project_root

__all__ = ["NOTEBOOK_NAMES", "InitResult", "init_project", "notebook_path", "packaged_notebooks"]

NOTEBOOK_NAMES = (
    "01_getting_started.ipynb",
    "02_link_performance.ipynb",
    "03_devices_and_countries.ipynb",
    "report.ipynb",
)

_MARKER_TEXT = """\
# Marks this folder as a commerce-reports project: every command, notebook and export run anywhere
# below it uses the lake in `data_dir` (relative to this file), unless COMMERCE_REPORTS_DATA_DIR is set.
data_dir = "data"
"""

_ENV_TEXT = """\
# Settings of this project (the environment wins over this file). Readable by you only: keep it so,
# and out of version control (.gitignore lists it). With no key set, everything runs against the
# built-in sandbox.

# The site's secret key, sent as `Authorization: secret <key>`, and the service's address:
# COMMERCE_REPORTS_SECRET_KEY=
# COMMERCE_REPORTS_BASE_URL=https://api.example.com/v1
# COMMERCE_REPORTS_SITE=default

# One more site per variable, named by what follows SECRET_KEY_:
# COMMERCE_REPORTS_SECRET_KEY_RECIPES=

# The wire (contract or published) and the pace (seconds between requests per endpoint):
# COMMERCE_REPORTS_DIALECT=contract
# COMMERCE_REPORTS_PACE=60
"""

_GITIGNORE_LINES = (".env", "data/", "reports/", ".ipynb_checkpoints/")


def packaged_notebooks() -> Path:
    """The folder of the notebooks the package ships (inside the installed package)."""
    return Path(str(resources.files("commerce_reports") / "notebooks"))


def notebook_path(name: str, start: Path | None = None) -> Path:
    """The notebook `name` of the project at or above `start` (default: the working folder) when
    it holds one in `notebooks/`, else the copy the package ships."""
    if name not in NOTEBOOK_NAMES:
        raise ValidationError(
            "notebook", f"{name!r} is not a notebook", f"use one of {', '.join(NOTEBOOK_NAMES)}"
        )
    root = project_root(start)
    if root is not None and (root / "notebooks" / name).is_file():
        return root / "notebooks" / name
    return packaged_notebooks() / name


@dataclass(frozen=True)
class InitResult:
    """What `init_project` wrote and what it left as it was."""

    folder: Path
    written: list[Path] = field(default_factory=list)
    kept: list[Path] = field(default_factory=list)


def init_project(folder: str | os.PathLike[str]) -> InitResult:
    """Lay out a project in `folder` (created if needed): the marker, a `.env` template (mode
    0600), a `.gitignore` that lists it, and the notebooks. A file already there is kept as it is
    (a `.gitignore` gets the lines it lacks), so running it again is safe."""
    if not isinstance(folder, str | os.PathLike) or not str(folder).strip():
        raise ValidationError("folder", f"{folder!r} is not a folder path", "give a str or Path")
    root = Path(folder).expanduser().absolute()
    if root.exists() and not root.is_dir():
        raise ValidationError("folder", f"{root} is a file", "give a new or existing folder")
    done = InitResult(root)

    def create(path: Path, content: str | bytes, private: bool = False) -> None:
        if path.exists():
            done.kept.append(path)
            return
        save_atomic(path, (lambda temp: _write_private(temp, content)) if private else content)
        done.written.append(path)

    try:
        root.mkdir(parents=True, exist_ok=True)
        create(root / MARKER, _MARKER_TEXT)
        create(root / ".env", _ENV_TEXT, private=True)
        _ignore(root / ".gitignore", done)
        for name in NOTEBOOK_NAMES:
            create(root / "notebooks" / name, (packaged_notebooks() / name).read_bytes())
    except OSError as error:
        raise ValidationError(
            "folder", f"cannot write in {root}: {error.strerror}", "choose a folder you can write"
        ) from None
    return done


def _write_private(path: Path, content: str | bytes) -> None:
    """Create `path` readable and writable by its owner only, from the start (0600)."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as out:
        out.write(content.encode() if isinstance(content, str) else content)


def _ignore(path: Path, done: InitResult) -> None:
    """A `.gitignore` listing `.env`, the lake and the reports: created, or given the lines it lacks."""
    present = path.read_text().splitlines() if path.is_file() else []
    missing = [line for line in _GITIGNORE_LINES if line not in present]
    if not missing:
        done.kept.append(path)
        return
    lines = [*present, *(["# commerce-reports"] if present else []), *missing]
    save_atomic(path, "\n".join(lines) + "\n")
    done.written.append(path)
