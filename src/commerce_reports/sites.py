"""Sites: named profiles, each with its own secret key. Per-site performance is a first-class dimension.

Where sites come from, first match wins:
1. `<data_dir>/sites.toml`: `[sites.<name>]` tables with `secret_key_env = "ENV_VAR_NAME"` (the key
   itself stays in the environment or `.env`, never in the data folder) and an optional `base_url`.
2. Environment variables `COMMERCE_REPORTS_SECRET_KEY_<NAME>`: one site per variable.
3. `COMMERCE_REPORTS_SECRET_KEY`: one site, named by `COMMERCE_REPORTS_SITE` (default `default`).
4. Nothing configured: the embedded sandbox's demo sites (alpha, beta).
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .config import ENV_SECRET_KEY, Settings, environment
from .contract import check_site_name
from .errors import ConfigurationError
from .secret import Secret

if TYPE_CHECKING:
    from .sandbox import RunningSandbox

__all__ = ["SiteProfile", "SiteSelection", "configured_sites", "sandbox_sites", "select_sites"]

SITES_FILE = "sites.toml"


@dataclass(frozen=True)
class SiteProfile:
    name: str
    secret_key: Secret
    base_url: str
    sandbox: bool = False
    pace: float | None = None  # a sandbox's own pace; None: the configured pace

    def __repr__(self) -> str:
        return f"SiteProfile(name={self.name!r}, base_url={self.base_url!r}, sandbox={self.sandbox})"


def configured_sites(
    settings: Settings | None = None, env_file: Path | None = None
) -> dict[str, SiteProfile]:
    """Every site the configuration names (see the module docstring for the order)."""
    settings = settings or Settings.from_env(env_file)
    env = environment(env_file)
    from_file = _sites_file(settings.data_dir / SITES_FILE, env, settings.base_url)
    if from_file:
        return from_file
    prefix = f"{ENV_SECRET_KEY}_"
    named = {k[len(prefix) :].lower(): v for k, v in env.items() if k.startswith(prefix) and v.strip()}
    if named:
        base_url = _require_url(settings.base_url, "COMMERCE_REPORTS_SECRET_KEY_<NAME>")
        return {
            check_site_name(name): SiteProfile(name, Secret(key), base_url)
            for name, key in sorted(named.items())
        }
    if settings.secret_key is not None:
        name = check_site_name(env.get("COMMERCE_REPORTS_SITE", "").strip() or "default")
        return {name: SiteProfile(name, settings.secret_key, _require_url(settings.base_url, ENV_SECRET_KEY))}
    from .embedded import embedded_sandbox

    return {p.name: p for p in sandbox_sites(embedded_sandbox())}


def sandbox_sites(running: RunningSandbox) -> list[SiteProfile]:
    """Profiles of a running sandbox's sites, at the sandbox's own pace."""
    config = running.sandbox.config
    return [
        SiteProfile(site.name, Secret(site.secret_key), running.base_url, sandbox=True, pace=config.pace)
        for site in config.sites
    ]


SiteSelection = str | Sequence[str] | Sequence[SiteProfile] | None


def select_sites(
    sites: SiteSelection, available: Callable[[], dict[str, SiteProfile]]
) -> dict[str, SiteProfile]:
    """The profiles named by `sites` (None: all configured), or the profiles given themselves."""
    if sites is not None and not isinstance(sites, str) and all(isinstance(s, SiteProfile) for s in sites):
        return {s.name: s for s in sites if isinstance(s, SiteProfile)}
    configured = available()
    if sites is None:
        return configured
    names = [sites] if isinstance(sites, str) else [str(s) for s in sites]
    unknown = [n for n in names if n not in configured]
    if unknown:
        raise ConfigurationError(
            f"unknown site {unknown[0]!r}; configured sites: {', '.join(configured) or 'none'}"
        )
    return {n: configured[n] for n in names}


def _require_url(url: str | None, what: str) -> str:
    if not url:
        raise ConfigurationError(
            f"{what} is set but COMMERCE_REPORTS_BASE_URL is not: set the service's address"
        )
    return url


def _sites_file(path: Path, env: dict[str, str], default_url: str | None) -> dict[str, SiteProfile]:
    if not path.is_file():
        return {}
    try:
        data: dict[str, Any] = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise ConfigurationError(f"{path}: not readable TOML ({error})") from None
    profiles: dict[str, SiteProfile] = {}
    for name, table in (data.get("sites") or {}).items():
        check_site_name(name)
        if not isinstance(table, dict) or "secret_key_env" not in table:
            raise ConfigurationError(
                f'{path}: [sites.{name}] needs secret_key_env = "ENV_VAR", the variable holding its key'
            )
        if "secret_key" in table:
            raise ConfigurationError(
                f"{path}: [sites.{name}] must not hold the key itself; use secret_key_env"
            )
        variable = str(table["secret_key_env"])
        key = env.get(variable, "").strip()  # the environment over .env, as everywhere
        if not key:
            raise ConfigurationError(
                f"{path}: site {name!r} reads its key from ${variable}, which is not set"
            )
        url = str(table.get("base_url") or default_url or "")
        profiles[name] = SiteProfile(name, Secret(key), _require_url(url, f"site {name!r}"))
    return profiles
