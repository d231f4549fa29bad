"""One SparkSession (`local[2]`) per test session, and lakes synced from the sandbox once per dialect."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from commerce_reports.api import SyncOptions, sync
from commerce_reports.config import DIALECTS
from commerce_reports.embedded import sandbox_sites
from commerce_reports.sandbox import SandboxConfig, run_sandbox

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
DAYS = 60
COUNTRIES = ("US", "GB")


@dataclass(frozen=True)
class Lake:
    dialect: str
    data_dir: Path


def java_runtime() -> str | None:
    """The `java` that Spark would start, if any (JAVA_HOME first, as Spark looks)."""
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").is_file():
        return str(Path(home) / "bin" / "java")
    return shutil.which("java")


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A local Spark with 2 cores, small shuffles and no UI: quick to start, quick on small lakes."""
    if java_runtime() is None:
        pytest.skip(
            "Spark needs a Java runtime and none was found (no JAVA_HOME, no `java` on PATH): "
            "install Debian's openjdk-17-jre-headless, as .ci/run does"
        )
    from pyspark.sql import SparkSession

    with pytest.MonkeyPatch.context() as env:
        env.setenv("SPARK_LOCAL_IP", "127.0.0.1")  # the JVM binds and names itself on loopback only
        session = (
            SparkSession.builder.master("local[2]")
            .appName("commerce-reports-tests")
            # a short-lived driver: the C1 compiler alone halves the JVM's CPU time over the tests
            .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.shuffle.partitions", "2")
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.sql.warehouse.dir", str(tmp_path_factory.mktemp("spark-warehouse")))
            .getOrCreate()
        )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def _synced_lake(dialect: str, tmp_path_factory: pytest.TempPathFactory) -> Lake:
    """Two sites, 60 days of the ledger (returns and adjustments included) and month slices of
    both aggregates (unfiltered, each device, two countries), synced over loopback from a sandbox
    speaking `dialect`, with the lake on the sandbox's clock."""
    data_dir = tmp_path_factory.mktemp(f"lake-{dialect}")
    config = SandboxConfig(
        now=NOW, first_day=date(2025, 10, 1), pace=0.0, transactions_per_day=30, dialect=dialect
    )
    with pytest.MonkeyPatch.context() as env:
        for name in [n for n in os.environ if n.startswith("COMMERCE_REPORTS_")]:
            env.delenv(name)
        env.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
        with run_sandbox(config) as running:
            sync(
                NOW.date() - timedelta(days=DAYS - 1),
                sites=sandbox_sites(running),
                countries=COUNTRIES,
                data_dir=data_dir,
                options=SyncOptions(now=lambda: running.sandbox.now, pace=0, progress=False),
            )
    return Lake(dialect, data_dir)


@pytest.fixture(scope="session")
def synced_lakes(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Lake]:
    """The lake of a dialect, synced the first time it is asked for and kept for the session
    (whatever order the tests run in: a parametrised session fixture would rebuild on a switch)."""
    built: dict[str, Lake] = {}

    def lake_of(dialect: str) -> Lake:
        if dialect not in built:
            built[dialect] = _synced_lake(dialect, tmp_path_factory)
        return built[dialect]

    return lake_of


@pytest.fixture(params=DIALECTS)
def lake(request: pytest.FixtureRequest, synced_lakes: Callable[[str], Lake]) -> Lake:
    """The synced lake of each dialect in turn."""
    return synced_lakes(request.param)
