"""Altair charts over the DuckDB views: aggregated in DuckDB first, a bounded number of rows each.

from commerce_reports import connect
from commerce_reports.charts import Selection, top_links_chart, country_chart
con = connect()
october = Selection(site="alpha", start="2026-10-01", end="2026-10-31")
top_links_chart(con, october)
country_chart(con, october, device="Mobile")         # keywords change the selection's fields
top_links_chart(con, site="alpha", top_n=20)          # or build it: every day the lake holds
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
from .queries import filter_options, network_gap_frame, ranking_frame
from .selection import Coverage, Selection, coverage, resolve
from .series import daily_frame, link_trend_frame
from .style import EMPTY_TITLE, PALETTE, empty_chart

__all__ = [
    "EMPTY_TITLE",
    "PALETTE",
    "Coverage",
    "Selection",
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
    "ranking_chart",
    "ranking_frame",
    "resolve",
    "top_links_chart",
    "top_products_chart",
    "world_countries",
    "world_topojson",
]
