"""Lakes synced from a small sandbox whose clock the lake shares."""

from __future__ import annotations

import random
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import orjson
import polars as pl
import pytest

from commerce_reports.api import SyncOptions
from commerce_reports.embedded import sandbox_sites
from commerce_reports.sandbox import SandboxConfig, run_sandbox
from commerce_reports.sandbox.http import App, Request, Response, serve
from commerce_reports.sandbox.reports import ReportsSandbox
from commerce_reports.sandbox.runner import RunningSandbox
from commerce_reports.sites import SiteProfile

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
START = NOW.date() - timedelta(days=89)


def small_config(**changes: Any) -> SandboxConfig:
    base: dict[str, Any] = {
        "now": NOW,
        "first_day": date(2025, 10, 1),
        "pace": 0.0,
        "transactions_per_day": 30,
    }
    return SandboxConfig(**{**base, **changes})


@pytest.fixture
def running() -> Iterator[RunningSandbox]:
    with run_sandbox(small_config()) as running:
        yield running


def assert_every_field_is_read(data_dir: Path, site: str, dialect: str) -> None:
    """Nothing the service sent is left in `extra`, and no column the dialect carries is all null."""
    versions = pl.read_parquet(data_dir / "lake" / f"site={site}" / "transactions" / "**" / "*.parquet")
    assert versions["extra"].null_count() == versions.height  # every field landed in a column
    never = {"extra"} | ({"partner_product_sub_type"} if dialect == "contract" else set())
    empty = [c for c in versions.columns if c not in never and versions[c].null_count() == versions.height]
    assert empty == []


def options_for(running: RunningSandbox, **changes: Any) -> SyncOptions:
    """The lake sees the sandbox's clock; no pace (the sandbox has none), no bars."""
    base: dict[str, Any] = {"now": lambda: running.sandbox.now, "pace": 0, "progress": False}
    return SyncOptions(**{**base, **changes})


def profiles(running: RunningSandbox) -> list[SiteProfile]:
    return sandbox_sites(running)


def current_state(data_dir: Path, site: str) -> pl.DataFrame:
    """The latest stored version of every transaction in a site's ledger (updateDate days)."""
    files = sorted(
        (data_dir / "lake" / f"site={site}" / "transactions" / "by=updateDate").glob("day=*/part.parquet")
    )
    versions = pl.concat([pl.read_parquet(f) for f in files])
    return versions.sort("update_date", "fetched_at").group_by("commission_id").last()


def ground_truth_differences(running: RunningSandbox, data_dir: Path, site: str, start: date) -> list[str]:
    """The commission days whose revenue (to the cent) or transaction count differ from the
    sandbox's truth, one line each; empty when the lake is right."""
    end = running.sandbox.now.date()
    lake = (
        current_state(data_dir, site)
        .filter(pl.col("commission_date").is_between(start, end))
        .group_by("commission_date")
        .agg(pl.col("publisher_net_revenue").sum().alias("revenue"), pl.len().alias("transactions"))
    )
    truth = running.sandbox.ground_truth(site, start, end, by="commission_date", group_by=("day",))
    ours = {row[0]: (row[1], row[2]) for row in lake.iter_rows()}
    theirs = {  # the truth's float cents as the exact amount they stand for
        row["day"]: (Decimal(repr(round(row["revenue"], 2))), row["transactions"])
        for row in truth.iter_rows(named=True)
    }
    return [
        f"{day}: lake {ours.get(day)}, truth {theirs.get(day)}"
        for day in sorted(ours.keys() | theirs.keys())
        if ours.get(day) != theirs.get(day)
    ]


def assert_matches_ground_truth(running: RunningSandbox, data_dir: Path, site: str, start: date) -> None:
    """Revenue and transaction counts per commission day equal the sandbox's truth, to the cent."""
    assert ground_truth_differences(running, data_dir, site, start) == []
    end = running.sandbox.now.date()
    truth = running.sandbox.ground_truth(site, start, end, by="commission_date", group_by=("day",))
    assert truth["returns"].sum() > 0  # returns and adjustments are part of what matched


HOSTILE_MODES = ("echo-key", "untypable")


class Hostile:
    """The sandbox app with some 200 transactions bodies made hostile (a share `rate` of them):
    `echo-key` echoes the caller's Authorization header inside every transaction, `untypable`
    turns one transaction's revenue into "lots". `altered` counts the bodies changed."""

    def __init__(self, app: App, modes: Collection[str], rate: float = 1.0, seed: int = 0) -> None:
        self.app = app
        self.modes = set(modes)
        self.rate = rate
        self.chosen = random.Random(seed)
        self.altered = 0

    def __call__(self, request: Request) -> Response:
        response = self.app(request)
        if not self.modes or response.status != 200 or not request.path.endswith("/transactions"):
            return response
        if self.chosen.random() >= self.rate:
            return response
        try:
            payload = orjson.loads(response.body)
        except orjson.JSONDecodeError:
            return response  # a garbled body already (a fault)
        rows = payload.get("transactions") or []
        if "echo-key" in self.modes:
            for row in rows:
                row["debug"] = {"echo": f"Authorization: {request.headers.get('authorization', '')}"}
        if "untypable" in self.modes and rows:
            rows[0].setdefault("commission", {})["publisherNetRevenue"] = "lots"
        self.altered += 1
        return replace(response, body=orjson.dumps(payload))


@contextmanager
def run_hostile(config: SandboxConfig, modes: Collection[str], rate: float = 1.0) -> Iterator[RunningSandbox]:
    """A sandbox on loopback whose transactions answers are made hostile (see `Hostile`)."""
    sandbox = ReportsSandbox(config)
    with serve(Hostile(sandbox, modes, rate)) as handle:
        yield RunningSandbox(handle.base_url, sandbox)
