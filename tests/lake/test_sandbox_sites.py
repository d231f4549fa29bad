"""The built-in sandbox's synthetic sites never stay beside a service's in a lake. `demo`, or a sync
with no key set, fills the lake with them; until a service's site is synced there, `status` names
them; the first sync of a service's site removes them from the lake, its rollups and every view,
and a service's site of the same name as one of them loses the sandbox's partitions before its own
are fetched."""

from __future__ import annotations

import dataclasses
import logging
from datetime import timedelta
from pathlib import Path

import duckdb
import pytest

from commerce_reports import db
from commerce_reports.api import plan_sync, sync
from commerce_reports.cli import main
from commerce_reports.files import remove_folder, remove_stray_files
from commerce_reports.lake import Manifest
from commerce_reports.sandbox import run_sandbox
from commerce_reports.sandbox.runner import RunningSandbox
from commerce_reports.sandbox.sites import Site
from commerce_reports.sites import SiteProfile
from tests.lake.conftest import NOW, options_for, profiles, small_config

DAY = NOW.date() - timedelta(days=2)


def _site_totals(data_dir: Path) -> dict[str, int]:
    with db.connect(data_dir) as con:
        rows = con.sql("SELECT site, count(*) FROM transactions GROUP BY site").fetchall()
    return {str(site): int(count) for site, count in rows}


def _synced_from_the_sandbox(running: RunningSandbox, data_dir: Path) -> None:
    """What `demo` (or a sync with no key set) leaves: the sandbox's sites, as the embedded one's."""
    result = sync(DAY, DAY, sites=profiles(running), data_dir=data_dir, options=options_for(running))
    assert not result.failed
    assert Manifest.load(data_dir, "alpha").from_embedded_sandbox


def _service_site(running: RunningSandbox, name: str) -> SiteProfile:
    """A site of `running` as a configured service's (at its address, with its key)."""
    (site,) = [p for p in profiles(running) if p.name == name]
    return dataclasses.replace(site, sandbox=False)


def test_a_service_s_first_sync_removes_the_sandbox_s_sites_from_the_lake_and_every_view(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with run_sandbox(small_config()) as running:
        _synced_from_the_sandbox(running, tmp_path)
    assert set(_site_totals(tmp_path)) == {"alpha", "beta"}
    # Until then, `status` with a service's site configured says the sandbox's are in every view.
    monkeypatch.setenv("COMMERCE_REPORTS_SECRET_KEY", "sandbox-gamma-key")
    monkeypatch.setenv("COMMERCE_REPORTS_SITE", "gamma")
    monkeypatch.setenv("COMMERCE_REPORTS_BASE_URL", "http://127.0.0.1:9/v1")
    assert main(["status", "--data-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "the lake is empty" not in out
    assert "no site of the settings is in the lake yet" in out
    assert "also in the lake: alpha, beta, the built-in sandbox's synthetic sites" in out

    config = small_config(sites=(Site("gamma", "sandbox-gamma-key"),))
    with run_sandbox(config) as service:
        result = sync(
            DAY, DAY, sites=[_service_site(service, "gamma")], data_dir=tmp_path, options=options_for(service)
        )
    assert not result.failed and not result.unfinished
    assert list((tmp_path / "lake").iterdir()) == [tmp_path / "lake" / "site=gamma"]
    assert list((tmp_path / "rollups").glob("site=*")) == [tmp_path / "rollups" / "site=gamma"]
    assert set(_site_totals(tmp_path)) == {"gamma"}
    catalog = tmp_path / db.CATALOG_FILE
    with duckdb.connect(str(catalog), read_only=True) as con:
        sites = con.sql("SELECT DISTINCT site FROM site_performance").fetchall()
    assert sites == [("gamma",)]


def test_a_service_site_named_as_a_sandbox_one_loses_the_sandbox_s_partitions_first(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with run_sandbox(small_config()) as running:
        _synced_from_the_sandbox(running, tmp_path)
    earlier = DAY - timedelta(days=1)  # the service's sync stores another day than the sandbox's
    with run_sandbox(small_config(seed=7)) as service, caplog.at_level(logging.WARNING):
        alpha = _service_site(service, "alpha")
        planned = plan_sync(earlier, earlier, sites=[alpha], data_dir=tmp_path, options=options_for(service))
        result = sync(
            earlier,
            earlier,
            sites=[_service_site(service, "alpha")],
            data_dir=tmp_path,
            options=options_for(service),
        )
    assert not result.failed
    # The plan said what the sync did: every window fetched anew, none taken for the sandbox's.
    assert planned.requests == result.plan.requests
    assert "site alpha: its partitions came from the built-in sandbox" in caplog.text
    manifest = Manifest.load(tmp_path, "alpha")
    assert manifest.from_a_service
    # Nothing of the sandbox's is left: its ledger day is gone, every file is one the service sent.
    site = tmp_path / "lake" / "site=alpha"
    on_disk = {p.parent.relative_to(site).as_posix() for p in site.rglob("part.parquet")}
    assert on_disk == {e.relpath for e in manifest}
    assert {e.key.start for e in manifest if e.key.dataset == "transactions"} == {earlier}
    assert not (tmp_path / "lake" / "site=beta").exists()  # the other sandbox site: gone too
    with db.connect(tmp_path) as con:
        days = con.sql("SELECT DISTINCT partition_day FROM transaction_versions").fetchall()
    assert days == [(earlier,)]


def test_a_lake_of_the_sandbox_alone_keeps_its_sites(tmp_path: Path) -> None:
    with run_sandbox(small_config()) as running:
        _synced_from_the_sandbox(running, tmp_path)
        again = sync(DAY, DAY, sites=profiles(running), data_dir=tmp_path, options=options_for(running))
    assert not again.failed
    assert set(_site_totals(tmp_path)) == {"alpha", "beta"}


def test_a_folder_is_removed_whole_and_what_a_crash_leaves_is_swept(tmp_path: Path) -> None:
    folder = tmp_path / "site=alpha"
    (folder / "transactions").mkdir(parents=True)
    (folder / "transactions" / "part.parquet").write_bytes(b"x")
    remove_folder(folder)
    assert list(tmp_path.iterdir()) == []
    # A crash between the rename and the removal leaves a hidden folder that no reader's glob
    # matches; the next writer's sweep removes it (its process is gone).
    left = tmp_path / ".site=beta.999999999.0a1b2c.tmp"
    (left / "networks").mkdir(parents=True)
    (left / "networks" / "part.parquet").write_bytes(b"x")
    assert remove_stray_files(tmp_path) == [left]
    assert not left.exists()
