"""Retries exactly as 7.2 allows, end to end: creates are never re-sent after a 5xx, updates are
re-sent identically, an archive that keeps getting 502 is confirmed by a read."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from commerce_reports.deals import DealsClient
from commerce_reports.deals.errors import (
    ArchiveUnconfirmedError,
    DealMayExistError,
    DealTransportError,
    DealUpstreamError,
)
from commerce_reports.deals.sandbox import Fault, RunningDealsSandbox

from .conftest import FakeClock, valid_deal

MakeClient = Callable[..., DealsClient]


def test_create_applied_then_502_is_not_duplicated_and_says_so(
    client: DealsClient, deals_sandbox: RunningDealsSandbox
) -> None:
    sandbox = deals_sandbox.sandbox
    sandbox.arm_fault(Fault.APPLY_THEN_FAIL, method="POST")
    with pytest.raises(DealMayExistError) as caught:
        client.create(valid_deal())
    error = caught.value
    assert error.upstream == "dealhub" and not error.retriable
    assert "may exist downstream in dealhub" in str(error) and "NOT re-sent" in str(error)
    assert len(sandbox.calls("POST")) == 1
    creates = [w for w in sandbox.downstream_writes if w.operation == "create"]
    assert len(creates) == 1 and creates[0].body["name"] == "Spring sports"
    assert isinstance(error.__cause__, DealUpstreamError)


@pytest.mark.parametrize("fault", [Fault.UNREACHABLE, Fault.TIMEOUT, Fault.REJECT])
def test_create_after_500_or_502_is_never_retried(
    client: DealsClient, deals_sandbox: RunningDealsSandbox, clock: FakeClock, fault: Fault
) -> None:
    deals_sandbox.sandbox.arm_fault(fault, times=5)
    with pytest.raises(DealMayExistError) as caught:
        client.create(valid_deal())
    assert str(caught.value).count("HTTP 50") == 1
    assert len(deals_sandbox.sandbox.calls("POST")) == 1
    assert clock.sleeps == []


def test_dry_run_after_500_is_retried_since_it_creates_nothing(
    client: DealsClient, deals_sandbox: RunningDealsSandbox
) -> None:
    deals_sandbox.sandbox.arm_fault(Fault.UNREACHABLE, method="POST")
    with pytest.raises(DealMayExistError):  # a real create meets the armed fault
        client.create(valid_deal())
    deal = client.create(valid_deal(), dry_run=True)
    assert deal.id is None and deal.status == "active"
    assert deals_sandbox.sandbox.downstream_writes == []


def test_update_applied_then_502_is_resent_identically(
    client: DealsClient, deals_sandbox: RunningDealsSandbox, clock: FakeClock
) -> None:
    sandbox = deals_sandbox.sandbox
    sandbox.arm_fault(Fault.APPLY_THEN_FAIL, method="PATCH")
    deal = client.update("1001", {"commercial": {"takeRate": 0.3}, "status": "paused"})
    assert deal is not None and deal.status == "paused" and deal.commercial
    assert deal.commercial.take_rate == 0.3
    patches = sandbox.calls("PATCH")
    assert [p.status for p in patches] == [502, 200]
    assert patches[0].body == patches[1].body
    assert {p.content_type for p in patches} == {"application/json"}
    assert clock.sleeps == [0.5]


def test_update_after_500_is_resent(client: DealsClient, deals_sandbox: RunningDealsSandbox) -> None:
    deals_sandbox.sandbox.arm_fault(Fault.TIMEOUT, method="PATCH", times=2)
    deal = client.update("1001", {"status": "paused"})
    assert deal is not None and deal.status == "paused"
    assert [p.status for p in deals_sandbox.sandbox.calls("PATCH")] == [500, 500, 200]


def test_archive_that_keeps_getting_502_is_landed_when_a_read_shows_it(
    client: DealsClient, deals_sandbox: RunningDealsSandbox
) -> None:
    sandbox = deals_sandbox.sandbox
    sandbox.arm_fault(Fault.APPLY_THEN_FAIL, method="PATCH")
    deal = client.update("1001", {"status": "archived"})
    assert deal is not None and deal.status == "archived" and deal.id == "1001"
    assert [(r.method, r.status) for r in sandbox.calls()] == [("PATCH", 502), ("GET", 200)]


@pytest.mark.parametrize("deals_sandbox", [{"offer_read": False}], indirect=True)
def test_archive_without_a_read_is_reported_unconfirmed(
    make_client: MakeClient, deals_sandbox: RunningDealsSandbox
) -> None:
    sandbox = deals_sandbox.sandbox
    sandbox.arm_fault(Fault.APPLY_THEN_FAIL, method="PATCH")
    with pytest.raises(ArchiveUnconfirmedError) as caught:
        make_client(max_attempts=3).update("1001", {"status": "archived"})
    error = caught.value
    assert error.upstream == "dealhub" and error.attempts == 3 and not error.retriable
    assert "answered 404" in str(error) and "may have landed" in str(error)
    assert len(sandbox.calls("PATCH")) == 3
    stored = sandbox.deal("1001")
    assert stored is not None and stored["status"] == "archived"


def test_edit_of_an_archived_deal_keeps_getting_502_until_the_bound(
    make_client: MakeClient, deals_sandbox: RunningDealsSandbox
) -> None:
    with pytest.raises(DealUpstreamError) as caught:
        make_client(max_attempts=2).update("1002", {"status": "paused"})
    assert type(caught.value) is DealUpstreamError and caught.value.attempts == 2
    assert "archived" in caught.value.service_message
    assert len(deals_sandbox.sandbox.calls("PATCH")) == 2


def test_unreachable_service_is_a_transport_error_after_the_bound(
    make_client: MakeClient, clock: FakeClock
) -> None:
    client = make_client(base_url="http://127.0.0.1:9", max_attempts=2)
    with pytest.raises(DealTransportError) as caught:
        client.targeting_values("device.language")
    assert caught.value.attempts == 2 and caught.value.retriable
    assert clock.sleeps == [0.5]
