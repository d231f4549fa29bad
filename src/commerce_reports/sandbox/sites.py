"""The sandbox's sites and keys, and the demo's pace: what naming the embedded sandbox's sites needs
(`commerce-reports status` with no key configured), without the sandbox's configuration, faults
and world."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import ValidationError

__all__ = ["DEMO_SITES", "FAST_PACE", "Site"]

FAST_PACE = 0.05  # seconds: the `--fast` pace, quick enough for demos and tests
_SITE_NAME = re.compile(r"[a-z0-9_-]+")


@dataclass(frozen=True)
class Site:
    """A site of the sandbox and the secret key that reads its reports."""

    name: str
    secret_key: str

    def __post_init__(self) -> None:
        if not _SITE_NAME.fullmatch(self.name):
            raise ValidationError("site name", f"got {self.name!r}", "expected [a-z0-9_-]+")
        if not self.secret_key or any(c.isspace() for c in self.secret_key):
            raise ValidationError(f"site {self.name}", "the secret key must be non-empty, without spaces")

    def __repr__(self) -> str:  # the key stays out of logs and tracebacks
        return f"Site(name={self.name!r}, secret_key='***')"


DEMO_SITES = (Site("alpha", "sandbox-alpha-key"), Site("beta", "sandbox-beta-key"))
