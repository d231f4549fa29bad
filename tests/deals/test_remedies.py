"""Each error's remedy fits the request it ends: a values list that does not exist names no deal
id, a read or a dry run that got a 5xx wrote nothing, and a redirect says where it points."""

from __future__ import annotations

import httpx
import pytest

from commerce_reports.deals import DealsClient
from commerce_reports.deals.errors import DealNotFoundError, DealServerError, DealStatusError
from commerce_reports.http import RetryPolicy

from .conftest import valid_deal

KEY = "sbx-deals-write-0000000000000001"


def _client(answer: httpx.Response) -> DealsClient:
    transport = httpx.MockTransport(lambda request: answer)
    retry = RetryPolicy(2, 0.5, 8.0, jitter=lambda: 0.0)
    return DealsClient(KEY, "http://deals.test", transport=transport, retry=retry, sleep=lambda s: None)


def test_a_values_list_not_found_names_the_attribute_not_a_deal_id() -> None:
    # `deals values foo.bar` answered 404 advised "check the id and that the key belongs to the
    # account owning the deal": a values request has no id
    with _client(httpx.Response(404, json={"message": "Not found"})) as c:
        with pytest.raises(DealNotFoundError) as caught:
            c.targeting_values("foo.bar")
    assert "check the id" not in str(caught.value) and "check its name" in str(caught.value)


@pytest.mark.parametrize("status", [500, 502, 503])
def test_a_5xx_to_a_read_or_a_dry_run_says_nothing_was_written(status: int) -> None:
    # a 5xx on `values` or a dry run said "a write may still have had effect"
    answer = httpx.Response(status, json={"message": "down", "upstream": "dealhub"})
    with _client(answer) as c:
        with pytest.raises(DealServerError) as read:
            c.targeting_values("device.language")
        with pytest.raises(DealServerError) as dry:
            c.create(valid_deal(schedule={"startDate": "2099-01-01"}), dry_run=True)
    for caught in (read, dry):
        assert "a write may" not in str(caught.value)
        assert "changes nothing: it can be sent again as is" in str(caught.value)


def test_a_5xx_to_an_update_still_says_it_may_have_had_effect() -> None:
    with _client(httpx.Response(503, text="down")) as c, pytest.raises(DealServerError) as caught:
        c.update("1001", {"status": "paused"})
    assert "a write may still have had effect" in str(caught.value)


@pytest.mark.parametrize("status", [301, 307])
def test_a_redirect_says_where_it_points_and_is_not_followed(status: int) -> None:
    # a 301 from http to https was "HTTP 301 (no body). see part 7.2 of the service contract"
    sent: list[httpx.Request] = []

    def moved(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(status, headers={"Location": f"https://deals.test{request.url.path}"})

    transport = httpx.MockTransport(moved)
    with DealsClient(KEY, "http://deals.test", transport=transport) as c:
        with pytest.raises(DealStatusError) as caught:
            c.targeting_values("device.language")
    said = str(caught.value)
    assert "points to https://deals.test/targeting-attributes/device.language/values" in said
    assert "set the base URL to https://deals.test " in said and "part 7.2" not in said
    assert [r.url.host for r in sent] == ["deals.test"] and sent[0].url.scheme == "http"
