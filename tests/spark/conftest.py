"""One SparkSession (`local[2]`) per test session, and a lake synced from the sandbox once per test run."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.lakes import sandbox_lake, shared

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
DAYS = 60
FIRST_DAY = date(2025, 10, 1)  # the sandbox's history begins here
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
            # a short-lived driver: the C1 compiler alone halves the JVM's CPU time over the tests; it
            # also shrinks the code cache to 48 MB, which the tests' generated code can fill ("Out of
            # space in CodeCache for adapters"): the default size given back
            .config(
                "spark.driver.extraJavaOptions",
                "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m -XX:+UseSerialGC",
            )
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


@pytest.fixture(scope="session")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Lake:
    """Two sites, 60 days of the ledger (returns and adjustments included) and month slices of
    both aggregates (unfiltered, each device, two countries), synced over loopback from a sandbox
    speaking the contract dialect, with the lake on the sandbox's clock. One dialect is enough
    here: tests/charts/test_published.py shows a lake synced in the published dialect holds the
    same rows, and Spark reads the stored files, not the wire."""
    data_dir = shared(
        "spark-lake",
        tmp_path_factory,
        lambda folder: sandbox_lake(folder, now=NOW, days=DAYS, countries=COUNTRIES, first_day=FIRST_DAY),
    )
    return Lake("contract", data_dir)
