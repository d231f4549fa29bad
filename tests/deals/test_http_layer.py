"""The deal client stands on the toolkit's HTTP layer: the key goes by `KeyAuth`, waits the
service asks for are capped by the shared limit, and answers are bounded in size."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from commerce_reports.config import Limits
from commerce_reports.deals import DealsClient
from commerce_reports.deals.errors import (
    DealMayExistError,
    DealRateLimitedError,
    DealResponseTooLargeError,
)
from commerce_reports.deals.sandbox import DEFAULT_WRITE_KEY, RunningDealsSandbox
from commerce_reports.http import KeyAuth

from .conftest import FakeClock, valid_deal

MakeClient = Callable[..., DealsClient]


def test_the_key_travels_by_auth_never_in_the_default_headers(
    client: DealsClient, deals_sandbox: RunningDealsSandbox
) -> None:
    http = client._exchange.session._http  # the one place the key could sit in clear
    assert isinstance(http.auth, KeyAuth) and DEFAULT_WRITE_KEY not in str(http.headers)
    assert client.targeting_values("device.language")  # and the sandbox accepted it


def test_a_request_with_the_key_sends_it_once_as_x_api_key() -> None:
    seen: list[httpx.Headers] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers)
        return httpx.Response(200, json={"values": ["de"]})

    with DealsClient(DEFAULT_WRITE_KEY, "http://deals.test", transport=httpx.MockTransport(handler)) as c:
        assert c.targeting_values("device.language") == ("de",)
    assert seen[0].get_list("x-api-key") == [DEFAULT_WRITE_KEY]


@pytest.mark.parametrize("deals_sandbox", [{"rate_limit": 1, "rate_window": 3600}], indirect=True)
def test_a_wait_over_the_cap_gives_up_at_once_and_says_which_setting(
    make_client: MakeClient, deals_sandbox: RunningDealsSandbox, clock: FakeClock
) -> None:
    client = make_client(limits=Limits(max_retry_wait=600))
    client.targeting_values("device.language")
    with pytest.raises(DealRateLimitedError) as caught:
        client.targeting_values("device.deviceType")
    assert caught.value.retry_after == 3600 and "COMMERCE_REPORTS_MAX_RETRY_WAIT" in str(caught.value)
    assert clock.sleeps == [] and len(deals_sandbox.sandbox.calls()) == 2


def test_an_answer_over_the_ceiling_is_refused(
    make_client: MakeClient, deals_sandbox: RunningDealsSandbox
) -> None:
    client = make_client(limits=Limits(max_body_bytes=64))
    with pytest.raises(DealResponseTooLargeError, match="ceiling"):
        client.targeting_values("device.geo.country")
    assert len(deals_sandbox.sandbox.calls()) == 1


def test_a_create_whose_answer_is_over_the_ceiling_may_exist(
    make_client: MakeClient, deals_sandbox: RunningDealsSandbox
) -> None:
    with pytest.raises(DealMayExistError, match="ceiling"):
        make_client(limits=Limits(max_body_bytes=64)).create(valid_deal())
    assert [r.status for r in deals_sandbox.sandbox.calls("POST")] == [201]
