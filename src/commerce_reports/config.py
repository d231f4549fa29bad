"""Settings from the environment and a git-ignored `.env`; secrets wrapped so they never print."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from dotenv import dotenv_values

from .errors import ConfigurationError, register_secret

__all__ = [
    "DEFAULT_PACE",
    "ENDPOINTS",
    "Secret",
    "Settings",
    "parse_pace",
]

ENDPOINTS = ("transactions", "networks", "merchandise")
DEFAULT_PACE = 60.0  # seconds between requests per endpoint: the contract's documented limit

ENV_SECRET_KEY = "COMMERCE_REPORTS_SECRET_KEY"
ENV_BASE_URL = "COMMERCE_REPORTS_BASE_URL"
ENV_DATA_DIR = "COMMERCE_REPORTS_DATA_DIR"
ENV_PACE = "COMMERCE_REPORTS_PACE"
ENV_DEALS_API_KEY = "COMMERCE_REPORTS_DEALS_API_KEY"
ENV_DEALS_BASE_URL = "COMMERCE_REPORTS_DEALS_BASE_URL"


class Secret:
    """A secret value whose repr and str never show it; `.reveal()` is the only way out."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        if not isinstance(value, str) or not value.strip():
            raise ConfigurationError("a secret must be a non-empty string")
        self._value = value.strip()
        register_secret(self._value)

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)


def parse_pace(text: str | float | Mapping[str, float] | None) -> dict[str, float]:
    """Read a pace: one number for every endpoint, or `transactions=60,networks=10,merchandise=60`.

    Endpoints not named keep the documented 60 seconds.
    """
    pace = dict.fromkeys(ENDPOINTS, DEFAULT_PACE)
    if text is None or text == "":
        return pace
    if isinstance(text, int | float):
        return dict.fromkeys(ENDPOINTS, _seconds("pace", str(text)))
    if isinstance(text, Mapping):
        items = [(str(k), str(v)) for k, v in text.items()]
    elif "=" not in text:
        return dict.fromkeys(ENDPOINTS, _seconds("pace", text))
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
        if name not in ENDPOINTS:
            raise ConfigurationError(
                f"{ENV_PACE}: unknown endpoint {name!r}; expected one of {', '.join(ENDPOINTS)}"
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
    path = env_file if env_file is not None else Path.cwd() / ".env"
    if path.is_file():
        merged.update({k: v for k, v in dotenv_values(path).items() if v is not None})
    merged.update(os.environ)
    return merged


@dataclass(frozen=True)
class Settings:
    """What the toolkit needs to know about where to fetch from and where to store.

    With no secret key, everything runs against the embedded sandbox.
    """

    secret_key: Secret | None = None
    base_url: str | None = None
    data_dir: Path = Path("data")
    pace: dict[str, float] = field(default_factory=lambda: parse_pace(None))
    deals_api_key: Secret | None = None
    deals_base_url: str | None = None

    @classmethod
    def from_env(cls, env_file: Path | None = None) -> Settings:
        env = environment(env_file)
        key = env.get(ENV_SECRET_KEY, "").strip()
        deals_key = env.get(ENV_DEALS_API_KEY, "").strip()
        base_url = env.get(ENV_BASE_URL, "").strip() or None
        if base_url and not base_url.startswith(("http://", "https://")):
            raise ConfigurationError(
                f"{ENV_BASE_URL}: {base_url!r} is not an http(s) URL, e.g. https://api.example.com"
            )
        return cls(
            secret_key=Secret(key) if key else None,
            base_url=base_url.rstrip("/") if base_url else None,
            data_dir=Path(env.get(ENV_DATA_DIR, "").strip() or "data"),
            pace=parse_pace(env.get(ENV_PACE)),
            deals_api_key=Secret(deals_key) if deals_key else None,
            deals_base_url=(env.get(ENV_DEALS_BASE_URL, "").strip().rstrip("/") or None),
        )
