"""Offline, deterministic implementation of the reporting service (the deal-request one is
`commerce_reports.deals.sandbox`, which shares only the loopback server of `sandbox.http`).

Light names (configuration) import at once; the reports sandbox itself (polars, orjson) loads on
first use, so a user of `sandbox.http` alone does not pay for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names
from .config import DEMO_SITES, FAST_PACE, SandboxConfig, Site
from .faults import DATA_KINDS, FAULT_KINDS, FaultConfig
from .incidents import Incident

if TYPE_CHECKING:
    from .reports import ReportsSandbox, RequestRecord
    from .runner import RunningSandbox, run_sandbox, serve_sandbox_forever

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
    "ReportsSandbox": "reports",
    "RequestRecord": "reports",
    "RunningSandbox": "runner",
    "run_sandbox": "runner",
    "serve_sandbox_forever": "runner",
}


__getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__)
