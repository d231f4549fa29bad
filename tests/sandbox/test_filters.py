"""Every declared filter narrows what the sandbox serves, in both dialects; nothing undeclared passes.

The filters come from the declaration (`commerce_reports.endpoints`): a filter added there is
tested here without touching this file. A filter the sandbox ignored would serve unfiltered numbers
under a filtered name, which is what these tests exist to catch.
"""

from __future__ import annotations

from collections import Counter
from datetime import date, timedelta
from functools import cache

import httpx
import polars as pl
import pytest

from commerce_reports.endpoints import ENDPOINTS, Filter
from commerce_reports.sandbox import queries
from commerce_reports.sandbox.catalog import COUNTRIES, DEVICE_CODES
from commerce_reports.sandbox.params import WORLD
from commerce_reports.sandbox.world import World
from tests.declared import PAIRS, example_on_the_wire, pair_id

from .conftest import Client

DAY = {"updateDate": "2026-02-10"}
WINDOW = {"clickDateStart": "2026-02-01", "clickDateEnd": "2026-03-01"}
ABSENT = {"ids": "1", "strings": "not-in-the-world", "country": "AQ"}  # no link or click has these


def _dates(endpoint: str) -> dict[str, str]:
    return DAY if endpoint == "transactions" else WINDOW


@cache
def _served(client: Client, endpoint: str) -> pl.DataFrame:
    """What site alpha's world serves for `endpoint` (a window's transactions with items, so that
    merchandise has them too), with every link attribute and the click's device and country."""
    config, sandbox = client.sandbox.config, client.sandbox
    world = World(config.seed, ("alpha",), sandbox.first_day, config.transactions_per_day)
    if endpoint == "transactions":
        day = date.fromisoformat(DAY["updateDate"])
        return queries.transactions(
            world, "alpha", sandbox.now, click=None, commission=None, update=day, filters=queries.Filters()
        )
    start, end = (date.fromisoformat(WINDOW[k]) for k in ("clickDateStart", "clickDateEnd"))
    state = queries.current_state(world.versions("alpha", start, end - timedelta(1), sandbox.now))
    return state.filter(pl.col("items").list.len() > 0).join(world.catalog("alpha").link_frame, on="link")


def _present(client: Client, endpoint: str, name: str) -> str:
    """The value of the filter `name` that most of what `endpoint` serves carries."""
    where = WORLD[name]
    values = _served(client, endpoint)[where].to_list()
    if where == "device":
        values = [DEVICE_CODES[v] for v in values]
    elif where == "country":
        values = [COUNTRIES[v].upper() for v in values]
    return str(Counter(v for v in values if v != "").most_common(1)[0][0])


@cache
def _unfiltered(client: Client, endpoint: str) -> httpx.Response:
    return client.get(endpoint, **_dates(endpoint))


def _rows(endpoint: str, response: httpx.Response) -> list[object]:
    if endpoint == "transactions":
        return list(response.json()["transactions"])
    return list(response.json()["data"]) if response.status_code == 200 else []


def test_the_sandbox_knows_what_every_declared_filter_restricts() -> None:
    declared = {spec.name for _, spec in PAIRS}
    assert declared <= set(WORLD), f"add {sorted(declared - set(WORLD))} to sandbox.params.WORLD"


@pytest.mark.parametrize(("endpoint", "spec"), PAIRS, ids=[pair_id(p) for p in PAIRS])
def test_every_declared_filter_is_applied(each_dialect: Client, endpoint: str, spec: Filter) -> None:
    """A value the world holds keeps rows; a value it lacks (any other code) leaves rows out. A
    filter the dialect does not declare is refused under any name."""
    dialect = each_dialect.sandbox.config.dialect
    if dialect not in spec.wire:
        for other in spec.wire.values():
            refused = each_dialect.get(endpoint, **_dates(endpoint), **{other: example_on_the_wire(spec)})
            assert refused.status_code == 400, refused.text
        return
    name = spec.wire[dialect]
    everything = _unfiltered(each_dialect, endpoint)
    value = _present(each_dialect, endpoint, spec.name)
    kept = each_dialect.get(endpoint, **_dates(endpoint), **{name: value})
    assert kept.status_code == 200, kept.text
    assert _rows(endpoint, kept), f"{name}={value} served nothing"
    assert (
        all(row in _rows(endpoint, everything) for row in _rows(endpoint, kept)) or endpoint != "transactions"
    )
    if spec.codes is None:
        lacking = each_dialect.get(endpoint, **_dates(endpoint), **{name: ABSENT[spec.kind]})
        assert lacking.status_code == (200 if endpoint == "transactions" else 404), lacking.text
        assert _rows(endpoint, lacking) == [], f"{name}={ABSENT[spec.kind]} was not applied"
    else:
        others = [each_dialect.get(endpoint, **_dates(endpoint), **{name: code}) for code in spec.codes]
        assert any(o.content != everything.content for o in others), f"{name} was not applied"


@pytest.mark.parametrize("endpoint", list(ENDPOINTS))
def test_an_undeclared_parameter_is_400_in_both_dialects(each_dialect: Client, endpoint: str) -> None:
    """The real service ignores it; the sandbox refuses it, so that a client's mistake shows."""
    dialect = each_dialect.sandbox.config.dialect
    declared = ENDPOINTS[endpoint]
    here = set(declared.parameters(dialect))
    others = {
        wire: spec.wire[dialect]
        for spec in declared.filters
        for wire in spec.wire.values()
        if wire not in here and dialect in spec.wire
    }
    elsewhere = {p for e in ENDPOINTS.values() for p in e.parameters(dialect)} - {
        *declared.parameters(dialect)
    }
    for name in ["whatever", *sorted(elsewhere), *others]:
        response = each_dialect.get(endpoint, **_dates(endpoint), **{name: "x"})
        assert response.status_code == 400, name
        message = response.json()["message"]
        assert message.startswith(f"{name}: not a parameter of {endpoint} in the {dialect} API"), message
        if name in others:
            assert f"this API calls that filter {others[name]}" in message
