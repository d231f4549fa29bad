"""The guided tour: everything the toolkit does, against the sandbox, in one call."""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable
from contextlib import ExitStack
from datetime import timedelta
from pathlib import Path
from typing import Any

from .activity import Step
from .api import SyncOptions, status, sync
from .config import Dialect, Settings, current_settings
from .db import CATALOG_FILE, connect
from .embedded import sandbox_sites
from .export import export_notebook
from .locate import project_root
from .project import notebook_path
from .sandbox import FAST_PACE, SandboxConfig, run_sandbox
from .sites import configured_sites

__all__ = ["run_demo"]

DEMO_COUNTRIES = ("US", "GB", "DE", "FR", "CA")


def run_demo(
    days: int = 90,
    data_dir: Path | None = None,
    reports: Path | None = None,
    say: Callable[[str], None] = print,
    dialect: Dialect = "contract",
) -> dict[str, Any]:
    """The tour: start a sandbox with two sites, sync `days` days of both into a lake, write the
    DuckDB catalog, show two views, export the report notebook as self-contained HTML.

    The lake goes to `data_dir`, by default the project's lake (see `commerce_reports.locate`), so
    that notebooks, `commerce-reports sql` and the DuckDB CLI read what the demo stored; when real
    sites are configured, to a `demo-data` folder beside it instead, never mixed with real data.
    The report goes to `reports` (default: `<data dir>/reports`, as exports put it). Returns the
    headline numbers.
    """
    settings = current_settings()
    folder = _demo_lake(data_dir, settings, say)
    with ExitStack() as stack:
        running = stack.enter_context(run_sandbox(SandboxConfig(pace=FAST_PACE, dialect=dialect)))
        profiles = sandbox_sites(running)
        say(f"sandbox at {running.base_url}: sites {', '.join(p.name for p in profiles)}, pace {FAST_PACE} s")
        say(f"syncing {days} days into {folder} ...")
        start = running.sandbox.now.date() - timedelta(days=days - 1)
        started = time.perf_counter()
        result = sync(
            start,
            sites=profiles,
            countries=DEMO_COUNTRIES,
            data_dir=folder,
            options=SyncOptions(say=say, progress=False),
        )
        say(f"{result.summary()} in {time.perf_counter() - started:.1f} s")
        stored = status(sites=profiles, data_dir=folder)
        for row in stored.iter_rows(named=True):
            say(
                f"  {row['site']:<6} {row['dataset']:<13} {row['partitions']:>4} partitions stored "
                f"{row['rows']:>8,} rows  {row['first_day']} .. {row['last_day']}  "
                f"({row['unsettled']} unsettled)"
            )
        quiet = SyncOptions(say=lambda _: None, progress=False)
        again = sync(start, sites=profiles, countries=DEMO_COUNTRIES, data_dir=folder, options=quiet)
        say(f"a second sync right after: {len(again.plan.requests)} requests")
        _show_views(folder, say)
        report = _export_report(folder, reports or folder / "reports", say)
        _say_what_next(folder, settings, say)
        return {
            "stored": len(result.stored),
            "rows": result.rows,
            "failed": len(result.failed),
            "second_sync_requests": len(again.plan.requests),
            "data_dir": folder,
            "report": report,
        }
    raise AssertionError("unreachable")  # ExitStack does not swallow exceptions


def _demo_lake(data_dir: Path | None, settings: Settings, say: Callable[[str], None]) -> Path:
    if data_dir is not None:
        return Path(data_dir)
    if configured_sites(settings):
        folder = settings.data_dir.parent / "demo-data"
        say(f"real sites are configured: the demo's sandbox data goes to {folder}, not to your lake")
        return folder
    say(f"the lake: {settings.lake}")
    return settings.data_dir


def _say_what_next(folder: Path, settings: Settings, say: Callable[[str], None]) -> None:
    """What to run next, as lines a shell takes as they are (the folder quoted where it must be)."""
    env = "" if folder == settings.data_dir else f"COMMERCE_REPORTS_DATA_DIR={shlex.quote(str(folder))} "
    command = _as_typed()
    say("the lake stays for you to query:")
    say(f'  {env}{command} sql "SELECT * FROM site_performance ORDER BY window_start DESC"')
    catalog = shlex.quote(str(folder / CATALOG_FILE))
    say(f"  duckdb -readonly {catalog}   (the DuckDB CLI: pip install duckdb-cli)")
    notebook = notebook_path("01_getting_started.ipynb")
    root = project_root()
    if root is not None and root in notebook.parents:
        say(f"  or open {notebook} in Jupyter: it reads the same lake")
    else:
        say(f"  or `{command} init my-reports` for a project with the notebooks, then `cd my-reports`")


def _as_typed() -> str:
    """`commerce-reports` as a shell here finds it: its name when the PATH leads to this one (an
    activated venv, a pip install), else its path (`make demo` in a clone: .venv/bin/...)."""
    import os
    import shutil
    import sys

    found = shutil.which("commerce-reports")
    running = os.path.realpath(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    if not running.endswith("commerce-reports") or (found and os.path.realpath(found) == running):
        return "commerce-reports"  # (or run otherwise: `python -m`, a notebook, a test)
    return shlex.quote(os.path.relpath(sys.argv[0]) if not os.path.isabs(sys.argv[0]) else sys.argv[0])


def _show_views(folder: Path, say: Callable[[str], None]) -> None:
    """A few lines of two performance views, as an analyst would query them."""
    con = connect(folder)
    try:
        month = con.execute("SELECT max(window_start) FROM network_performance WHERE clicks > 0").fetchone()
        if month is None or month[0] is None:
            return
        say(f"network_performance, month of {month[0]} (EPC and clicks from the aggregates):")
        rows = con.execute(
            "SELECT site, network, clicks, epc, revenue, aggregate_revenue, revenue_gap "
            "FROM network_performance WHERE window_start = ? ORDER BY revenue DESC LIMIT 5",
            [month[0]],
        ).fetchall()
        for site, network, clicks, epc, revenue, aggregate, gap in rows:
            say(
                f"  {site:<6} {network:<22} clicks {clicks or 0:>7,}  EPC {epc or 0:6.3f}  "
                f"revenue {revenue:>10,.2f}  aggregate {aggregate or 0:>10,.2f}  gap {gap or 0:>9,.2f}"
            )
        say("country_performance, same month:")
        rows = con.execute(
            "SELECT country, sum(revenue), sum(transactions), sum(clicks), sum(aggregate_revenue) / "
            "nullif(sum(clicks), 0) FROM country_performance WHERE window_start = ? GROUP BY country "
            "ORDER BY 2 DESC LIMIT 5",
            [month[0]],
        ).fetchall()
        for country, revenue, orders, clicks, epc in rows:
            say(
                f"  {country or '??':<4} revenue {revenue:>10,.2f}  orders {orders:>6,}  clicks "
                f"{clicks or 0:>7,}  EPC {epc or 0:6.3f}"
            )
    finally:
        con.close()


def _export_report(folder: Path, out_dir: Path, say: Callable[[str], None]) -> Path:
    """The report notebook (the project's copy, else the package's), run on both sites for the last
    whole week against the week before."""
    notebook = notebook_path("report.ipynb")
    with Step(f"exporting {notebook} (papermill, a real kernel)", say=say):
        result = export_notebook(
            notebook, out_dir, {"sync": False}, environment={"COMMERCE_REPORTS_DATA_DIR": str(folder)}
        )
    say(f"report: {result.html}")
    return result.html
