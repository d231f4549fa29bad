"""The published dialect end to end: the vendor's names and shapes, a /v1 address, a wrong address."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import polars as pl
import pytest

from commerce_reports.api import plan_sync, sync
from commerce_reports.errors import ConfigurationError
from commerce_reports.lake.manifest import Manifest
from commerce_reports.pace import spacing
from commerce_reports.sandbox import run_sandbox
from commerce_reports.sandbox.runner import RunningSandbox
from commerce_reports.secret import Secret
from commerce_reports.sites import SiteProfile
from tests.lake.conftest import options_for, small_config


@pytest.fixture
def published() -> Iterator[RunningSandbox]:
    with run_sandbox(small_config(dialect="published")) as running:
        yield running


def _site(running: RunningSandbox, url: str) -> SiteProfile:
    key = running.sandbox.config.sites[0].secret_key
    return SiteProfile("alpha", Secret(key), url, dialect="published")  # as configured by a user


def test_a_v1_address_syncs_and_a_product_slice_is_really_filtered(
    published: RunningSandbox, tmp_path: Path
) -> None:
    start = published.sandbox.now.date() - timedelta(days=6)
    result = sync(
        start,
        sites=[_site(published, published.base_url + "/v1/")],
        networks=["all", {"partner_product": "WRA"}],
        merchandise=[],
        data_dir=tmp_path,
        options=options_for(published),
    )
    assert result.ok and result.stored
    sent = [r.params for r in published.sandbox.request_log]
    assert all("partnerProduct" not in p for p in sent) and any(p.get("sovrnProduct") == "WRA" for p in sent)
    assert all(r.status == 200 for r in published.sandbox.request_log)  # the sandbox 400s a wrong name
    nets = pl.read_parquet(
        tmp_path / "lake" / "site=alpha" / "networks" / "**" / "*.parquet", hive_partitioning=True
    )
    by_slice = nets.group_by("slice").agg(pl.col("revenue").sum())
    revenue = dict(zip(by_slice["slice"], by_slice["revenue"], strict=True))
    assert 0 < revenue["partnerProduct=WRA"] < revenue["all"]
    service = Manifest.load(tmp_path, "alpha").service
    assert service == {"base_url": published.base_url, "dialect": "published", "verified": True}


def test_a_first_sync_plans_the_address_check_it_makes_and_a_later_one_plans_none(
    published: RunningSandbox, tmp_path: Path
) -> None:
    """The check of an address not yet known takes a request of the transactions lane, at its pace:
    the plan counts it, in its total and its ETA (it was left out: a request a minute missing)."""
    start = published.sandbox.now.date() - timedelta(days=3)
    site = _site(published, published.base_url + "/v1/")  # kept without its /v1: known next time
    asked = {"sites": [site], "networks": ["all"], "merchandise": [], "data_dir": tmp_path}
    options = options_for(published, pace=60)
    plan = plan_sync(start, **asked, options=options)
    assert plan.request_count == len(plan.requests) + 1
    assert "1 to check that its address answers as the reporting API" in plan.describe()
    days = len([r for r in plan.requests if r.key.dataset == "transactions"])
    assert plan.pace_floor == days * spacing(60)  # 1 + days requests in that lane: days gaps
    first = sync(start, **asked, options=options_for(published))
    assert first.ok and first.plan.request_count == len(published.sandbox.request_log) == plan.request_count
    published.sandbox.advance(timedelta(days=1))
    later = plan_sync(start, **asked, options=options_for(published))
    assert later.requests and later.request_count == len(later.requests)
    assert "check that its address" not in later.describe()


def test_a_wrong_address_is_a_configuration_error_and_nothing_is_stored(
    published: RunningSandbox, tmp_path: Path
) -> None:
    start = published.sandbox.now.date() - timedelta(days=3)
    with pytest.raises(ConfigurationError, match=r"/api\) does not point at the reporting API"):
        sync(
            start,
            sites=[_site(published, published.base_url + "/api")],
            data_dir=tmp_path,
            options=options_for(published),
        )
    assert len(published.sandbox.request_log) == 1  # the one check, nothing else
    assert not list(tmp_path.rglob("*.parquet"))
    assert not any(e.settled for e in Manifest.load(tmp_path, "alpha"))
