"""Every test runs offline, in its own folder, with no configuration leaking in from the machine."""

from __future__ import annotations

import gc
import logging
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

_LOOPBACK = ("127.", "::1", "localhost")
_real_connect = socket.socket.connect


def _guarded_connect(self: socket.socket, address: Any) -> Any:
    host = address[0] if isinstance(address, tuple) else str(address)
    if self.family in (socket.AF_INET, socket.AF_INET6) and not str(host).startswith(_LOOPBACK):
        raise OSError(f"tests may not reach the network: connection to {host!r} blocked")
    return _real_connect(self, address)


# The modules holding the longest tests, the longest first (kernels, browsers, subprocesses, whole
# syncs: 5 to 35 s each on 2 cores). pytest-xdist hands tests out in collection order (after the
# xdist_group units, largest first), so these start early and a run ends on quick tests: no worker
# idles while the other finishes a long one.
SLOW_FIRST = (
    "tests/alerting/test_alerts.py",  # builds the alerts lake (180 days) that the next one reads too
    "tests/alerting/test_rules.py",  # one sandbox world in memory, a staged incident per rule (one worker)
    "tests/lake/test_revisions.py",
    "tests/lake/test_full_disk.py",  # two syncs in a mount namespace of their own, on a small tmpfs
    "tests/lake/test_integrity.py",
    "tests/test_wheel.py",
    "tests/notebooks/test_dashboard_lab.py",
    "tests/serve/test_served.py",  # a server process, Chromium and a sync (one module-wide server)
    "tests/export/test_report.py",
    "tests/export/test_schedule_run.py",  # a scheduled sync and report, run as cron runs them
    "tests/test_demo.py",
    "tests/db/test_incremental.py",
    "tests/export/test_export.py",
    "tests/lake/test_processes.py",
    "tests/notebooks/test_notebooks.py",
    "tests/db/test_access.py",
    "tests/db/test_read_only.py",
    "tests/db/test_sliced_build.py",
    "tests/db/test_consistency.py",
    "tests/lake/test_sync.py",
    "tests/test_cli_folders.py",
    "tests/db/test_safety.py",
    "tests/db/test_exports.py",
    "tests/test_fuzz.py",
    "tests/test_readme.py",
    "tests/charts/test_performance.py",
    "tests/charts/test_selection.py",
    "tests/db/test_catalog.py",
    "tests/db/test_figures.py",
    "tests/test_pace.py",
    "tests/lake/test_hostile_data.py",
    "tests/db/test_guard.py",
    "tests/test_hostile.py",
    "tests/lake/test_repair.py",
    "tests/lake/test_failures.py",
    "tests/serve/test_board.py",  # reads the charts' sandbox lake, and imports Panel
)


# Folders whose every test starts a kernel, a browser, Spark or a whole sandbox lake.
SLOW_FOLDERS = ("tests/spark/", "tests/notebooks/", "tests/export/", "tests/charts/")


def _slow_rank(item: pytest.Item) -> int:
    module = item.nodeid.split("::", 1)[0]
    return SLOW_FIRST.index(module) if module in SLOW_FIRST else len(SLOW_FIRST)


def _slow_path(relpath: str) -> bool:
    return relpath in SLOW_FIRST or relpath.startswith(SLOW_FOLDERS)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Under `-m "not slow"` (`make test-fast`) a slow module is not even imported: every test of
    it would be deselected, and importing them (nbconvert, openpyxl, Panel, Spark's helpers...)
    cost each worker about a second of its collection."""
    if config.getoption("markexpr", "").strip() != "not slow":
        return None
    if not collection_path.is_relative_to(config.rootpath):
        return None
    relpath = collection_path.relative_to(config.rootpath).as_posix()
    return True if _slow_path(relpath + ("/" if collection_path.is_dir() else "")) else None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Run the slow modules first (`SLOW_FIRST`; a stable sort keeps each module's own order), mark
    them and the `SLOW_FOLDERS` as `slow` (what `make test-fast` leaves out), and
    keep `xdist_group` working under `--dist loadgroup`: pytest-xdist names a test's group by
    appending `@<group>` to `item._nodeid`, which pytest 9.2's structured node ids no longer read,
    so every grouped test was scheduled on its own (pytest-dev/pytest-xdist#1386). Give the id
    its suffix the way pytest 9.2 reads it; older pytest has no structured ids and xdist's works."""
    items.sort(key=_slow_rank)
    for item in items:  # `make test-fast` (-m "not slow") leaves these out
        if _slow_path(item.nodeid.split("::", 1)[0]):
            item.add_marker(pytest.mark.slow)
    if not getattr(config.option, "loadgroup", False):  # set by xdist on its workers
        return
    try:
        from _pytest.nodeid import NodeId
    except ImportError:
        return
    for item in items:
        groups = {
            str(m.args[0] if m.args else m.kwargs.get("name", "default"))
            for m in item.iter_markers("xdist_group")
        }
        suffix = "@" + "_".join(sorted(groups))
        if groups and not item.nodeid.endswith(suffix):
            item._id = NodeId.parse(item.nodeid + suffix)


def pytest_unconfigure(config: pytest.Config) -> None:
    """The run is over: hand every object to the collector's permanent generation, so that the
    interpreter's exit does not walk a whole test run's heap again (0.6-1.6 s for each process, an
    xdist worker each; what the CLI does at its own exit)."""
    gc.freeze()


@pytest.fixture(autouse=True)
def _offline_and_isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """Block non-loopback connections; clear COMMERCE_REPORTS_*; a private cwd, and private user
    folders (the pace state in the cache; the default lake in the data home: a user's own lake
    must not be what a test finds)."""
    monkeypatch.setattr(socket.socket, "connect", _guarded_connect)
    for name in list(os.environ):
        if name.startswith("COMMERCE_REPORTS_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data-home"))
    monkeypatch.chdir(tmp_path)
    yield


class FullRebuildFallbacks(logging.Handler):
    """Collects the log records of refreshes that fell back to a full rebuild (`db.rollups.FALLBACK`)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.found: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if getattr(record, "full_rebuild_fallback", False):
            self.found.append(record.getMessage())


@pytest.fixture(autouse=True)
def full_rebuild_fallbacks(request: pytest.FixtureRequest) -> Iterator[FullRebuildFallbacks]:
    """A refresh whose update failed rebuilds the rollups whole: right for a user (the views stay
    true), but in a test it hides the failure. Fail the test that caused one, unless it is marked
    `expects_full_rebuild` (it may then read what was found)."""
    handler = FullRebuildFallbacks()
    logger = logging.getLogger("commerce_reports.db.rollups")
    logger.addHandler(handler)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
    if handler.found and request.node.get_closest_marker("expects_full_rebuild") is None:
        pytest.fail(
            "a refresh fell back to a full rebuild: "
            + "; ".join(handler.found[:3])
            + " (mark the test @pytest.mark.expects_full_rebuild if it means to)",
            pytrace=False,
        )


@pytest.fixture(scope="session")
def _vega_bundle_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from commerce_reports.charts import offline

    cache = tmp_path_factory.mktemp("vega-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(cache))
        offline._bundle.cache_clear()
        offline.vega_bundle_html()
    return cache / "commerce-reports" / "vega"


@pytest.fixture
def kept_vega_bundle(_vega_bundle_folder: Path) -> None:
    """This test's user cache holding the Vega bundle, as the user's first chart leaves it: the
    test's kernels and exports read it rather than bundle it again (a second each;
    `tests/charts/test_offline.py` covers the bundling)."""
    folder = Path(os.environ["XDG_CACHE_HOME"]) / "commerce-reports"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "vega").symlink_to(_vega_bundle_folder, target_is_directory=True)


class FakeClock:
    """Wall-clock time that only moves when someone sleeps: tests never wait for real."""

    def __init__(self, start: float = 1_800_000_000.0) -> None:
        self.now = start
        self.sleeps: list[float] = []

    def time(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += max(0.0, seconds)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()
