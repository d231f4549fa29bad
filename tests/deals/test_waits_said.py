"""No wait over 2 s is silent (README: said before it starts, with its reason), and a create
stopped while it waits for its answer says the deal may exist."""

from __future__ import annotations

import logging
import re
import threading

import httpx
import pytest

from commerce_reports import activity
from commerce_reports.deals import DealsClient, exchange
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


def test_an_answer_slower_than_2_s_is_said_as_it_is_awaited(monkeypatch: pytest.MonkeyPatch) -> None:
    # A deal server answering after 45 s held `deals create` silent 31 s (then exit 52), and an
    # update silent 123.5 s over its 4 attempts. Each wait for an answer is now said once it is
    # long; the 2 s bound is shortened here and the server stalls until it has been said.
    monkeypatch.setattr(exchange, "_LONG_WAIT", 0.01)
    lines: list[str] = []
    said = threading.Event()

    def say(line: str) -> None:
        lines.append(line)
        said.set()

    monkeypatch.setattr(activity, "to_stderr", say)
    monkeypatch.setattr(activity, "interactive", lambda: False)  # a log: a line at start and end

    def stall(request: httpx.Request) -> httpx.Response:
        assert said.wait(10), "the wait for the answer was never said"
        said.clear()
        return httpx.Response(200, json=["de"])

    with DealsClient(
        "sbx-deals-write-0000000000000001", "http://deals.test", transport=httpx.MockTransport(stall)
    ) as c:
        assert c.targeting_values("device.language") == ("de",)
    what = "waiting for the deal interface's answer to GET /targeting-attributes/device.language/values"
    assert lines[0] == f"{what} ..." and re.fullmatch(rf"{re.escape(what)}: done in \d+\.\d s", lines[1])


def test_a_quick_answer_says_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    transport = httpx.MockTransport(lambda r: httpx.Response(200, json=["de"]))
    with DealsClient("sbx-deals-write-0000000000000001", "http://deals.test", transport=transport) as c:
        assert c.targeting_values("device.language") == ("de",)
    assert capsys.readouterr().err == ""
