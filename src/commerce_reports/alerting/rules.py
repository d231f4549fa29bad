"""The alert rules, declared once as data: what each judges (a metric, on which scopes, in which
direction), from how big a change (`threshold`), on how much volume (`min_volume`), and how it
words what it found. Detection, the `[alerts]` table of commerce-reports.toml, the docs and the
tests all read `RULES`; adding a rule is adding an entry (CONTRIBUTING.md, "Add an alert rule").

    Rule("device_conversion_half", "conversion_rate", ("device",), "drop", 0.5, 40,
         staged="device={device},conversion=-60%")

Each rule names a sandbox incident that sets it off (`staged`: `commerce-reports sandbox
--incident` syntax, its scope written with a placeholder the tests fill with the busiest key), so
that its behaviour test is generated from the declaration (`tests/alerting/test_rules.py`).
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from typing import Literal, get_args

from ..errors import ConfigurationError

__all__ = [
    "CHANGE_WORDING",
    "CLICK_METRICS",
    "METRICS",
    "RULES",
    "SCOPES",
    "STOPPED_WORDING",
    "VOLUMES",
    "AlertMetric",
    "Direction",
    "Rule",
    "Scope",
    "rule_named",
    "rules_table",
]

AlertMetric = Literal["revenue", "orders", "order_value", "clicks", "epc", "conversion_rate", "returns"]
METRICS: tuple[AlertMetric, ...] = get_args(AlertMetric)
Scope = Literal["site", "network", "device", "country", "merchant", "link"]
SCOPES: tuple[Scope, ...] = get_args(Scope)
Direction = Literal["drop", "rise"]

CLICK_METRICS: frozenset[str] = frozenset({"clicks", "epc", "conversion_rate"})
"""Metrics that need clicks per day: the networks report's daily windows (per site, network,
device and country; per merchant where a `merchantGroupIds` slice is stored)."""
CLICKLESS_SCOPES: frozenset[str] = frozenset({"link"})
"""Scopes the service never counts clicks for: only ledger metrics are judged on them."""

VOLUMES: dict[str, str] = {
    "revenue": "orders",
    "orders": "orders",
    "order_value": "orders",
    "clicks": "clicks",
    "epc": "orders",
    "conversion_rate": "orders",
    "returns": "returns",
}
"""What a rule's `min_volume` counts, per metric (EPC and conversion: the orders of the clicks)."""

CHANGE_WORDING = (
    "{where}: {measure} {value} {span}, {direction} {change} from {baseline} (the median of the same "
    "weekdays in the {weeks} weeks before; usual spread ±{spread})"
)
STOPPED_WORDING = (
    "{where}: {value} orders {span} where {baseline} were usual (the median of the same weekdays in the "
    "{weeks} weeks before): its commissions stopped or collapsed; {at_stake} of revenue at stake"
)
WORDING_FIELDS = frozenset(
    {"where", "measure", "value", "span", "direction", "change", "baseline", "spread", "weeks", "at_stake"}
)
_PLACEHOLDERS = frozenset({"network", "merchant", "link", "device", "country"})
_NAME = re.compile(r"[a-z][a-z0-9_]*")


@dataclass(frozen=True)
class Rule:
    """One alert rule: a change of `metric` on any key of `scopes`, in `direction`, of at least
    `threshold` (a fraction: 0.3 is 30%; None: off unless `[alerts]` sets it) and beyond the
    series' own noise (`Thresholds.z`), when the span is expected to hold at least `min_volume`
    (of `VOLUMES[metric]`). `wording` is how an alert reads (fields: `WORDING_FIELDS`); `staged`
    a sandbox incident that sets it off (its scope a placeholder, `{network}`, filled with the
    busiest key; none: the whole site); `summary` one line for the docs."""

    name: str
    metric: AlertMetric
    scopes: tuple[Scope, ...]
    direction: Direction
    threshold: float | None
    min_volume: int
    staged: str
    summary: str = ""
    wording: str = CHANGE_WORDING

    def __post_init__(self) -> None:
        problem = _what_judged(self) or _how_worded(self)
        if problem:
            raise ConfigurationError(f"alert rule {self.name!r}: {problem}")

    @property
    def volume(self) -> str:
        """What `min_volume` counts: orders, clicks or returns."""
        return VOLUMES[self.metric]


def _what_judged(rule: Rule) -> str:
    """What is wrong with what a rule judges (its name, metric, scopes, direction, threshold,
    volume), or ''."""
    if not isinstance(rule.name, str) or not _NAME.fullmatch(rule.name):
        return "a rule's name is lower_snake_case (it is its [alerts] key)"
    if rule.metric not in METRICS:
        return f"metric {rule.metric!r} is not one of {', '.join(METRICS)}"
    if not rule.scopes or any(s not in SCOPES for s in rule.scopes):
        return f"scopes {rule.scopes!r}; give some of {', '.join(SCOPES)}"
    if rule.metric in CLICK_METRICS and set(rule.scopes) & CLICKLESS_SCOPES:
        return f"{rule.metric} needs clicks, which links are never counted by"
    if rule.direction not in ("drop", "rise"):
        return f"direction {rule.direction!r} is not 'drop' or 'rise'"
    try:
        check_threshold(rule.threshold, rule.direction, "the rule")
    except ConfigurationError as error:
        return str(error).removeprefix("the rule: ")
    if isinstance(rule.min_volume, bool) or not isinstance(rule.min_volume, int) or rule.min_volume < 0:
        return f"min_volume = {rule.min_volume!r}; give a whole number >= 0"
    return ""


def _how_worded(rule: Rule) -> str:
    """What is wrong with a rule's wording and staged incident, or ''."""
    fields = {name for _, name, _, _ in string.Formatter().parse(rule.wording) if name}
    if not fields <= WORDING_FIELDS:
        unknown = sorted(fields - WORDING_FIELDS)[0]
        return f"wording uses {unknown!r}; known: {', '.join(sorted(WORDING_FIELDS))}"
    holes = {name for _, name, _, _ in string.Formatter().parse(rule.staged) if name}
    if "from=" in rule.staged or not holes <= _PLACEHOLDERS or len(holes) > 1 or "=" not in rule.staged:
        return (
            f"staged {rule.staged!r} is a sandbox incident without from= (placeholders: "
            f"{', '.join(sorted(_PLACEHOLDERS))}), e.g. 'network={{network}},epc=-60%'"
        )
    return ""


def check_threshold(value: float | None, direction: str, where: str) -> None:
    """A drop is a fraction in (0, 1]; a rise in (0, 100]; None is off."""
    if value is None:
        return
    high = 1.0 if direction == "drop" else 100.0
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= high:
        raise ConfigurationError(
            f"{where}: threshold = {value!r}; give a fraction in (0, {high:g}] (0.3 is 30%)"
        )


_EVERYWHERE: tuple[Scope, ...] = ("site", "network", "device", "country")

RULES: tuple[Rule, ...] = (
    Rule(
        "revenue_drop",
        "revenue",
        _EVERYWHERE,
        "drop",
        0.3,
        40,
        staged="device={device},revenue=-70%",
        summary="revenue fell, judged as orders times the typical order's revenue (big orders are luck)",
    ),
    Rule(
        "orders_drop",
        "orders",
        _EVERYWHERE,
        "drop",
        0.3,
        40,
        staged="device={device},conversion=-60%",
        summary="fewer orders (commissions) than the same weekdays usually bring",
    ),
    Rule(
        "order_value_drop",
        "order_value",
        _EVERYWHERE,
        "drop",
        0.3,
        40,
        staged="country={country},epc=-60%",
        summary="each order pays less (a cut commission rate, cheaper baskets), judged on the typical order",
    ),
    Rule(
        "clicks_drop",
        "clicks",
        _EVERYWHERE,
        "drop",
        0.3,
        400,
        staged="network={network},revenue=-60%",
        summary="traffic fell (a lost placement, a broken page)",
    ),
    Rule(
        "epc_drop",
        "epc",
        _EVERYWHERE,
        "drop",
        0.3,
        40,
        staged="network={network},epc=-60%",
        summary="each click earns less: fewer orders per click or less per order",
    ),
    Rule(
        "conversion_drop",
        "conversion_rate",
        _EVERYWHERE,
        "drop",
        0.3,
        40,
        staged="network={network},clicks=+100%",
        summary="fewer orders per click (broken tracking, a checkout fault, clicks that never earn)",
    ),
    Rule(
        "returns_rise",
        "returns",
        _EVERYWHERE,
        "rise",
        0.5,
        8,
        staged="returns=+900%",
        summary="more returns recorded than usual (a faulty product, fraud reversed), the day they come",
    ),
    Rule(
        "revenue_rise",
        "revenue",
        _EVERYWHERE,
        "rise",
        None,
        40,
        staged="network={network},revenue=+100%",
        summary="revenue rose beyond its usual range (off unless a threshold is set)",
    ),
    Rule(
        "merchant_stopped",
        "orders",
        ("merchant",),
        "drop",
        0.8,
        12,
        staged="merchant={merchant},conversion=-100%",
        summary="a merchant's commissions stopped or collapsed (a paused programme, a broken link)",
        wording=STOPPED_WORDING,
    ),
    Rule(
        "merchant_revenue_drop",
        "revenue",
        ("merchant",),
        "drop",
        0.5,
        30,
        staged="merchant={merchant},epc=-70%",
        summary="a merchant pays much less than usual (a cut commission rate)",
    ),
    Rule(
        "merchant_epc_drop",
        "epc",
        ("merchant",),
        "drop",
        0.5,
        30,
        staged="merchant={merchant},clicks=+150%",
        summary="a merchant's clicks earn much less (where a merchantGroupIds slice counts its clicks)",
    ),
    Rule(
        "link_stopped",
        "orders",
        ("link",),
        "drop",
        0.8,
        12,
        staged="link={link},conversion=-100%",
        summary="a link stopped converting (a dead product page, a broken redirect)",
        wording=STOPPED_WORDING,
    ),
)

_BY_NAME = {rule.name: rule for rule in RULES}
if len(_BY_NAME) != len(RULES):
    raise ConfigurationError("two alert rules share a name")


def rules_table(rules: tuple[Rule, ...] = RULES) -> str:
    """The README's table of the rules (Markdown): name, what it judges and where, its default."""
    rows = ["| rule | judges | default |", "|---|---|---|"]
    for rule in rules:
        sign = "-" if rule.direction == "drop" else "+"
        default = "off" if rule.threshold is None else f"{sign}{rule.threshold * 100:g}%"
        where = ", ".join(rule.scopes)
        rows.append(
            f"| `{rule.name}` | {rule.summary}; per {where} | {default} on {rule.min_volume} {rule.volume} |"
        )
    return "\n".join(rows) + "\n"


def rule_named(name: str) -> Rule:
    """The declared rule `name`, or a ConfigurationError listing the known ones."""
    if name not in _BY_NAME:
        raise ConfigurationError(f"no alert rule {name!r}; known: {', '.join(_BY_NAME)}")
    return _BY_NAME[name]
