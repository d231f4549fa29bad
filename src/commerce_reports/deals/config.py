"""Settings of the deal wing: its key and URL (COMMERCE_REPORTS_DEALS_API_KEY / _BASE_URL), read
from the environment over `.env` like every toolkit setting, and the toolkit's request bounds
(COMMERCE_REPORTS_MAX_BODY_MB, _REQUEST_DEADLINE, _MAX_RETRY_WAIT)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..config import Limits, check_base_url, environment
from ..errors import ConfigurationError
from ..secret import Secret

__all__ = ["ENV_DEALS_API_KEY", "ENV_DEALS_BASE_URL", "DealSettings"]

ENV_DEALS_API_KEY = "COMMERCE_REPORTS_DEALS_API_KEY"
ENV_DEALS_BASE_URL = "COMMERCE_REPORTS_DEALS_BASE_URL"

_START_SANDBOX = (
    "start a local one with `commerce-reports sandbox --deals` and use the URL and keys it prints"
)


@dataclass(frozen=True)
class DealSettings:
    """Where the deal interface is, the key it takes, and the bounds on every request."""

    api_key: Secret | None = None
    base_url: str | None = None
    limits: Limits = field(default_factory=Limits)

    @classmethod
    def from_env(cls, env_file: Path | None = None) -> DealSettings:
        env = environment(env_file)
        key = env.get(ENV_DEALS_API_KEY, "").strip()
        url = env.get(ENV_DEALS_BASE_URL, "").strip()
        return cls(
            api_key=Secret(key) if key else None,
            base_url=url or None,
            limits=Limits.from_env(env),
        )

    def connection(self, api_key: str | Secret | None, base_url: str | None) -> tuple[Secret, str]:
        """The key and URL to use: the ones given, else these settings; a ConfigurationError
        saying how to get one when either is missing."""
        key = api_key if api_key is not None else self.api_key
        if key is None:
            raise ConfigurationError(
                f"no deal-request API key: set {ENV_DEALS_API_KEY} or pass api_key=...; "
                f"for testing, {_START_SANDBOX}"
            )
        if not isinstance(key, str | Secret):
            raise ConfigurationError(f"api_key must be a string, got {type(key).__name__}")
        url = base_url if base_url is not None else self.base_url
        if not url:
            raise ConfigurationError(
                f"no deal-request base URL: set {ENV_DEALS_BASE_URL} or pass base_url=...; "
                f"for testing, {_START_SANDBOX}"
            )
        where = "base_url" if base_url is not None else ENV_DEALS_BASE_URL
        return (key if isinstance(key, Secret) else Secret(key)), check_base_url(url, where)
