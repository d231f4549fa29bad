"""Alerts: changes that matter in each series' own recent history (revenue, EPC, conversion and
return rate, per site, network, device and country), and a lake that is stale or failing.

    import commerce_reports as cr
    print(cr.alerts(days=7).describe())

`commerce-reports alerts` prints the same and exits 3 when there is an alert (0 when none), for
cron. Thresholds come from the `[alerts]` table of commerce-reports.toml (`Thresholds`).
Names load on first use (PEP 562): the thresholds alone do not load DuckDB or numpy.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .thresholds import METRICS, AlertMetric, Thresholds

if TYPE_CHECKING:
    from .alert import Alert, AlertReport
    from .check import alerts

__all__ = ["METRICS", "Alert", "AlertMetric", "AlertReport", "Thresholds", "alerts"]

_HOMES = {"Alert": "alert", "AlertReport": "alert", "alerts": "check"}


def __getattr__(name: str) -> Any:
    """Load a name's module on first use (PEP 562)."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{home}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
