"""A dialect names the wire: the client sends the published names exactly, and any base URL form works."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from commerce_reports.client import ReportsClient, normalise_base_url
from commerce_reports.endpoints import DIALECTS, ENDPOINTS, Dialect, Filter
from commerce_reports.errors import ConfigurationError, RateLimitedError, ServerError, ValidationError
from commerce_reports.params import PartnerProduct
from tests.conftest import FakeClock
from tests.declared import PAIRS, example, example_on_the_wire, pair_id
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


def _send(client: ReportsClient, endpoint: str, spec: Filter) -> None:
    """One request of `endpoint` filtered by `spec` alone (its example value)."""
    if endpoint == "transactions":
        client.transactions(update_date="2026-11-05", **{spec.name: example(spec)})
    else:
        getattr(client, endpoint)("2026-11-01", "2026-12-01", **{spec.name: example(spec)})


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize(("endpoint", "spec"), PAIRS, ids=[pair_id(p) for p in PAIRS])
def test_every_declared_filter_goes_out_under_the_dialects_name(
    dialect: Dialect, endpoint: str, spec: Filter, tmp_path: Path
) -> None:
    """Under the name the dialect declares; a filter the dialect does not declare is never sent."""
    requests: list[httpx.Request] = []
    with _client("https://api.example.com", dialect, requests, tmp_path) as client:
        if dialect not in spec.wire:
            with pytest.raises(ValidationError, match=f"{spec.name}: the {dialect} API does not declare"):
                _send(client, endpoint, spec)
            assert requests == []
            return
        _send(client, endpoint, spec)
    (request,) = requests
    assert request.url.path == ENDPOINTS[endpoint].path
    assert set(request.url.params) <= set(ENDPOINTS[endpoint].parameters(dialect))
    assert request.url.params[spec.wire[dialect]] == example_on_the_wire(spec)
    if dialect == "published":
        validate_request(str(request.url))


@pytest.mark.parametrize(("endpoint", "spec"), PAIRS, ids=[pair_id(p) for p in PAIRS])
def test_a_filter_the_dialect_does_not_declare_is_never_sent(
    endpoint: str, spec: Filter, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    declared = ENDPOINTS[endpoint]
    narrower = tuple(replace(f, wire={"contract": f.param}) if f == spec else f for f in declared.filters)
    monkeypatch.setitem(ENDPOINTS, endpoint, replace(declared, filters=narrower))  # type: ignore[arg-type]
    requests: list[httpx.Request] = []
    with _client("https://api.example.com", "published", requests, tmp_path) as client:
        with pytest.raises(ValidationError, match=f"{spec.name}: the published API does not declare"):
            _send(client, endpoint, spec)
    assert requests == []


def test_every_partner_product_goes_out_as_sovrn_product(tmp_path: Path) -> None:
    requests: list[httpx.Request] = []
    with _client("https://api.example.com", "published", requests, tmp_path) as client:
        for product in PartnerProduct:
            client.networks("2026-11-01", "2026-12-01", partner_product=product)
    assert [r.url.params["sovrnProduct"] for r in requests] == [p.value for p in PartnerProduct]
    for request in requests:
        validate_request(str(request.url))
        assert "partnerProduct" not in request.url.params


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


def test_a_busy_or_failing_service_proves_nothing_and_its_wait_is_kept(tmp_path: Path) -> None:
    # a 500 on the check was recorded as "verified" in the manifest; a 429 with Retry-After: 5000
    # was ignored and the next request went out the same second
    answers = {
        500: httpx.Response(500, text="oops"),
        429: httpx.Response(429, headers={"Retry-After": "5000"}),
    }
    for status, error in ((500, ServerError), (429, RateLimitedError)):
        transport = httpx.MockTransport(lambda request, status=status: answers[status])
        clock = FakeClock()
        with ReportsClient(
            KEY,
            "https://api.example.com",
            pace=0,
            clock=clock,
            pace_dir=tmp_path / str(status),
            transport=transport,
        ) as client:
            with pytest.raises(error) as caught:
                client.check_service()
            assert caught.value.retriable  # (the sync then syncs unverified, and checks again next time)
            assert client.seconds_to_turn("transactions") == (5000 if status == 429 else 0)
