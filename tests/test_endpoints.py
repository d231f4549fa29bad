"""The endpoint declaration against the published OpenAPI file, and what it derives on the wire."""

from __future__ import annotations

import dataclasses
from typing import Any
from urllib.parse import urlsplit

import pytest

from commerce_reports.config import parse_pace
from commerce_reports.endpoints import DIALECTS, ENDPOINTS, FILTERS, PACE_KEYS, Endpoint, OneDay, Window
from commerce_reports.errors import ValidationError
from commerce_reports.params import Filters
from tests.declared import example_on_the_wire
from tests.published_schema import _resolve, openapi


def _published(endpoint: str) -> dict[str, dict[str, Any]]:
    """The published file's query parameters of `endpoint`, by name, their schemas resolved."""
    operation = openapi()["paths"][f"/reports/{endpoint}"]["get"]
    return {p["name"]: {**p, "schema": _resolve(openapi(), p["schema"])} for p in operation["parameters"]}


def test_the_declaration_names_the_published_endpoints_and_paths() -> None:
    base = urlsplit(openapi()["servers"][0]["url"]).path
    assert sorted(f"{base}{path}" for path in openapi()["paths"]) == sorted(
        e.path for e in ENDPOINTS.values()
    )
    assert all(e.path.endswith(f"/{name}") and e.name == name for name, e in ENDPOINTS.items())


@pytest.mark.parametrize("endpoint", list(ENDPOINTS))
def test_the_published_dialect_takes_exactly_the_published_parameters(endpoint: str) -> None:
    declared = ENDPOINTS[endpoint]
    published = _published(endpoint)
    assert sorted(declared.parameters("published")) == sorted(published)
    for name in declared.span.names:
        assert published[name]["schema"] == {"type": "string", "format": "date"}
        assert bool(published[name].get("required")) == (name in declared.span.required)
    for spec in declared.takes("published"):
        schema = published[spec.wire["published"]]["schema"]
        expected: dict[str, Any] = {
            "ids": {"type": "string", "pattern": "^[0-9,]+$"},
            "country": {"type": "string", "pattern": "^[A-Z]{2}$"},
            "strings": {"type": "string"},
        }.get(spec.kind, {"type": "string"})
        assert {k: v for k, v in schema.items() if k != "enum"} == expected, spec.name
        if spec.kind == "code":
            assert spec.codes is not None
            assert sorted(schema["enum"]) == sorted(code.value for code in spec.codes), spec.name
        else:
            assert "enum" not in schema, spec.name


@pytest.mark.parametrize("endpoint", list(ENDPOINTS))
def test_what_a_404_means_follows_the_published_responses(endpoint: str) -> None:
    responses = openapi()["paths"][f"/reports/{endpoint}"]["get"]["responses"]
    assert ENDPOINTS[endpoint].not_found == ("no rows" if "404" in responses else "error")


def test_spans_paces_and_the_fourteen_list_filters() -> None:
    assert isinstance(ENDPOINTS["transactions"].span, OneDay)
    for name in ("networks", "merchandise"):
        window = ENDPOINTS[name].span
        assert isinstance(window, Window) and window.max_days == 31
        lists = [f for f in ENDPOINTS[name].takes("published") if f.kind in ("ids", "strings")]
        assert len(lists) == 14, "contract 4.2 and the published file: fourteen comma-list filters"
    assert tuple(ENDPOINTS) == PACE_KEYS and set(parse_pace(None)) == set(PACE_KEYS)


def test_the_python_filters_are_the_declared_ones_in_order() -> None:
    """`Filters` has a typed field per declared filter; its order is the lake's column order."""
    types = {"ids": "tuple[int, ...]", "strings": "tuple[str, ...]", "country": "str | None"}
    fields = dataclasses.fields(Filters)
    assert [f.name for f in fields] == [spec.name for spec in FILTERS]
    for field, spec in zip(fields, FILTERS, strict=True):
        code = spec.codes.__name__ + " | None" if spec.codes else ""
        assert field.type == types.get(spec.kind, code), spec.name
    for endpoint in ENDPOINTS.values():
        assert all(spec in FILTERS for spec in endpoint.filters)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_wire_names_each_declared_parameter_as_the_dialect_does(dialect: str) -> None:
    for declared in ENDPOINTS.values():
        params = dict.fromkeys(declared.span.names, "2026-11-01")
        params.update({f.param: example_on_the_wire(f) for f in declared.takes(dialect)})  # type: ignore[arg-type]
        sent = declared.wire(dialect, params)  # type: ignore[arg-type]
        assert list(sent) == list(declared.parameters(dialect))  # type: ignore[arg-type]
        assert sorted(sent.values()) == sorted(params.values())


def _without(endpoint: Endpoint, name: str, dialect: str) -> Endpoint:
    """`endpoint` as if `dialect` did not declare the filter `name`."""
    filters = tuple(
        dataclasses.replace(f, wire={d: w for d, w in f.wire.items() if d != dialect})
        if f.name == name
        else f
        for f in endpoint.filters
    )
    return dataclasses.replace(endpoint, filters=filters)


def test_a_filter_the_dialect_does_not_declare_is_refused() -> None:
    narrower = _without(ENDPOINTS["networks"], "sub_ids", "published")
    assert "subIds" not in narrower.parameters("published") and "subIds" in narrower.parameters("contract")
    assert narrower.wire("contract", {"subIds": "a"}) == {"subIds": "a"}
    with pytest.raises(ValidationError, match="the published API does not declare this filter for networks"):
        narrower.wire("published", {"subIds": "a"})
    with pytest.raises(ValidationError, match="country: is not a parameter of transactions"):
        ENDPOINTS["transactions"].wire("contract", {"updateDate": "2026-11-01", "country": "US"})
