"""Every public function of the deal wing refuses a bad argument with a toolkit error that names
it, never a raw TypeError or AttributeError."""

from __future__ import annotations

import socket
from collections.abc import Callable
from datetime import date
from typing import Any

import pytest

from commerce_reports.deals import (
    Deal,
    DealsClient,
    check_create,
    check_targeting_values,
    check_update,
    error_from_response,
)
from commerce_reports.deals.errors import DealArgumentError
from commerce_reports.deals.messages import parse_failure, split_validation_message, values_message
from commerce_reports.deals.sandbox import DealsSandbox, run_deals_sandbox, serve_deals_forever
from commerce_reports.errors import CommerceReportsError, ConfigurationError

from .conftest import TODAY

KEY = "sbx-deals-write-0000000000000001"
CALLS: dict[str, Callable[[], Any]] = {
    "check_create(None)": lambda: check_create(None, TODAY),  # type: ignore[arg-type]
    "check_create(today='x')": lambda: check_create(Deal(), "2031-03-10"),  # type: ignore[arg-type]
    "check_update({})": lambda: check_update({}, TODAY),  # type: ignore[arg-type]
    "check_targeting_values(1.5)": lambda: check_targeting_values(1.5, list),  # type: ignore[arg-type]
    "check_targeting_values(values_of=[])": lambda: check_targeting_values(Deal(), []),  # type: ignore[arg-type]
    "error_from_response(status='x')": lambda: error_from_response([], b"", method="GET", path="/"),  # type: ignore[arg-type]
    "error_from_response(body=None)": lambda: error_from_response(400, None, method="GET", path="/"),  # type: ignore[arg-type]
    "error_from_response(headers=1)": lambda: error_from_response(429, b"", "", 1, method="GET", path="/"),  # type: ignore[arg-type]
    "split_validation_message(None)": lambda: split_validation_message(None),  # type: ignore[arg-type]
    "parse_failure(1, 'x')": lambda: parse_failure(1, "x"),  # type: ignore[arg-type]
    "values_message('a', None)": lambda: values_message("a", None),  # type: ignore[arg-type]
    "DealsClient(base_url=1.5)": lambda: DealsClient(KEY, 1.5),  # type: ignore[arg-type]
    "DealsClient(api_key=[])": lambda: DealsClient([], "http://127.0.0.1:1"),  # type: ignore[arg-type]
    "DealsClient(sleep=1)": lambda: DealsClient(KEY, "http://127.0.0.1:1", sleep=1),  # type: ignore[arg-type]
    "DealsClient(timeout=0)": lambda: DealsClient(KEY, "http://127.0.0.1:1", timeout=0),
    "update(deal_id=None)": lambda: DealsClient(KEY, "http://127.0.0.1:1").update(None, {}),  # type: ignore[arg-type]
    "targeting_values(3)": lambda: DealsClient(KEY, "http://127.0.0.1:1").targeting_values(3),  # type: ignore[arg-type]
    "DealsSandbox(write_key=1)": lambda: DealsSandbox(write_key=1),  # type: ignore[arg-type]
    "DealsSandbox(rate_limit=0)": lambda: DealsSandbox(rate_limit=0),
    "arm_fault('boom')": lambda: DealsSandbox().arm_fault("boom"),
    "arm_fault(times=0)": lambda: DealsSandbox().arm_fault("drop", times=0),
    "arm_fault(method='PUT')": lambda: DealsSandbox().arm_fault("drop", method="PUT"),
    "run_deals_sandbox(port=99999)": lambda: run_deals_sandbox(port=99999).__enter__(),
    "serve_deals_forever(port='x')": lambda: serve_deals_forever(port="x"),  # type: ignore[arg-type]
    "serve_deals_forever(host=1)": lambda: serve_deals_forever(host=1),  # type: ignore[arg-type]
}


@pytest.mark.parametrize("call", list(CALLS), ids=list(CALLS))
def test_bad_arguments_raise_toolkit_errors(call: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COMMERCE_REPORTS_DEALS_API_KEY", raising=False)
    with pytest.raises(CommerceReportsError) as caught:
        CALLS[call]()
    assert isinstance(caught.value, DealArgumentError | ConfigurationError)
    assert "Traceback" not in str(caught.value) and len(str(caught.value).splitlines()) == 1


def test_a_port_in_use_is_a_configuration_error() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(ConfigurationError, match=f"cannot listen on 127.0.0.1:{port}"):
            serve_deals_forever(port=port, announce=lambda line: None)
        with pytest.raises(ConfigurationError, match="cannot listen on"), run_deals_sandbox(port=port):
            pass


def test_argument_error_names_the_parameter_and_what_is_allowed() -> None:
    with pytest.raises(DealArgumentError) as caught:
        check_create(Deal(), date.today().isoformat())  # type: ignore[arg-type]
    assert caught.value.parameter == "today" and "date(" in str(caught.value)
