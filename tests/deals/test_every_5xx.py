"""Every 5xx and every lost answer is judged by 7.2, end to end over loopback (issue 12, item 12):
a create is never re-sent and says it may exist, an update and a read are re-sent identically,
an archive stuck on 502 after a lost answer is confirmed by a read."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from commerce_reports.deals import DealsClient
from commerce_reports.deals.errors import (
    DealMayExistError,
    DealServerError,
    DealTransportError,
    DealUpstreamError,
)
from commerce_reports.deals.sandbox import Fault, RunningDealsSandbox

from .conftest import FakeClock, valid_deal

MakeClient = Callable[..., DealsClient]
NEW_FAULTS = [Fault.UNAVAILABLE, Fault.GATEWAY_TIMEOUT, Fault.DROP]
SAID = {
    Fault.UNAVAILABLE: "HTTP 503 Service Unavailable",
    Fault.GATEWAY_TIMEOUT: "HTTP 504 HTML page: 504 Gateway Time-out",
    Fault.DROP: "no complete answer",
}


@pytest.mark.parametrize("fault", NEW_FAULTS)
def test_create_after_503_504_or_a_dropped_answer_may_exist_and_is_not_resent(
    client: DealsClient, deals_sandbox: RunningDealsSandbox, clock: FakeClock, fault: Fault
) -> None:
    sandbox = deals_sandbox.sandbox
    sandbox.arm_fault(fault, times=5, method="POST")
    with pytest.raises(DealMayExistError) as caught:
        client.create(valid_deal())
    error = caught.value
    assert SAID[fault] in str(error) and "may exist downstream" in str(error) and not error.retriable
    assert "<html" not in str(error)
    assert len(sandbox.calls("POST")) == 1 and clock.sleeps == []
    landed = [w for w in sandbox.downstream_writes if w.operation == "create"]
    assert len(landed) == (1 if fault.applies else 0)


@pytest.mark.parametrize("deals_sandbox", [{"timeout_delay": 0.5}], indirect=True)
def test_create_whose_answer_times_out_may_exist(
    make_client: MakeClient, deals_sandbox: RunningDealsSandbox
) -> None:
    deals_sandbox.sandbox.arm_fault(Fault.HANG, method="POST")
    with pytest.raises(DealMayExistError, match="timed out"):
        make_client(timeout=0.1).create(valid_deal())
    assert len(deals_sandbox.sandbox.calls("POST")) == 1
    assert len(deals_sandbox.sandbox.downstream_writes) == 1


def test_create_that_never_connected_is_retried_since_nothing_was_sent(
    make_client: MakeClient, clock: FakeClock
) -> None:
    with pytest.raises(DealTransportError) as caught:
        make_client(base_url="http://127.0.0.1:9", max_attempts=2).create(valid_deal())
    assert caught.value.attempts == 2 and clock.sleeps == [0.5]


@pytest.mark.parametrize("fault", NEW_FAULTS)
def test_update_after_503_504_or_a_dropped_answer_is_resent_identically(
    client: DealsClient, deals_sandbox: RunningDealsSandbox, clock: FakeClock, fault: Fault
) -> None:
    sandbox = deals_sandbox.sandbox
    sandbox.arm_fault(fault, method="PATCH")
    deal = client.update("1001", {"commercial": {"takeRate": 0.3}, "status": "paused"})
    assert deal is not None and deal.status == "paused"
    assert deal.commercial is not None and deal.commercial.take_rate == 0.3
    patches = sandbox.calls("PATCH")
    first = {Fault.UNAVAILABLE: 503, Fault.GATEWAY_TIMEOUT: 504, Fault.DROP: 0}[fault]
    assert [p.status for p in patches] == [first, 200]
    assert patches[0].body == patches[1].body and clock.sleeps == [0.5]


def test_update_stuck_on_503_ends_in_a_server_error_naming_the_status(
    make_client: MakeClient, deals_sandbox: RunningDealsSandbox, clock: FakeClock
) -> None:
    deals_sandbox.sandbox.arm_fault(Fault.UNAVAILABLE, times=5)
    with pytest.raises(DealServerError) as caught:
        make_client(max_attempts=3).update("1001", {"status": "paused"})
    error = caught.value
    assert type(error) is DealServerError and error.status == 503 and error.retriable
    assert error.attempts == 3 and "HTTP 503" in str(error) and "after 3 attempts" in str(error)
    assert len(deals_sandbox.sandbox.calls("PATCH")) == 3 and clock.sleeps == [0.5, 1.0]


@pytest.mark.parametrize("fault", [Fault.DROP, Fault.GATEWAY_TIMEOUT])
def test_archive_lost_then_refused_as_archived_is_confirmed_by_a_read(
    client: DealsClient, deals_sandbox: RunningDealsSandbox, fault: Fault
) -> None:
    sandbox = deals_sandbox.sandbox
    sandbox.arm_fault(fault, method="PATCH")
    deal = client.update("1001", {"status": "archived"})
    assert deal is not None and deal.status == "archived" and deal.id == "1001"
    first = 0 if fault is Fault.DROP else 504
    assert [(r.method, r.status) for r in sandbox.calls()] == [
        ("PATCH", first),
        ("PATCH", 502),
        ("GET", 200),
    ]


def test_archive_after_503_is_resent_and_lands(
    client: DealsClient, deals_sandbox: RunningDealsSandbox
) -> None:
    deals_sandbox.sandbox.arm_fault(Fault.UNAVAILABLE, method="PATCH")
    deal = client.update("1001", {"status": "archived"})
    assert deal is not None and deal.status == "archived"
    assert [p.status for p in deals_sandbox.sandbox.calls("PATCH")] == [503, 200]


@pytest.mark.parametrize("fault", [Fault.UNAVAILABLE, Fault.GATEWAY_TIMEOUT, Fault.DROP])
def test_read_after_any_5xx_or_a_dropped_answer_is_resent(
    client: DealsClient, deals_sandbox: RunningDealsSandbox, fault: Fault
) -> None:
    deals_sandbox.sandbox.arm_fault(fault, method="GET")
    assert client.targeting_values("device.deviceType") == ("ctv", "desktop", "mobile", "tablet")
    assert len(deals_sandbox.sandbox.calls("GET")) == 2


def test_every_5xx_is_a_server_error_and_502_stays_the_upstream_one(
    make_client: MakeClient, deals_sandbox: RunningDealsSandbox
) -> None:
    deals_sandbox.sandbox.arm_fault(Fault.REJECT, times=2)
    with pytest.raises(DealServerError) as caught:
        make_client(max_attempts=2).update("1001", {"status": "paused"})
    assert isinstance(caught.value, DealUpstreamError) and caught.value.upstream == "dealhub"
