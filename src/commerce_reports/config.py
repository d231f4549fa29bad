"""Settings from the environment and a git-ignored `.env` (the environment wins).

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

import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dotenv import dotenv_values

from .endpoints import DIALECTS, PACE_KEYS, Dialect
from .errors import ConfigurationError
from .locate import ENV_DATA_DIR, MARKER, LakeLocation, project_root, project_setting, where
from .money import Currency
from .secret import Secret

__all__ = [
    "DEFAULT_PACE",
    "DEFAULT_REVISION_DAYS",
    "DIALECTS",
    "ENV_DATA_DIR",
    "Dialect",
    "Limits",
    "Settings",
    "check_base_url",
    "check_dialect",
    "check_revision_days",
    "current_settings",
    "environment",
    "parse_pace",
    "share_group",
]

DEFAULT_PACE = 60.0  # seconds between requests per endpoint: the contract's documented limit

# Days after an aggregate window ends during which the service may still revise it. The contract
# gives no bound (a return arrives on a later updateDate day, rule 2.1.4); the sandbox models a
# commission up to 10 days after its click and a return up to 30 days after the commission, so
# a click on a window's last day is revised at most 40 days after the window ends. 45 keeps five
# days of margin for a network that posts an adjustment a few days late.
DEFAULT_REVISION_DAYS = 45
_MAX_REVISION_DAYS = 3660

ENV_SECRET_KEY = "COMMERCE_REPORTS_SECRET_KEY"
ENV_BASE_URL = "COMMERCE_REPORTS_BASE_URL"
ENV_PACE = "COMMERCE_REPORTS_PACE"
ENV_DIALECT = "COMMERCE_REPORTS_DIALECT"
ENV_MAX_BODY_MB = "COMMERCE_REPORTS_MAX_BODY_MB"
ENV_REQUEST_DEADLINE = "COMMERCE_REPORTS_REQUEST_DEADLINE"
ENV_MAX_RETRY_WAIT = "COMMERCE_REPORTS_MAX_RETRY_WAIT"
ENV_SHARE_GROUP = "COMMERCE_REPORTS_SHARE_GROUP"
ENV_REVISION_DAYS = "COMMERCE_REPORTS_REVISION_DAYS"
_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off", "")
ENV_CURRENCY = "COMMERCE_REPORTS_CURRENCY"


def parse_pace(text: str | float | Mapping[str, float] | None) -> dict[str, float]:
    """Read a pace: one number for every endpoint, or `transactions=60,networks=10,merchandise=60`.

    Endpoints not named keep the documented 60 seconds.
    """
    pace = dict.fromkeys(PACE_KEYS, DEFAULT_PACE)
    if text is None or text == "":
        return pace
    if isinstance(text, bool) or not isinstance(text, str | int | float | Mapping):
        raise ConfigurationError(
            f"pace: {text!r:.60} is not a pace; give seconds (60) or e.g. transactions=60,networks=10"
        )
    if isinstance(text, int | float):
        return dict.fromkeys(PACE_KEYS, _seconds("pace", str(text)))
    if isinstance(text, Mapping):
        items = [(str(k), str(v)) for k, v in text.items()]
    elif "=" not in text:
        return dict.fromkeys(PACE_KEYS, _seconds("pace", text))
    else:
        items = []
        for part in text.split(","):
            name, sep, value = part.partition("=")
            if not sep:
                raise ConfigurationError(
                    f"{ENV_PACE}: {part!r} is not endpoint=seconds; "
                    "write one number or e.g. transactions=60,networks=10,merchandise=60"
                )
            items.append((name.strip(), value))
    for name, value in items:
        if name not in PACE_KEYS:
            raise ConfigurationError(
                f"{ENV_PACE}: unknown endpoint {name!r}; expected one of {', '.join(PACE_KEYS)}"
            )
        pace[name] = _seconds(f"pace for {name}", value)
    return pace


def _seconds(what: str, value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        raise ConfigurationError(f"{what}: {value!r} is not a number of seconds") from None
    if not seconds >= 0 or seconds == float("inf"):
        raise ConfigurationError(f"{what}: {value!r} must be zero or a positive number of seconds")
    return seconds


def environment(env_file: Path | None = None) -> dict[str, str]:
    """The process environment over the values of `.env` (the environment wins)."""
    merged: dict[str, str] = {}
    path = env_file if env_file is not None else _env_file()
    if path is not None and path.is_file():
        merged.update({k: v for k, v in dotenv_values(path).items() if v is not None})
    merged.update(os.environ)
    return merged


def _env_file() -> Path | None:
    here = Path.cwd() / ".env"
    if here.is_file():
        return here
    root = project_root()
    return root / ".env" if root is not None else None


def share_group(env: Mapping[str, str] | None = None) -> bool:
    """Whether the folders and files the toolkit creates are readable by the owner's group too:
    COMMERCE_REPORTS_SHARE_GROUP (the environment or `.env`: 1/0, true/false, yes/no, on/off), else
    `share_group = true|false` in the project marker (`commerce-reports.toml`); default no.
    Without `env`, the process's settings (`current_settings`: `.env` is not read again)."""
    variables = env if env is not None else current_settings().env
    if ENV_SHARE_GROUP in variables:
        text = variables[ENV_SHARE_GROUP].strip().lower()
        if text not in _TRUE + _FALSE:
            raise ConfigurationError(
                f"{ENV_SHARE_GROUP}: {variables[ENV_SHARE_GROUP]!r} is not a yes or no; write 1 to let the "
                "group read the data, 0 (the default) to keep it to its owner"
            )
        return text in _TRUE
    value, marker = project_setting("share_group")
    if value is None:
        return False
    if not isinstance(value, bool):
        raise ConfigurationError(f"{marker}: share_group must be true or false, got {value!r}")
    return value


def check_dialect(value: object, where: str = ENV_DIALECT) -> Dialect:
    """A dialect name, or a ConfigurationError listing the two."""
    text = value.strip().lower() if isinstance(value, str) else ""
    for dialect in DIALECTS:
        if text == dialect:
            return dialect
    raise ConfigurationError(
        f"{where}: {value!r} is not a dialect; use 'contract' (the service contract's names and "
        "nested shape) or 'published' (the vendor's OpenAPI description)"
    )


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
    def from_env(cls, env: dict[str, str]) -> Limits:
        defaults = cls()
        megabytes = _number(env, ENV_MAX_BODY_MB, defaults.max_body_bytes / 2**20)
        return cls(
            max_body_bytes=int(megabytes * 2**20),
            request_deadline=_number(env, ENV_REQUEST_DEADLINE, defaults.request_deadline),
            max_retry_wait=_number(env, ENV_MAX_RETRY_WAIT, defaults.max_retry_wait),
        )


def _number(env: dict[str, str], name: str, default: float) -> float:
    text = env.get(name, "").strip()
    if not text:
        return default
    value = _seconds(name, text)
    if value <= 0:
        raise ConfigurationError(f"{name}: {text!r} must be a positive number")
    return value


def check_revision_days(value: object, where: str = ENV_REVISION_DAYS) -> int:
    """A revision horizon: whole days, 0 to 3660, or a ConfigurationError saying what is wanted."""
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= _MAX_REVISION_DAYS:
        raise ConfigurationError(
            f"{where}: {value!r} is not a number of days; give whole days from 0 to {_MAX_REVISION_DAYS}, "
            f"e.g. {DEFAULT_REVISION_DAYS} (the default: how long the service may revise a window)"
        )
    return value


def check_base_url(url: str, where: str = ENV_BASE_URL) -> str:
    """An http(s) URL without its trailing slash, or a ConfigurationError with an example."""
    text = url.strip() if isinstance(url, str) else ""
    if not text.startswith(("http://", "https://")):
        raise ConfigurationError(f"{where}: {url!r} is not an http(s) URL, e.g. https://api.example.com")
    return text.rstrip("/")


@dataclass(frozen=True)
class Settings:
    """What the toolkit needs to know about where to fetch from, where to store and how to show money.

    With no secret key, the entry points (the package's functions, the CLI) use the sandbox.
    `alerts` is the `[alerts]` table of the project marker (`commerce-reports.toml`; None without
    one), read once here with the rest and checked by `alerting.Thresholds.from_table`.
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
        env = environment(env_file)
        key = env.get(ENV_SECRET_KEY, "").strip()
        base_url = env.get(ENV_BASE_URL, "").strip()
        dialect = env.get(ENV_DIALECT, "").strip()
        revision_days = env.get(ENV_REVISION_DAYS, "").strip()
        return cls(
            secret_key=Secret(key) if key else None,
            base_url=check_base_url(base_url) if base_url else None,
            lake=where(env=env),
            pace=parse_pace(env.get(ENV_PACE)),
            dialect=check_dialect(dialect) if dialect else "contract",
            limits=Limits.from_env(env),
            revision_days=check_revision_days(revision_days) if revision_days else DEFAULT_REVISION_DAYS,
            currency=_currency(env),
            alerts=project_setting("alerts")[0],
            env=env,
        )


def _currency(env: Mapping[str, str]) -> Currency:
    """`COMMERCE_REPORTS_CURRENCY`, else the marker's `currency`, else USD (checked: ISO 4217)."""
    chosen = env.get(ENV_CURRENCY, "").strip()
    if chosen:
        return Currency.of(chosen, ENV_CURRENCY)
    value, marker = project_setting("currency")
    return Currency.of() if value is None else Currency.of(value, f"{marker}: currency")


@dataclass(frozen=True)
class _Resolved:
    """Settings and what they were resolved from: the working folder, the environment, and the
    stat of each file they may be read from (None where there is none)."""

    folder: Path
    environ: frozenset[tuple[str, str]]
    env_files: tuple[Path, ...]
    stamps: tuple[tuple[int, int] | None, ...]
    settings: Settings


_lock = threading.Lock()
_resolved: _Resolved | None = None


def current_settings() -> Settings:
    """The process's settings, read once and kept while the working folder, the environment, `.env`
    and the project marker stay as they were (see the module docstring). Only the entry points call
    this."""
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
            return kept.settings
        stamps = _stamps(files)
        settings = Settings.from_env()
        _resolved = _Resolved(folder, environ, files, stamps, settings)
        return settings


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
