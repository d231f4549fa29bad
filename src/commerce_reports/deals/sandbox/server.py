"""Serve the deals sandbox on loopback: in a background thread (tests, notebooks) or in the
foreground (`commerce-reports sandbox --deals`), on the toolkit's small loopback HTTP server."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from ...errors import ConfigurationError
from ...sandbox.http import ServerHandle, serve, serve_forever
from .app import DealsSandbox
from .world import SEEDED

__all__ = ["RunningDealsSandbox", "run_deals_sandbox", "serve_deals_forever"]


@dataclass(frozen=True)
class RunningDealsSandbox:
    """A deals sandbox serving on loopback: where (`base_url`) and the app itself (`sandbox`)."""

    base_url: str
    sandbox: DealsSandbox
    handle: ServerHandle = field(repr=False)


@contextmanager
def run_deals_sandbox(
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    write_key: str | None = None,
    read_key: str | None = None,
    disabled_key: str | None = None,
    **options: Any,
) -> Iterator[RunningDealsSandbox]:
    """Serve a `DealsSandbox` (options go to its constructor) in a background thread; a bad or
    busy port is a ConfigurationError."""
    _check_host(host)
    sandbox = DealsSandbox(write_key, read_key, disabled_key, **options)
    with serve(sandbox, host, port) as handle:
        yield RunningDealsSandbox(handle.base_url, sandbox, handle)


def serve_deals_forever(
    host: str = "127.0.0.1",
    port: int = 8765,
    *,
    write_key: str | None = None,
    read_key: str | None = None,
    disabled_key: str | None = None,
    announce: Callable[[str], None] = print,
) -> None:
    """Serve the deals sandbox in the foreground, announcing its URL and keys; Ctrl-C stops it.
    A bad or busy port is a ConfigurationError."""
    _check_host(host)
    sandbox = DealsSandbox(write_key, read_key, disabled_key)

    def ready(handle: ServerHandle) -> None:
        for line in (
            f"deals sandbox on {handle.base_url} (Ctrl-C stops it)",
            f"  write key:            {sandbox.write_key}",
            f"  read-only key:        {sandbox.read_key}",
            f"  account-disabled key: {sandbox.disabled_key}",
            "  stored deals: " + ", ".join(f"{v} ({k})" for k, v in SEEDED.items()),
            f"  export COMMERCE_REPORTS_DEALS_BASE_URL={handle.base_url}",
            f"  export COMMERCE_REPORTS_DEALS_API_KEY={sandbox.write_key}",
        ):
            announce(line)

    serve_forever(sandbox, host, port, on_ready=ready)


def _check_host(host: Any) -> None:
    if not isinstance(host, str) or not host.strip():
        raise ConfigurationError(f"host must be an address such as 127.0.0.1, got {host!r}")
