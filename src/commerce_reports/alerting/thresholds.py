"""What counts as a change worth an alert: the defaults, and the `[alerts]` table of
`commerce-reports.toml` that overrides them.

    [alerts]
    baseline_weeks = 8          # the same weekdays of the 8 weeks before are the baseline
    revenue_drop = "30%"        # a fall of 30% or more (and beyond the series' own noise)
    epc_drop = "30%"
    conversion_drop = "30%"
    return_rate_rise = "50%"    # returns: a rise
    revenue_rise = false        # rises of revenue, EPC or conversion: not alerted (the default)
    z = 4.0                     # how many standard deviations (history and volume) a change must clear
    min_orders = 40             # volume below which a series is not judged (per span checked)
    min_actions = 40
    min_returns = 8
    stale_hours = 48            # a site not synced for longer
    failing_syncs = 3           # a partition that failed in this many syncs in a row

The defaults are those measured to raise no alert on the sandbox's ordinary world over 180 days of
two sites, and to name a network whose EPC halved for a week (see README, "Alerts").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal

from ..errors import ConfigurationError

__all__ = ["METRICS", "AlertMetric", "Thresholds"]

AlertMetric = Literal["revenue", "epc", "conversion_rate", "return_rate"]
METRICS: tuple[AlertMetric, ...] = ("revenue", "epc", "conversion_rate", "return_rate")
_TOML_NAMES = {
    "revenue": "revenue",
    "epc": "epc",
    "conversion_rate": "conversion",
    "return_rate": "return_rate",
}


def _default_drops() -> dict[str, float | None]:
    return {"revenue": 0.3, "epc": 0.3, "conversion_rate": 0.3, "return_rate": None}


def _default_rises() -> dict[str, float | None]:
    return {"revenue": None, "epc": None, "conversion_rate": None, "return_rate": 0.5}


@dataclass(frozen=True)
class Thresholds:
    """When a series' change is an alert: it moves by at least `drops[metric]` (down) or
    `rises[metric]` (up; None: that direction is not alerted), by at least `z` robust standard
    deviations of its own history (the baseline weeks' spread, and at least the noise its volume
    implies), on at least the minimum volume (`min_orders` for revenue, `min_actions` for EPC and
    conversion, `min_returns` for return rate, expected over the span checked), against at least
    `min_weeks` of the `baseline_weeks` trailing weeks. `max_span` days ending on the last
    complete day are checked (1 to 7: a change of three days shows before it fills a week).
    Health: a site not synced for `stale_hours`, a partition failing in `failing_syncs` syncs."""

    baseline_weeks: int = 8
    min_weeks: int = 6
    max_span: int = 7
    z: float = 4.0
    drops: Mapping[str, float | None] = field(default_factory=_default_drops)
    rises: Mapping[str, float | None] = field(default_factory=_default_rises)
    min_orders: int = 40
    min_actions: int = 40
    min_returns: int = 8
    stale_hours: float = 48.0
    failing_syncs: int = 3

    def __post_init__(self) -> None:
        for name, low, high in (
            ("baseline_weeks", 2, 26),
            ("min_weeks", 2, 26),
            ("max_span", 1, 7),
            ("min_orders", 0, 10**9),
            ("min_actions", 0, 10**9),
            ("min_returns", 0, 10**9),
            ("failing_syncs", 1, 1000),
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise ConfigurationError(
                    f"alerts: {name} = {value!r}; give a whole number from {low} to {high}"
                )
        if self.min_weeks > self.baseline_weeks:
            raise ConfigurationError(
                f"alerts: min_weeks ({self.min_weeks}) is more than baseline_weeks ({self.baseline_weeks})"
            )
        for name in ("z", "stale_hours"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < float("inf"):
                raise ConfigurationError(f"alerts: {name} = {value!r}; give a positive number")
        for direction in ("drops", "rises"):
            given = dict(getattr(self, direction))
            if set(given) != set(METRICS):
                raise ConfigurationError(f"alerts: {direction} must name {', '.join(METRICS)}")
            for metric, fraction in given.items():
                if fraction is not None and not 0 < fraction <= (1 if direction == "drops" else 100):
                    raise ConfigurationError(
                        f"alerts: {metric} {direction[:-1]} = {fraction!r} is out of range"
                    )
            object.__setattr__(self, direction, given)

    @classmethod
    def from_table(cls, table: Mapping[str, Any] | None, where: str = "[alerts]") -> Thresholds:
        """The defaults overridden by an `[alerts]` table (see the module docstring); an unknown
        key or a value of the wrong kind is a ConfigurationError naming it."""
        if table is None:
            return cls()
        if not isinstance(table, Mapping):
            raise ConfigurationError(f"{where} must be a table of settings, e.g. [alerts] z = 4.0")
        plain = {f.name for f in fields(cls)} - {"drops", "rises"}
        changes = {f"{_TOML_NAMES[m]}_{d}": (d, m) for m in METRICS for d in ("drop", "rise")}
        unknown = sorted(set(table) - plain - set(changes))
        if unknown:
            raise ConfigurationError(
                f"{where}: unknown setting {unknown[0]!r}; known: {', '.join(sorted(plain | set(changes)))}"
            )
        defaults = cls()
        drops, rises = dict(defaults.drops), dict(defaults.rises)
        for key, (direction, metric) in changes.items():
            if key in table:
                (drops if direction == "drop" else rises)[metric] = _fraction(table[key], f"{where} {key}")
        try:
            return replace(
                defaults, drops=drops, rises=rises, **{k: v for k, v in table.items() if k in plain}
            )
        except ConfigurationError as error:
            raise ConfigurationError(f"{where}: {error}") from None


def _fraction(value: Any, where: str) -> float | None:
    """`"30%"` or 0.3 as 0.3; false as None (not alerted)."""
    if value is False:
        return None
    if isinstance(value, str) and value.strip().endswith("%"):
        try:
            return float(value.strip()[:-1]) / 100
        except ValueError:
            pass
    elif isinstance(value, int | float) and not isinstance(value, bool) and 0 < value <= 1:
        return float(value)
    raise ConfigurationError(f'{where} = {value!r}; write a percentage ("30%"), a fraction (0.3) or false')
