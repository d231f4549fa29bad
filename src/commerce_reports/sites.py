"""Sites: named profiles, each with its own secret key. Per-site performance is a first-class dimension.

Where sites come from, first match wins:
1. `<data_dir>/sites.toml`: `[sites.<name>]` tables with `secret_key_env = "ENV_VAR_NAME"` (the key
   itself stays in the environment or `.env`, never in the data folder), and optionally `base_url`,
   `dialect`, `max_body_mb`, `request_deadline`, `max_retry_wait` and `revision_days` (how long the
   service may revise an aggregate window of this site; default COMMERCE_REPORTS_REVISION_DAYS).
2. Environment variables `COMMERCE_REPORTS_SECRET_KEY_<NAME>`: one site per variable.
3. `COMMERCE_REPORTS_SECRET_KEY`: one site, named by `COMMERCE_REPORTS_SITE` (default `default`).
Both 2 and 3 at once is refused: 3's site would silently drop out.
Nothing configured: no sites. Reading the configuration never starts anything; the entry points
decide to use the built-in sandbox then.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .config import (
    DEFAULT_REVISION_DAYS,
    ENV_SECRET_KEY,
    Dialect,
    Found,
    Limits,
    Settings,
    check_revision_days,
)
from .contract import check_site_name
from .errors import CommerceReportsError, ConfigurationError, ValidationError
from .locate import read_toml
from .secret import Secret
from .settings import SETTINGS, SITES

__all__ = [
    "SITES_FILE",
    "SiteProfile",
    "SiteSelection",
    "configured_sites",
    "select_sites",
    "selection_of",
    "site_settings",
]

SITES_FILE = "sites.toml"
_TABLE_KEYS = {setting.name: setting for setting in SETTINGS if setting.per_site}


@dataclass(frozen=True)
class SiteProfile:
    """One site: its key, the service's address, the wire dialect, its request limits, and how many
    days after a window ends the service may still revise the window's aggregates."""

    name: str
    secret_key: Secret
    base_url: str
    dialect: Dialect = "contract"
    limits: Limits = field(default_factory=Limits)
    sandbox: bool = False  # a built-in sandbox: its address needs no check before the first sync
    # Seconds between requests (one number, or per pace key); None: the configured pace, which the
    # entry points fill in (`paced`).
    pace: float | Mapping[str, float] | None = None
    revision_days: int = DEFAULT_REVISION_DAYS

    def __post_init__(self) -> None:
        check_revision_days(self.revision_days, f"site {self.name!r} revision_days")

    def __repr__(self) -> str:
        return (
            f"SiteProfile(name={self.name!r}, base_url={self.base_url!r}, dialect={self.dialect!r}, "
            f"sandbox={self.sandbox})"
        )

    def paced(self, pace: Mapping[str, float]) -> SiteProfile:
        """This profile at `pace` (the configured one), unless it has a pace of its own."""
        return self if self.pace is not None else replace(self, pace=dict(pace))


def configured_sites(settings: Settings) -> dict[str, SiteProfile]:
    """Every site `settings` names (see the module docstring for the order); may be empty."""
    env = settings.env
    from_file = _sites_file(settings.data_dir / SITES_FILE, settings)
    if from_file:
        return from_file
    prefix = f"{ENV_SECRET_KEY}_"
    named = {k[len(prefix) :].lower(): v for k, v in env.items() if k.startswith(prefix) and v.strip()}
    dialect, limits, days = settings.dialect, settings.limits, settings.revision_days
    site = env.get("COMMERCE_REPORTS_SITE", "").strip() or "default"  # the one key's site
    if named:
        if settings.secret_key is not None:  # its site would silently drop out of every sync
            raise ConfigurationError(
                f"{ENV_SECRET_KEY} and {prefix}<NAME> are both set: the named keys make the sites, and "
                f"{ENV_SECRET_KEY}'s site ({site}) would be synced no more; name its key "
                f"{prefix}{site.upper()} too (then unset {ENV_SECRET_KEY}), or keep one of the two ways"
            )
        base_url = _require_url(settings.base_url, "COMMERCE_REPORTS_SECRET_KEY_<NAME>")
        return {
            _site_name(name, f"{prefix}{name.upper()}"): SiteProfile(
                name, Secret(key), base_url, dialect, limits, revision_days=days
            )
            for name, key in sorted(named.items())
        }
    if settings.secret_key is not None:
        name = _site_name(site, "COMMERCE_REPORTS_SITE")
        url = _require_url(settings.base_url, ENV_SECRET_KEY)
        return {name: SiteProfile(name, settings.secret_key, url, dialect, limits, revision_days=days)}
    return {}


SiteSelection = str | Sequence[str] | Sequence[SiteProfile] | None


def selection_of(site: SiteSelection, sites: SiteSelection) -> SiteSelection:
    """What the caller chose with `site=` (one) or `sites=` (several); both at once is an error.
    Either takes a name, a list of names or profiles (None: every site)."""
    if site is not None and sites is not None:
        raise ValidationError("site", "given with sites=", "give site= for one site or sites= for several")
    return site if site is not None else sites


def select_sites(
    sites: SiteSelection, available: Callable[[], Mapping[str, SiteProfile]]
) -> dict[str, SiteProfile]:
    """The profiles named by `sites` (None: all available), or the profiles given themselves."""
    if isinstance(sites, SiteProfile):
        return {sites.name: sites}
    if sites is not None and not isinstance(sites, str):
        if not isinstance(sites, Sequence) or not sites:
            raise ValidationError(
                "sites",
                f"{sites!r:.60} is not a site selection",
                "give a name, a list of names, or None for all",
            )
        if all(isinstance(s, SiteProfile) for s in sites):
            return {s.name: s for s in sites if isinstance(s, SiteProfile)}
        if not all(isinstance(s, str) for s in sites):
            raise ValidationError("sites", f"{sites!r:.60} mixes names with other things", "give site names")
    configured = dict(available())
    if sites is None:
        return configured
    names = [sites] if isinstance(sites, str) else [str(s) for s in sites]
    unknown = [n for n in names if n not in configured]
    if unknown:
        raise ConfigurationError(
            f"unknown site {unknown[0]!r}; configured sites: {', '.join(configured) or 'none'}"
        )
    return {n: configured[n] for n in names}


def _site_name(name: str, where: str) -> str:
    try:
        return check_site_name(name)
    except CommerceReportsError as error:
        raise ConfigurationError(f"{where}: {error}") from None


def _require_url(url: str | None, what: str) -> str:
    if not url:
        raise ConfigurationError(
            f"{what} is set but COMMERCE_REPORTS_BASE_URL is not: set the service's address"
        )
    return url


def _read_sites_file(path: Path) -> dict[str, Any]:
    """The `[sites.<name>]` tables of `path` (none when there is no file)."""
    if not path.is_file():
        return {}
    tables = read_toml(path).get("sites") or {}
    if not isinstance(tables, dict):
        raise ConfigurationError(f"{path}: `sites` must be tables, e.g. [sites.recipes]")
    return tables


def site_settings(data_dir: Path) -> list[Found]:
    """Each setting the sites file of `data_dir` gives a site (`sites.<name>.<key>`, source
    `sites.toml`), as written; `commerce-reports config list` shows them beside the others."""
    path = data_dir / SITES_FILE
    found = []
    for name, table in _read_sites_file(path).items():
        for key, value in table.items() if isinstance(table, dict) else ():
            setting = _TABLE_KEYS.get(key)
            if setting is not None:
                found.append(
                    Found(setting, f"sites.{name}.{key}", value, SITES, f"{path}: [sites.{name}] {key}")
                )
    return found


def _sites_file(path: Path, settings: Settings) -> dict[str, SiteProfile]:
    tables = _read_sites_file(path)
    return {name: _profile(path, name, table, settings) for name, table in tables.items()}


def _profile(path: Path, name: str, table: Any, settings: Settings) -> SiteProfile:
    where = f"{path}: [sites.{name}]"
    name = _site_name(name, f"{path}: [sites.{name}]")
    if not isinstance(table, dict) or "secret_key_env" not in table:
        raise ConfigurationError(f'{where} needs secret_key_env = "ENV_VAR", the variable holding its key')
    if "secret_key" in table:
        raise ConfigurationError(f"{where} must not hold the key itself; use secret_key_env")
    unknown = sorted(set(table) - set(_TABLE_KEYS))
    if unknown:
        raise ConfigurationError(
            f"{where}: unknown setting {unknown[0]!r}; known: {', '.join(sorted(_TABLE_KEYS))}"
        )
    checked = {
        key: setting.check(table[key], f"{where} {key}")
        for key, setting in _TABLE_KEYS.items()
        if key in table
    }
    variable = checked["secret_key_env"]
    key = settings.env.get(variable, "").strip()  # the environment over .env, as everywhere
    if not key:
        raise ConfigurationError(f"{where} reads its key from ${variable}, which is not set")
    url = checked.get("base_url") or settings.base_url
    own = {"max_body_bytes": int(checked["max_body_mb"] * 2**20)} if "max_body_mb" in checked else {}
    own |= {key: checked[key] for key in ("request_deadline", "max_retry_wait") if key in checked}
    return SiteProfile(
        name,
        Secret(key),
        _require_url(url, f"site {name!r}"),
        checked.get("dialect", settings.dialect),
        replace(settings.limits, **own),
        revision_days=checked.get("revision_days", settings.revision_days),
    )
