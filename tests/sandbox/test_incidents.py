"""Incidents staged in the sandbox's world: written and read back, checked, served alike by every
endpoint (over loopback), and leaving every other day of the ordinary world as it was."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, timedelta
from typing import Any

import pytest

from commerce_reports.errors import ValidationError
from commerce_reports.sandbox import Incident
from tests.sandbox.conftest import NOW, Client, small_config, view
from tests.sandbox.test_cli import parse, served

DAY = NOW.date() - timedelta(days=3)  # a day inside the incidents below (they start two days earlier)
BEFORE = NOW.date() - timedelta(days=8)
NETWORK = "Northwind Affiliates"


def test_an_incident_reads_as_written_and_back() -> None:
    incident = Incident.parse(
        "network=Foxglove Network, from=2026-11-10 ,until=2026-11-16,epc=-80%,device=mbl"
    )
    assert incident.network == "Foxglove Network" and incident.device == "Mobile"
    assert (incident.first, incident.last) == (date(2026, 11, 10), date(2026, 11, 16))
    assert incident.changes == (("epc", -0.8),)
    assert Incident.parse(str(incident)) == incident
    assert incident.applies("beta", date(2026, 11, 16)) and not incident.applies("beta", date(2026, 11, 17))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("network=X,epc=-50%", "from= is missing"),
        ("from=2026-11-10", "no change"),
        ("from=2026-11-10,epc=-150%", "epc=-150% is out of range; give more than -100%, up to \\+900%"),
        ("from=2026-11-10,epc=-100%", "epc=-100% is out of range; give more than -100%, up to \\+900%"),
        ("from=2026-11-10,epc=-100%", "epc=-100% is out of range"),
        ("from=2026-11-10,revenue=+200%", "revenue=\\+200% is out of range"),
        ("from=2026-11-10,sales=-5%", "'sales' is not a key"),
        ("from=2026-11-10,epc=half", "epc='half' is not a percentage"),
        ("from=2026-11-40,epc=-5%", "'2026-11-40' is not a date"),
        ("from=2026-11-10,until=2026-11-01,epc=-5%", "until 2026-11-01 is before from 2026-11-10"),
        ("from=2026-11-10,device=watch,epc=-5%", "device 'watch' is unknown"),
        ("from=2026-11-10,country=ZZ,epc=-5%", "country 'ZZ' is not in the sandbox"),
        ("from=2026-11-10,epc", "'epc' is not one KEY=VALUE pair"),
    ],
)
def test_a_wrong_incident_says_what_is_right(text: str, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        Incident.parse(text)


def test_the_sandbox_refuses_an_incident_it_cannot_stage() -> None:
    with pytest.raises(ValidationError, match="network 'Nope' is not in the sandbox; use one of Northwind"):
        small_config(incidents=(Incident.parse("network=Nope,from=2026-03-01,epc=-50%"),))
    with pytest.raises(ValidationError, match="site 'gamma' is not served"):
        small_config(incidents=(Incident.parse("site=gamma,from=2026-03-01,epc=-50%"),))


def test_the_command_stages_incidents_and_refuses_wrong_ones(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = "network=Foxglove Network,from=2026-11-10,epc=-80%"
    config = served(monkeypatch, "--incident", spec, "--incident", "country=GB,from=2026-11-01,revenue=-20%")
    assert [str(i) for i in config["config"].incidents] == [
        "network=Foxglove Network,from=2026-11-10,epc=-80%",
        "country=GB,from=2026-11-01,revenue=-20%",
    ]
    with pytest.raises(SystemExit) as exit_info:
        parse("--incident", "network=Foxglove Network,epc=-80%")
    assert exit_info.value.code == 2
    assert "argument --incident: incident: from= is missing" in capsys.readouterr().err


def _network(client: Client, start: date, end: date, **filters: str) -> dict[str, Any]:
    """The networks report's row of NETWORK for click days start..end."""
    body = client.get(
        "networks", clickDateStart=str(start), clickDateEnd=str(end + timedelta(days=1)), **filters
    ).json()
    return next(row for row in body["data"] if row["networkName"] == NETWORK)


def _ledger(client: Client, day: date, network: str = NETWORK) -> list[dict[str, Any]]:
    """The transactions of `network` clicked on `day`, as known now (their update days' answers)."""
    rows = []
    for n in range(12):
        answer = client.get("transactions", updateDate=str(day + timedelta(days=n))).json()
        rows += [view(t) for t in answer["transactions"]]
    latest = {r["commissionId"]: r for r in rows}  # later update days come last
    return [
        r for r in latest.values() if r.get("network") == network and r.get("clickDate", "")[:10] == str(day)
    ]


def test_an_epc_incident_halves_what_each_order_pays_on_every_endpoint(
    make_client: Callable[..., Client],
) -> None:
    plain = make_client(small_config())
    staged = make_client(
        small_config(
            incidents=(Incident.parse(f"network={NETWORK},from={DAY - timedelta(days=2)},epc=-50%"),)
        )
    )
    for day in (BEFORE, DAY):
        ordinary, changed = _network(plain, day, day), _network(staged, day, day)
        assert (changed["clicks"], changed["actions"]) == (ordinary["clicks"], ordinary["actions"])
        ratio = changed["revenue"] / ordinary["revenue"]
        assert ratio == 1 if day == BEFORE else 0.49 < ratio < 0.51, (day, ratio)
        paid = sum(t["publisherNetRevenue"] for t in _ledger(staged, day))
        assert paid == pytest.approx(changed["revenue"], abs=0.05 * max(1, len(_ledger(staged, day))))
    other = "Summit Partners"
    assert _ledger(staged, DAY, other) == _ledger(plain, DAY, other)  # another network: untouched


def test_conversion_and_revenue_incidents_lose_orders_or_clicks(make_client: Callable[..., Client]) -> None:
    start = DAY - timedelta(days=2)
    plain = make_client(small_config())
    lost_orders = make_client(
        small_config(incidents=(Incident.parse(f"network={NETWORK},from={start},conversion=-60%"),))
    )
    lost_clicks = make_client(
        small_config(incidents=(Incident.parse(f"network={NETWORK},from={start},revenue=-60%"),))
    )
    ordinary = _network(plain, start, DAY)
    orders, clicks = _network(lost_orders, start, DAY), _network(lost_clicks, start, DAY)
    assert orders["clicks"] == ordinary["clicks"] and 0.25 < orders["actions"] / ordinary["actions"] < 0.55
    assert 0.3 < clicks["clicks"] / ordinary["clicks"] < 0.5
    assert 0.25 < clicks["actions"] / ordinary["actions"] < 0.55

    # the other networks of the site are the ordinary world's
    def others(client: Client) -> dict[str, Any]:
        body = client.get("networks", clickDateStart=str(start), clickDateEnd=str(DAY)).json()
        return {row["networkName"]: row for row in body["data"] if row["networkName"] != NETWORK}

    assert others(lost_clicks) == others(plain) == others(lost_orders)


def test_merchants_links_idle_clicks_and_returns_read_as_written() -> None:
    incident = Incident.parse(
        "merchant=Jasper Home,link=https://www.jasperhome.com/,from=2026-11-10,clicks=+100%,returns=+300%"
    )
    assert (incident.merchant, incident.link) == ("Jasper Home", "https://www.jasperhome.com/")
    assert (
        incident.changes == (("clicks", 1.0), ("returns", 3.0)) and Incident.parse(str(incident)) == incident
    )
    for text, message in (
        ("from=2026-11-10,clicks=-50%", "clicks=-50% is out of range; give more than \\+0%, up to \\+900%"),
        ("from=2026-11-10,returns=0%", "returns=\\+0% is out of range"),
    ):
        with pytest.raises(ValidationError, match=message):
            Incident.parse(text)
    with pytest.raises(ValidationError, match="merchant 'Nowhere Shop' is not in the sandbox \\(seed 0\\)"):
        small_config(incidents=(Incident.parse("merchant=Nowhere Shop,from=2026-03-01,conversion=-100%"),))
    with pytest.raises(
        ValidationError, match=re.escape("link 'https://x.example/' is not a link of alpha or beta")
    ):
        small_config(incidents=(Incident.parse("link=https://x.example/,from=2026-03-01,conversion=-100%"),))


def _served(client: Client, first: date, days: int) -> list[dict[str, Any]]:
    """Every transaction version the ledger's update days first.. first + days - 1 hold."""
    return [
        view(t)
        for n in range(days)
        for t in client.get("transactions", updateDate=str(first + timedelta(days=n))).json()["transactions"]
    ]


def test_idle_clicks_a_merchant_that_stops_and_a_wave_of_returns_are_served(
    make_client: Callable[..., Client],
) -> None:
    """Clicks doubled with orders held (EPC halves); a merchant's commissions stopped, its clicks on;
    more returns, recorded within three days of their commission."""
    from commerce_reports.sandbox.catalog import busiest
    from commerce_reports.sandbox.world import World

    start = DAY - timedelta(days=2)
    merchant = str(busiest(World(0, ("alpha",), start, 80).catalog("alpha"), "merchant_group_name")[0])
    plain = make_client(small_config())
    staged = make_client(
        small_config(
            incidents=(
                Incident.parse(f"network={NETWORK},from={start},clicks=+100%"),
                Incident.parse(f"merchant={merchant},from={start},conversion=-100%"),
                Incident.parse(f"network={NETWORK},from={start},returns=+900%"),
            )
        )
    )
    ordinary, changed = _network(plain, start, DAY), _network(staged, start, DAY)
    assert changed["clicks"] == 2 * ordinary["clicks"]  # idle clicks: no order of their own

    def clicked_since(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [
            r
            for r in rows
            if r.get("merchantGroupName") == merchant and r.get("clickDate", "")[:10] >= str(start)
        ]

    before, after = _served(plain, start, 3), _served(staged, start, 3)
    assert clicked_since(before) and clicked_since(after) == []  # commissions stopped from that day

    def returned(rows: list[dict[str, Any]]) -> int:
        return sum(1 for r in rows if r.get("network") == NETWORK and r["publisherNetRevenue"] <= 0)

    assert returned(after) > returned(before) + 2
