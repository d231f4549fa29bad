"""The served data: determinism, a partial and growing today, returns, shapes and consistency."""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import date, timedelta
from typing import Any

import numpy as np
import pytest

from commerce_reports.sandbox import world
from commerce_reports.sandbox.catalog import COUNTRIES, DEVICE_CODES

from .conftest import NOW, Client, small_config, view

TODAY = NOW.date()


def days(first: date, last: date) -> list[date]:
    return [first + timedelta(n) for n in range((last - first).days + 1)]


def served(client: Client, **params: str) -> list[dict[str, Any]]:
    """The transactions a request returns, each as `view` shows it (contract names, one level)."""
    return [view(e) for e in client.get("transactions", **params).json()["transactions"]]


def latest_versions(client: Client, first: date, last: date) -> dict[str, dict[str, Any]]:
    """What a client does: every updateDate day, keeping the latest version per commissionId."""
    latest: dict[str, dict[str, Any]] = {}
    for day in days(first, last):
        for element in served(client, updateDate=day.isoformat()):
            assert element["updateDate"] == day.isoformat()
            latest[element["commissionId"]] = element
    return latest


def cents(value: float) -> int:
    return round(value * 100)


def test_same_seed_same_bytes_other_seed_other_bytes(make_client: Callable[..., Client]) -> None:
    params = {"updateDate": "2026-02-14"}
    window = {"clickDateStart": "2026-02-01", "clickDateEnd": "2026-02-15"}
    first, second = make_client(), make_client()
    for endpoint, query in (("transactions", params), ("networks", window), ("merchandise", window)):
        assert first.get(endpoint, **query).content == second.get(endpoint, **query).content
    other = make_client(small_config(seed=1))
    assert other.get("transactions", **params).content != first.get("transactions", **params).content


def test_a_days_draws_are_pythons_choices_draw_for_draw() -> None:
    """The world draws its clicks with numpy (`world._draws`) the way `random.choices` draws them:
    the same picks, the generator left in the same state, so a seed's world stays the world it was."""
    weights = (*world._weights(), np.array([1.0, 1.0, 4.0, 9.0]), np.array([2.0]))
    for seed in range(40):
        ours, theirs = random.Random(seed), random.Random(seed)
        for rng in (ours, theirs):
            rng.gauss(0, 1)  # the normal deviate it keeps for the next call is part of the state
        for cum in weights:
            expected = theirs.choices(range(len(cum)), cum_weights=cum.tolist(), k=seed * 37)
            assert world._draws(ours, cum, seed * 37).tolist() == expected
        assert ours.getstate() == theirs.getstate()
        assert ours.gauss(0, 1) == theirs.gauss(0, 1)


def test_nested_shape(shared: Client) -> None:
    elements = shared.get("transactions", commissionDate="2026-02-10").json()["transactions"]
    assert len(elements) > 40
    for element in elements:
        assert set(element) == {"account", "commission", "click", "merchant", "product"}
        commission = element["commission"]
        assert commission["programType"] in ("cpa", "cpc")
        assert commission["commissionDate"] == "2026-02-10"
        assert cents(commission["publisherNetRevenue"]) / 100 == commission["publisherNetRevenue"]
        click = element["click"]
        if click.get("clickDate"):
            assert click["clickDate"] <= commission["commissionDate"]
            assert click["country"] in COUNTRIES
            assert click.get("device", "Mobile") in ("Mobile", "Desktop", "Tablet")
            assert set(click["linkUtmInfo"]) == {
                "utmSource",
                "utmMedium",
                "utmCampaign",
                "utmTerm",
                "utmContent",
            }
    assert any(e["product"] for e in elements)
    assert any(not e["click"].get("clickId") for e in elements), "some lack click detail"


def test_flat_shape(make_client: Callable[..., Client], shared: Client) -> None:
    flat = make_client(small_config(shape="flat")).get("transactions", commissionDate="2026-02-10")
    nested = shared.get("transactions", commissionDate="2026-02-10").json()["transactions"]
    elements = flat.json()["transactions"]
    assert len(elements) == len(nested)
    for element, twin in zip(elements, nested, strict=True):
        assert "commission" not in element and "device" not in element
        assert element["commissionId"] == twin["commission"]["commissionId"]
        assert element["publisherRevenue"] == twin["commission"]["publisherNetRevenue"]
        assert element["networkName"] == twin["merchant"]["network"]
        assert element["merchandise"] == twin["product"]
        if twin["click"].get("clickId"):
            assert element["destinationUrl"] == twin["click"]["linkUrl"]
            assert element["affProduct"] == twin["click"]["partnerProduct"]
            assert element["deviceType"] in DEVICE_CODES


def test_filters_on_transactions(shared: Client) -> None:
    everything = shared.get("transactions", commissionDate="2026-02-10").json()["transactions"]
    merchant = everything[0]["merchant"]["merchantGroupId"]
    cpc = shared.get("transactions", commissionDate="2026-02-10", programType="CPC").json()
    assert {e["commission"]["programType"] for e in cpc["transactions"]} == {"cpc"}
    one = shared.get("transactions", commissionDate="2026-02-10", merchantGroupIds=f"{merchant},7")
    assert {e["merchant"]["merchantGroupId"] for e in one.json()["transactions"]} == {merchant}
    both = shared.get("transactions", commissionDate="2026-02-10", clickDate="2026-02-10")
    assert all(
        (e["click"].get("clickDate") or "2026-02-10") == "2026-02-10" for e in both.json()["transactions"]
    )
    assert 0 < len(both.json()["transactions"]) < len(everything)


def test_today_is_partial_and_grows(make_client: Callable[..., Client]) -> None:
    client = make_client()
    client.sandbox.set_now(NOW.replace(hour=6))
    morning = client.get("transactions", commissionDate=TODAY.isoformat()).json()["transactions"]
    clicks_morning = client.get(
        "networks", clickDateStart=TODAY.isoformat(), clickDateEnd=(TODAY + timedelta(1)).isoformat()
    ).json()
    client.sandbox.advance(timedelta(hours=12))
    evening = client.get("transactions", commissionDate=TODAY.isoformat()).json()["transactions"]
    clicks_evening = client.get(
        "networks", clickDateStart=TODAY.isoformat(), clickDateEnd=(TODAY + timedelta(1)).isoformat()
    ).json()
    assert 0 < len(morning) < len(evening)
    ids = {e["commission"]["commissionId"] for e in evening}
    assert {e["commission"]["commissionId"] for e in morning} <= ids
    assert 0 < clicks_morning["totals"]["clicksTotal"] < clicks_evening["totals"]["clicksTotal"]
    tomorrow = client.get("transactions", commissionDate=(TODAY + timedelta(1)).isoformat())
    assert tomorrow.json() == {"transactions": []}


def test_returns_are_visible_via_update_date(each_dialect: Client) -> None:
    latest = latest_versions(each_dialect, date(2026, 2, 1), TODAY)
    adjusted = [e for e in latest.values() if e["updateDate"] > e["commissionDate"]]
    separate = [
        e for e in latest.values() if e["publisherNetRevenue"] < 0 and e["updateDate"] == e["commissionDate"]
    ]
    assert adjusted and separate
    element = adjusted[0]
    original = served(each_dialect, updateDate=element["commissionDate"])
    first = next(e for e in original if e["commissionId"] == element["commissionId"])
    assert first["publisherNetRevenue"] > element["publisherNetRevenue"]
    current = served(each_dialect, commissionDate=element["commissionDate"])
    assert element in current, "commissionDate serves the current state"


def test_ground_truth_equals_the_sum_over_update_days(each_dialect: Client) -> None:
    start, end = date(2026, 2, 1), date(2026, 2, 7)
    latest = latest_versions(each_dialect, start, TODAY)
    in_range = [e for e in latest.values() if start.isoformat() <= e["commissionDate"] <= end.isoformat()]
    truth = each_dialect.sandbox.ground_truth("alpha", start, end).row(0, named=True)
    assert cents(truth["revenue"]) == sum(cents(c["publisherNetRevenue"]) for c in in_range)
    assert cents(truth["order_value"]) == sum(cents(c["orderValue"]) for c in in_range)
    assert truth["transactions"] == len(in_range)
    by_day = each_dialect.get(
        "/_sandbox/truth",
        auth="",
        site="alpha",
        start=start.isoformat(),
        end=end.isoformat(),
        group_by="day",
    ).json()["rows"]
    assert [row["day"] for row in by_day] == [d.isoformat() for d in days(start, end)]
    assert sum(cents(row["revenue"]) for row in by_day) == cents(truth["revenue"])
    assert sum(row["returns"] for row in by_day) == truth["returns"] > 0


def test_networks_agree_with_transactions_by_click_date(each_dialect: Client) -> None:
    start, end = date(2026, 2, 1), date(2026, 2, 8)
    window = {"clickDateStart": start.isoformat(), "clickDateEnd": end.isoformat()}
    report = each_dialect.get("networks", **window).json()
    clicked = [
        e for day in days(start, end - timedelta(1)) for e in served(each_dialect, clickDate=day.isoformat())
    ]
    revenue = sum(cents(e["publisherNetRevenue"]) for e in clicked)
    assert cents(report["totals"]["revenueTotal"]) == revenue
    assert report["totals"]["actionsTotal"] == len(clicked)
    assert abs(sum(cents(row["revenue"]) for row in report["data"]) - revenue) <= len(report["data"])
    truth = each_dialect.sandbox.ground_truth("alpha", start, end - timedelta(1), by="click_date")
    assert cents(truth["revenue"][0]) == revenue
    totals = report["totals"]
    assert totals["epcTotal"] == round(totals["revenueTotal"] / totals["clicksTotal"], 2)


@pytest.mark.parametrize(
    ("parameter", "values"),
    [
        ("deviceType", DEVICE_CODES),
        ("country", tuple(code.upper() for code in COUNTRIES)),
    ],
)
def test_slices_sum_to_the_totals(shared: Client, parameter: str, values: tuple[str, ...]) -> None:
    window = {"clickDateStart": "2026-02-01", "clickDateEnd": "2026-02-08"}
    totals = shared.get("networks", **window).json()["totals"]
    clicks = revenue = 0
    for value in values:
        response = shared.get("networks", **window, **{parameter: value})
        if response.status_code == 404:
            continue
        clicks += response.json()["totals"]["clicksTotal"]
        revenue += cents(response.json()["totals"]["revenueTotal"])
    assert clicks == totals["clicksTotal"]
    assert revenue == cents(totals["revenueTotal"])


def test_merchandise_splits_revenue_over_items(each_dialect: Client) -> None:
    window = {"clickDateStart": "2026-02-01", "clickDateEnd": "2026-02-08"}
    report = each_dialect.get("merchandise", **window).json()
    assert report["data"] and set(report["data"][0]) == {
        "productName",
        "merchantGroupName",
        "merchantGroupId",
        "revenue",
        "sales",
        "actions",
    }
    clicked = [
        e
        for day in days(date(2026, 2, 1), date(2026, 2, 7))
        for e in served(each_dialect, clickDate=day.isoformat())
    ]
    with_items = [e for e in clicked if e["product"]]
    expected = sum(cents(e["publisherNetRevenue"]) for e in with_items)
    assert abs(cents(report["totals"]["revenueTotal"]) - expected) <= 1
    assert report["totals"]["actionsTotal"] >= len(with_items)
