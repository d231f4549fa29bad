"""Settings from the environment, a git-ignored `.env` and the project's `commerce-reports.toml`,
in that order (each setting is declared once, in `settings.py`; secrets never come from the file).

`.env` is read from the working folder, else from the project folder (the one holding the
`commerce-reports.toml` marker), so a notebook in `notebooks/` sees the same settings as the CLI.

The entry points (the package's functions, the CLI, the notebooks' helpers, the export runner) ask
`current_settings()` and hand what it gives down; nothing below them reads the environment. It
resolves the settings once per process and keeps them while what they come from stays as it was:
the working folder, the `COMMERCE_REPORTS_*` variables (and those placing the user's data folder),
the `.env` files and the project marker (a stat, not a read). So `.env` is read once, a test that
changes the environment or a notebook that sets a variable is seen at the next call, and an edited
`.env` or marker is read again.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from .endpoints import DIALECTS, Dialect
from .errors import ConfigurationError
from .locate import (
    ENV_DATA_DIR,
    MARKER,
    LakeLocation,
    marker_table,
    project_root,
    read_settings_file,
    where,
)
from .money import Currency
from .secret import Secret
from .settings import (
    DEFAULT_PACE,
    DEFAULT_REVISION_DAYS,
    DOTENV,
    ENVIRONMENT,
    PREFIX,
    SETTING,
    SETTINGS,
    Setting,
    check_base_url,
    check_dialect,
    check_revision_days,
    check_switch,
    normalise_base_url,
    parse_pace,
)

__all__ = [
    "DEFAULT_PACE",
    "DEFAULT_REVISION_DAYS",
    "DIALECTS",
    "ENV_DATA_DIR",
    "Dialect",
    "Found",
    "Limits",
    "Settings",
    "Sources",
    "check_base_url",
    "check_dialect",
    "check_revision_days",
    "current_settings",
    "current_sources",
    "environment",
    "normalise_base_url",
    "parse_pace",
    "share_group",
]


def _variable(name: str) -> str:
    variable = SETTING[name].variable
    assert variable is not None
    return variable


ENV_SECRET_KEY = _variable("secret_key")
ENV_SHARE_GROUP = _variable("share_group")
DEFAULT = "default"


def environment(env_file: Path | None = None) -> dict[str, str]:
    """The process environment over the values of `.env` (the environment wins)."""
    return Sources.read(env_file).variables()


def _check_project_key(key: str, marker: Path | None) -> None:
    """Refuse a key of the project file that holds a secret (under its setting's name, its
    variable's, or a site's: the file is meant to be committed) or that no setting of the file
    has (a typo would leave its default in place without a word), naming the nearest."""
    name = key.lower().removeprefix(PREFIX.lower())
    family = (s for s in SETTINGS if s.family and name.startswith(s.name.replace("<name>", "")))
    setting = SETTING.get(name) or next(family, None)
    if setting is not None and setting.secret:
        raise ConfigurationError(
            f"{marker}: {key} is a secret and this file is meant to be committed; remove it and "
            f"set {setting.variable} in the environment or the git-ignored .env instead"
        )
    if key in SETTING and SETTING[key].project:
        return
    import difflib

    known = sorted(setting.name for setting in SETTINGS if setting.project)
    close = difflib.get_close_matches(name, known, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise ConfigurationError(
        f"{marker}: {key!r} is no setting of this file{hint} (its settings: {', '.join(known)}; a site's "
        "own go in <data dir>/sites.toml)"
    )


def _env_file() -> Path | None:
    here = Path.cwd() / ".env"
    if here.is_file():
        return here
    root = project_root()
    return root / ".env" if root is not None else None


class Found(NamedTuple):
    """One setting's value as written (a text, or a TOML value; None: unset) and where it came
    from: `source` is `environment`, `.env`, the project file's name or `default`; `where` names
    the variable or the file and key, for messages."""

    setting: Setting
    name: str
    value: Any
    source: str
    where: str

    def checked(self) -> Any:
        """The value as the toolkit uses it (the setting's check), or None when unset."""
        return None if self.value is None else self.setting.check(self.value, self.where)


@dataclass(frozen=True)
class Sources:
    """What settings are read from: the process environment, the `.env` file's values and the
    project file's table (`commerce-reports.toml`, or `[tool.commerce-reports]` of a
    `pyproject.toml`). Each setting is looked up in that order (`found`)."""

    environ: Mapping[str, str]
    dotenv: Mapping[str, str] = field(default_factory=dict)
    dotenv_path: Path | None = None
    table: Mapping[str, Any] = field(default_factory=dict)
    marker: Path | None = None

    @classmethod
    def read(cls, env_file: Path | None = None) -> Sources:
        """The sources as they are now: `env_file` (default: `.env` here, else the project's)."""
        path = env_file if env_file is not None else _env_file()
        dotenv: dict[str, str] = {}
        if path is not None and path.is_file():
            import io

            from dotenv import dotenv_values  # with logging and tempfile: only when there is a .env

            text = io.StringIO(read_settings_file(path))  # not UTF-8: an error naming the file
            dotenv = {k: v for k, v in dotenv_values(stream=text).items() if v is not None}
        root = project_root()
        table, marker = marker_table(root) if root is not None else ({}, None)
        for key in table:
            _check_project_key(key, marker)
        return cls(
            dict(os.environ), dotenv, path if path is not None and path.is_file() else None, table, marker
        )

    def found(self, name: str) -> Found:
        """Where setting `name` comes from: the environment, `.env`, the project file, else its default."""
        setting = SETTING[name]
        variable = setting.variable
        if variable is not None and self.environ.get(variable, "").strip():
            return Found(setting, name, self.environ[variable], ENVIRONMENT, variable)
        if variable is not None and self.dotenv.get(variable, "").strip():
            return Found(setting, name, self.dotenv[variable], DOTENV, f"{variable} in {self.dotenv_path}")
        if setting.project and self.marker is not None and self.table.get(name) is not None:
            return Found(setting, name, self.table[name], self.marker.name, f"{self.marker}: {name}")
        return Found(setting, name, None, DEFAULT, variable or name)

    def members(self, name: str) -> list[Found]:
        """The variables of a family (`COMMERCE_REPORTS_SECRET_KEY_<NAME>`), one Found each."""
        setting = SETTING[name]
        prefix = str(setting.variable).removesuffix("<NAME>")
        found: dict[str, Found] = {}
        for source, values in ((DOTENV, self.dotenv), (ENVIRONMENT, self.environ)):  # the environment wins
            for variable, value in values.items():
                if variable.startswith(prefix) and value.strip():
                    member = setting.name.replace("<name>", variable.removeprefix(prefix).lower())
                    found[member] = Found(setting, member, value, source, variable)
        return [found[member] for member in sorted(found)]

    def secrets(self, site_keys: Iterable[str] = ()) -> dict[str, Secret]:
        """The secrets these sources set, by variable: each secret setting's (a family's members
        too) and each of `site_keys` (the variables `sites.toml` names as its sites' keys). Each is
        made a `Secret`, which registers it: `redact` masks it from here on, in every message. A
        value its check refuses (a line break in it) is `config list`'s to say."""
        held = {
            found.where if found.setting.family else str(found.setting.variable): found.value
            for found in self.every()
            if found.setting.secret and found.value is not None
        }
        variables = self.variables()
        held |= {
            variable: variables[variable] for variable in site_keys if variables.get(variable, "").strip()
        }
        secrets: dict[str, Secret] = {}
        for variable, value in held.items():
            with contextlib.suppress(ConfigurationError):
                secrets[variable] = Secret(value)
        return secrets

    def every(self) -> list[Found]:
        """Every setting (a family as its members), in the declaration's order; `sites.toml`'s own
        keys are `sites.configured_sites`' business."""
        out: list[Found] = []
        for setting in SETTINGS:
            if setting.family:
                out += self.members(setting.name)
            elif setting.variable is not None or setting.project:
                out.append(self.found(setting.name))
        return out

    def variables(self) -> dict[str, str]:
        """Every setting by its variable, as text: the environment over `.env` over the project
        file (which readers of a variable, like the mail and deal settings, see as if set)."""
        merged = {
            str(setting.variable): _as_text(self.table[setting.name])
            for setting in SETTINGS
            if setting.project
            and setting.variable is not None
            and setting.name != "data_dir"  # relative to the file: `locate` resolves it
            and self.table.get(setting.name) is not None
        }
        merged.update(self.dotenv)
        folder = merged.get(ENV_DATA_DIR, "").strip()
        if folder and self.dotenv_path is not None and ENV_DATA_DIR in self.dotenv:
            # relative to the .env file, as the project file's is to it: the same lake from any folder
            merged[ENV_DATA_DIR] = str(self.dotenv_path.parent / Path(folder).expanduser())
        merged.update(self.environ)
        return merged


def _as_text(value: Any) -> str:
    """A TOML value as a variable would hold it: `true`, `60`, `networks=10,transactions=60`."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Mapping):
        return ",".join(f"{k}={v}" for k, v in value.items())
    return str(value)


def share_group(env: Mapping[str, str] | None = None) -> bool:
    """Whether the folders and files the toolkit creates are readable by the owner's group too:
    COMMERCE_REPORTS_SHARE_GROUP (the environment or `.env`: 1/0, true/false, yes/no, on/off), else
    `share_group = true|false` in the project marker (`commerce-reports.toml`); default no.
    Without `env`, the process's settings (`current_settings`: `.env` is not read again)."""
    if env is not None and ENV_SHARE_GROUP in env:
        return check_switch(env[ENV_SHARE_GROUP], ENV_SHARE_GROUP)
    return bool(current_settings().sources.found("share_group").checked())


@dataclass(frozen=True)
class Limits:
    """Bounds on every request: body size after decompression, wall time, and waits asked for."""

    max_body_bytes: int = 512 * 1024 * 1024
    request_deadline: float = 300.0
    max_retry_wait: float = 900.0

    def __post_init__(self) -> None:
        for name in ("max_body_bytes", "request_deadline", "max_retry_wait"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < float("inf"):
                raise ConfigurationError(f"{name}: {value!r} must be a positive number")

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Limits:
        """The limits of COMMERCE_REPORTS_MAX_BODY_MB, _REQUEST_DEADLINE and _MAX_RETRY_WAIT in
        `env` (the defaults where unset)."""
        return cls.of(Sources(env))

    @classmethod
    def of(cls, sources: Sources) -> Limits:
        """The limits `sources` set (the defaults where unset), each checked as declared."""
        defaults = cls()
        megabytes = sources.found("max_body_mb").checked()
        deadline = sources.found("request_deadline").checked()
        wait = sources.found("max_retry_wait").checked()
        return cls(
            max_body_bytes=defaults.max_body_bytes if megabytes is None else int(megabytes * 2**20),
            request_deadline=defaults.request_deadline if deadline is None else deadline,
            max_retry_wait=defaults.max_retry_wait if wait is None else wait,
        )


@dataclass(frozen=True)
class Settings:
    """What the toolkit needs to know about where to fetch from, where to store and how to show money.

    With no secret key, the entry points (the package's functions, the CLI) use the sandbox.
    `alerts` is the `[alerts]` table of the project marker (`commerce-reports.toml`; None without
    one), read once here with the rest and checked by `alerting.Thresholds.from_table`. `env` is
    every setting by its variable (`Sources.variables`), `sources` where each came from.
    """

    secret_key: Secret | None = None
    base_url: str | None = None
    lake: LakeLocation = field(default_factory=where)
    pace: dict[str, float] = field(default_factory=lambda: parse_pace(None))
    dialect: Dialect = "contract"
    limits: Limits = field(default_factory=Limits)
    revision_days: int = DEFAULT_REVISION_DAYS
    currency: Currency = field(default_factory=Currency.of)
    alerts: Any = field(default=None, repr=False, compare=False)
    env: dict[str, str] = field(default_factory=dict, repr=False, compare=False)
    sources: Sources = field(default_factory=lambda: Sources({}), repr=False, compare=False)

    @property
    def data_dir(self) -> Path:
        return self.lake.path

    def location(self, data_dir: str | os.PathLike[str] | None) -> LakeLocation:
        """The caller's data folder when it names one, else the configured one, and why."""
        return self.lake if data_dir is None else where(data_dir)

    def folder(self, data_dir: str | os.PathLike[str] | None) -> Path:
        """The caller's data folder when it names one, else the configured one."""
        return self.location(data_dir).path

    @classmethod
    def from_env(cls, env_file: Path | None = None) -> Settings:
        """The settings as the environment, `.env` and the project file give them now."""
        return cls.of(Sources.read(env_file))

    @classmethod
    def of(cls, sources: Sources) -> Settings:
        """The settings `sources` give, each checked as declared (a ConfigurationError naming the
        variable or file and key of a wrong one)."""
        env = sources.variables()

        def value(name: str, default: Any = None) -> Any:
            checked = sources.found(name).checked()
            return default if checked is None else checked

        return cls(
            secret_key=value("secret_key"),
            base_url=value("base_url"),
            lake=where(env=env),
            pace=value("pace", parse_pace(None)),
            dialect=value("dialect", "contract"),
            limits=Limits.of(sources),
            revision_days=value("revision_days", DEFAULT_REVISION_DAYS),
            currency=value("currency", Currency.of()),
            alerts=sources.found("alerts").value,
            env=env,
            sources=sources,
        )


class _Resolved(NamedTuple):
    """Sources and what they were read from: the working folder, the environment, and the stat of
    each file they may be read from (None where there is none); the settings made of them."""

    folder: Path
    environ: frozenset[tuple[str, str]]
    env_files: tuple[Path, ...]
    stamps: tuple[tuple[int, int] | None, ...]
    sources: Sources
    settings: Settings | None = None


_lock = threading.Lock()
_resolved: _Resolved | None = None


def current_sources() -> Sources:
    """What the process's settings are read from, read once and kept while the working folder, the
    environment, `.env` and the project marker stay as they were (see the module docstring).
    Unlike `current_settings`, no value is checked: `commerce-reports config list` shows a wrong
    one beside the others. Only the entry points call this."""
    return _current().sources


def current_settings() -> Settings:
    """The process's settings, made of `current_sources()` once and kept with them. Only the entry
    points call this."""
    global _resolved
    kept = _current()
    if kept.settings is not None:
        return kept.settings
    settings = Settings.of(kept.sources)
    with _lock:
        if _resolved is kept:
            _resolved = kept._replace(settings=settings)
    return settings


def _current() -> _Resolved:
    global _resolved
    folder, environ = Path.cwd(), _what_settings_read()
    files = _sources(folder)
    with _lock:
        kept = _resolved
        if (
            kept is not None
            and (kept.folder, kept.environ, kept.env_files) == (folder, environ, files)
            and kept.stamps == _stamps(files)
        ):
            return kept
        stamps = _stamps(files)
        _resolved = _Resolved(folder, environ, files, stamps, Sources.read())
        return _resolved


def _sources(folder: Path) -> tuple[Path, ...]:
    """The files settings are read from: `.env` here, and the project's `.env` and marker (its
    `commerce-reports.toml` or `pyproject.toml`, which hold the currency and the alerts' table)."""
    root = project_root(folder)
    if root is None:
        return (folder / ".env",)
    return (folder / ".env", root / ".env", root / MARKER, root / "pyproject.toml")


def _what_settings_read() -> frozenset[tuple[str, str]]:
    """The environment variables the settings come from: the toolkit's own, and those that place the
    user's data folder. Libraries set others as they load (polars sets `_RJEM_MALLOC_CONF`): those
    must not make `.env` read again. A key variable a sites file names is read from the settings'
    snapshot of the environment, taken when they were resolved."""
    return frozenset(
        (name, value)
        for name, value in os.environ.items()
        if name.startswith("COMMERCE_REPORTS_") or name in ("HOME", "XDG_DATA_HOME")
    )


def _stamps(files: tuple[Path, ...]) -> tuple[tuple[int, int] | None, ...]:
    """Each file's modification time and size, or None when it is not there."""
    stamps: list[tuple[int, int] | None] = []
    for path in files:
        try:
            stat = path.stat()
        except OSError:
            stamps.append(None)
        else:
            stamps.append((stat.st_mtime_ns, stat.st_size))
    return tuple(stamps)
