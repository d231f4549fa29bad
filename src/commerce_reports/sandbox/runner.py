"""Running a reports sandbox: in a background thread (tests, notebooks) or in the foreground."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from .config import SandboxConfig
from .http import ServerHandle, serve, serve_forever
from .reports import ReportsSandbox

__all__ = ["RunningSandbox", "run_sandbox", "serve_sandbox_forever"]


@dataclass(frozen=True)
class RunningSandbox:
    """A sandbox listening on loopback: where to reach it, and the app to steer (clock, faults)."""

    base_url: str
    sandbox: ReportsSandbox


@contextmanager
def run_sandbox(
    config: SandboxConfig | None = None,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    monotonic: Callable[[], float] = time.monotonic,
) -> Iterator[RunningSandbox]:
    """Serve a `ReportsSandbox` in a background thread (port 0: any free port) for the block."""
    sandbox = ReportsSandbox(config, monotonic=monotonic)
    with serve(sandbox, host, port) as handle:
        yield RunningSandbox(handle.base_url, sandbox)


def serve_sandbox_forever(
    config: SandboxConfig,
    host: str = "127.0.0.1",
    port: int = 8765,
    announce: Callable[[str], object] = print,
) -> None:
    """Serve a `ReportsSandbox` until interrupted, announcing its URL, pace, clock and site keys."""
    sandbox = ReportsSandbox(config)

    def ready(handle: ServerHandle) -> None:
        clock = "frozen" if config.now else "running"
        announce(
            f"Reports sandbox at {handle.base_url} (pace {config.pace:g} s per key and endpoint,"
            f" {config.dialect} dialect)"
        )
        announce(f"Clock {clock} at {sandbox.now:%Y-%m-%d %H:%M:%S} UTC; data from {sandbox.first_day}")
        for site in config.sites:
            announce(f"  site {site.name}={site.secret_key}")
        for incident in config.incidents:
            announce(f"  incident {incident}")
        announce("Press Ctrl-C to stop.")

    serve_forever(sandbox, host, port, on_ready=ready)
