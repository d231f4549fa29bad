"""A refresh's plan is a value worked out from the lake's state before anything is written: whole,
update or nothing for a site, and per rollup and month whole, delta, patch or nothing, each with its
reason. Pure functions: no file here."""

from __future__ import annotations

import dataclasses

import pytest

from commerce_reports.db.plan import (
    DELTA,
    EVERY,
    NOTHING,
    PATCH,
    UPDATE,
    WHOLE,
    SitePlan,
    Step,
    TransactionChange,
    plan_site,
    plan_update,
)
from commerce_reports.db.state import DERIVED_ROLLUPS, SiteState

ROLLUPS = ["transactions", *(v.name for v in DERIVED_ROLLUPS)]
DAY = "transactions/by=updateDate/day=2026-03-{:02d}/part.parquet"
WINDOW = "networks/slice=all/grain=month/start=2026-02-01/part.parquet"
LISTING = {**{DAY.format(d): f"sha-{d}" for d in range(1, 11)}, WINDOW: "sha-window"}
HELD = frozenset(f"2026-{m:02d}-{d:02d}" for m, last in ((2, 28), (3, 10)) for d in range(1, last + 1))
BUILT = SiteState(listing=LISTING, whole_days=HELD)  # the last full build's days


def _steps(plan: SitePlan) -> dict[tuple[str, str], str]:
    return {(s.rollup, s.bucket): s.action for s in plan.steps}


@pytest.mark.parametrize(
    ("before", "changed", "force", "reason"),
    [
        (BUILT, [], True, "asked to rebuild them whole"),
        (None, [], False, "no rollups yet (or their state cannot be read)"),
        (
            dataclasses.replace(BUILT, code="old"),
            [],
            False,
            "the views' definitions or DuckDB's version changed since",
        ),
        (
            dataclasses.replace(BUILT, rebuilding=True),
            [],
            False,
            "a full build was stopped before it finished",
        ),
        (
            BUILT,
            ["link_performance/2026-03.parquet"],
            False,
            "1 rollup files differ from what the last refresh",
        ),
    ],
)
def test_a_site_is_built_whole_for_a_reason(
    before: SiteState | None, changed: list[str], force: bool, reason: str
) -> None:
    plan = plan_site("alpha", LISTING, before, changed_rollups=changed, force=force)
    assert plan.action == WHOLE and plan.reason.startswith(reason)
    assert plan.steps == tuple(Step(name, EVERY, WHOLE, plan.reason) for name in ROLLUPS)


def test_a_rollup_file_of_a_month_a_stopped_refresh_was_writing_is_no_forgery() -> None:
    stopped = dataclasses.replace(BUILT, pending_months=frozenset({"2026-03"}))
    changed = [
        "link_performance/2026-03.parquet",
        "transactions/base/whole-2026-03.parquet",
        "index/updateDate_2026-03-04.5be1c0.parquet",
    ]
    plan = plan_site("alpha", LISTING, stopped, changed_rollups=changed)
    assert (plan.action, plan.reason, plan.pending) == (UPDATE, "a refresh was stopped half way", {"2026-03"})
    forged = plan_site(
        "alpha", LISTING, stopped, changed_rollups=[*changed, "site_performance/2026-02.parquet"]
    )
    assert forged.action == WHOLE and "site_performance/2026-02.parquet" in forged.reason


def test_a_lake_that_is_what_the_rollups_reflect_needs_nothing() -> None:
    plan = plan_site("alpha", LISTING, BUILT)
    assert (plan.action, plan.reason, plan.writes) == (
        NOTHING,
        "the rollups reflect the lake's 11 files",
        False,
    )
    assert {s.action for s in plan.steps} == {NOTHING} and len(plan.steps) == len(ROLLUPS)


def test_each_changed_file_says_how_it_changed() -> None:
    before = dataclasses.replace(BUILT, skipped={DAY.format(4): "cut short"})
    now = {**LISTING, DAY.format(11): "sha-11", DAY.format(2): "sha-2-again"}
    del now[DAY.format(3)]
    plan = plan_site("alpha", now, before, unreadable=[DAY.format(5)], stored=[DAY.format(6), DAY.format(7)])
    assert (plan.action, plan.reason) == (UPDATE, "7 lake files changed")
    assert plan.changes == {
        DAY.format(2): "rewritten",
        DAY.format(3): "removed",
        DAY.format(4): "no longer left out",
        DAY.format(5): "left out",
        DAY.format(6): "stored again",
        DAY.format(7): "stored again",
        DAY.format(11): "added",
    }
    assert plan.ledger == sorted(plan.changes) and plan.report_months == set()


def test_most_ledger_files_rewritten_cost_less_built_whole() -> None:
    many = {
        f"transactions/by=updateDate/day=2025-{m:02d}-{d:02d}/part.parquet": "sha"
        for m in range(1, 13)
        for d in range(1, 11)
    }
    before = SiteState(listing=many)
    copied = dict.fromkeys(many, "refetched")
    plan = plan_site("alpha", copied, before)
    assert plan.action == WHOLE
    assert (
        plan.reason == "120 of 120 ledger files differ from what the rollups reflect: a full build costs less"
    )
    fifty = {r: "refetched" if n < 50 else v for n, (r, v) in enumerate(many.items())}
    assert plan_site("alpha", fifty, before).action == UPDATE  # 50 of 120: an update still


def _update(*changed: str, pending: frozenset[str] = frozenset(), own: bool = False) -> SitePlan:
    listing = {**LISTING, **dict.fromkeys(changed, "sha-changed")}
    whole_days = frozenset() if own else BUILT.whole_days
    before = dataclasses.replace(BUILT, pending_months=pending, whole_days=whole_days)
    plan = plan_site("alpha", listing, before)
    assert plan.action == UPDATE
    return plan


def test_a_new_update_day_writes_its_day_patches_the_days_of_its_returns_and_updates_their_months() -> None:
    """A daily sync: the new day's sales (a day first seen: a file of its own), and two returns of
    transactions earned on days the last full build holds (patched)."""
    plan = _update(DAY.format(11))
    change = TransactionChange(
        3, {"2026-03-11": 1, "2026-02-20": 1, "2026-03-02": 1}, patch_months=frozenset()
    )
    plan = plan_update(plan, change, share=0.25)
    steps = _steps(plan)
    assert steps[("transactions", "2026-03-11")] == WHOLE
    assert steps[("transactions", "2026-02")] == steps[("transactions", "2026-03")] == PATCH
    assert plan.patched == {"2026-02-20", "2026-03-02"}
    for view in DERIVED_ROLLUPS:  # both months, updated by the change alone where the sums allow
        if view.merge is not None:
            assert steps[(view.name, "2026-02")] == steps[(view.name, "2026-03")] == DELTA, view.name
    # daily_performance's distinct counts do not add up: each changed day computed again (from the
    # rows written to network_link_performance), no other
    assert {b: a for (r, b), a in steps.items() if r == "daily_performance"} == {
        "2026-02-20": WHOLE,
        "2026-03-02": WHOLE,
        "2026-03-11": WHOLE,
    }
    assert plan.months == {"2026-02", "2026-03"}
    reasons = {(s.rollup, s.bucket): s.reason for s in plan.steps}
    assert (
        reasons[("transactions", "2026-03-11")] == "first seen since the last full build: a file of its own"
    )
    assert (
        reasons[("transactions", "2026-02")]
        == "1 changed rows on 1 days (held by the last full build's month file)"
    )
    assert reasons[("daily_performance", "2026-03-02")] == (
        "3 changed transactions: its distinct counts do not add up, computed again from the rows written "
        "to network_link_performance"
    )
    assert reasons[("site_performance", "2026-03")] == "3 changed transactions: updated by the change alone"
    # a rollup of the reports alone is left as it is: no report window changed
    assert {b: a for (r, b), a in steps.items() if r == "network_clicks"} == {EVERY: NOTHING}


@pytest.mark.parametrize(
    ("new", "kept", "rows", "action"),
    [(2, 0, 10, PATCH), (2, 1, 10, WHOLE), (1, 1, 8, PATCH), (3, 0, 10, WHOLE)],
)
def test_a_day_of_its_own_is_patched_until_its_changes_pass_a_share_of_it(
    new: int, kept: int, rows: int, action: str
) -> None:
    plan = _update(DAY.format(4), own=True)
    change = TransactionChange(
        new, {"2026-03-04": new}, own_rows={"2026-03-04": rows}, kept={"2026-03-04": kept}
    )
    steps = _steps(plan_update(plan, change, share=0.25))
    assert steps.get(("transactions", "2026-03-04"), steps.get(("transactions", "2026-03"))) == action
    if action == PATCH:
        assert ("transactions", "2026-03") in steps and ("transactions", "2026-03-04") not in steps


def test_a_day_a_transaction_leaves_is_written_again() -> None:
    plan = _update(DAY.format(4), own=True)
    change = TransactionChange(
        1, {"2026-03-05": 1}, leaving=frozenset({"2026-03-04"}), own_rows={"2026-03-04": 90, "2026-03-05": 90}
    )
    planned = plan_update(plan, change, share=0.25)
    reasons = {
        (s.rollup, s.bucket): (s.action, s.reason) for s in planned.steps if s.rollup == "transactions"
    }
    assert reasons == {
        ("transactions", "2026-03-04"): (WHOLE, "a transaction left this day: its file written again"),
        ("transactions", "2026-03"): (
            PATCH,
            "1 changed rows on 1 days (0 held by the last full build's month file, 1 by files of their own)",
        ),
    }


def test_a_report_window_fetched_again_updates_the_views_that_read_it_and_nothing_else() -> None:
    plan = plan_update(_update(WINDOW), TransactionChange())
    assert plan.report_months == {"2026-02"}
    steps = _steps(plan)
    assert steps[("transactions", EVERY)] == NOTHING
    assert steps[("link_performance", EVERY)] == steps[("daily_performance", EVERY)] == NOTHING
    for name in ("device_performance", "network_performance", "merchandise_performance", "site_performance"):
        assert steps[(name, "2026-02")] == DELTA
    assert steps[("network_clicks", "2026-02")] == WHOLE
    reasons = {(s.rollup, s.bucket): s.reason for s in plan.steps}
    assert reasons[("network_clicks", "2026-02")] == "its report windows changed: computed again from them"
    assert plan.months == {"2026-02"}


def test_months_a_stopped_refresh_left_are_computed_again_whatever_changed() -> None:
    plan = plan_update(_update(pending=frozenset({"2026-01"})), TransactionChange())
    assert {(s.rollup, s.bucket, s.action) for s in plan.steps if s.bucket == "2026-01"} == {
        (view.name, "2026-01", WHOLE) for view in DERIVED_ROLLUPS
    }


def test_a_plan_describes_itself_a_line_per_step() -> None:
    plan = plan_update(_update(WINDOW), TransactionChange())
    lines = plan.describe()
    assert lines[0] == "rollups of alpha: update (1 lake files changed)"
    assert lines[1] == f"  rewritten: {WINDOW}"
    assert any(
        line.split()
        == [
            "site_performance",
            "2026-02",
            "delta",
            "its",
            "report",
            "windows",
            "changed:",
            "updated",
            "by",
            "the",
            "change",
            "alone",
        ]
        for line in lines
    )
