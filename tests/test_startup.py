"""Every command starts at once: light imports, and a Ctrl-C during start-up is a quiet exit 130."""

from __future__ import annotations

import atexit
import gc
import os
import re
import resource
import subprocess
import sys
from datetime import UTC, date, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any, NamedTuple

import pytest

import commerce_reports.api
from commerce_reports.api import status, status_rows
from commerce_reports.cli import MODULES, main
from commerce_reports.contract import PartitionKey
from commerce_reports.errors import ValidationError
from commerce_reports.lake.manifest import Manifest
from commerce_reports.lake.store import write_partition
from commerce_reports.params import Filters
from commerce_reports.parse import parse_transactions
from commerce_reports.parse.aggregates import parse_aggregate
from commerce_reports.syncing.status import COLUMNS, WINDOW_COLUMNS, describe_status
from tests.factories import body, nested, networks_body

# The data stack, and the HTTP client and sandbox server: loaded by the commands that use them only.
HEAVY = (
    "altair",
    "duckdb",
    "httpx",
    "nbconvert",
    "papermill",
    "polars",
    "pyarrow",
    "commerce_reports.client",
    "commerce_reports.sandbox.http",
)
# Standard modules `status` has no use for, each a few milliseconds of its start (logging loads with
# a first log line; statistics, secrets and calendar not at all), and the package's it does not run:
# the other commands' modules, the repairs and checks by content (a manifest to rebuild loads them),
# the loaders (Parquet reads).
UNUSED_BY_STATUS = (
    "logging",
    "statistics",
    "secrets",
    "calendar",
    *(f"commerce_reports.cli.{name}" for name in MODULES if name != "reports"),
    "commerce_reports.lake.repair",
    "commerce_reports.lake.checks",
    "commerce_reports.loaders",
)
# What `--help` does without: the command modules use them where a command runs.
UNUSED_BY_HELP = ("json", "contextlib")


_INTERRUPT_WHILE_IMPORTING = """
import sys

class Interrupt:
    def find_spec(self, name, path=None, target=None):
        if name == {module!r}:
            raise KeyboardInterrupt  # as if Ctrl-C arrived while this module loads
        return None

sys.meta_path.insert(0, Interrupt())
sys.argv = ["commerce-reports", "sync", "--plan"]
import runpy
runpy.run_module("commerce_reports", run_name="__main__")
"""


@pytest.mark.parametrize(
    "module", ["commerce_reports.cli", "commerce_reports.cli.reports", "commerce_reports.syncing.jobs"]
)
def test_ctrl_c_during_start_up_exits_130_without_a_traceback(module: str) -> None:
    code = _INTERRUPT_WHILE_IMPORTING.format(module=module)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 130, done.stderr
    assert "Traceback" not in done.stderr


def test_the_package_and_the_help_load_no_heavy_library() -> None:
    code = (
        "import sys, commerce_reports, commerce_reports.cli as cli\n"
        "cli.build_parser()\n"
        f"heavy = set({HEAVY + UNUSED_BY_HELP!r}) & set(sys.modules)\n"
        "print(sorted(heavy))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_what_judges_alerts_loads_no_chart_library() -> None:
    """The alerts, and the served dashboard's judge (a process started for each judgment), compare
    periods and explain drops without drawing: Altair (and the JSON-schema stack under it, seconds
    of CPU where JupyterLab's format checkers are installed) is left to what draws."""
    code = (
        "import sys, commerce_reports.alerting.check, commerce_reports.alerting.drivers\n"
        "import commerce_reports.serve.alerts\n"
        "print(sorted({'altair', 'jsonschema', 'panel'} & set(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


_STATUS_AND_WHAT_IT_LOADED = """
import sys
started = set(sys.modules)  # what the interpreter loaded before (a .pth file may load shutil)
from commerce_reports.cli import main

code = main(["status", "--windows", "--data-dir", sys.argv[1]])
print("loaded:", sorted(set(sys.argv[2].split(",")) & (set(sys.modules) - started)), file=sys.stderr)
sys.exit(code)
"""


def _small_lake(data_dir: Path) -> None:
    """The demo sites' manifests and files, written as a sync writes them (settled or not)."""
    day = date(2026, 3, 1)
    for site, days in (("alpha", 3), ("beta", 1)):
        for n in range(days):
            key = PartitionKey.transactions(day.replace(day=1 + n))
            fetched = datetime(2026, 3, 3, 8, 30, n, 250_000, UTC)  # days after Mar 1 had not settled
            same_day = {"updateDate": key.start.isoformat()}  # rows of the day asked
            rows = parse_transactions(body([nested(i, commission=same_day) for i in range(n + 1)]))
            written = write_partition(data_dir, site, key, rows, fetched)
            Manifest.record(data_dir, site, key, written, fetched, settled=False)
    key = PartitionKey.aggregate("networks", date(2026, 2, 1), Filters(), "month")
    table = parse_aggregate("networks", networks_body(), date(2026, 2, 1), date(2026, 3, 1))
    fetched = datetime(2026, 3, 4, tzinfo=UTC)
    Manifest.record(
        data_dir, "alpha", key, write_partition(data_dir, "alpha", key, table, fetched), fetched, True
    )


def test_status_prints_the_lake_without_loading_the_data_stack(tmp_path: Path) -> None:
    lake = tmp_path / "data"
    _small_lake(lake)
    command = [
        sys.executable,
        "-c",
        _STATUS_AND_WHAT_IT_LOADED,
        str(lake),
        ",".join(HEAVY + UNUSED_BY_STATUS),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "loaded: []" in done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"lake: {lake} ")
    assert lines[1].split() == list(COLUMNS)
    expected = [  # February's window is revisable (unsettled) until its horizon: 45 days after it ends
        ["alpha", "networks", "1", "1", "2026-02-01", "2026-02-28", "1", "2026-03-04", "00:00:00", "UTC"],
        ["alpha", "transactions", "3", "6", "2026-03-01", "2026-03-03", "2", "2026-03-03", "08:30:02", "UTC"],
        ["beta", "transactions", "1", "1", "2026-03-01", "2026-03-01", "0", "2026-03-03", "08:30:00", "UTC"],
    ]
    assert [line.split() for line in lines[2:5]] == expected
    assert lines[5].split() == list(WINDOW_COLUMNS)
    assert lines[6].split() == [
        *("alpha", "networks", "all", "month", "2026-02-01", "2026-03-01"),
        *("2026-03-04", "00:00:00", "UTC", "2026-04-15", "00:00:00", "UTC", "no"),
        *("no", "2026-03-12", "00:00:00", "UTC"),  # no change in the ledger since: due 8 days after its copy
    ]
    counted = r"\d+ partitions in range stored and current(, \d+ more stored outside it)?"
    assert re.fullmatch(rf"\d+ requests \({counted}\), ETA .*", lines[7])
    # the notebooks' function: the same rows as a polars frame, its columns and types unchanged
    frame = status(data_dir=lake)
    assert [str(t) for t in frame.dtypes] == [
        "String",
        "String",
        "UInt32",
        "Int64",
        "Date",
        "Date",
        "UInt32",
        "Datetime(time_unit='us', time_zone='UTC')",
        "String",  # the lake's folder: the frame names its lake
    ]
    assert frame["lake"].unique().to_list() == [str(lake)]
    shown = [
        [
            *map(str, row[:4]),
            row[4].isoformat(),
            row[5].isoformat(),
            str(row[6]),
            *f"{row[7]:%Y-%m-%d %H:%M:%S UTC}".split(),
        ]
        for row in frame.rows()
    ]
    assert shown == expected
    assert frame["last_fetched_at"][1] == datetime(2026, 3, 3, 8, 30, 2, 250_000, UTC)
    (tmp_path / "empty").mkdir()  # (one that is not there is a typo: refused)
    assert describe_status(status_rows(data_dir=tmp_path / "empty")).startswith("the lake is empty")
    with pytest.raises(ValidationError, match="status_rows"):
        describe_status(frame.rows())  # type: ignore[arg-type]


def test_a_command_starts_with_the_collector_off_and_leaves_it_as_it_found_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The garbage collector is off while a command loads its modules (their objects are no
    garbage), and through a light command's short run (`status`), which freezes what the process
    holds at its exit (the shutdown's collections pass over nothing); a command that may run long
    (`sync --plan` here, a sync) and `status --verify`, which reads every file, run with it on and
    leave the exit as it is. The caller finds the collector as it was: on after a run or a usage
    error, off if it was off."""
    lake = tmp_path / "data"
    _small_lake(lake)
    collecting: dict[str, list[bool]] = {}
    at_exit: list[object] = []
    monkeypatch.setattr(atexit, "register", at_exit.append)

    def recorded(name: str, result: Any = None) -> None:
        real = getattr(commerce_reports.api, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            collecting.setdefault(name, []).append(gc.isenabled())
            return real(*args, **kwargs) if result is None else result

        monkeypatch.setattr(commerce_reports.api, name, call)

    recorded("status_rows")
    recorded("plan_sync")
    # what verify checks by content is verify's own test: here, only when it runs
    recorded("verify", SimpleNamespace(summary=lambda: "verified", ok=True))
    assert gc.isenabled()
    assert main(["status", "--data-dir", str(lake)]) == 0
    assert collecting == {"status_rows": [False], "plan_sync": [False]} and gc.isenabled()
    assert at_exit == [gc.freeze]
    assert main(["status", "--verify", "--data-dir", str(lake)]) == 0
    assert collecting["verify"] == [True] and collecting["status_rows"][-1] and gc.isenabled()
    assert main(["sync", "--plan", "--data-dir", str(lake)]) == 0
    assert collecting["plan_sync"][-1] and gc.isenabled()
    assert at_exit == [gc.freeze]  # neither froze anything
    assert main(["status", "--data-dir", str(tmp_path / "none")]) == 2 and gc.isenabled()  # usage error
    gc.disable()
    try:
        assert main(["status", "--data-dir", str(lake)]) == 0
        assert main(["status", "--verify", "--data-dir", str(lake)]) == 0
        assert not gc.isenabled()
    finally:
        gc.enable()


# What a usage error is said before: the data stack, the notebook runner and kernel, the HTTP
# client, the dashboard's server (each a second or more to load on a busy machine).
BEFORE_ANY_OF = (*HEAVY, "ipykernel", "jupyter_client", "panel", "tornado", "pyspark", "commerce_reports.db")

_MISTAKE_AND_WHAT_IT_LOADED = """
import sys
from commerce_reports.cli import main

try:
    code = main(sys.argv[2:])
except SystemExit as exited:  # argparse's own checks
    code = exited.code
print("loaded:", sorted(set(sys.argv[1].split(",")) & set(sys.modules)), file=sys.stderr)
sys.exit(code)
"""

REPORT = str(Path(__file__).parents[1] / "notebooks" / "report.ipynb")
LAKE = "{lake}"  # the small lake the test writes
MISSING = "{tmp}/no/such"  # a folder whose parent does not exist either


class Mistake(NamedTuple):
    """A command line with one mistake, what its error line says, and its exit status; `loads`:
    what checking it needs (DuckDB's parser for a query), `env`: settings."""

    argv: list[str]
    said: str
    code: int = 2
    loads: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()


MISTAKES = [
    Mistake(["alerts", "--site", "gamma", "--data-dir", LAKE], "unknown site 'gamma'"),
    Mistake(["alerts", "--as-of", "2026-02-30", "--data-dir", LAKE], "not a real calendar day"),
    Mistake(["alerts", "--as-of", "2999-01-01", "--data-dir", LAKE], "--as-of: 2999-01-01 is after today ("),
    Mistake(["alerts", "--data-dir", MISSING], "there is no data folder at"),
    Mistake(["export", "--notebook", "nope.ipynb"], "nope.ipynb does not exist"),
    Mistake(["export", "--notebook", REPORT, "--param", "nope=1"], "'nope' is not a parameter"),
    Mistake(["export", "--notebook", REPORT, "--param", "start=2026-13-01"], "is not date"),
    Mistake(  # export has no --site: the message names the option the site came from
        ["export", "--notebook", REPORT, "--param", "site=gamma"],
        "error: --param site: unknown site 'gamma' (export ran nothing)",
    ),
    Mistake(["export", "--notebook", REPORT, "--email", "boss"], "'boss' is not an address"),
    Mistake(
        ["export", "--notebook", REPORT, "--email", "boss@example.org"],
        "COMMERCE_REPORTS_SMTP_URL: 'ftp://x' is not smtp://",
        env=(("COMMERCE_REPORTS_SMTP_URL", "ftp://x"),),
    ),
    Mistake(["export", "--notebook", REPORT, "--out", f"{MISSING}/reports"], "no/such does not exist"),
    Mistake(
        ["sql", "SELEC 1", "--data-dir", LAKE], "does not parse", loads=("commerce_reports.db", "duckdb")
    ),
    Mistake(
        ["sql", "SELECT 1", "--output", f"{MISSING}/x.xlsx", "--data-dir", LAKE], "no/such does not exist"
    ),
    Mistake(["check", "--site", "gamma"], "unknown site 'gamma'"),
    Mistake(["demo", "--reports", f"{MISSING}/reports"], "no/such does not exist"),
    Mistake(["demo"], "COMMERCE_REPORTS_PACE: 'fast'", env=(("COMMERCE_REPORTS_PACE", "fast"),)),
    Mistake(["serve", "--host", "bad host!", "--data-dir", LAKE], "is not an address or host name"),
    Mistake(["serve", "--host", "nosuchhost.invalid", "--port", "0", "--data-dir", LAKE], "does not resolve"),
    Mistake(["serve", "--allow-origin", "", "--data-dir", LAKE], "--allow-origin: '' is not an origin"),
    Mistake(["schedule", "add", "--print", "--sync-args", "--site gamma"], "unknown site 'gamma'"),
    Mistake(["deals", "create", f"{MISSING}.json", "--dry-run"], "cannot be read", code=4),  # deals' own
]


@pytest.mark.parametrize("mistake", MISTAKES, ids=[f"{m.argv[0]}: {m.said}" for m in MISTAKES])
def test_a_mistake_is_said_at_once_before_anything_heavy_loads(tmp_path: Path, mistake: Mistake) -> None:
    """Each argument a command can check is checked first: the mistake is one `error:` line (an
    unknown parameter lists the known ones below it), and the data stack, the kernel, the HTTP
    client and the dashboard's server were never loaded. The CPU time is bounded, not the wall
    time: it holds on a busy machine."""
    lake = tmp_path / "data"
    _small_lake(lake)
    (tmp_path / "commerce-reports.toml").write_text('data_dir = "data"\n')  # a project: schedule add
    argv = [word.format(lake=lake, tmp=tmp_path) for word in mistake.argv]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        [sys.executable, "-c", _MISTAKE_AND_WHAT_IT_LOADED, ",".join(BEFORE_ANY_OF), *argv],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **dict(mistake.env)},
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    *lines, loaded = done.stderr.splitlines()
    assert done.returncode == mistake.code, done.stderr
    assert loaded == f"loaded: {sorted(mistake.loads)}", done.stderr
    assert lines[0].count("error: ") == 1 and mistake.said in lines[0], done.stderr
    assert all(line.startswith("  ") for line in lines[1:]), done.stderr
    assert after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime < 3.0
    assert not (tmp_path / "no").exists()  # nothing was made where the mistake pointed
