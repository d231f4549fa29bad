"""Altair charts over the DuckDB views: aggregated in DuckDB first, a bounded number of rows each.

    from commerce_reports import connect
    from commerce_reports.charts import Selection, top_links_chart, country_chart
    con = connect()
    october = Selection(site="alpha", start="2026-10-01", end="2026-10-31")
    top_links_chart(con, october)
    country_chart(con, october, device="Mobile")         # keywords change the selection's fields
    top_links_chart(con, site="alpha", top_n=20)          # or build it: every day the lake holds

Names load on first use (PEP 562): importing one module of the package (e.g. `charts.offline`)
does not load Altair, DuckDB and polars.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names

if TYPE_CHECKING:
    from .changes import comparison_chart
    from .comparison import Comparison, compare, compare_periods, previous_period
    from .dimensions import DIMENSION_TABLE, DIMENSIONS, DimensionSpec
    from .geo import country_numeric_id, world_countries, world_topojson
    from .maps import country_bars_chart, country_chart, country_map_chart
    from .networks import network_epc_chart, network_gap_chart
    from .performance import (
        daily_chart,
        device_chart,
        link_trend_chart,
        ranking_chart,
        top_links_chart,
        top_products_chart,
    )
    from .queries import filter_options, network_gap_frame, ranking_frame
    from .selection import Coverage, Selection, coverage, resolve
    from .series import daily_frame, link_trend_frame
    from .style import EMPTY_TITLE, PALETTE, empty_chart

__all__ = [
    "DIMENSIONS",
    "DIMENSION_TABLE",
    "EMPTY_TITLE",
    "PALETTE",
    "Comparison",
    "Coverage",
    "DimensionSpec",
    "Selection",
    "compare",
    "compare_periods",
    "comparison_chart",
    "country_bars_chart",
    "country_chart",
    "country_map_chart",
    "country_numeric_id",
    "coverage",
    "daily_chart",
    "daily_frame",
    "device_chart",
    "empty_chart",
    "filter_options",
    "link_trend_chart",
    "link_trend_frame",
    "network_epc_chart",
    "network_gap_chart",
    "network_gap_frame",
    "previous_period",
    "ranking_chart",
    "ranking_frame",
    "resolve",
    "top_links_chart",
    "top_products_chart",
    "world_countries",
    "world_topojson",
]

_HOMES = {
    "Comparison": "comparison",
    "DIMENSIONS": "dimensions",
    "DIMENSION_TABLE": "dimensions",
    "DimensionSpec": "dimensions",
    "compare": "comparison",
    "compare_periods": "comparison",
    "comparison_chart": "changes",
    "previous_period": "comparison",
    "Coverage": "selection",
    "EMPTY_TITLE": "style",
    "PALETTE": "style",
    "Selection": "selection",
    "country_bars_chart": "maps",
    "country_chart": "maps",
    "country_map_chart": "maps",
    "country_numeric_id": "geo",
    "coverage": "selection",
    "daily_chart": "performance",
    "daily_frame": "series",
    "device_chart": "performance",
    "empty_chart": "style",
    "filter_options": "queries",
    "link_trend_chart": "performance",
    "link_trend_frame": "series",
    "network_epc_chart": "networks",
    "network_gap_chart": "networks",
    "network_gap_frame": "queries",
    "ranking_chart": "performance",
    "ranking_frame": "queries",
    "resolve": "selection",
    "top_links_chart": "performance",
    "top_products_chart": "performance",
    "world_countries": "geo",
    "world_topojson": "geo",
}


__getattr__, __dir__ = lazy_names(__name__, _HOMES, __all__)
