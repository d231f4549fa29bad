"""A project folder: where a user keeps the lake's marker, the settings and their notebooks.

`init_project("my-reports")` (the command `commerce-reports init my-reports`) lays one out:

    my-reports/commerce-reports.toml   the marker: every command and notebook below uses data/
    my-reports/.env                    settings and keys, readable by the owner only (0600)
    my-reports/.gitignore              keeps .env, data/ and reports/ out of version control
    my-reports/notebooks/*.ipynb       copies of the notebooks the package ships

The notebooks live in the source repository's `notebooks/` (written by
`notebooks/build_notebooks.py`) and the wheel ships them inside the package
(`commerce_reports/notebooks/`): a wheel installed anywhere has them.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shlex
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from .contract import check_lake_path
from .errors import ConfigurationError, ValidationError
from .files import save_atomic
from .locate import MARKER, marker_table, project_root
from .redaction import known_secrets
from .secret import Secret
from .settings import setting_named, toml_value

__all__ = [
    "NOTEBOOK_NAMES",
    "InitResult",
    "SetResult",
    "git_ignored",
    "init_project",
    "notebook_path",
    "packaged_notebooks",
    "set_secret",
    "set_setting",
]

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
    """The folder of the notebooks the package ships: inside the installed package, where the
    wheel puts them, or in a source checkout (an editable install) the repository's `notebooks/`."""
    installed = Path(str(resources.files("commerce_reports") / "notebooks"))
    if (installed / NOTEBOOK_NAMES[-1]).is_file():
        return installed
    return Path(__file__).resolve().parents[2] / "notebooks"


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
    """What `init_project` wrote and what it left as it was; `outdated`: the project's notebooks
    whose cells differ from this release's (kept as they are)."""

    folder: Path
    written: list[Path] = field(default_factory=list)
    kept: list[Path] = field(default_factory=list)
    outdated: list[Path] = field(default_factory=list)


def init_project(folder: str | os.PathLike[str], *, notebooks: bool = False) -> InitResult:
    """Lay out a project in `folder` (created if needed): the marker, a `.env` template (mode
    0600), a `.gitignore` that lists it, and the notebooks. A file already there is kept as it is
    (a `.gitignore` gets the lines it lacks), so running it again is safe. A notebook of the
    project whose cells differ from this release's is kept too, and listed in `outdated`;
    `notebooks=True` writes this release's beside it (`report.new.ipynb`), to compare and merge."""
    if not isinstance(folder, str | os.PathLike) or not str(folder).strip():
        raise ValidationError("folder", f"{folder!r} is not a folder path", "give a str or Path")
    if not isinstance(notebooks, bool):
        raise ValidationError("notebooks", f"{notebooks!r} is not a bool", "give True or False")
    root = Path(folder).expanduser().absolute()
    if root.exists() and not root.is_dir():
        raise ValidationError("folder", f"{root} is a file", "give a new or existing folder")
    check_lake_path(root / "data")  # a lake no command could use there: said before anything is written
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
            release = (packaged_notebooks() / name).read_bytes()
            create(root / "notebooks" / name, release)
            ours = root / "notebooks" / name
            if ours in done.kept and _cells(ours.read_bytes()) != _cells(release):
                done.outdated.append(ours)
                if notebooks:
                    save_atomic(beside := ours.with_suffix(".new.ipynb"), release)
                    done.written.append(beside)
    except OSError as error:
        raise ValidationError(
            "folder", f"cannot write in {root}: {error.strerror}", "choose a folder you can write"
        ) from None
    return done


def _cells(notebook: bytes) -> list[tuple[str, str]] | None:
    """A notebook's cells, kind and source, without outputs or metadata (a notebook that ran is
    still the one it was); None when it is not a notebook's JSON."""
    import json

    try:
        cells = json.loads(notebook)["cells"]
        return [(cell["cell_type"], "".join(cell["source"])) for cell in cells]
    except (ValueError, KeyError, TypeError):
        return None


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


@dataclass(frozen=True)
class SetResult:
    """What `set_setting` wrote: the file, the key in it, and the value as written (masked when secret)."""

    path: Path
    key: str
    shown: str


def set_setting(
    name: str,
    value: str,
    start: Path | None = None,
    *,
    secrets: Mapping[str, Secret] | None = None,
    check_table: Callable[[Mapping[str, Any]], object] | None = None,
) -> SetResult:
    """Set one setting of the project at or above `start` (default: the working folder): a secret
    into its `.env` (mode 0600), refused unless git ignores that file, anything else into its
    `commerce-reports.toml` (or `[tool.commerce-reports]` of its `pyproject.toml`), keeping the
    file's comments and layout (tomlkit). The value is checked as the setting declares first;
    `check_table` checks a whole table after a change of one of its keys (the alerts' thresholds).
    `secrets` are the configured ones by variable (`Sources.secrets`): a value holding one is
    refused for any other setting, whose file is meant to be committed."""
    if not isinstance(value, str):
        raise ValidationError("value", f"{value!r} is not a text", "give the value as you would write it")
    setting, key = setting_named(name)
    _check_writable(key, value)
    root = _project_to_write(start)
    if setting.secret:
        variable = str(setting.variable).replace("<NAME>", key.removeprefix("secret_key_").upper())
        return set_secret(variable, value, root)
    if not setting.project:
        raise ValidationError(
            "setting", f"{key} is set per site in sites.toml", "edit [sites.<name>] in <data dir>/sites.toml"
        )
    _refuse_secrets(key, value, secrets or {})
    import tomlkit

    _, marker = marker_table(root)
    document = tomlkit.parse(marker.read_text()) if marker.is_file() else tomlkit.document()
    table: Any = document
    if marker.name == "pyproject.toml":
        table = document.setdefault("tool", tomlkit.table(True)).setdefault(
            "commerce-reports", tomlkit.table()
        )
    head, _, sub = key.partition(".")
    try:  # a value the setting refuses is the caller's mistake: nothing is written
        if sub:  # a key of a table: [alerts] z = 5
            written = _toml_literal(value)
            inner = table.setdefault(head, tomlkit.table())
            inner[sub] = written
            if check_table is not None:
                check_table(inner.unwrap())
        else:
            written = toml_value(setting, value)
            table[key] = written
    except ConfigurationError as error:
        raise ValidationError("value", str(error), f"see `commerce-reports config list` for {head}") from None
    save_atomic(marker, tomlkit.dumps(document))
    return SetResult(marker, key, tomlkit.item(written).as_string())


def _check_writable(key: str, value: str) -> None:
    """A ValidationError when `value` holds what no file can hold: a byte of another encoding
    than UTF-8, which the command line passes on as a lone surrogate (`$'\\xff'` is `'\\udcff'`)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        raise ValidationError(
            "value",
            f"{key}: its character {error.start + 1} is a byte that is not UTF-8 text, which no file "
            "can hold",
            "give the value as UTF-8 text (check the encoding of your terminal or script)",
        ) from None


def _refuse_secrets(key: str, value: str, secrets: Mapping[str, Secret]) -> None:
    """A ValidationError when `value` holds one of the configured `secrets` that `redact` masks
    (a registered one): written into the project file it would be committed, and shown as written."""
    known = known_secrets()
    for variable, secret in secrets.items():
        if secret.reveal() in known and secret.reveal() in value:
            raise ValidationError(
                "value",
                f"{key}: the value holds the secret set in {variable}, and {MARKER} is meant to be committed",
                f"a secret belongs in the environment or the git-ignored .env only (`commerce-reports config "
                f"set {variable}` puts it there): give {key} without it",
            )


def _toml_literal(text: str) -> Any:
    """A value typed as TOML reads it (`5`, `4.5`, `false`, `"30%"`), else the text itself (`30%`)."""
    import tomllib

    try:
        return tomllib.loads(f"value = {text}")["value"]
    except tomllib.TOMLDecodeError:
        return text


def _project_to_write(start: Path | None) -> Path:
    """The project at or above `start` that a setting is written into; a ValidationError outside one."""
    root = project_root(start)
    if root is None:
        raise ValidationError(
            "project",
            f"no {MARKER} at or above {(start or Path.cwd()).resolve()}: settings are written into a project",
            "run `commerce-reports init <folder>` first, or cd into the project",
        )
    return root


def set_secret(variable: str, value: str, start: Path | None = None) -> SetResult:
    """`variable=value` in the `.env` of the project at or above `start`: its line replaced (or a
    commented template line, or a new line at the end), the rest of the file as it was; only when
    git ignores the file. (A site of `sites.toml` names the variable holding its key.)"""
    root = _project_to_write(start)
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", variable):
        raise ValidationError("variable", f"{variable!r} is not a variable name", "e.g. RECIPES_SECRET_KEY")
    path = root / ".env"
    if _git_tracked(path):
        raise ConfigurationError(
            f"{path} is tracked by git: a secret written there would be committed with it; "
            f"`git rm --cached {path.name}` stops tracking it (keeping the file), then set it again"
        )
    if not git_ignored(path):
        raise ConfigurationError(
            f"{path} is not git-ignored: a secret written there could be committed; add `.env` to "
            f"{root / '.gitignore'} (`commerce-reports init {shlex.quote(str(root))}` does), then set "
            "it again"
        )
    if not value.strip() or "\n" in value:
        raise ValidationError(
            "value", "a secret must be one non-empty line", "give the key as the service issued it"
        )
    _check_writable(variable, value)
    escaped = value.strip().replace("\\", "\\\\").replace("'", "\\'")
    line = f"{variable}='{escaped}'"
    lines = path.read_text().splitlines() if path.is_file() else []
    pattern = re.compile(rf"^\s*(?:#\s*)?(?:export\s+)?{re.escape(variable)}\s*=")
    at = next(
        (i for i, old in enumerate(lines) if pattern.match(old) and not old.lstrip().startswith("#")), None
    )
    if at is None:
        at = next((i for i, old in enumerate(lines) if pattern.match(old)), None)
    if at is None:
        lines.append(line)
    else:
        lines[at] = line
    save_atomic(path, "\n".join(lines) + "\n")
    os.chmod(path, 0o600)  # a secret's file: its owner's only, whatever the group may read
    return SetResult(path, variable, "***")


def _git_tracked(path: Path) -> bool:
    """Whether git tracks `path` (a .gitignore line does not stop tracking a file added before)."""
    try:
        done = subprocess.run(
            ["git", "ls-files", "--error-unmatch", path.name],
            cwd=path.parent,
            capture_output=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def git_ignored(path: Path) -> bool:
    """Whether git ignores `path`: `git check-ignore` inside a work tree; outside one (or without
    git), whether the `.gitignore` beside it names it, so a later `git init` ignores it too."""
    try:
        done = subprocess.run(
            ["git", "check-ignore", "--quiet", str(path)],
            cwd=path.parent,
            capture_output=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        done = None
    if done is not None and done.returncode in (0, 1):
        return done.returncode == 0
    ignore = path.parent / ".gitignore"
    patterns = ignore.read_text().splitlines() if ignore.is_file() else []
    return any(
        fnmatch.fnmatch(path.name, line.strip().lstrip("/"))
        for line in patterns
        if line.strip() and not line.lstrip().startswith(("#", "!"))
    )
