"""Offline, deterministic implementation of the reporting service (the deal-request one is
`commerce_reports.deals.sandbox`, which shares only the loopback server of `sandbox.http`).

Every name loads on first use: naming the demo sites (`DEMO_SITES`, `FAST_PACE`, from
`sandbox.sites`) loads nothing else, so `commerce-reports status` with no key configured does not
pay for the sandbox's configuration, faults (orjson) or world (polars).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names

if TYPE_CHECKING:
    from .config import SandboxConfig
    from .faults import DATA_KINDS, FAULT_KINDS, FaultConfig
    from .incidents import Incident
    from .reports import ReportsSandbox, RequestRecord
    from .runner import RunningSandbox, run_sandbox, serve_sandbox_forever
    from .sites import DEMO_SITES, FAST_PACE, Site

__all__ = [
    "DATA_KINDS",
    "DEMO_SITES",
    "FAST_PACE",
    "FAULT_KINDS",
    "FaultConfig",
    "Incident",
    "ReportsSandbox",
    "RequestRecord",
    "RunningSandbox",
    "SandboxConfig",
    "Site",
    "run_sandbox",
    "serve_sandbox_forever",
]

_LAZY = {
    "DATA_KINDS": "faults",
    "DEMO_SITES": "sites",
    "FAST_PACE": "sites",
    "FAULT_KINDS": "faults",
    "FaultConfig": "faults",
    "Incident": "incidents",
    "ReportsSandbox": "reports",
    "RequestRecord": "reports",
    "RunningSandbox": "runner",
    "SandboxConfig": "config",
    "Site": "sites",
    "run_sandbox": "runner",
    "serve_sandbox_forever": "runner",
}


__getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__)
