"""The embedded default: with no secret key configured, the toolkit runs against a sandbox.

One sandbox per process, started on first use on a free loopback port in a background thread,
at the demo-friendly pace, so a new user sees everything work without any set-up.
"""

from __future__ import annotations

import threading
from contextlib import ExitStack
from typing import TYPE_CHECKING

from .config import Secret

if TYPE_CHECKING:
    from .sandbox import RunningSandbox

__all__ = ["embedded_sandbox"]

_lock = threading.Lock()
_running: RunningSandbox | None = None
_stack = ExitStack()


def embedded_sandbox(site: str | None = None) -> tuple[RunningSandbox, Secret]:
    """The process's sandbox (started if needed) and the secret key of `site` (default: the first)."""
    global _running
    from .sandbox import DEMO_SITES, FAST_PACE, SandboxConfig, run_sandbox

    with _lock:
        if _running is None:
            _running = _stack.enter_context(run_sandbox(SandboxConfig(pace=FAST_PACE)))
    sites = {s.name: s for s in _running.sandbox.config.sites}
    name = site or DEMO_SITES[0].name
    if name not in sites:
        from .errors import ConfigurationError

        raise ConfigurationError(
            f"the sandbox has no site {name!r}; its sites are {', '.join(sites)}"
        )
    return _running, Secret(sites[name].secret_key)
