"""What a reports sandbox serves: its sites and keys, seed, clock, pace, shape and faults."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime

from .faults import FaultConfig

__all__ = ["DEMO_SITES", "FAST_PACE", "SHAPES", "SandboxConfig", "Site"]

FAST_PACE = 0.05  # seconds: the `--fast` pace, quick enough for demos and tests
SHAPES = ("nested", "flat")
_SITE_NAME = re.compile(r"[a-z0-9_-]+")


@dataclass(frozen=True)
class Site:
    """A site of the sandbox and the secret key that reads its reports."""

    name: str
    secret_key: str

    def __post_init__(self) -> None:
        if not _SITE_NAME.fullmatch(self.name):
            raise ValueError(f"site name must match [a-z0-9_-]+ (got {self.name!r})")
        if not self.secret_key or any(c.isspace() for c in self.secret_key):
            raise ValueError(f"site {self.name}: the secret key must be non-empty, without spaces")

    def __repr__(self) -> str:  # the key stays out of logs and tracebacks
        return f"Site(name={self.name!r}, secret_key='***')"


DEMO_SITES = (Site("alpha", "sandbox-alpha-key"), Site("beta", "sandbox-beta-key"))


@dataclass(frozen=True)
class SandboxConfig:
    """Settings of a `ReportsSandbox`.

    `now` freezes the clock at that moment (a naive value is read as UTC); None follows real UTC
    time. `first_day` defaults to 400 days before the clock's date. `pace` is the minimum interval
    in seconds between two requests of one key to one endpoint (0 = no limit).
    """

    sites: tuple[Site, ...] = DEMO_SITES
    seed: int = 0
    now: datetime | None = None
    first_day: date | None = None
    pace: float = 60.0
    shape: str = "nested"
    faults: FaultConfig = field(default_factory=FaultConfig)
    transactions_per_day: int = 400

    def __post_init__(self) -> None:
        if not self.sites:
            raise ValueError("a sandbox needs at least one site")
        names = [s.name for s in self.sites]
        keys = [s.secret_key for s in self.sites]
        if len(set(names)) != len(names) or len(set(keys)) != len(keys):
            raise ValueError("site names and secret keys must be unique")
        if self.now is not None and self.now.tzinfo is None:
            object.__setattr__(self, "now", self.now.replace(tzinfo=UTC))
        if self.pace < 0:
            raise ValueError(f"pace must be >= 0 seconds (got {self.pace})")
        if self.shape not in SHAPES:
            raise ValueError(f"shape must be one of {', '.join(SHAPES)} (got {self.shape!r})")
        if self.transactions_per_day < 1:
            raise ValueError(f"transactions_per_day must be >= 1 (got {self.transactions_per_day})")
