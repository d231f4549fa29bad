"""A 2xx that contradicts the request, or says nothing usable, is a failure, never a success:
a create without its deal (confirm before re-sending, as after a lost answer), an update or an
archive's confirming read answered with another deal, an id that is no id."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from commerce_reports.deals import DealsClient
from commerce_reports.deals.errors import (
    ArchiveUnconfirmedError,
    DealMalformedResponseError,
    DealMayExistError,
)
from commerce_reports.http import RetryPolicy

from .conftest import valid_deal

Handler = Callable[[httpx.Request], httpx.Response]


def client_of(handler: Handler, attempts: int = 1) -> DealsClient:
    """A client of `handler` that never sleeps, and does not check what it sends."""
    transport = httpx.MockTransport(handler)
    retry = RetryPolicy(attempts, 0.0, 0.0)
    return DealsClient(
        "sbx-deals-write-0000000000000001", "http://deals.test", transport=transport, retry=retry
    )


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (202, {"message": "accepted"}),
        (201, {"status": "active"}),
        (201, {"id": {"x": 1}}),
        (201, None),
        (204, None),
        (200, "not json"),
    ],
)
def test_a_create_answered_without_its_deal_may_exist(status: int, body: object) -> None:
    sent: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        if body is None or isinstance(body, str):
            return httpx.Response(status, content=(body or "").encode())
        return httpx.Response(status, json=body)

    with client_of(handler, attempts=4) as c, pytest.raises(DealMayExistError) as caught:
        c.create(valid_deal(), local_checks=False)
    assert f"HTTP {status}" in str(caught.value) and "Confirm whether it exists" in str(caught.value)
    assert len(sent) == 1  # never re-sent


def test_an_update_answered_with_another_deal_fails() -> None:
    with client_of(lambda r: httpx.Response(200, json={"id": "999", "status": "paused"})) as c:
        with pytest.raises(DealMalformedResponseError, match="answered deal '999', not '1001'"):
            c.update("1001", {"status": "paused"})


def test_an_update_answered_with_its_own_deal_or_nothing_succeeds() -> None:
    with client_of(lambda r: httpx.Response(200, json={"id": 1001, "status": "paused"})) as c:
        assert c.update(1001, {"status": "paused"}) is not None
    with client_of(lambda r: httpx.Response(204)) as c:
        assert c.update("1001", {"status": "paused"}) is None


def test_an_archive_is_not_confirmed_by_a_read_of_another_deal() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.method == "PATCH":
            return httpx.Response(502, json={"message": "rejected", "upstream": "dsp"})
        return httpx.Response(200, json={"id": "777", "status": "archived"})

    with client_of(handler, attempts=2) as c, pytest.raises(ArchiveUnconfirmedError, match="'777'"):
        c.update("1001", {"status": "archived"})
