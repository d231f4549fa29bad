"""Alerts: changes that matter in each series' own recent history (revenue, EPC, conversion and
return rate, per site, network, device and country), and a lake that is stale or failing.

    import commerce_reports as cr
    print(cr.alerts(days=7).describe())

`commerce-reports alerts` prints the same and exits 3 when there is an alert (0 when none), for
cron. Thresholds come from the `[alerts]` table of commerce-reports.toml (`Thresholds`).
Names load on first use (PEP 562): the thresholds alone do not load DuckDB or numpy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names
from .thresholds import METRICS, AlertMetric, Thresholds

if TYPE_CHECKING:
    from .alert import Alert, AlertReport
    from .check import alerts

__all__ = ["METRICS", "Alert", "AlertMetric", "AlertReport", "Thresholds", "alerts"]

_HOMES = {"Alert": "alert", "AlertReport": "alert", "alerts": "check"}


__getattr__, __dir__ = lazy_names(__name__, _HOMES, __all__)
