"""Alerts: changes that matter in each series' own recent history (revenue, orders, revenue per
order, clicks, EPC, conversion and returns, per site, network, device, country, merchant and
link), grouped under the cause that explains them, and a lake that is stale or failing.

    import commerce_reports as cr
    print(cr.alerts(days=7).describe())
    cr.explain(con, site="alpha", start="2026-11-16", end="2026-11-22")   # why revenue moved

`commerce-reports alerts` prints the same and exits 3 when there is an alert (0 when none), for
cron. The rules are declared once in `rules.RULES`; their thresholds come from the `[alerts]`
table of commerce-reports.toml (`Thresholds`). Names load on first use (PEP 562): the rules and
thresholds alone do not load DuckDB or numpy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names
from .rules import METRICS, RULES, AlertMetric, Rule
from .thresholds import Thresholds

if TYPE_CHECKING:
    from .alert import Alert, AlertGroup, AlertReport, JudgedDays
    from .check import alerts
    from .drivers import explain

__all__ = [
    "METRICS",
    "RULES",
    "Alert",
    "AlertGroup",
    "AlertMetric",
    "AlertReport",
    "JudgedDays",
    "Rule",
    "Thresholds",
    "alerts",
    "explain",
]

_HOMES = {
    "Alert": "alert",
    "AlertGroup": "alert",
    "AlertReport": "alert",
    "JudgedDays": "alert",
    "alerts": "check",
    "explain": "drivers",
}


__getattr__, __dir__ = lazy_names(__name__, _HOMES, __all__)
