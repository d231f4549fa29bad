"""The embedded default: with no secret key configured, the entry points run against a sandbox.

One sandbox per process, started on first use on a free loopback port in a background thread,
at the demo-friendly pace and in the dialect of COMMERCE_REPORTS_DIALECT (default: the contract's),
so a new user sees everything work without any set-up. Only entry points (the package's flat
functions, the CLI) call `chosen_sites` and `available_sites`, with the settings they resolved;
nothing below them starts a server or reads the settings.
"""

from __future__ import annotations

import atexit
import threading
from contextlib import ExitStack
from typing import TYPE_CHECKING

from .config import DEFAULT_REVISION_DAYS, Dialect, Settings, check_dialect
from .secret import Secret
from .sites import SiteProfile, SiteSelection, configured_sites, select_sites

if TYPE_CHECKING:
    from .sandbox import RunningSandbox

__all__ = ["available_sites", "chosen_sites", "embedded_sandbox", "sandbox_sites", "started"]

_lock = threading.Lock()
_running: RunningSandbox | None = None
_stack = ExitStack()
# Stop the server while threads still run: left to interpreter finalization, `shutdown` would wait
# forever for a server thread that is already frozen, and the process would never exit.
atexit.register(_stack.close)


def embedded_sandbox(dialect: Dialect) -> RunningSandbox:
    """The process's sandbox, started on first use (its sites are the demo sites, its dialect the
    one asked for first: the configured one)."""
    global _running
    from .sandbox import FAST_PACE, SandboxConfig, run_sandbox

    with _lock:
        if _running is None:
            _running = _stack.enter_context(run_sandbox(SandboxConfig(pace=FAST_PACE, dialect=dialect)))
        return _running


def sandbox_sites(running: RunningSandbox, revision_days: int = DEFAULT_REVISION_DAYS) -> list[SiteProfile]:
    """Profiles of a running sandbox's sites, at the sandbox's own pace and in its dialect, with
    the revision horizon `revision_days` (the configured one, at the entry points)."""
    config = running.sandbox.config
    dialect = check_dialect(getattr(config, "dialect", "contract"), "sandbox dialect")
    url = running.base_url
    days = revision_days
    return [
        SiteProfile(
            site.name,
            Secret(site.secret_key),
            url,
            dialect,
            sandbox=True,
            pace=config.pace,
            revision_days=days,
        )
        for site in config.sites
    ]


def available_sites(settings: Settings, *, start: bool = True) -> dict[str, SiteProfile]:
    """The configured sites, or the embedded sandbox's when no key is configured at all.

    `start=False` names the sandbox's sites without starting it (their `base_url` is empty): enough
    to plan or to report status; `started` gives the profile a client can use.
    """
    configured = configured_sites(settings)
    if configured:
        return configured
    if not start:
        from .sandbox import DEMO_SITES, FAST_PACE

        return {
            site.name: SiteProfile(
                site.name,
                Secret(site.secret_key),
                "",
                settings.dialect,
                sandbox=True,
                pace=FAST_PACE,
                revision_days=settings.revision_days,
            )
            for site in DEMO_SITES
        }
    return {p.name: p for p in sandbox_sites(embedded_sandbox(settings.dialect), settings.revision_days)}


def chosen_sites(sites: SiteSelection, settings: Settings, *, start: bool = False) -> dict[str, SiteProfile]:
    """The profiles `sites` names (None: every available one, see `available_sites`), each at the
    configured pace unless it has its own."""
    chosen = select_sites(sites, lambda: available_sites(settings, start=start))
    return {name: profile.paced(settings.pace) for name, profile in chosen.items()}


def started(profile: SiteProfile, settings: Settings) -> SiteProfile:
    """`profile` ready for a client: an embedded sandbox site named but not started is started now."""
    if profile.base_url or not profile.sandbox:
        return profile
    return available_sites(settings, start=True)[profile.name]
