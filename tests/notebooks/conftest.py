"""The notebook lakes (see `tests.lakes`): synced up to today, like the embedded sandbox a notebook's
kernel starts, so the notebooks' own sync finds nothing to fetch; one per dialect, the same world.
`in_the_lake` and `in_the_published_lake` point every process started by the test (kernels
included) at one of them, through the environment only."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.lakes import DAYS
from tests.lakes import notebook_lake as notebook_lake_of

__all__ = [
    "DAYS",
    "in_the_lake",
    "in_the_published_lake",
    "notebook_lake",
    "published_notebook_lake",
    "vega_bundle_kept",
]


@pytest.fixture(autouse=True)
def vega_bundle_kept(kept_vega_bundle: None) -> None:
    """Kernels and exports find the Vega bundle in the user's cache (see `kept_vega_bundle`)."""


@pytest.fixture(scope="session")
def notebook_lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return notebook_lake_of("contract", tmp_path_factory)


@pytest.fixture(scope="session")
def published_notebook_lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return notebook_lake_of("published", tmp_path_factory)


@pytest.fixture
def in_the_lake(notebook_lake: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("COMMERCE_REPORTS_DATA_DIR", str(notebook_lake))
    return notebook_lake


@pytest.fixture
def in_the_published_lake(published_notebook_lake: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("COMMERCE_REPORTS_DATA_DIR", str(published_notebook_lake))
    return published_notebook_lake
