"""One test per row of the 7.2 table, end to end over loopback: the exception type, its fields,
and how many requests were sent (nothing is retried that must not be)."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from commerce_reports.deals import DealsClient, error_from_response
from commerce_reports.deals.errors import (
    AccountNotEnabledError,
    ApiKeyInvalidError,
    ApiKeyMissingError,
    ApiKeySyntaxError,
    DealIdInvalidError,
    DealNotFoundError,
    DealRateLimitedError,
    DealRuleError,
    DealRuleKind,
    DealSchemaError,
    DealServerError,
    DealUpstreamError,
    InsufficientScopeError,
    UnsupportedMediaTypeError,
)
from commerce_reports.deals.sandbox import (
    DEFAULT_DISABLED_KEY,
    DEFAULT_READ_KEY,
    DEFAULT_WRITE_KEY,
    Fault,
    RunningDealsSandbox,
)

from .conftest import FakeClock, valid_deal

MakeClient = Callable[..., DealsClient]


def test_400_schema_gives_one_failure_per_comma_joined_field(
    client: DealsClient, deals_sandbox: RunningDealsSandbox
) -> None:
    deal = valid_deal(commercial={"takeRate": 0.9}, schedule={"startDate": "2031-03-09"}, status="live")
    with pytest.raises(DealSchemaError) as caught:
        client.create(deal, local_checks=False)
    error = caught.value
    assert error.status == 400 and not error.retriable
    assert [f.path for f in error.failures] == [
        "body/status",
        "body/commercial/takeRate",
        "body/schedule/startDate",
    ]
    assert error.kinds == (
        DealRuleKind.INVALID_STATUS,
        DealRuleKind.TAKE_RATE,
        DealRuleKind.START_DATE,
    )
    assert len(deals_sandbox.sandbox.calls("POST")) == 1


def test_400_rule_against_the_stored_deal_is_a_rule_error(
    client: DealsClient, deals_sandbox: RunningDealsSandbox
) -> None:
    with pytest.raises(DealRuleError) as caught:
        client.update("1003", {"buyers": [{"dsp": "alphadsp", "seatIds": ["s"]}]})
    assert caught.value.kind is DealRuleKind.OPEN_DEAL_BUYERS
    assert caught.value.failures[0].path == ""
    assert len(deals_sandbox.sandbox.calls("PATCH")) == 1


def test_400_malformed_id_in_path(client: DealsClient, deals_sandbox: RunningDealsSandbox) -> None:
    with pytest.raises(DealIdInvalidError) as caught:
        client.update("not-an-id", {"status": "paused"})
    assert caught.value.failures[0].path == "params/id"
    assert caught.value.kinds == (DealRuleKind.INVALID_DEAL_ID,)
    assert len(deals_sandbox.sandbox.calls("PATCH")) == 1


def test_401_no_key_is_plain_text(deals_sandbox: RunningDealsSandbox) -> None:
    # DealsClient always sends its key, so the bare request is made with httpx.
    response = httpx.get(f"{deals_sandbox.base_url}/targeting-attributes/device.language/values")
    assert response.headers["content-type"].startswith("text/plain")
    error = error_from_response(
        response.status_code, response.content, response.headers["content-type"], method="GET", path="/x"
    )
    assert isinstance(error, ApiKeyMissingError)
    assert error.service_message == "api key not provided"


def test_401_unknown_and_revoked_keys(make_client: MakeClient, deals_sandbox: RunningDealsSandbox) -> None:
    unknown = "unknown-key-00000000000000000000"
    with pytest.raises(ApiKeyInvalidError) as caught:
        make_client(unknown).targeting_values("device.language")
    assert unknown not in str(caught.value) and unknown not in repr(caught.value)
    deals_sandbox.sandbox.revoke(DEFAULT_READ_KEY)
    with pytest.raises(ApiKeyInvalidError):
        make_client(DEFAULT_READ_KEY).targeting_values("device.language")
    assert len(deals_sandbox.sandbox.calls()) == 2


def test_401_malformed_key(make_client: MakeClient) -> None:
    with pytest.raises(ApiKeySyntaxError) as caught:
        make_client("short key!").targeting_values("device.language")
    assert caught.value.service_message == "invalid api key syntax"
    assert "short key!" not in str(caught.value)


def test_403_read_only_key_is_refused_before_the_body_is_validated(
    make_client: MakeClient, deals_sandbox: RunningDealsSandbox
) -> None:
    reader = make_client(DEFAULT_READ_KEY)
    with pytest.raises(InsufficientScopeError):
        reader.create(valid_deal(commercial={"takeRate": 5}), local_checks=False)
    with pytest.raises(InsufficientScopeError):
        reader.create(valid_deal(), dry_run=True)
    assert reader.targeting_values("device.language")  # reading is allowed
    assert len(deals_sandbox.sandbox.calls("POST")) == 2


def test_403_disabled_account_is_checked_after_the_body(make_client: MakeClient) -> None:
    disabled = make_client(DEFAULT_DISABLED_KEY)
    with pytest.raises(DealSchemaError):
        disabled.create(valid_deal(commercial={"takeRate": 5}), local_checks=False)
    with pytest.raises(AccountNotEnabledError) as caught:
        disabled.create(valid_deal())
    assert caught.value.service_message == "Partner not authorized for this API"
    with pytest.raises(AccountNotEnabledError):
        disabled.targeting_values("device.language")


def test_404_no_deal_with_that_id_on_the_account(
    client: DealsClient, deals_sandbox: RunningDealsSandbox
) -> None:
    for deal_id in ("9001", "424242"):  # another account's deal, and none at all
        with pytest.raises(DealNotFoundError) as caught:
            client.update(deal_id, {"status": "paused"})
        assert caught.value.service_message == "Deal request not found"
    assert len(deals_sandbox.sandbox.calls("PATCH")) == 2


def test_415_merge_patch_and_the_client_always_sends_json(
    client: DealsClient, deals_sandbox: RunningDealsSandbox
) -> None:
    response = httpx.patch(
        f"{deals_sandbox.base_url}/deal-requests/1001",
        content=b'{"status": "paused"}',
        headers={"x-api-key": DEFAULT_WRITE_KEY, "content-type": "application/merge-patch+json"},
    )
    error = error_from_response(
        response.status_code, response.content, "application/json", method="PATCH", path="/p"
    )
    assert isinstance(error, UnsupportedMediaTypeError) and error.status == 415
    assert error.service_message == "Unsupported Media Type"
    client.update("1001", {"status": "paused"})
    assert deals_sandbox.sandbox.calls("PATCH")[-1].content_type == "application/json"


@pytest.mark.parametrize("deals_sandbox", [{"rate_limit": 1, "rate_window": 30}], indirect=True)
def test_429_waits_the_stated_seconds_then_retries(
    client: DealsClient, deals_sandbox: RunningDealsSandbox, clock: FakeClock
) -> None:
    client.targeting_values("device.language")
    assert client.targeting_values("device.deviceType") == ("ctv", "desktop", "mobile", "tablet")
    assert clock.sleeps == [30]
    assert [r.status for r in deals_sandbox.sandbox.calls()] == [200, 429, 200]


@pytest.mark.parametrize("deals_sandbox", [{"rate_limit": 1}], indirect=True)
def test_429_is_bounded(make_client: MakeClient, deals_sandbox: RunningDealsSandbox) -> None:
    waits: list[float] = []  # a sleep that never lets the window pass
    client = make_client(sleep=waits.append, max_attempts=3)
    client.targeting_values("device.language")
    with pytest.raises(DealRateLimitedError) as caught:
        client.targeting_values("device.deviceType")
    assert caught.value.retry_after == 60 and caught.value.attempts == 3
    assert waits == [60, 60]
    assert len(deals_sandbox.sandbox.calls()) == 4


def test_500_is_plain_text_and_an_update_is_resent_until_the_bound(
    make_client: MakeClient, deals_sandbox: RunningDealsSandbox
) -> None:
    deals_sandbox.sandbox.arm_fault(Fault.UNREACHABLE, times=3)
    with pytest.raises(DealServerError) as caught:
        make_client(max_attempts=3).update("1001", {"status": "paused"})
    assert caught.value.service_message == "Internal Server Error"
    assert caught.value.content_type.startswith("text/plain")
    assert caught.value.attempts == 3 and caught.value.retriable
    assert len(deals_sandbox.sandbox.calls("PATCH")) == 3


def test_502_names_the_upstream(make_client: MakeClient, deals_sandbox: RunningDealsSandbox) -> None:
    deals_sandbox.sandbox.arm_fault(Fault.REJECT, times=2)
    with pytest.raises(DealUpstreamError) as caught:
        make_client(max_attempts=2).update("1001", {"status": "paused"})
    assert caught.value.upstream == "dealhub" and caught.value.status == 502
    assert len(deals_sandbox.sandbox.calls("PATCH")) == 2
