"""Altair charts over the DuckDB views: aggregated in DuckDB first, a bounded number of rows each.

from commerce_reports import connect
from commerce_reports.charts import top_links_chart, country_chart
con = connect()
top_links_chart(con, site="alpha", start="2026-10-01", end="2026-10-31")
"""

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
from .queries import Selection, filter_options, ranking_frame, select
from .style import EMPTY_TITLE, PALETTE, empty_chart

__all__ = [
    "EMPTY_TITLE",
    "PALETTE",
    "Selection",
    "country_bars_chart",
    "country_chart",
    "country_map_chart",
    "country_numeric_id",
    "daily_chart",
    "device_chart",
    "empty_chart",
    "filter_options",
    "link_trend_chart",
    "network_epc_chart",
    "network_gap_chart",
    "ranking_chart",
    "ranking_frame",
    "select",
    "top_links_chart",
    "top_products_chart",
    "world_countries",
    "world_topojson",
]
