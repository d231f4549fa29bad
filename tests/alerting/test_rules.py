"""One behaviour test per declared alert rule, generated from `RULES`: the sandbox incident the rule
declares (`Rule.staged`), staged on the busiest key of its scope, is named by that rule within
three days of its onset, at the head of its group (its driver named first); the same days of the
ordinary world raise nothing. On the sandbox's world without files (`tests/alerting/world.py`):
one site, five weeks of history, a few seconds for every rule together."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from commerce_reports.alerting import RULES, AlertReport, Rule, Thresholds, alerts
from commerce_reports.sandbox import Incident
from commerce_reports.sandbox.catalog import busiest
from commerce_reports.sandbox.world import World
from tests.alerting.world import world_lake

# one worker generates the world's days once (an in-process cache) and judges every rule on them
pytestmark = pytest.mark.xdist_group("alert-rules")
SEED = 5
NOW = datetime(2026, 10, 22, 7, tzinfo=UTC)  # the morning after the third day of each incident
ONSET = NOW.date() - timedelta(days=3)
TRANSACTIONS_PER_DAY = 300
LIMITS = Thresholds(baseline_weeks=4, min_weeks=4)  # five weeks of history, not nine: cheap
DAYS = 7 * LIMITS.baseline_weeks + 7 + 3


def _staged_on(rule: Rule) -> tuple[str, str]:
    """(scope, key) the rule's incident is staged on: the busiest key of its placeholder, or the
    site."""
    catalog = World(SEED, ("alpha",), ONSET, TRANSACTIONS_PER_DAY).catalog("alpha")
    keys = {
        "network": str(busiest(catalog, "network")[0]),
        "merchant": str(busiest(catalog, "merchant_group_name")[0]),
        "link": str(busiest(catalog, "link_url")[0]),
        "device": "Mobile",
        "country": "US",
    }
    scope = next((name for name in keys if f"{{{name}}}" in rule.staged), None)
    return (scope, keys[scope]) if scope else ("site", "alpha")  # no placeholder: the whole site


def _limits(turned_on: tuple[Rule, ...]) -> Thresholds:
    """The test's thresholds with the rules off by default turned on (at 50%)."""
    rules = tuple(
        replace(r, threshold=0.5) if r in turned_on and r.threshold is None else r for r in LIMITS.rules
    )
    return replace(LIMITS, rules=rules)


def _judged(incidents: tuple[Incident, ...], limits: Thresholds, folder: Path) -> AlertReport:
    with world_lake(
        seed=SEED, now=NOW, days=DAYS, transactions_per_day=TRANSACTIONS_PER_DAY, incidents=incidents
    ) as con:
        return alerts(con, days=3, thresholds=limits, data_dir=folder, now=NOW)


@pytest.fixture(scope="module")
def ordinary(tmp_path_factory: pytest.TempPathFactory) -> AlertReport:
    """The same days of the ordinary world, every rule on."""
    return _judged((), _limits(RULES), tmp_path_factory.mktemp("ordinary"))


@pytest.mark.parametrize("rule", RULES, ids=[rule.name for rule in RULES])
def test_each_rule_names_its_incident_within_three_days(rule: Rule, tmp_path: Path) -> None:
    scope, key = _staged_on(rule)
    incident = Incident.parse(f"site=alpha,{rule.staged.format(**{scope: key})},from={ONSET}")
    report = _judged((incident,), _limits((rule,)), tmp_path)
    fired = [a for a in report.alerts if a.rule is not None and a.rule.name == rule.name]
    found = next((a for a in fired if (a.scope, a.key) == (scope, key)), None)
    assert found is not None, report.describe()
    group = next(g for g in report.groups if found in g.alerts)
    assert (group.cause.scope, group.cause.key) == (scope, key), report.describe()  # the driver first
    assert found.since is not None and found.as_of is not None
    assert ONSET <= found.since <= found.as_of <= ONSET + timedelta(days=2)
    assert found.describe().startswith(f"{found.where}: ") and key in found.where, found.describe()


@pytest.mark.parametrize("rule", RULES, ids=[rule.name for rule in RULES])
def test_each_rule_is_quiet_on_the_ordinary_world(rule: Rule, ordinary: AlertReport) -> None:
    assert [a.describe() for a in ordinary.alerts if a.rule is not None and a.rule.name == rule.name] == []
