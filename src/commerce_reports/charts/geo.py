"""Offline world map data: the world-atlas countries TopoJSON and ISO 3166-1 codes to its ids.

Everything ships inside the package (`charts/data/`), so a map renders with no network and an
exported HTML report carries its own shapes instead of a URL.
"""

from __future__ import annotations

import copy
import json
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from ..errors import ValidationError

if TYPE_CHECKING:
    import altair as alt

__all__ = [
    "COUNTRIES_FEATURE",
    "country_numeric_id",
    "world_countries",
    "world_topojson",
]

COUNTRIES_FEATURE = "countries"
"""Name of the TopoJSON object that holds one geometry per country (its `id` is the ISO numeric code)."""

# Codes that reporting systems send but ISO 3166-1 assigns elsewhere (EU and UK conventions).
_ALIASES = {"UK": "GB", "EL": "GR"}


def _data_text(name: str) -> str:
    return (
        resources.files("commerce_reports.charts").joinpath("data").joinpath(name).read_text(encoding="utf-8")
    )


@cache
def _world() -> dict[str, Any]:
    topo: dict[str, Any] = json.loads(_data_text("countries-110m.json"))
    # world-atlas spells ids as zero-padded strings ("032"); Vega's lookup compares values
    # strictly, so ids become the integers that `country_numeric_id` returns.
    for geometry in topo["objects"][COUNTRIES_FEATURE]["geometries"]:
        if "id" in geometry:
            geometry["id"] = int(geometry["id"])
    return topo


@cache
def _alpha2_to_numeric() -> dict[str, int]:
    table: dict[str, int] = json.loads(_data_text("iso_codes.json"))["alpha2_to_numeric"]
    return table


def world_topojson() -> dict[str, Any]:
    """The world's countries at 1:110m as TopoJSON (object `countries`, integer ISO numeric ids).

    Read once per process; each call returns a copy, so callers may change it freely.
    """
    return copy.deepcopy(_world())


def country_numeric_id(alpha2: str) -> int | None:
    """ISO 3166-1 numeric code of an alpha-2 code (any case; `UK` and `EL` accepted), else None.

    The result matches the `id` of the country's shape in `world_topojson()` and `world_countries()`.
    """
    if not isinstance(alpha2, str):
        raise ValidationError(
            "country", f"{alpha2!r} is not a country code", "give an alpha-2 code, e.g. 'US'"
        )
    code = alpha2.strip().upper()
    return _alpha2_to_numeric().get(_ALIASES.get(code, code))


def world_countries() -> alt.InlineData:
    """The countries as an inline Altair data source (no URL), for `alt.Chart(...).mark_geoshape()`.

    Join values to shapes with `transform_lookup(lookup="id", from_=alt.LookupData(values, "id", [...]))`
    on the ids of `country_numeric_id`. The shapes (~100 kB) are embedded in the spec, so exported
    HTML and images need no network.
    """
    import altair as alt  # here: the country codes above are read where no chart is drawn (alerts)

    return alt.InlineData(
        values=world_topojson(),
        format=alt.DataFormat(type="topojson", feature=COUNTRIES_FEATURE),
    )
