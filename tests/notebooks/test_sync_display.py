"""`cr.sync()` as a notebook shows it: a few lines and a small table, not every request."""

from __future__ import annotations

from datetime import date, timedelta

from IPython.core.interactiveshell import InteractiveShell

from commerce_reports.contract import PartitionKey
from commerce_reports.errors import LakeError
from commerce_reports.params import Filters
from commerce_reports.syncing import Failure, PlannedRequest, SyncPlan, SyncResult


def a_big_result() -> SyncResult:
    """Two sites: 90 ledger days and 4 month windows each; one request failed, the rest stored."""
    first = date(2026, 8, 1)
    requests = [
        PlannedRequest(site, PartitionKey.transactions(first + timedelta(days=n)), "missing")
        for site in ("alpha", "beta")
        for n in range(90)
    ] + [
        PlannedRequest(
            site, PartitionKey.aggregate("networks", date(2026, m, 1), Filters(), "month"), "missing"
        )
        for site in ("alpha", "beta")
        for m in range(8, 12)
    ]
    failed = requests[5]
    result = SyncResult(SyncPlan(requests, {"transactions": 60.0, "networks": 60.0}, skipped=3))
    result.stored.extend((r, 250) for r in requests if r is not failed)
    result.failed.append(Failure(failed, LakeError("the disk was full")))
    return result


def test_the_repr_is_a_line_per_site_and_dataset() -> None:
    result = a_big_result()
    lines = repr(result).splitlines()
    assert lines[0] == (
        "SyncResult: stored 187 partitions (46,750 rows); 1 failed and stay due for the next sync; "
        "3 partitions in range stored and current"
    )
    assert [line.split()[:2] for line in lines[1:]] == [
        ["alpha", "networks"],
        ["alpha", "transactions"],
        ["beta", "networks"],
        ["beta", "transactions"],
    ]
    assert lines[2].split() == [
        "alpha",
        "transactions",
        "90",
        "planned",
        "89",
        "stored",
        "22,250",
        "rows",
        "1",
        "failed",
    ]
    assert len(repr(result)) < 600
    assert len(result.stored) == 187 and len(result.failed) == 1  # the detail stays on the attributes


def test_a_notebook_shows_a_short_text_and_an_html_table() -> None:
    shown, _ = InteractiveShell.instance().display_formatter.format(a_big_result())
    assert set(shown) == {"text/plain", "text/html"}
    assert len(shown["text/plain"]) < 600 and len(shown["text/html"]) < 1500
    html = shown["text/html"]
    assert html.count("<tr>") == 5  # a header and a row per site and dataset
    assert "<td>beta</td><td>transactions</td><td>90</td><td>90</td><td>22,500</td><td>0</td>" in html
