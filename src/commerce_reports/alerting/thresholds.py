"""What counts as a change worth an alert: the rules of `rules.RULES` with their declared
thresholds, the settings every rule shares, and the `[alerts]` table of `commerce-reports.toml`
that overrides them:

    [alerts]
    baseline_weeks = 8              # the same weekdays of the 8 weeks before are the baseline
    z = 4.5                         # how far out (history and volume) a change must be
    revenue_drop = "30%"            # a rule's threshold; false turns it off
    merchant_stopped = { threshold = "80%", min_volume = 12 }   # and its minimum volume

Every key but the shared settings is a rule's name (`RULES`); an unknown key is an error that
lists the known ones. `commerce-reports.toml` in the repository lists every rule at its default.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from ..errors import ConfigurationError
from .rules import METRICS, RULES, AlertMetric, Rule, check_threshold

__all__ = ["METRICS", "AlertMetric", "Thresholds"]

_SHARED_LIMITS = (
    ("baseline_weeks", 2, 26),
    ("min_weeks", 2, 26),
    ("max_span", 1, 7),
    ("failing_syncs", 1, 1000),
)


@dataclass(frozen=True)
class Thresholds:
    """The rules judged (`rules`: the declared ones at their thresholds, or as `[alerts]` set
    them) and what they share: a change must be at least `z` robust standard deviations out (the
    baseline weeks' spread, and at least the noise its volume implies), against at least
    `min_weeks` of the `baseline_weeks` trailing weeks; spans of 1 to `max_span` days ending on
    each judged day are tried (a change of three days shows before it fills a week). Health: a
    site not synced for `stale_hours`, a partition failing in `failing_syncs` syncs in a row."""

    baseline_weeks: int = 8
    min_weeks: int = 6
    max_span: int = 7
    z: float = 4.5
    stale_hours: float = 48.0
    failing_syncs: int = 3
    rules: tuple[Rule, ...] = field(default=RULES)

    def __post_init__(self) -> None:
        for name, low, high in _SHARED_LIMITS:
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
        rules = tuple(self.rules)
        if not all(isinstance(rule, Rule) for rule in rules):
            raise ConfigurationError("alerts: rules must be Rule(...) entries (see alerting.rules)")
        if len({rule.name for rule in rules}) != len(rules):
            raise ConfigurationError("alerts: two rules share a name")
        object.__setattr__(self, "rules", rules)

    @property
    def active(self) -> tuple[Rule, ...]:
        """The rules with a threshold (the others are off)."""
        return tuple(rule for rule in self.rules if rule.threshold is not None)

    def rule(self, name: str) -> Rule:
        """The rule `name` as these thresholds judge it."""
        for rule in self.rules:
            if rule.name == name:
                return rule
        raise ConfigurationError(f"alerts: no rule {name!r}; known: {', '.join(r.name for r in self.rules)}")

    @classmethod
    def from_table(cls, table: Mapping[str, Any] | None, where: str = "[alerts]") -> Thresholds:
        """The defaults overridden by an `[alerts]` table (see the module docstring); an unknown
        key or a value of the wrong kind is a ConfigurationError naming it and what is right."""
        if table is None:
            return cls()
        if not isinstance(table, Mapping):
            raise ConfigurationError(f"{where} must be a table of settings, e.g. [alerts] z = 4.0")
        shared = {f.name for f in fields(cls)} - {"rules"}
        declared = {rule.name: rule for rule in RULES}
        unknown = sorted(set(table) - shared - set(declared))
        if unknown:
            raise ConfigurationError(
                f"{where}: unknown setting {unknown[0]!r}; known: {', '.join([*sorted(shared), *declared])}"
            )
        rules = tuple(
            _overridden(rule, table[rule.name], f"{where} {rule.name}") if rule.name in table else rule
            for rule in RULES
        )
        try:
            return replace(cls(), rules=rules, **{k: v for k, v in table.items() if k in shared})
        except ConfigurationError as error:
            raise ConfigurationError(f"{where}: {str(error).removeprefix('alerts: ')}") from None

    def table(self) -> dict[str, Any]:
        """These thresholds as an `[alerts]` table (what `from_table` reads back): the shared
        settings, then each rule's threshold and minimum volume."""
        out: dict[str, Any] = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "rules"}
        for rule in self.rules:
            threshold: Any = False if rule.threshold is None else f"{rule.threshold * 100:g}%"
            out[rule.name] = {"threshold": threshold, "min_volume": rule.min_volume}
        return out


def _overridden(rule: Rule, value: Any, where: str) -> Rule:
    """`rule` with the threshold (and minimum volume) an `[alerts]` entry gives it."""
    if isinstance(value, Mapping):
        unknown = sorted(set(value) - {"threshold", "min_volume"})
        if unknown:
            raise ConfigurationError(f"{where}: unknown key {unknown[0]!r}; give threshold and/or min_volume")
        threshold = _fraction(value["threshold"], where) if "threshold" in value else rule.threshold
        volume = value.get("min_volume", rule.min_volume)
    else:
        threshold, volume = _fraction(value, where), rule.min_volume
    check_threshold(threshold, rule.direction, where)
    if isinstance(volume, bool) or not isinstance(volume, int) or volume < 0:
        raise ConfigurationError(f"{where}: min_volume = {volume!r}; give a whole number >= 0")
    return replace(rule, threshold=threshold, min_volume=volume)


def _fraction(value: Any, where: str) -> float | None:
    """`"30%"` or 0.3 as 0.3; false as None (the rule is off)."""
    if value is False:
        return None
    if isinstance(value, str) and value.strip().endswith("%"):
        try:
            return float(value.strip()[:-1]) / 100
        except ValueError:
            pass
    elif isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return float(value)
    raise ConfigurationError(
        f'{where} = {value!r}; write a percentage ("30%"), a fraction (0.3), false, '
        'or a table { threshold = "30%", min_volume = 40 }'
    )
