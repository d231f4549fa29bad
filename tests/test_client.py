"""The client over an in-process transport: headers, validation, statuses, retries, redaction."""

from __future__ import annotations

import gzip
import logging
import re
from collections.abc import Callable
from datetime import date
from pathlib import Path

import httpx
import pytest

from commerce_reports.client import GIVE_UP_AFTER, ReportsClient, RetryPolicy
from commerce_reports.errors import (
    AuthenticationError,
    BadRequestError,
    ConfigurationError,
    ForbiddenError,
    MalformedResponseError,
    NotFoundError,
    RateLimitedError,
    ServerError,
    ServiceError,
    UnreachableError,
    ValidationError,
)
from tests.conftest import FakeClock
from tests.factories import body, nested, networks_body

KEY = "unit-test-secret-9f8e7d"
Handler = Callable[[httpx.Request], httpx.Response]


class Recorder:
    """A MockTransport handler that answers from a script and remembers every request."""

    def __init__(self, *answers: httpx.Response | Exception | Handler) -> None:
        self.answers = list(answers)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if isinstance(answer, Exception):
            raise answer
        if callable(answer):
            return answer(request)
        return httpx.Response(answer.status_code, headers=answer.headers, content=answer.content)


def make(recorder: Recorder, clock: FakeClock, tmp_path: Path, **kwargs) -> ReportsClient:  # type: ignore[no-untyped-def]
    return ReportsClient(
        KEY,
        "https://reports.example",
        transport=httpx.MockTransport(recorder),
        clock=clock,
        pace_dir=tmp_path / "pace",
        retry=kwargs.pop("retry", RetryPolicy(max_attempts=4, jitter=lambda: 1.0)),
        **kwargs,
    )


def ok_transactions(n: int = 2) -> httpx.Response:
    return httpx.Response(
        200, content=body([nested(i) for i in range(n)]), headers={"content-type": "application/json"}
    )


def test_request_carries_auth_gzip_and_contract_parameters(clock: FakeClock, tmp_path: Path) -> None:
    recorder = Recorder(ok_transactions())
    with make(recorder, clock, tmp_path) as client:
        table = client.transactions(update_date=date(2026, 11, 3), campaign_ids=[11], program_type="CPA")
    assert table.num_rows == 2
    sent = recorder.requests[0]
    assert sent.headers["authorization"] == f"secret {KEY}"
    assert "gzip" in sent.headers["accept-encoding"]
    assert sent.url.path == "/v1/reports/transactions"
    assert dict(sent.url.params) == {"updateDate": "2026-11-03", "campaignIds": "11", "programType": "CPA"}


def test_gzip_bodies_are_decompressed(clock: FakeClock, tmp_path: Path) -> None:
    raw = body([nested(1)])
    recorder = Recorder(
        lambda r: httpx.Response(200, content=gzip.compress(raw), headers={"content-encoding": "gzip"})
    )
    with make(recorder, clock, tmp_path) as client:
        assert client.transactions(commission_date="2026-11-02")["commission_id"].to_pylist() == ["c1"]


def test_aggregate_requests_carry_window_and_filters(clock: FakeClock, tmp_path: Path) -> None:
    recorder = Recorder(httpx.Response(200, content=networks_body()))
    with make(recorder, clock, tmp_path) as client:
        table = client.networks(
            date(2026, 11, 1), date(2026, 12, 1), device_type="Mobile", country="de", link_utm_source=["news"]
        )
    assert dict(recorder.requests[0].url.params) == {
        "clickDateStart": "2026-11-01",
        "clickDateEnd": "2026-12-01",
        "deviceType": "MBL",
        "country": "DE",
        "linkUtmSource": "news",
    }
    assert table["device_type"].to_pylist() == ["MBL"] and table["window_end"].to_pylist() == [
        date(2026, 12, 1)
    ]


@pytest.mark.parametrize(
    "call",
    [
        lambda c: c.transactions(),
        lambda c: c.transactions(update_date="2026-13-01"),
        lambda c: c.transactions(update_date="2026-11-01", merchant_group_ids=[0]),
        lambda c: c.networks("2026-01-01", "2026-02-10"),
        lambda c: c.networks("2026-01-02", "2026-01-02"),
        lambda c: c.merchandise("2026-01-01", "2026-01-02", device_type="watch"),
        lambda c: c.merchandise("2026-01-01", "2026-01-02", partner_product="ZZZ"),
        lambda c: c.networks("2026-01-01", "2026-01-02", country="USA"),
        lambda c: c.networks("2026-01-01", "2026-01-02", colour="red"),
    ],
)
def test_invalid_parameters_never_reach_the_service(call, clock: FakeClock, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    recorder = Recorder(ok_transactions())
    with make(recorder, clock, tmp_path) as client, pytest.raises(ValidationError):
        call(client)
    assert recorder.requests == []


@pytest.mark.parametrize(
    "status, error_type",
    [(400, BadRequestError), (401, AuthenticationError), (403, ForbiddenError)],
)
def test_fatal_statuses_raise_typed_errors_without_retrying(
    status: int, error_type: type, clock: FakeClock, tmp_path: Path
) -> None:
    recorder = Recorder(httpx.Response(status, json={"message": f"nope {status}"}))
    with make(recorder, clock, tmp_path) as client, pytest.raises(error_type) as caught:
        client.networks("2026-01-01", "2026-01-02")
    assert len(recorder.requests) == 1
    error = caught.value
    assert error.status == status and error.endpoint == "networks" and not error.retriable
    assert error.params["clickDateStart"] == "2026-01-01"
    assert f"nope {status}" in str(error) and KEY not in str(error)


def test_404_is_no_rows_for_aggregates_and_an_error_for_transactions(
    clock: FakeClock, tmp_path: Path
) -> None:
    recorder = Recorder(httpx.Response(404, text="merchandise data not found"))
    with make(recorder, clock, tmp_path) as client:
        empty = client.merchandise("2026-01-01", "2026-01-02")
        assert empty.num_rows == 0 and "product_name" in empty.column_names
        with pytest.raises(NotFoundError):
            client.transactions(update_date="2026-01-01")
    assert len(recorder.requests) == 2


@pytest.mark.parametrize(
    "failure",
    [
        lambda: httpx.Response(500, text="Internal Server Error"),
        lambda: httpx.Response(502, json={"message": "bad gateway"}),
        lambda: httpx.Response(503, html="<html><title>Service Unavailable</title></html>"),
        lambda: httpx.ReadTimeout("slow"),
        lambda: httpx.RemoteProtocolError("peer closed connection without sending complete message body"),
        lambda: httpx.Response(200, content=b'{"transactions": [{"acc'),
        lambda: httpx.Response(
            200, content=gzip.compress(body([nested(1)]))[:40], headers={"content-encoding": "gzip"}
        ),
    ],
    ids=["500", "502", "503-html", "timeout", "dropped", "truncated", "truncated-gzip"],
)
def test_transient_failures_are_retried_then_succeed(failure, clock: FakeClock, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    recorder = Recorder(failure(), failure(), ok_transactions(3))
    with make(recorder, clock, tmp_path, pace=0) as client:
        assert client.transactions(update_date="2026-11-03").num_rows == 3
        assert client.last_wait() == 6.0  # a sync counts a request's cost without its waits
    assert len(recorder.requests) == 3
    assert [s for s in clock.sleeps if s] == [2.0, 4.0]  # exponential backoff, jitter pinned to its top


def test_an_attempt_cut_after_minutes_is_a_warning_that_says_how_long_it_took(
    clock: FakeClock, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A retry after a short wait is an INFO line; one after an attempt that ran 300 s to its
    deadline (five minutes lost) is a warning saying so (it was INFO: silent without -v). Neither
    attempt counts as the request's work, which later plans' ETAs learn (they announced 84 s for 2.5)."""

    def cut_at_the_deadline(_request: httpx.Request) -> httpx.Response:
        clock.now += 300.0
        raise httpx.ReadTimeout("the overall deadline of 300 s passed")

    recorder = Recorder(httpx.Response(503, text="busy"), cut_at_the_deadline, ok_transactions(1))
    caplog.set_level(logging.INFO, logger="commerce_reports.client")
    with make(recorder, clock, tmp_path, pace=0) as client:
        assert client.transactions(update_date="2026-11-03").num_rows == 1
        assert client.last_wait() == 2.0 + 300.0 + 4.0  # not this machine's work: no later ETA learns it
    failed = [(r.levelno, r.getMessage()) for r in caplog.records if "failed" in r.getMessage()]
    assert [level for level, _ in failed] == [logging.INFO, logging.WARNING], failed
    assert "failed (attempt 1 of 4)" in failed[0][1]
    assert "failed after 300 s (attempt 2 of 4)" in failed[1][1], failed


def test_retries_are_bounded_and_the_error_says_how_many(clock: FakeClock, tmp_path: Path) -> None:
    recorder = Recorder(httpx.Response(503, text="down for maintenance"))
    with make(recorder, clock, tmp_path, pace=0) as client, pytest.raises(ServerError) as caught:
        client.networks("2026-01-01", "2026-01-02")
    assert len(recorder.requests) == 4 and caught.value.attempts == 4
    assert "after 4 attempts" in str(caught.value) and "down for maintenance" in str(caught.value)


def test_a_refused_connection_is_retried_once_the_address_has_answered(
    clock: FakeClock, tmp_path: Path
) -> None:
    refused = httpx.ConnectError("[Errno 111] Connection refused")
    recorder = Recorder(ok_transactions(1), refused, refused, ok_transactions(3))
    with make(recorder, clock, tmp_path, pace=0) as client:
        client.transactions(update_date="2026-11-02")
        assert client.transactions(update_date="2026-11-03").num_rows == 3  # a blip: retried
    assert [s for s in clock.sleeps if s] == [2.0, 4.0]


def test_a_connection_that_keeps_failing_names_the_request(clock: FakeClock, tmp_path: Path) -> None:
    dropped = httpx.RemoteProtocolError("peer closed connection without sending complete message body")
    recorder = Recorder(ok_transactions(1), dropped)
    retry = RetryPolicy(max_attempts=2, jitter=lambda: 1.0)  # (fewer than give the address up)
    with (
        make(recorder, clock, tmp_path, pace=0, retry=retry) as client,
        pytest.raises(ServiceError) as caught,
    ):
        client.transactions(update_date="2026-11-02")
        client.transactions(update_date="2026-11-03")
    assert "[transactions updateDate=2026-11-03]" in str(caught.value)  # it said "[transactions ]"


def test_a_refused_first_connection_ends_at_once_and_nothing_more_is_asked(
    clock: FakeClock, tmp_path: Path
) -> None:
    recorder = Recorder(httpx.ConnectError("[Errno 111] Connection refused"))
    with make(recorder, clock, tmp_path, pace=0) as client:
        with pytest.raises(UnreachableError) as caught:
            client.transactions(update_date="2026-11-03")
        assert "https://reports.example cannot be reached" in str(caught.value) and caught.value.asked
        assert not caught.value.retriable
        with pytest.raises(UnreachableError) as again:
            client.networks("2026-11-01", "2026-11-02")
    assert not again.value.asked and again.value.reason == caught.value.reason
    assert len(recorder.requests) == 1 and [s for s in clock.sleeps if s] == []


def test_attempts_without_an_answer_give_the_endpoint_up_after_a_few(
    clock: FakeClock, tmp_path: Path
) -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/networks"):
            return httpx.Response(404, text="no data")
        raise httpx.ReadTimeout("slow")

    recorder = Recorder(ok_transactions(1), answer)
    with make(recorder, clock, tmp_path, pace=0) as client:
        client.transactions(update_date="2026-11-02")
        with pytest.raises(UnreachableError) as caught:
            client.transactions(update_date="2026-11-03")
        with pytest.raises(UnreachableError) as again:  # this endpoint is no longer asked
            client.transactions(update_date="2026-11-04")
        assert client.networks("2026-11-01", "2026-11-02").num_rows == 0  # the others still are
    assert f"gave no answer to {GIVE_UP_AFTER} transactions requests in a row" in str(caught.value)
    assert caught.value.asked and not again.value.asked
    assert len(recorder.requests) == 1 + GIVE_UP_AFTER + 1


def test_truncated_body_that_keeps_failing_is_a_malformed_response(clock: FakeClock, tmp_path: Path) -> None:
    recorder = Recorder(httpx.Response(200, content=b'{"transactions": [{"account": {"acc'))
    with make(recorder, clock, tmp_path, pace=0) as client, pytest.raises(MalformedResponseError):
        client.transactions(update_date="2026-11-03")
    assert len(recorder.requests) == 4


def test_429_honours_retry_after_and_defers_the_lane(clock: FakeClock, tmp_path: Path) -> None:
    recorder = Recorder(
        httpx.Response(429, headers={"Retry-After": "75"}, text="slow down"), ok_transactions()
    )
    with make(recorder, clock, tmp_path, pace=60) as client:
        start = clock.now
        client.transactions(update_date="2026-11-03")
    assert len(recorder.requests) == 2
    assert clock.now - start >= 75


def test_a_wait_asked_past_the_allowance_holds_every_request_of_the_key_until_it_ends(
    clock: FakeClock, tmp_path: Path
) -> None:
    # 'nothing more was sent', said the error, while the rest of the sync's requests went out the
    # same second, and the next sync asked again at once: the wait was never recorded.
    recorder = Recorder(
        httpx.Response(429, headers={"Retry-After": "5000"}, text="slow down"), ok_transactions()
    )
    with make(recorder, clock, tmp_path, pace=60) as client:
        said = r"asked to wait 5000 s \(until \d{4}-\d\d-\d\d \d\d:\d\d UTC\), more than the 900 s allowed"
        with pytest.raises(RateLimitedError, match=said):
            client.transactions(update_date="2026-11-03")
        with pytest.raises(RateLimitedError, match=said + r".*nothing more is sent until then"):
            client.transactions(update_date="2026-11-04")  # nothing sent
    with make(recorder, clock, tmp_path, pace=60) as other, pytest.raises(RateLimitedError):
        other.transactions(update_date="2026-11-04")  # another process of the key: nothing sent either
    assert len(recorder.requests) == 1
    clock.sleep(5000)
    with make(recorder, clock, tmp_path, pace=60) as later:
        later.transactions(update_date="2026-11-04")
    assert len(recorder.requests) == 2


def test_429_without_header_reads_the_wait_from_the_message() -> None:
    from commerce_reports.http import retry_after

    response = httpx.Response(429, json={"message": "Rate limit exceeded, retry in 12 seconds"})
    assert retry_after(response.headers, response.content) == 12.0
    dated = httpx.Headers({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"})
    assert retry_after(dated, b"", now=1445412480.0 - 30) == 30.0
    error = RateLimitedError(429, "rate limit exceeded", retry_after=12.0)
    assert error.retriable and error.retry_after == 12.0


def test_the_pace_is_kept_between_calls_and_per_endpoint(clock: FakeClock, tmp_path: Path) -> None:
    recorder = Recorder(
        lambda r: (
            ok_transactions()
            if "transactions" in r.url.path
            else httpx.Response(200, content=networks_body())
        )
    )
    with make(recorder, clock, tmp_path, pace="transactions=60,networks=10") as client:
        t0 = clock.now
        client.transactions(update_date="2026-11-01")
        client.networks("2026-11-01", "2026-11-02")
        client.networks("2026-11-02", "2026-11-03")
        assert clock.now - t0 == pytest.approx(10.1)  # pace plus its 1% margin
        assert client.last_wait() == pytest.approx(10.1)  # the calling thread's last request
        client.transactions(update_date="2026-11-02")
        assert clock.now - t0 == pytest.approx(60.5) and client.last_wait() == pytest.approx(50.4)


def test_backoff_grows_exponentially_and_is_capped() -> None:
    policy = RetryPolicy(max_attempts=10, base_delay=1, max_delay=30, jitter=lambda: 1.0)
    assert [policy.delay(n) for n in range(1, 7)] == [1, 2, 4, 8, 16, 30]
    low = RetryPolicy(base_delay=4, jitter=lambda: 0.0)
    assert low.delay(1) == 2.0 and low.delay(1, asked=9) == 9


def test_the_secret_stays_out_of_repr_logs_and_errors(
    clock: FakeClock, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    echo = Recorder(lambda r: httpx.Response(401, text=f"bad key: {r.headers['authorization']}"))
    caplog.set_level(logging.DEBUG)
    with make(echo, clock, tmp_path) as client, pytest.raises(AuthenticationError) as caught:
        assert KEY not in repr(client)
        client.networks("2026-01-01", "2026-01-02")
    assert KEY not in str(caught.value) and KEY not in repr(caught.value)
    assert "COMMERCE_REPORTS_SECRET_KEY" in str(caught.value)
    assert KEY not in caplog.text
    pace_files = " ".join(p.name + p.read_text() for p in (tmp_path / "pace").iterdir())
    assert KEY not in pace_files


def test_a_pace_folder_given_as_text_is_a_folder(tmp_path: Path) -> None:
    """As its check says (a str or a Path): the first request failed with a TypeError."""
    client = ReportsClient("probe-key-0123456789", "http://127.0.0.1:9", pace_dir=str(tmp_path / "pace"))
    with client:
        assert client.seconds_to_turn("transactions") >= 0


@pytest.mark.parametrize(
    "changes, said",
    [
        ({"base_delay": float("nan")}, "base_delay must be a finite number"),
        ({"max_delay": float("inf")}, "max_delay must be a finite number"),
        ({"base_delay": 2, "max_delay": 0.5}, "max_delay (0.5) is below base_delay (2)"),
        ({"jitter": 5}, "jitter must be a function"),
    ],
)
def test_a_retry_policy_no_wait_could_follow_is_refused(changes: dict[str, object], said: str) -> None:
    with pytest.raises(ConfigurationError, match=re.escape(said)):
        RetryPolicy(**changes)  # type: ignore[arg-type]


def test_a_client_s_arguments_and_its_use_after_close_are_said_as_the_toolkit_s_errors(
    tmp_path: Path,
) -> None:
    """Each raised a raw error at the first request (httpx's RuntimeError, a KeyError, an
    AttributeError, a ValueError for NaN), or none at all."""
    key, url = "probe-key-0123456789", "http://127.0.0.1:9"
    with pytest.raises(ConfigurationError, match="timeout must be a finite number"):
        ReportsClient(key, url, timeout=float("nan"))
    with pytest.raises(ValidationError, match="clock: 'x' is not a clock"):
        ReportsClient(key, url, clock="x")  # type: ignore[arg-type]
    client = ReportsClient(key, url, pace_dir=tmp_path)
    with pytest.raises(ValidationError, match="endpoint: 'bogus' is no endpoint"):
        client.seconds_to_turn("bogus")
    with pytest.raises(ValidationError, match="day: 'x' is not a date"):
        client.check_service("x")  # type: ignore[arg-type]
    client.close()
    with pytest.raises(ConfigurationError, match="this client was closed"):
        client.transactions(update_date="2026-11-20")
