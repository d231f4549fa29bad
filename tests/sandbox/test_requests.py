"""Auth, the 400 rules, 404 on an empty window, gzip, routing: over real HTTP."""

from __future__ import annotations

import gzip

import httpx
import orjson
import pytest

from .conftest import Client

WINDOW = {"clickDateStart": "2026-02-01", "clickDateEnd": "2026-02-08"}


@pytest.mark.parametrize(
    "auth", ["", "secret nope", "Bearer sandbox-alpha-key", "sandbox-alpha-key", "secret  sandbox-alpha-key"]
)
@pytest.mark.parametrize("endpoint", ["transactions", "networks", "merchandise"])
def test_missing_or_unknown_key_is_401(shared: Client, auth: str, endpoint: str) -> None:
    response = shared.get(endpoint, auth=auth, updateDate="2026-02-01", **WINDOW)
    assert response.status_code == 401
    assert "sandbox-alpha-key" not in response.text
    assert shared.sandbox.request_log[-1].site is None


def test_each_key_reads_its_own_site(shared: Client) -> None:
    alpha = shared.get("transactions", commissionDate="2026-02-02").json()
    beta = shared.get("transactions", auth="secret sandbox-beta-key", commissionDate="2026-02-02").json()
    assert alpha["transactions"] and beta["transactions"]
    assert alpha != beta
    assert shared.sandbox.request_log[-1].site == "beta"


BAD_TRANSACTIONS = [
    ({}, "updateDate, commissionDate, clickDate"),
    ({"campaignIds": "1"}, "updateDate, commissionDate, clickDate"),
    ({"updateDate": "2026-2-01"}, "updateDate"),
    ({"commissionDate": "2026-02-30"}, "commissionDate"),
    ({"clickDate": "yesterday"}, "clickDate"),
    ({"updateDate": "2026-02-01", "campaignIds": "12,a"}, "campaignIds"),
    ({"updateDate": "2026-02-01", "campaignIds": "12,,13"}, "campaignIds"),
    ({"updateDate": "2026-02-01", "campaignIds": "0"}, "campaignIds"),
    ({"updateDate": "2026-02-01", "merchantGroupIds": "-5"}, "merchantGroupIds"),
    ({"updateDate": "2026-02-01", "merchantGroupIds": ""}, "merchantGroupIds"),
    ({"updateDate": "2026-02-01", "programType": "cpa"}, "programType"),
]
BAD_WINDOWS = [
    ({"clickDateStart": "2026-02-01"}, "clickDateEnd"),
    ({"clickDateEnd": "2026-02-01"}, "clickDateStart"),
    ({**WINDOW, "clickDateEnd": "2026-02-01"}, "clickDateEnd: must be after clickDateStart"),
    ({**WINDOW, "clickDateEnd": "2026-01-31"}, "clickDateEnd"),
    ({"clickDateStart": "2026-01-01", "clickDateEnd": "2026-02-02"}, "31 days"),
    ({**WINDOW, "clickDateStart": "2026-02-29"}, "clickDateStart"),
    ({**WINDOW, "campaignIds": "1,0"}, "campaignIds"),
    ({**WINDOW, "merchantGroupIds": "1,"}, "merchantGroupIds"),
    ({**WINDOW, "programType": "CPM"}, "programType"),
    ({**WINDOW, "partnerProduct": "Link"}, "partnerProduct"),
    ({**WINDOW, "deviceType": "Mobile"}, "deviceType"),
    ({**WINDOW, "country": "us"}, "country"),
    ({**WINDOW, "country": "USA"}, "country"),
]


@pytest.mark.parametrize(("params", "named"), BAD_TRANSACTIONS)
def test_transactions_rules_are_400(shared: Client, params: dict[str, str], named: str) -> None:
    response = shared.get("transactions", **params)
    assert response.status_code == 400, response.text
    body = response.json()
    assert body["error"] == "Bad Request"
    assert body["message"].startswith(named)


@pytest.mark.parametrize("endpoint", ["networks", "merchandise"])
@pytest.mark.parametrize(("params", "named"), BAD_WINDOWS)
def test_window_rules_are_400(shared: Client, endpoint: str, params: dict[str, str], named: str) -> None:
    response = shared.get(endpoint, **params)
    assert response.status_code == 400, response.text
    assert named in response.json()["message"]


def test_error_message_names_both_dates(shared: Client) -> None:
    response = shared.get("networks", clickDateStart="2026-02-01", clickDateEnd="2026-02-01")
    assert response.json()["message"] == (
        "clickDateEnd: must be after clickDateStart (got 2026-02-01 and 2026-02-01)"
    )


def test_a_parameter_given_twice_is_400(shared: Client) -> None:
    url = "/v1/reports/transactions?updateDate=2026-02-01&updateDate=2026-02-02"
    response = shared.http.get(url, headers={"Authorization": "secret sandbox-alpha-key"})
    assert response.status_code == 400
    assert response.json()["message"].startswith("updateDate: given more than once")


def test_31_days_and_declared_filters_together_are_fine(shared: Client) -> None:
    response = shared.get(
        "networks",
        clickDateStart="2026-01-01",
        clickDateEnd="2026-02-01",
        country="GB",
        deviceType="MBL",
        partnerProduct="WRA",
    )
    assert response.status_code == 200, response.text


@pytest.mark.parametrize("endpoint", ["networks", "merchandise"])
def test_empty_window_is_404(shared: Client, endpoint: str) -> None:
    before_history = shared.get(endpoint, clickDateStart="2025-06-01", clickDateEnd="2025-06-08")
    no_match = shared.get(endpoint, **WINDOW, merchantGroupIds="1")
    future = shared.get(endpoint, clickDateStart="2026-03-11", clickDateEnd="2026-03-12")
    for response in (before_history, no_match, future):
        assert response.status_code == 404
        assert response.json()["error"] == "Not Found"


def test_gzip_when_asked(shared: Client) -> None:
    with httpx.stream(
        "GET",
        f"{shared.running.base_url}/v1/reports/transactions",
        params={"updateDate": "2026-02-03"},
        headers={"Authorization": "secret sandbox-alpha-key", "Accept-Encoding": "gzip"},
    ) as response:
        raw = b"".join(response.iter_raw())
    assert response.headers["content-encoding"] == "gzip"
    assert orjson.loads(gzip.decompress(raw))["transactions"]
    plain = shared.http.get(
        "/v1/reports/transactions",
        params={"updateDate": "2026-02-03"},
        headers={**shared_headers(), "Accept-Encoding": "identity"},
    )
    assert "content-encoding" not in plain.headers


def shared_headers() -> dict[str, str]:
    return {"Authorization": "secret sandbox-alpha-key"}


def test_unknown_path_and_method(shared: Client) -> None:
    assert shared.get("/v1/reports/other").status_code == 404
    response = shared.http.post("/v1/reports/transactions", headers=shared_headers())
    assert response.status_code == 405


def test_request_log_never_holds_the_key(shared: Client) -> None:
    shared.get("transactions", updateDate="2026-02-01")
    record = shared.sandbox.request_log[-1]
    assert (record.site, record.endpoint, record.status) == ("alpha", "transactions", 200)
    assert record.params == {"updateDate": "2026-02-01"}
    assert "sandbox-alpha-key" not in repr(shared.sandbox.request_log)
