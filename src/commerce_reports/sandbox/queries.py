"""What the reporting endpoints and the ground truth compute from the world, as polars frames.

Semantics shared by every aggregate (all "as of now", current state = latest version per
commissionId whose update time is <= now):

- revenue: sum of current publisher net revenue, negative return transactions included;
- sales: sum of current order value (a separate return carries a negative order value, an adjusted
  one a lowered value);
- actions: number of transactions in the current state (distinct commissionIds, separate negative
  returns included), the same count as ground truth's `transactions`;
- clicks: clicks in the window (by click time) matching the filters; epc = revenue / clicks and
  conversionRate = actions / clicks, 0 when there are no clicks.
- merchandise: a transaction's items split its current revenue and order value in proportion to
  each item's price x quantity; actions = transactions carrying the product. Transactions without
  items are not in the merchandise report.
- subIds: the sandbox knows no sub id apart from the CUID, so `subIds` matches the CUID too.

Networks and merchandise aggregate by click date, so transactions served without click detail are
still counted (the sandbox knows their click), and a `clickDate` query still returns them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

import polars as pl

from .catalog import COUNTRIES, DEVICES
from .world import HORIZON_DAYS, World, current_state, day_number

__all__ = [
    "GROUP_COLUMNS",
    "TRUTH_BY",
    "Filters",
    "ground_truth",
    "merchandise",
    "networks",
    "transactions",
]

TRUTH_BY = ("commission_date", "click_date", "update_date")
GROUP_COLUMNS = (
    "day",
    "network",
    "device",
    "country",
    "merchant_group_id",
    "program_type",
    "partner_product",
    "campaign_id",
    "link_url",
)


@dataclass(frozen=True)
class Filters:
    """Request filters, already validated. `links` maps a link-frame column to allowed values."""

    links: dict[str, frozenset[object]] = field(default_factory=dict)
    device: int | None = None  # index into catalog.DEVICES
    country: int | None = None  # index into catalog.COUNTRIES

    def apply(self, frame: pl.DataFrame, link_frame: pl.DataFrame) -> pl.DataFrame:
        """Rows of a click or version frame that pass every filter."""
        if self.links:
            allowed = link_frame.filter(
                *(pl.col(column).is_in(list(values)) for column, values in self.links.items())
            )["link"]
            frame = frame.filter(pl.col("link").is_in(allowed.implode()))
        if self.device is not None:
            frame = frame.filter(pl.col("device") == self.device)
        if self.country is not None:
            frame = frame.filter(pl.col("country") == self.country)
        return frame


def _described(frame: pl.DataFrame, world: World, site: str) -> pl.DataFrame:
    """Join the link attributes and decode device and country."""
    return frame.join(world.catalog(site).link_frame, on="link", how="left").with_columns(
        pl.col("device")
        .replace_strict(list(range(len(DEVICES))), [d or "Unknown" for d in DEVICES])
        .alias("device_name"),
        pl.col("country").replace_strict(list(range(len(COUNTRIES))), list(COUNTRIES)).alias("country_code"),
    )


def transactions(
    world: World,
    site: str,
    now: datetime,
    *,
    click: date | None,
    commission: date | None,
    update: date | None,
    filters: Filters,
) -> pl.DataFrame:
    """The rows a transactions request returns, link attributes joined, in update-time order.

    With `update` every version updated that day (as it was then); otherwise the current state.
    """
    anchor = click or update or commission
    assert anchor is not None, "the caller validates that one date is given"
    first = click or (anchor - timedelta(HORIZON_DAYS))
    rows = world.versions(site, first, click or anchor, now)
    rows = rows.filter(pl.col("update_day") == day_number(update)) if update else current_state(rows)
    if commission:
        rows = rows.filter(pl.col("commission_day") == day_number(commission))
    if click:
        rows = rows.filter(pl.col("click_day") == day_number(click))
    rows = filters.apply(rows, world.catalog(site).link_frame)
    return _described(rows, world, site).sort("update_ts", "cid", "version")


def _window(
    world: World, site: str, now: datetime, start: date, end: date, filters: Filters
) -> tuple[pl.DataFrame, pl.DataFrame] | None:
    """The clicks and the current transactions with a click in [start, end) that pass `filters`,
    each with its link's attributes (an aggregate reads neither device nor country names: not
    decoded, unlike a transactions answer); clicks counted per link. None if both are empty."""
    link_frame = world.catalog(site).link_frame
    last = end - timedelta(1)
    clicks = filters.apply(world.clicks(site, start, last, now), link_frame)
    state = filters.apply(current_state(world.versions(site, start, last, now)), link_frame)
    if clicks.is_empty() and state.is_empty():
        return None
    per_link = clicks.group_by("link").agg(pl.len().alias("clicks"))
    return per_link.join(link_frame, on="link", how="left"), state.join(link_frame, on="link", how="left")


def _money(column: str) -> pl.Expr:
    return (pl.col(column) / 100).round(2)


def networks(
    world: World, site: str, now: datetime, start: date, end: date, filters: Filters
) -> dict[str, object] | None:
    """The networks report body for click dates [start, end), or None when there is no data."""
    window = _window(world, site, now, start, end, filters)
    if window is None:
        return None
    clicks, state = window
    per_network = (
        clicks.group_by("network")
        .agg(pl.col("clicks").sum())
        .join(
            state.group_by("network").agg(
                pl.col("revenue_cents").sum().alias("revenue"),
                pl.col("order_cents").sum().alias("sales"),
                pl.len().alias("actions"),
            ),
            on="network",
            how="full",
            coalesce=True,
        )
        .fill_null(0)
        .sort("revenue", "network", descending=[True, False])
    )
    data = [
        _network_row(row["network"], row["revenue"], row["clicks"], row["sales"], row["actions"])
        for row in per_network.iter_rows(named=True)
    ]
    totals = _network_row(
        per_network.height,
        int(per_network["revenue"].sum()),
        int(per_network["clicks"].sum()),
        int(per_network["sales"].sum()),
        int(per_network["actions"].sum()),
    )
    return {"data": data, "totals": {f"{k}Total": v for k, v in totals.items()}}


def _network_row(name: object, revenue: int, clicks: int, sales: int, actions: int) -> dict[str, object]:
    return {
        "networkName": name,
        "revenue": round(revenue / 100, 2),
        "clicks": clicks,
        "sales": round(sales / 100, 2),
        "actions": actions,
        "conversionRate": round(actions / clicks, 4) if clicks else 0,
        "epc": round(revenue / 100 / clicks, 2) if clicks else 0,
    }


def merchandise(
    world: World, site: str, now: datetime, start: date, end: date, filters: Filters
) -> dict[str, object] | None:
    """The merchandise report body for click dates [start, end), or None when there is no data."""
    window = _window(world, site, now, start, end, filters)
    if window is None:
        return None
    items = (
        window[1]
        .filter(pl.col("items").list.len() > 0)
        .with_columns(
            (
                pl.col("items")
                .list.eval(pl.element().struct.field("price_cents") * pl.element().struct.field("quantity"))
                .list.sum()
            ).alias("items_value")
        )
        .explode("items")
        .unnest("items")
        .with_columns((pl.col("price_cents") * pl.col("quantity") / pl.col("items_value")).alias("share"))
        .group_by("product_name", "merchant_group_id", "merchant_group_name")
        .agg(
            (pl.col("revenue_cents") * pl.col("share")).sum().alias("revenue"),
            (pl.col("order_cents") * pl.col("share")).sum().alias("sales"),
            pl.col("cid").n_unique().alias("actions"),
        )
        .sort("revenue", "product_name", "merchant_group_id", descending=[True, False, False])
    )
    data = [
        {
            "productName": row["product_name"],
            "merchantGroupName": row["merchant_group_name"],
            "merchantGroupId": row["merchant_group_id"],
            "revenue": round(row["revenue"] / 100, 2),
            "sales": round(row["sales"] / 100, 2),
            "actions": row["actions"],
        }
        for row in items.iter_rows(named=True)
    ]
    totals = {
        "productNameTotal": items["product_name"].n_unique(),
        "merchantGroupNameTotal": items["merchant_group_name"].n_unique(),
        "merchantGroupIdsTotal": items["merchant_group_id"].n_unique(),
        "revenueTotal": round(float(items["revenue"].sum()) / 100, 2),
        "salesTotal": round(float(items["sales"].sum()) / 100, 2),
        "actionsTotal": int(items["actions"].sum()),
    }
    return {"data": data, "totals": totals}


def ground_truth(
    world: World,
    site: str,
    now: datetime,
    start: date,
    end: date,
    *,
    by: str = "commission_date",
    group_by: Sequence[str] = (),
) -> pl.DataFrame:
    """Current-state totals of transactions whose `by` date is in [start, end] (inclusive)."""
    if by not in TRUTH_BY:
        raise ValueError(f"by: must be one of {', '.join(TRUTH_BY)} (got {by!r})")
    unknown = [g for g in group_by if g not in GROUP_COLUMNS]
    if unknown:
        raise ValueError(f"group_by: unknown {', '.join(unknown)}; allowed: {', '.join(GROUP_COLUMNS)}")
    day_column = by.replace("_date", "_day")
    first = start if by == "click_date" else start - timedelta(HORIZON_DAYS)
    state = current_state(world.versions(site, first, end, now)).filter(
        pl.col(day_column).is_between(day_number(start), day_number(end))
    )
    described = _described(state, world, site).with_columns(
        pl.col(day_column).cast(pl.Date).alias("day"),
        pl.col("device_name").alias("device"),
        pl.col("country_code").alias("country"),
    )
    sums = (
        pl.col("revenue_cents").sum(),
        pl.col("order_cents").sum(),
        pl.col("cid").n_unique().cast(pl.Int64).alias("transactions"),
        pl.col("is_return").sum().cast(pl.Int64).alias("returns"),
    )
    groups = list(group_by)
    totals = described.group_by(groups).agg(*sums).sort(groups) if groups else described.select(*sums)
    return totals.select(
        *groups,
        _money("revenue_cents").fill_null(0.0).alias("revenue"),
        _money("order_cents").fill_null(0.0).alias("order_value"),
        pl.col("transactions").fill_null(0),
        pl.col("returns").fill_null(0),
    )
