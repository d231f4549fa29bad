"""The rules declared once (`alerting.rules.RULES`) and what derives from them: the `[alerts]`
table that sets their thresholds (the repository's commerce-reports.toml lists every rule at its
declared default), a declaration that breaks a rule refused where it is made, and the statistics
the rules judge with, checked without files."""

from __future__ import annotations

import math
import re
import string
import tomllib
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from commerce_reports.alerting import RULES, Rule, Thresholds
from commerce_reports.alerting.detect import poisson_z
from commerce_reports.alerting.rules import WORDING_FIELDS
from commerce_reports.errors import ConfigurationError, ValidationError
from commerce_reports.sandbox.incidents import Incident

ROOT = Path(__file__).resolve().parents[2]


def test_the_repository_toml_lists_every_rule_at_its_declared_default() -> None:
    """commerce-reports.toml follows the declaration: a rule added there shows up here."""
    table = tomllib.loads((ROOT / "commerce-reports.toml").read_text())["alerts"]
    assert Thresholds.from_table(table) == Thresholds()
    assert table == Thresholds().table(), (
        "write each rule's line in [alerts] of commerce-reports.toml at Thresholds().table()'s values"
    )


def test_the_readmes_rules_table_is_the_declarations() -> None:
    from commerce_reports.alerting.rules import rules_table

    text = (ROOT / "README.md").read_text()
    start = text.index("<!-- rules table:")
    table = text[text.index("\n", start) + 1 : text.index("<!-- end of rules table -->")]
    assert table == rules_table(), "write it again from commerce_reports.alerting.rules.rules_table()"


def test_thresholds_come_from_the_alerts_table_in_every_form() -> None:
    chosen = Thresholds.from_table(
        {
            "epc_drop": "40%",
            "returns_rise": False,
            "revenue_rise": 0.5,
            "merchant_stopped": {"threshold": "90%", "min_volume": 20},
            "z": 5,
        }
    )
    assert chosen.rule("epc_drop").threshold == 0.4 and chosen.rule("returns_rise").threshold is None
    assert chosen.rule("revenue_rise").threshold == 0.5 and chosen.z == 5
    assert (chosen.rule("merchant_stopped").threshold, chosen.rule("merchant_stopped").min_volume) == (
        0.9,
        20,
    )
    assert "returns_rise" not in {r.name for r in chosen.active}
    assert Thresholds.from_table(chosen.table()) == chosen  # the table reads back as it was written


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"epc_fall": "30%"}, "unknown setting 'epc_fall'; known: baseline_weeks"),
        ({"epc_drop": 30}, "epc_drop: threshold = 30.0; give a fraction in (0, 1] (0.3 is 30%)"),
        ({"epc_drop": "half"}, "epc_drop = 'half'; write a percentage"),
        ({"epc_drop": "130%"}, "threshold = 1.3; give a fraction in (0, 1]"),
        ({"epc_drop": {"limit": "30%"}}, "unknown key 'limit'; give threshold and/or min_volume"),
        ({"epc_drop": {"min_volume": -1}}, "min_volume = -1; give a whole number >= 0"),
        ({"z": -1}, "z = -1; give a positive number"),
        ({"min_weeks": 9}, "min_weeks (9) is more than baseline_weeks (8)"),
        ({"max_span": 8}, "max_span = 8; give a whole number from 1 to 7"),
        ({"min_orders": 40}, "unknown setting 'min_orders'"),  # a round-3 key: now each rule's min_volume
    ],
)
def test_a_wrong_alerts_table_says_what_is_right(table: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigurationError, match=re.escape(message)):
        Thresholds.from_table(table)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"name": "Revenue Drop"}, "lower_snake_case"),
        ({"metric": "sales"}, "metric 'sales' is not one of revenue"),
        ({"scopes": ("campaign",)}, "scopes ('campaign',)"),
        ({"metric": "epc", "scopes": ("link",)}, "epc needs clicks, which links are never counted by"),
        ({"direction": "fall"}, "direction 'fall'"),
        ({"threshold": 1.5}, "threshold = 1.5; give a fraction in (0, 1]"),
        ({"min_volume": 2.5}, "min_volume = 2.5"),
        ({"wording": "{where}: {what}"}, "wording uses 'what'"),
        ({"staged": "network={network},from=2026-11-01,epc=-50%"}, "without from="),
        ({"staged": "network={place},epc=-50%"}, "placeholders: country, device, link, merchant, network"),
    ],
)
def test_a_rule_that_breaks_the_declaration_is_refused_where_it_is_made(
    change: dict[str, object], message: str
) -> None:
    with pytest.raises(ConfigurationError, match=re.escape(message)):
        replace(RULES[0], **change)  # type: ignore[arg-type]


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.name)
def test_every_rule_s_incident_is_one_the_sandbox_stages(rule: Rule) -> None:
    """A staged incident the sandbox refuses (`clicks=-60%`: fewer clicks is `revenue=-N%`, a lost
    placement) failed only the behaviour test of the rules, minutes into it; here in a second,
    naming the rule."""
    sample = {"device": "Mobile", "country": "GB"}  # (a network, merchant or link: any name)
    places = {name: sample.get(name, "x") for _, name, _, _ in string.Formatter().parse(rule.staged) if name}
    try:
        Incident.parse(f"site=alpha,{rule.staged.format(**places)},from=2026-01-01")
    except ValidationError as refused:
        pytest.fail(f"rule {rule.name}: staged={rule.staged!r} is no incident the sandbox stages: {refused}")


def test_adding_a_rule_is_one_entry() -> None:
    """The recipe of CONTRIBUTING.md: a device's conversion fell by half."""
    half = Rule(
        "device_conversion_half",
        "conversion_rate",
        ("device",),
        "drop",
        0.5,
        40,
        "device={device},conversion=-60%",
    )
    limits = replace(Thresholds(), rules=(*RULES, half))
    assert limits.rule("device_conversion_half") is half and half in limits.active
    assert limits.table()["device_conversion_half"] == {"threshold": "50%", "min_volume": 40}
    with pytest.raises(ConfigurationError, match="two rules share a name"):
        replace(Thresholds(), rules=(*RULES, RULES[0]))


def test_every_wording_reads_with_every_field() -> None:
    for rule in RULES:
        text = rule.wording.format(**dict.fromkeys(WORDING_FIELDS, "x"))
        assert text.startswith("x: "), rule.name


def _poisson(k: int, mean: float) -> float:
    return math.exp(-mean + k * math.log(mean) - math.lgamma(k + 1))


@pytest.mark.parametrize(
    ("observed", "mean"), [(0, 10.0), (0, 4.0), (3, 15.0), (12, 40.0), (80, 100.0), (31, 15.0)]
)
def test_the_poisson_score_is_the_tail_of_the_poisson_law(observed: int, mean: float) -> None:
    """Down to zero observed (a merchant that stopped) and up, within a few hundredths of the exact
    tail's normal score (the sqrt scale it replaced gave -6.3 for 0 of 10; the tail says -3.9)."""
    from statistics import NormalDist

    if observed < mean:
        exact = NormalDist().inv_cdf(sum(_poisson(k, mean) for k in range(observed + 1)))
    else:
        exact = -NormalDist().inv_cdf(sum(_poisson(k, mean) for k in range(observed, observed + 400)))
    assert float(poisson_z(np.array([observed]), np.array([mean]))[0]) == pytest.approx(exact, abs=0.12)
