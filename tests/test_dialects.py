"""A dialect names the wire: the client sends the published names exactly, and any base URL form works."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from commerce_reports.client import ReportsClient, normalise_base_url
from commerce_reports.errors import ConfigurationError
from commerce_reports.params import PartnerProduct
from tests.conftest import FakeClock
from tests.published_schema import validate_request

KEY = "dialect-test-key-123456"
EMPTY = {"data": [], "totals": {}}


def _recording(requests: list[httpx.Request]) -> httpx.MockTransport:
    def answer(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        if request.url.path.endswith("transactions"):
            return httpx.Response(200, json={"transactions": []})
        return httpx.Response(200, json=EMPTY)

    return httpx.MockTransport(answer)


def _client(url: str, dialect: str, requests: list[httpx.Request], tmp_path: Path) -> ReportsClient:
    return ReportsClient(
        KEY,
        url,
        dialect=dialect,  # type: ignore[arg-type]
        pace=0,
        clock=FakeClock(),
        pace_dir=tmp_path,
        transport=_recording(requests),
    )


def test_every_request_of_the_published_dialect_is_one_the_published_file_allows(tmp_path: Path) -> None:
    requests: list[httpx.Request] = []
    with _client("https://api.example.com", "published", requests, tmp_path) as client:
        client.transactions(update_date="2026-11-05", campaign_ids=[3, 1], program_type="CPA")
        client.transactions(click_date="2026-11-05", commission_date="2026-11-05", merchant_group_ids="7,9")
        for product in PartnerProduct:
            client.networks("2026-11-01", "2026-12-01", partner_product=product)
        client.merchandise(
            "2026-11-01",
            "2026-11-08",
            partner_product="Link",
            device_type="MBL",
            country="gb",
            page_utm_medium=["email"],
            link_utm_source=["news"],
            sub_ids=["a"],
            cuids=["b"],
        )
    assert len(requests) == 2 + len(PartnerProduct) + 1
    for request in requests:
        validate_request(str(request.url))
        assert "partnerProduct" not in request.url.params
    assert requests[2].url.params["sovrnProduct"] == "WRA"


def test_the_contract_dialect_keeps_the_contracts_name(tmp_path: Path) -> None:
    requests: list[httpx.Request] = []
    with _client("https://api.example.com", "contract", requests, tmp_path) as client:
        client.networks("2026-11-01", "2026-11-02", partner_product="WRA")
    assert requests[0].url.params["partnerProduct"] == "WRA" and "sovrnProduct" not in requests[0].url.params


@pytest.mark.parametrize(
    "url",
    [
        "https://api.example.com",
        "https://api.example.com/",
        "https://api.example.com/v1",
        "https://api.example.com/v1/",
    ],
)
def test_a_base_url_with_or_without_v1_reaches_the_same_paths(url: str, tmp_path: Path) -> None:
    requests: list[httpx.Request] = []
    with _client(url, "published", requests, tmp_path) as client:
        client.networks("2026-11-01", "2026-11-02")
    assert requests[0].url.path == "/v1/reports/networks"
    assert normalise_base_url(url) == "https://api.example.com"


def test_a_404_html_page_names_the_url_as_a_configuration_error(tmp_path: Path) -> None:
    page = httpx.Response(
        404, text="<html><title>Not Found</title></html>", headers={"content-type": "text/html"}
    )
    transport = httpx.MockTransport(lambda request: page)
    with ReportsClient(
        KEY, "https://api.example.com/api", pace=0, clock=FakeClock(), pace_dir=tmp_path, transport=transport
    ) as client:
        with pytest.raises(ConfigurationError, match="does not point at the reporting API"):
            client.networks("2026-11-01", "2026-11-02")
        with pytest.raises(ConfigurationError, match=r"https://api\.example\.com/api"):
            client.check_service()


def test_the_service_check_accepts_what_the_reporting_api_answers(tmp_path: Path) -> None:
    for status in (200, 400, 401):
        transport = httpx.MockTransport(lambda request, status=status: httpx.Response(status, json={}))
        with ReportsClient(
            KEY, "https://api.example.com", pace=0, clock=FakeClock(), pace_dir=tmp_path, transport=transport
        ) as client:
            assert client.check_service() == status
