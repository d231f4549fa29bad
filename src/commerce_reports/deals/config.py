"""Settings of the deal wing: its key and URL (COMMERCE_REPORTS_DEALS_API_KEY / _BASE_URL) and the
toolkit's request bounds (COMMERCE_REPORTS_MAX_BODY_MB, _REQUEST_DEADLINE, _MAX_RETRY_WAIT).

The wing never reads the environment: the entry points (`cr.open_deals_client()`, the `deals`
command) resolve the toolkit's settings once and hand them to `DealSettings.resolved`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ..config import Limits, Settings, check_base_url
from ..errors import ConfigurationError
from ..secret import Secret
from .errors import DealSettingMissingError

__all__ = ["ENV_DEALS_API_KEY", "ENV_DEALS_BASE_URL", "DealSettings"]

ENV_DEALS_API_KEY = "COMMERCE_REPORTS_DEALS_API_KEY"
ENV_DEALS_BASE_URL = "COMMERCE_REPORTS_DEALS_BASE_URL"

_START_SANDBOX = (
    "start a local one with `commerce-reports sandbox --deals` and use the URL and keys it prints"
)


@dataclass(frozen=True)
class DealSettings:
    """Where the deal interface is, the key it takes, and the bounds on every request. `option`:
    the command-line option giving the URL when a command made these settings (the `deals`
    command's `--base-url`), so what is missing or wrong is said in its words, not Python's;
    `url_where`: where the configured URL is written (a variable, or a file and its key)."""

    api_key: Secret | None = None
    base_url: str | None = None
    limits: Limits = field(default_factory=Limits)
    option: str = ""
    url_where: str = ENV_DEALS_BASE_URL

    @classmethod
    def of(
        cls, env: Mapping[str, str], option: str = "", url_where: str = ENV_DEALS_BASE_URL
    ) -> DealSettings:
        """The deal settings among `env`, the toolkit's settings by variable (`Settings.env`)."""
        key = env.get(ENV_DEALS_API_KEY, "").strip()
        url = env.get(ENV_DEALS_BASE_URL, "").strip()
        return cls(
            api_key=Secret(key) if key else None,
            base_url=url or None,
            limits=Limits.from_env(env),
            option=option,
            url_where=url_where,
        )

    @classmethod
    def resolved(cls, settings: Settings, option: str = "") -> DealSettings:
        """The deal settings of the toolkit's resolved `settings`: its variables, and where the
        configured URL is written (a variable, `.env`, or the project file and its key)."""
        return cls.of(settings.env, option, settings.sources.found("deals_base_url").where)

    def connection(self, api_key: str | Secret | None, base_url: str | None) -> tuple[Secret, str]:
        """The key and URL to use: the ones given, else these settings; a ConfigurationError
        saying how to get one when either is missing."""
        key = api_key if api_key is not None else self.api_key
        if key is None:
            raise DealSettingMissingError(
                f"no deal-request API key: {self._how(ENV_DEALS_API_KEY, 'api_key')}"
            )
        if not isinstance(key, str | Secret):
            raise ConfigurationError(f"api_key must be a string, got {type(key).__name__}")
        url = base_url if base_url is not None else self.base_url
        if not url:
            raise DealSettingMissingError(
                f"no deal-request base URL: {self._how(ENV_DEALS_BASE_URL, 'base_url')}"
            )
        where = (self.option or "base_url") if base_url is not None else self.url_where
        return (key if isinstance(key, Secret) else Secret(key)), check_base_url(url, where)

    def _how(self, variable: str, argument: str) -> str:
        """How to give a missing key or URL: in a command's words (its option, the variable, the
        .env file) when a command made these settings, else in Python's."""
        if self.option:
            url = f"pass {self.option} URL, or " if argument == "base_url" else ""
            give = f"{url}set {variable} (in the environment, or in the project's .env)"
        else:
            opened = "open the client with `cr.open_deals_client()`"
            give = f"pass {argument}=..., or {opened}, which reads {variable}"
        return f"{give}; for testing, {_START_SANDBOX}"
