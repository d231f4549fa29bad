"""Filters as the declaration (`commerce_reports.endpoints`) lists them, with a usable value each.

Tests enumerate filters from here, never from a list of their own: a filter added to the
declaration is tested by every test that uses these, without touching a test.
"""

from __future__ import annotations

from typing import Any

from commerce_reports.endpoints import ENDPOINTS, FILTERS, Filter

AGGREGATES = tuple(name for name, e in ENDPOINTS.items() if e.not_found == "no rows")
# Every (endpoint, filter) pair the declaration names.
PAIRS = tuple((name, spec) for name, endpoint in ENDPOINTS.items() for spec in endpoint.filters)


def example(spec: Filter) -> Any:
    """A value a user would pass for `spec` (by its Python keyword)."""
    if spec.kind == "ids":
        return [7, 3]
    if spec.kind == "country":
        return "gb"
    if spec.kind == "code":
        assert spec.codes is not None
        return next(iter(spec.codes))
    return [f"v-{spec.name}", "w"]


def example_on_the_wire(spec: Filter) -> str:
    """What `example(spec)` becomes in the query string."""
    if spec.kind == "ids":
        return "3,7"
    if spec.kind == "country":
        return "GB"
    if spec.kind == "code":
        return str(example(spec).value)
    return f"v-{spec.name},w"


def pair_id(pair: tuple[str, Filter]) -> str:
    return f"{pair[0]}-{pair[1].name}"


__all__ = ["AGGREGATES", "FILTERS", "PAIRS", "example", "example_on_the_wire", "pair_id"]
