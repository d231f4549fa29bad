"""The published dialect against the vendor's OpenAPI file: bodies (plain and strict), requests, names."""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from typing import Any

import httpx
import pytest

from commerce_reports.errors import ValidationError
from commerce_reports.sandbox.catalog import DEVICE_CODES, DEVICES, PARTNER_PRODUCTS
from commerce_reports.sandbox.config import DATE_STYLES
from tests.published_schema import (
    ContractViolation,
    openapi,
    request_problems,
    response_problems,
    validate_request,
    validate_response,
)

from .conftest import Client, small_config, view

WEEK = [date(2026, 2, 2) + timedelta(n) for n in range(7)]
WINDOW = {"clickDateStart": "2026-02-01", "clickDateEnd": "2026-02-08"}
ENDPOINTS = ("transactions", "networks", "merchandise")
TRANSACTION_MODEL = openapi()["components"]["schemas"]["TransactionModel"]["properties"]


def checked(client: Client, endpoint: str, **params: str) -> httpx.Response:
    """A GET whose request and answer must follow the published file, in both readings."""
    response = client.get(endpoint, **params)
    url = str(response.request.url)
    validate_request(url)
    for strict in (False, True):
        validate_response(url, response.status_code, response.json(), strict=strict)
    return response


def elements(response: httpx.Response) -> list[dict[str, Any]]:
    return list(response.json()["transactions"])


def test_the_fixture_is_the_published_file() -> None:
    document = openapi()
    assert document["info"]["version"] == "20230630"
    assert document["servers"][0]["url"].endswith("/v1")
    assert sorted(document["paths"]) == [f"/reports/{e}" for e in sorted(ENDPOINTS)]


def test_a_week_of_transactions_with_returns_validates(shared_published: Client) -> None:
    served = [
        e for day in WEEK for e in elements(checked(shared_published, "transactions", updateDate=f"{day}"))
    ]
    assert any(e["updateDate"] > e["commissionDate"] for e in served), "an adjusted return"
    assert any(e["publisherRevenue"] < 0 for e in served), "a separate negative return"
    assert any(e["clickSid"] == "" and e["affProduct"] == "UNK" for e in served), "a row without click detail"
    assert any(e["merchandise"] for e in served) and any(e["affProductSubType"] for e in served)
    assert {e["deviceType"] for e in served} == {"MBL", "DSK", "TBL", "UKN"}
    assert all(list(e) == list(TRANSACTION_MODEL) for e in served)
    for params in (
        {"commissionDate": "2026-02-10"},
        {"clickDate": "2026-02-10", "programType": "CPA"},
        {"updateDate": "2026-02-10", "merchantGroupIds": f"{served[0]['merchantGroupId']},7"},
        {"updateDate": "2026-03-11"},
    ):
        checked(shared_published, "transactions", **params)
    assert elements(shared_published.get("transactions", updateDate="2026-03-11")) == []


@pytest.mark.parametrize("endpoint", ["networks", "merchandise"])
def test_aggregates_validate_with_and_without_filters(shared_published: Client, endpoint: str) -> None:
    filters: list[dict[str, str]] = [
        {},
        {"sovrnProduct": "WRA"},
        {"deviceType": "UKN"},
        {"country": "GB", "programType": "CPA"},
        {"pageUtmSource": "google,newsletter", "linkUtmContent": "button"},
        {"cuids": "x", "subIds": "y"},
    ]
    for extra in filters:
        assert checked(shared_published, endpoint, **WINDOW, **extra).status_code in (200, 404)
    for empty in (
        {"clickDateStart": "2025-06-01", "clickDateEnd": "2025-06-08"},
        {"clickDateStart": "2026-03-11", "clickDateEnd": "2026-03-12"},
        {**WINDOW, "merchantGroupIds": "1"},
    ):
        assert checked(shared_published, endpoint, **empty).status_code == 404


def day_of(text: str) -> str:
    """The yyyy-mm-dd day of a date in any date style of the sandbox."""
    if text.isdigit():
        return datetime.fromtimestamp(int(text) / 1000, UTC).date().isoformat()
    if us := re.fullmatch(r"(\d{2})/(\d{2})/(\d{4})", text):
        return f"{us[3]}-{us[1]}-{us[2]}"
    return text[:10].replace("/", "-")


@pytest.mark.parametrize("style", DATE_STYLES[1:])
def test_each_date_style_validates_and_names_the_same_days(
    make_client: Callable[..., Client], shared_published: Client, style: str
) -> None:
    iso = elements(shared_published.get("transactions", updateDate="2026-02-10"))
    styled = elements(
        checked(
            make_client(small_config(dialect="published", date_style=style)),
            "transactions",
            updateDate="2026-02-10",
        )
    )
    dates = ("clickDate", "commissionDate", "updateDate")
    assert [{k: e[k] for k in e if k not in dates} for e in styled] == [
        {k: e[k] for k in e if k not in dates} for e in iso
    ]
    assert [[day_of(e[k]) if e[k] else "" for k in dates] for e in styled] == [
        [e[k] for k in dates] for e in iso
    ]
    written = {e[k] for e in styled for k in dates if e[k]}
    forms = {
        "iso": r"\d{4}-\d{2}-\d{2}",
        "datetime": r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z",
        "slashes": r"\d{4}/\d{2}/\d{2}",
        "us": r"\d{2}/\d{2}/\d{4}",
        "epoch-ms": r"\d{13}",
    }
    seen = {name for name, form in forms.items() for text in written if re.fullmatch(form, text)}
    assert seen == (set(forms) if style == "mixed" else {style})


def test_the_strict_reading_catches_what_the_plain_one_lets_through(
    shared: Client, shared_published: Client
) -> None:
    path = "/v1/reports/transactions"
    body = shared_published.get("transactions", updateDate="2026-02-10").json()
    element = body["transactions"][0]
    changes: list[tuple[Callable[[dict[str, Any]], object], bool]] = [
        (lambda e: e.update(clickId="x"), True),  # an undeclared key
        (lambda e: e.pop("affProductSubType"), True),  # a missing property
        (lambda e: e.update(merchantGroupId=float(e["merchantGroupId"])), True),  # an integer written 5.0
        (lambda e: e["linkUtmInfo"].update(utm_source="x"), True),  # a nested undeclared key
        (lambda e: e.update(revenueId=f"rv{e['commissionId']}"), False),  # the contract's string id
        (lambda e: e.update(affProduct="Link"), False),  # the word, not the code
        (lambda e: e.update(deviceType="Mobile"), False),
        (lambda e: e.update(accountId=1.5), False),  # format integer
    ]
    for change, only_strict in changes:
        broken = copy.deepcopy(element)
        change(broken)
        plain = response_problems(path, 200, {"transactions": [broken]})
        strict = response_problems(path, 200, {"transactions": [broken]}, strict=True)
        assert strict and (not plain) == only_strict, (broken, plain, strict)
    nested = shared.get("transactions", updateDate="2026-02-10").json()
    assert not response_problems(path, 200, nested), "the plain reading lets the contract's shape through"
    with pytest.raises(ContractViolation, match="'clickSid' is a required property"):
        validate_response(path, 200, nested, strict=True)
    report = shared_published.get("networks", **WINDOW).json()
    row = report["data"][0]
    for broken_row in ({**row, "extra": 1}, {k: v for k, v in row.items() if k != "networkName"}):
        assert response_problems("/v1/reports/networks", 200, {**report, "data": [broken_row]}, strict=True)
    assert response_problems("/v1/reports/transactions", 401, {}) == [
        "status 401 is not declared for /reports/transactions (declared: 200, 400)"
    ]


def test_the_request_check() -> None:
    assert (
        request_problems(
            "http://127.0.0.1:1/v1/reports/networks?clickDateStart=2026-02-01",
            {"clickDateEnd": "2026-03-01", "sovrnProduct": "WRA"},
        )
        == []
    )
    assert request_problems("/v1/reports/transactions", {"updateDate": "2026-02-01"}) == []
    problems = request_problems(
        "/v1/reports/networks",
        [
            ("clickDateStart", "2026-02-01"),
            ("partnerProduct", "WRA"),
            ("sovrnProduct", "Link"),
            ("country", "US"),
            ("country", "us"),
            ("campaignIds", "1;2"),
        ],
    )
    assert [p.split(":")[0].split("=")[0] for p in problems] == [
        "partnerProduct",
        "country",
        "clickDateEnd",
        "sovrnProduct",
        "country",
        "campaignIds",
    ]
    assert "2026-02-30" in request_problems("/v1/reports/transactions", {"updateDate": "2026-02-30"})[0]
    for wrong in ("/v1/v1/reports/transactions", "/reports/transactions", "/api/reports/transactions"):
        assert len(request_problems(wrong, {"updateDate": "2026-02-01"})) == 1
    with pytest.raises(ContractViolation, match="partnerProduct: not a parameter of /reports/merchandise"):
        validate_request("/v1/reports/merchandise", {**WINDOW, "partnerProduct": "WRA"})


@pytest.mark.parametrize("endpoint", ["networks", "merchandise"])
def test_sovrn_product_slices_like_partner_product(
    shared: Client, shared_published: Client, endpoint: str
) -> None:
    sliced = checked(shared_published, endpoint, **WINDOW, sovrnProduct="WRA")
    assert sliced.content != checked(shared_published, endpoint, **WINDOW).content
    assert sliced.content == shared.get(endpoint, **WINDOW, partnerProduct="WRA").content
    for code, _ in PARTNER_PRODUCTS.values():
        assert shared_published.get(endpoint, **WINDOW, sovrnProduct=code).status_code in (200, 404)


@pytest.mark.parametrize("value", ["Link", "wra", ""])
def test_a_bad_sovrn_product_is_400(shared_published: Client, value: str) -> None:
    response = shared_published.get("networks", **WINDOW, sovrnProduct=value)
    assert response.status_code == 400
    assert response.json()["message"].startswith("sovrnProduct: expected one of WRA, ORG")
    assert response_problems(str(response.request.url), 400, response.json()) == []


def test_both_dialects_serve_one_world(shared: Client, shared_published: Client) -> None:
    for day in WEEK:
        contract = [view(e) for e in elements(shared.get("transactions", updateDate=f"{day}"))]
        published = [view(e) for e in elements(shared_published.get("transactions", updateDate=f"{day}"))]
        assert len(contract) == len(published) > 0
        for twin, element in zip(contract, published, strict=True):
            same = {k: v for k, v in twin.items() if k not in ("revenueId", "partnerProduct", "device")}
            assert {k: element[k] for k in same} == same
            assert element["revenueId"] == int(twin["commissionId"])
            word = twin.get("partnerProduct") or "Unknown"
            assert element["affProduct"] == PARTNER_PRODUCTS[word][0]
            device = twin.get("device")
            assert element["deviceType"] == (DEVICE_CODES[DEVICES.index(device)] if device else "UKN")
        cents = [sum(round(e["publisherNetRevenue"] * 100) for e in side) for side in (contract, published)]
        assert cents[0] == cents[1]
    for endpoint in ("networks", "merchandise"):
        assert shared.get(endpoint, **WINDOW).content == shared_published.get(endpoint, **WINDOW).content
    for by in ("commission_date", "update_date"):
        truths = [
            c.sandbox.ground_truth("alpha", WEEK[0], WEEK[-1], by=by) for c in (shared, shared_published)
        ]
        assert truths[0].equals(truths[1])


def test_paths_are_under_v1(shared_published: Client) -> None:
    assert shared_published.get("/v1/reports/transactions", updateDate="2026-02-03").status_code == 200
    for wrong in ("/v1/v1/reports/networks", "/reports/networks", "/api/reports/networks"):
        assert shared_published.get(wrong, **WINDOW).status_code == 404
    assert shared_published.get("/_sandbox/info").json()["dialect"] == "published"


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        ({"dialect": "openapi"}, "dialect: unknown value 'openapi'; expected one of contract, published"),
        ({"date_style": "julian"}, "date_style: unknown value 'julian'"),
        ({"dialect": "published", "shape": "flat"}, "shape: the published dialect has one shape"),
        ({"date_style": "epoch-ms"}, "date_style: the contract dialect writes yyyy-mm-dd only"),
    ],
)
def test_the_config_checks_the_dialect_knobs(changes: dict[str, str], named: str) -> None:
    with pytest.raises(ValidationError) as raised:
        small_config(**changes)
    assert str(raised.value).startswith(named)
