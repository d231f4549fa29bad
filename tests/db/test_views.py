"""A view's contract is checked where it is declared: a declaration that breaks a rule fails at
import (the rules its SQL is not needed for) or in `contract_problems` (those that need its
columns), with a message naming the view, the rule and the column."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from commerce_reports.db.coverage import SiteCoverage, status_columns
from commerce_reports.db.views import (
    PERIOD_KINDS,
    VIEW_LIST,
    Merge,
    Rollup,
    View,
    _declared,
    contract_problems,
)
from commerce_reports.errors import ValidationError

README = Path(__file__).parents[2] / "README.md"
_MONTHLY_SQL = """SELECT site, date_trunc('month', commission_date)::DATE AS window_start,
       (date_trunc('month', commission_date) + INTERVAL 1 MONTH)::DATE AS window_end,
       count(*) AS transactions{extra}
FROM {{src}}.transactions GROUP BY ALL"""


def _problems_of(probe: View) -> list[str]:
    """What `probe`, declared after every view, breaks: its own lines alone, so that a view of
    VIEW_LIST that breaks a rule fails `test_every_view_keeps_its_contract` and no probe test."""
    return [p for p in contract_problems([*VIEW_LIST, probe]) if p.startswith(f"view {probe.name}:")]


def test_every_view_keeps_its_contract() -> None:
    problems = contract_problems()
    assert not problems, "\n".join(problems)  # whole: the view, the rule and the column


def test_each_period_kind_names_every_column_its_status_reads() -> None:
    coverage = [SiteCoverage("alpha", (), 45)]
    for kind in PERIOD_KINDS.values():
        read = set(re.findall(r"\bv\.(\w+)", status_columns(kind.name, coverage)))
        assert read <= set(kind.requires), kind.name
        assert kind.date_column in kind.requires


def test_a_monthly_view_without_report_fetched_at_is_refused_naming_the_column() -> None:
    probe = View("monthly_probe", "", _MONTHLY_SQL.format(extra=""), period="month")
    assert _problems_of(probe) == [
        'view monthly_probe: breaks the rule "a month period has the columns site, window_start, window_end, '
        'report_fetched_at": it has no column report_fetched_at; add it to its SQL: a month with no report '
        "window of its own takes it from the networks month window of the `all` slice, LEFT JOIN on (site, "
        "window_start), and then its rollup takes no Merge (CONTRIBUTING.md, 'Add a view')"
    ]


def test_a_merged_view_with_no_report_side_declares_every_column() -> None:
    rollup = Rollup("window_start", ("site", "window_start", "window_end"), Merge(("transactions",)))
    sql = _MONTHLY_SQL.format(extra=", max(order_value) AS largest")
    probe = View("no_report_side", "", sql, rollup=rollup)
    (problem,) = _problems_of(probe)
    assert problem.startswith(
        'view no_report_side: breaks the rule "a view that reads no report declares every column in its '
        'Merge": column largest is neither a key, a sum, a first nor derived'
    )
    # a max is none of them: firsts would keep the least of the maxima (a test of merged months
    # found it, minutes later), so the message says what else to do
    assert problem.endswith(
        "(a max, a distinct count) takes no Merge: drop the Merge, and a changed month is computed again"
    )
    least = _MONTHLY_SQL.format(extra=", min(order_value) AS least")
    declared = Rollup(rollup.date_column, rollup.keys, Merge(("transactions",), firsts=("least",)))
    assert _problems_of(View("no_report_side", "", least, rollup=declared)) == []


@pytest.mark.parametrize(
    ("extra", "merge", "said"),
    [
        (
            ", max(order_value) AS largest",
            Merge(("transactions",), firsts=("largest",)),
            "a Merge's firsts are each the least value, min(...)\": "
            "column largest is MAX(transactions.order_value)",
        ),
        (
            ", count(DISTINCT click_id) AS clicks",
            Merge(("transactions", "clicks")),
            "a Merge's sums are each a sum or a count of rows\": "
            "column clicks is COUNT(DISTINCT transactions.click_id)",
        ),
        (
            ", max(order_value) AS largest",
            Merge(("transactions", "largest")),
            "a Merge's sums are each a sum or a count of rows\": "
            "column largest is MAX(transactions.order_value)",
        ),
    ],
)
def test_a_merge_column_its_aggregate_cannot_merge_is_refused_where_it_is_declared(
    extra: str, merge: Merge, said: str
) -> None:
    """A max declared as a first (which CONTRIBUTING's recipe once suggested) passed the contract:
    a merged month kept the least of the maxima, and only test_incremental saw it, minutes later;
    a distinct count declared as a sum would add up what does not."""
    rollup = Rollup("window_start", ("site", "window_start", "window_end"), merge)
    (problem,) = _problems_of(View("merged_probe", "", _MONTHLY_SQL.format(extra=extra), rollup=rollup))
    assert problem.startswith(f'view merged_probe: breaks the rule "{said}'), problem
    assert problem.endswith("or drop the Merge: a changed month is then computed again")


def test_merge_and_key_columns_must_exist_and_sums_be_numbers() -> None:
    merge = Merge(("transactions", "site_name"), derived=(("rate", "1 / transactions"),))
    rollup = Rollup("window_start", ("site", "window_start", "window_end", "device"), merge)
    sql = _MONTHLY_SQL.format(extra=", min(site) AS site_name")
    problems = _problems_of(View("probe", "", sql, rollup=rollup))
    assert [p.split(": breaks ")[1].split(";")[0] for p in problems] == [
        'the rule "a rollup\'s keys are columns of the view": it has no column device',
        'the rule "a merge column is a column of the view": it has no column rate',
        'the rule "a merge sums numbers": column site_name is VARCHAR',
    ]


def test_sql_that_does_not_bind_is_named() -> None:
    probe = View("broken", "", "SELECT site, no_such_column FROM {src}.transactions")
    (problem,) = _problems_of(probe)
    assert problem.startswith('view broken: breaks the rule "its SQL binds over the lake\'s columns": ')
    assert "no_such_column" in problem


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda: View("p", "", "SELECT 1", period="week"),
            "view p: breaks the rule \"a period is one of the kinds\": period 'week'; use day, month, window",
        ),
        (
            lambda: View("p", "", "SELECT 1", rollup=Rollup("day", ("site", "day")), period="month"),
            'view p: breaks the rule "a rollup of month periods is stored by their window_start": its date '
            "column is day",
        ),
        (
            lambda: View("p", "", "SELECT 1", rollup=Rollup("day", ("day",))),
            'view p: breaks the rule "a rollup\'s keys hold the site and its date column": column site is '
            "not among its keys",
        ),
        (
            lambda: View("p", "", "SELECT 1", rollup=Rollup("day", ("site", "day"), Merge(("revenue",)))),
            'view p: breaks the rule "a Merge sums transactions": column transactions is not among its sums',
        ),
        (
            lambda: View(
                "p", "", "SELECT 1", rollup=Rollup("day", ("site", "day"), Merge(("transactions", "day")))
            ),
            'view p: breaks the rule "a merge column is declared once": column day is declared more than '
            "once",
        ),
        (
            lambda: View("Bad name", "", "SELECT 1"),
            'view Bad name: breaks the rule "a view\'s name is a lowercase SQL name"',
        ),
        (
            lambda: _declared(View("a", "", "SELECT * FROM {src}.b"), View("b", "", "SELECT 1")),
            'view a: breaks the rule "a view reads only views declared before it": it reads b, declared '
            "after it",
        ),
        (
            lambda: _declared(View("a", "", "SELECT 1"), View("a", "", "SELECT 2")),
            'view a: breaks the rule "a view is declared once"',
        ),
        (
            lambda: _declared(
                View("d", "", "SELECT 1", rollup=Rollup("day", ("site", "day"))),
                View(
                    "m", "", "SELECT * FROM {src}.d", rollup=Rollup("window_start", ("site", "window_start"))
                ),
            ),
            'view m: breaks the rule "a rollup reads only rollups stored by its own date column": it reads '
            "d, stored by day, and is stored by window_start",
        ),
    ],
)
def test_a_declaration_that_breaks_a_rule_fails_when_it_is_made(make: object, message: str) -> None:
    with pytest.raises(ValidationError) as refused:
        make()  # type: ignore[operator]
    assert str(refused.value).startswith(message)


def test_the_readme_names_every_view() -> None:
    section = README.read_text().split("## DuckDB views", 1)[1].split("\n## ", 1)[0]
    missing = [v.name for v in VIEW_LIST if f"`{v.name}`" not in section]
    assert missing == [], "name each (in backquotes) in the list of README.md's section 'DuckDB views'"


def test_the_documentation_lists_every_view_from_its_declaration() -> None:
    """docs/how-it-works/lake.md holds the marker the docs hook replaces with a row per view."""
    docs = Path(__file__).parents[2] / "docs"
    spec = importlib.util.spec_from_file_location("views_hook", docs / "hooks" / "views.py")
    assert spec and spec.loader
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    page = hook.on_page_markdown((docs / "how-it-works" / "lake.md").read_text())
    rows = [line.split("`")[1] for line in page.splitlines() if line.startswith("| `")]
    assert rows == [view.name for view in VIEW_LIST]
