"""The dimensions figures are cut by, in one table: for each, its label, the SQL of its key over the
`transactions` view, the monthly rollup view that holds it, how the service's aggregates (the
`networks` view) answer it, and its type. Rankings, comparisons, alerts and the dashboard all read
this table; adding a dimension is adding a row (and its name to `Dimension`, which a test checks).

    DIMENSION_TABLE["network"].key        # "coalesce(network, '(unknown)')"
    DIMENSION_TABLE["device"].monthly     # "device_performance"
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from ..params import DeviceType

__all__ = [
    "AGGREGATED",
    "DAILY_FILTERS",
    "DEVICE_CODES",
    "DIMENSIONS",
    "DIMENSION_TABLE",
    "FILTERED",
    "Dimension",
    "DimensionSpec",
    "device_of_code",
]

Dimension = Literal["link", "device", "country", "network", "merchant", "product"]
DEVICE_CODES = {d.label: d.value for d in DeviceType}  # Desktop -> DSK


def device_of_code(column: str) -> str:
    """SQL turning a device code column (DSK, MBL, ...) into its label (Desktop, Mobile, ...)."""
    cases = " ".join(f"WHEN '{code}' THEN '{label}'" for label, code in DEVICE_CODES.items())
    return f"CASE {column} {cases} END"


@dataclass(frozen=True)
class DimensionSpec:
    """One dimension: what it is called, where its key comes from, and its type.

    `key` is SQL over the rows of `view` (one row per transaction, or per item for products);
    `detail` names one example per key (a link's page, a product's merchant). `monthly` is the
    rollup view with one row per month and key (its key SQL `monthly_key`), used for whole months.
    `filter` is the `Selection` field filtering it, if any. `aggregate_key` is the key's SQL
    over the `networks` view and `slice` the slice family answering it there (`all`: the
    unfiltered report carries it as a column; `deviceType`/`country`: one slice per value);
    None: the service does not aggregate by it (no clicks, EPC or conversion rate).
    `codes` maps a filter value to its code on the wire, where they differ (Mobile -> MBL).
    `daily` is a rollup view with one row per day and key (`key` and `detail` hold over it), used
    when it holds every filter the selection sets (`DAILY_FILTERS`); `daily_without_detail` another
    one over which `key` holds but not `detail`, for figures asked without it (a comparison).
    `sql_type` is the key's type in every frame (a test checks it against the views)."""

    name: Dimension
    label: str
    key: str
    view: str = "transactions"
    detail: str | None = None
    detail_label: str | None = None
    monthly: str | None = None
    monthly_key: str | None = None
    filter: Literal["network", "device", "country"] | None = None
    aggregate_key: str | None = None
    slice: Literal["all", "deviceType", "country"] | None = None
    codes: Mapping[str, str] = field(default_factory=dict)
    daily: str | None = None
    daily_without_detail: str | None = None
    sql_type: str = "VARCHAR"

    @property
    def aggregated(self) -> bool:
        """True when the service's aggregates answer this dimension (clicks, EPC, conversion)."""
        return self.slice is not None

    def slice_of(self, value: str) -> str:
        """The stored slice holding the aggregates of one value, e.g. 'deviceType=MBL'."""
        return f"{self.slice}={self.codes.get(value, value)}"


_TABLE: tuple[DimensionSpec, ...] = (
    DimensionSpec(
        "link",
        "Link",
        "coalesce(link_url, '(no click detail)')",
        # the page, or how many: one of them beside the link's total credited it with all of it
        detail="CASE WHEN count(DISTINCT page_url) > 1 THEN count(DISTINCT page_url) || ' pages' "
        "ELSE min(page_url) END",
        detail_label="Page",
        daily="link_performance",
        daily_without_detail="network_link_performance",
    ),
    DimensionSpec(
        "device",
        "Device",
        "device",
        monthly="device_performance",
        monthly_key="device",
        filter="device",
        aggregate_key=device_of_code("device_type"),
        slice="deviceType",
        codes=DEVICE_CODES,
        daily="country_device_performance",
    ),
    DimensionSpec(
        "country",
        "Country",
        "coalesce(upper(country), '(unknown)')",
        monthly="country_performance",
        monthly_key="coalesce(country, '(unknown)')",
        filter="country",
        aggregate_key="upper(country)",
        slice="country",
        daily="country_device_performance",
    ),
    DimensionSpec(
        "network",
        "Network",
        "coalesce(network, '(unknown)')",
        monthly="network_performance",
        monthly_key="coalesce(network, '(unknown)')",
        filter="network",
        aggregate_key="coalesce(network_name, '(unknown)')",
        slice="all",
        daily="network_link_performance",
    ),
    DimensionSpec(
        "merchant",
        "Merchant",
        "coalesce(merchant_group_name, '(unknown)')",
        detail="min(network)",
        detail_label="Network",
        daily="network_link_performance",
    ),
    DimensionSpec(
        "product",
        "Product",
        "coalesce(product_name, '(unnamed)')",
        view="transaction_items",
        detail="min(merchant_group_name)",
        detail_label="Merchant",
    ),
)

DAILY_FILTERS: dict[str, frozenset[str]] = {
    "link_performance": frozenset(),
    "network_link_performance": frozenset({"network"}),
    "country_device_performance": frozenset({"country", "device"}),
}
"""The daily rollups the table names, and the `Selection` filters each can apply (its columns)."""

DIMENSION_TABLE: dict[str, DimensionSpec] = {spec.name: spec for spec in _TABLE}
DIMENSIONS: tuple[Dimension, ...] = tuple(spec.name for spec in _TABLE)
AGGREGATED: tuple[Dimension, ...] = tuple(spec.name for spec in _TABLE if spec.aggregated)
"""Dimensions the service aggregates (clicks, EPC and conversion rate exist for them)."""
FILTERED: tuple[DimensionSpec, ...] = tuple(spec for spec in _TABLE if spec.filter is not None)
"""Dimensions a `Selection` can filter on (network, device, country)."""
