"""The guided tour: everything the toolkit does, against the sandbox, in one call."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import polars as pl

from .client import ReportsClient
from .params import day_range
from .sandbox import DEMO_SITES, FAST_PACE, SandboxConfig, run_sandbox

__all__ = ["run_demo"]


def run_demo(days: int = 7, say: Callable[[str], None] = print) -> dict[str, float]:
    """Start a sandbox, fetch `days` days of reports through the client, print a short summary.

    Returns the headline numbers (rows, revenue) so callers and tests can check them.
    """
    with run_sandbox(SandboxConfig(pace=FAST_PACE)) as running:
        site = DEMO_SITES[0]
        say(f"sandbox running at {running.base_url} (site {site.name}, pace {FAST_PACE} s)")
        today = running.sandbox.now.date()
        first = today - timedelta(days=days - 1)
        with ReportsClient(site.secret_key, running.base_url, pace=FAST_PACE) as client:
            tables = [client.transactions(update_date=day) for day in day_range(first, today)]
            networks = pl.DataFrame(client.networks(first, today + timedelta(days=1)))
            merchandise = pl.DataFrame(client.merchandise(first, today + timedelta(days=1)))
    transactions = pl.concat([pl.DataFrame(t) for t in tables])
    revenue = float(transactions["publisher_net_revenue"].sum())
    say(f"{first} .. {today}: {transactions.height:,} transaction versions, revenue {revenue:,.2f}")
    say(
        f"networks: {networks.height} rows, clicks {int(networks['clicks'].sum()):,}, "
        f"revenue {float(networks['revenue'].sum()):,.2f}"
    )
    say(f"merchandise: {merchandise.height} products, revenue {float(merchandise['revenue'].sum()):,.2f}")
    say("top networks by revenue:")
    for row in networks.sort("revenue", descending=True).head(5).iter_rows(named=True):
        say(
            f"  {row['network_name']:<24} {row['revenue']:>12,.2f}  clicks {row['clicks']:>8,}  "
            f"EPC {row['epc']:.3f}"
        )
    return {"transactions": transactions.height, "revenue": revenue, "networks": networks.height}
