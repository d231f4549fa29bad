"""No wait over 2 s is silent (README: said before it starts, with its reason), and a create
stopped while it waits for its answer says the deal may exist."""

from __future__ import annotations

import logging

import httpx
import pytest

from commerce_reports.deals import DealsClient
from commerce_reports.http import RetryPolicy


def test_a_429_wait_of_3_s_is_said_before_it_starts(caplog: pytest.LogCaptureFixture) -> None:
    answers = iter([httpx.Response(429, json={"message": "Rate limit exceeded, retry in 3 seconds"})])
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        said = [r for r in caplog.records if r.levelno >= logging.WARNING]
        assert said and "waiting 3.0 s" in said[-1].getMessage(), "said after the wait, or not at all"

    transport = httpx.MockTransport(lambda r: next(answers, httpx.Response(200, json=["de"])))
    retry = RetryPolicy(4, 0.5, 8.0, jitter=lambda: 0.0)
    with (
        caplog.at_level(logging.INFO),
        DealsClient(
            "sbx-deals-write-0000000000000001",
            "http://deals.test",
            transport=transport,
            retry=retry,
            sleep=sleep,
        ) as c,
    ):
        assert c.targeting_values("device.language") == ("de",)
    assert waits == [3.0]
    assert "HTTP 429" in caplog.text and "the service asked to wait 3 s" in caplog.text


def test_ctrl_c_while_a_create_waits_for_its_answer_says_the_deal_may_exist(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise KeyboardInterrupt

    transport = httpx.MockTransport(handler)
    with DealsClient("sbx-deals-write-0000000000000001", "http://deals.test", transport=transport) as c:
        with pytest.raises(KeyboardInterrupt):
            c.create({"name": "x"}, local_checks=False)
        with pytest.raises(KeyboardInterrupt):
            c.targeting_values("device.language")  # a read: nothing to confirm
    said = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert said == [
        "POST /deal-requests was interrupted: it may have reached the service, and the deal may "
        "exist; confirm whether it exists before creating it again"
    ]
