"""The house's flow goes one way: an import that runs against it fails here, naming both ends.

    errors, secret, money -> endpoints (the declaration) -> config, locate, files, params
    -> contract, pace -> http -> client -> parse -> lake (storage only) -> sync -> db -> charts
    -> alerting -> report, widgets, export; api on top; sandbox beside (sharing nothing with the
    client but the declaration of the endpoints and the error types); deals on their own.

Every import counts, `if TYPE_CHECKING:` and function-level ones included: an arrow is an arrow.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).parents[1] / "src" / "commerce_reports"

# The parts of the house, as module prefixes (first match wins).
BOTTOM = (
    "redaction",
    "errors",
    "secret",
    "money",
    "_version",
    "_lazy",
    "activity",
    "interrupts",
    "_signatures",
    "waits",
    "endpoints",
    "settings",
    "config",
    "locate",
    "files",
    "params",
    "contract",
    "pace",
)
ENTRY = (
    "api",
    "checkup",
    "config_list",
    "loaders",
    "status",
    "embedded",
    "demo",
    "cli",
    "__init__",
    "__main__",
)
PRESENTATION = ("charts", "alerting", "report", "widgets", "export", "serve")
HIGH = ("db", *PRESENTATION, "spark", *ENTRY)

# For each part: the parts it must never import.
FORBIDDEN: dict[str, tuple[str, ...]] = {
    **{
        name: ("http", "client", "parse", "lake", "syncing", "sites", "sandbox", "deals", *HIGH)
        for name in BOTTOM
    },
    "http": ("client", "parse", "lake", "syncing", "sites", "sandbox", "deals", *HIGH),
    # a project folder's layout and the shipped notebooks: files only, below every entry point
    "project": ("http", "client", "parse", "lake", "syncing", "sites", "sandbox", "deals", *HIGH),
    "parse": ("http", "client", "lake", "syncing", "sites", "sandbox", "deals", *HIGH),
    "client": ("lake", "syncing", "sites", "sandbox", "deals", *HIGH),
    "sites": ("http", "client", "parse", "lake", "syncing", "sandbox", "deals", *HIGH),
    "lake": ("http", "client", "parse", "syncing", "sandbox", "deals", *HIGH),
    "syncing": ("sandbox", "deals", *HIGH),
    "db": ("http", "client", "parse", "syncing", "sandbox", "deals", *PRESENTATION, *ENTRY),
    "spark": ("http", "client", "parse", "syncing", "sandbox", "deals", *PRESENTATION, *ENTRY),
    "charts": (
        "http",
        "client",
        "parse",
        "syncing",
        "sandbox",
        "deals",
        "alerting",
        "report",
        "widgets",
        "export",
        "serve",
        *ENTRY,
    ),
    # alerting reads the views (and the lake's manifests for its health), above the charts' frames
    "alerting": (
        "http",
        "client",
        "parse",
        "syncing",
        "sandbox",
        "deals",
        "report",
        "widgets",
        "export",
        "serve",
        *ENTRY,
    ),
    # the report's sections: charts, comparisons and alerts as HTML; `export` reads their parts
    "report": ("http", "client", "parse", "syncing", "sandbox", "deals", "widgets", "serve", *ENTRY),
    "widgets": ("http", "client", "parse", "sandbox", "deals", "alerting", "report", "export", "serve"),
    "export": (
        "http",
        "client",
        "parse",
        "syncing",
        "sandbox",
        "deals",
        "alerting",
        "report",
        "widgets",
        "serve",
        *ENTRY,
    ),
    # the served dashboard (Panel): the views, charts, comparisons, the report's tables and alerts
    "serve": ("http", "client", "parse", "syncing", "sandbox", "deals", "widgets", "export", *ENTRY),
    # The sandbox reads the declaration of the endpoints and raises the toolkit's errors (and its face
    # loads lazily, as every package's); nothing of the client side (its validation, settings, lake
    # contract) may leak into what it serves.
    "sandbox": (
        *(name for name in BOTTOM if name not in ("errors", "endpoints", "_lazy")),
        *("http", "client", "parse", "lake", "syncing", "sites", "deals", *HIGH),
    ),
    "deals": ("client", "parse", "lake", "syncing", "sites", "sandbox", *HIGH),
}


# The ground floor in order: each of these may import only those before it (so no loop can form
# among them, as errors <-> secret once did through a lazy import).
GROUND = ("redaction", "errors", "secret")

# The declaration is data on the ground floor: it reads only the error types.
FORBIDDEN["endpoints"] = (
    *(name for name in BOTTOM if name not in ("errors", "endpoints")),
    *FORBIDDEN["errors"],
)

# The one bridge between parts: the deals sandbox runs on the loopback server both sandboxes share.
BRIDGES = {("deals.sandbox", "sandbox.http")}


def _part(module: str) -> str:
    """`lake.store` -> `lake`; a top-level module is its own part."""
    return module.split(".")[0]


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, imported module relative to the package) for every import of the package in `path`."""
    module = path.relative_to(PACKAGE).with_suffix("").as_posix().replace("/", ".")
    package = module.split(".")[:-1]
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)] if node.level > 1 else package
                target = ".".join([*base, *([node.module] if node.module else [])])
                names = [target] if node.module else [f"{target}.{a.name}".strip(".") for a in node.names]
                found += [(node.lineno, n) for n in names]
            elif node.module and node.module.startswith("commerce_reports"):
                found.append((node.lineno, node.module.removeprefix("commerce_reports").strip(".")))
        elif isinstance(node, ast.Import):
            found += [
                (node.lineno, a.name.removeprefix("commerce_reports").strip("."))
                for a in node.names
                if a.name.startswith("commerce_reports")
            ]
    return [(line, name) for line, name in found if name]


def _violations() -> list[str]:
    problems = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).with_suffix("").as_posix().replace("/", ".")
        forbidden = FORBIDDEN.get(_part(module), ())
        for line, target in _imports(path):
            if any(module.startswith(source) and target == bridge for source, bridge in BRIDGES):
                continue
            if _part(target) in forbidden and _part(target) != _part(module):
                problems.append(f"{path.relative_to(PACKAGE.parent)}:{line} imports {target}")
    return problems


def test_every_import_runs_with_the_flow() -> None:
    assert _violations() == []


def _fake_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: dict[str, str]) -> None:
    """A package of `files` (path below it -> source) that the checks read instead of the real one."""
    fake = tmp_path / "commerce_reports"
    for name, source in files.items():
        (fake / name).parent.mkdir(parents=True, exist_ok=True)
        (fake / name).write_text(source)
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", fake)


def test_the_check_sees_a_wrong_arrow(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = {
        "lake/bad.py": "from ..sandbox import run_sandbox\nfrom ..contract import PART_FILE\n",
        "db.py": "from .parse import parse_transactions\n",
        "sandbox/leak.py": "from ..endpoints import ENDPOINTS\nfrom ..params import Filters\n",
        "endpoints.py": "from .errors import ValidationError\nfrom .config import DIALECTS\n",
    }
    _fake_package(tmp_path, monkeypatch, files)
    assert sorted(_violations()) == [
        "commerce_reports/db.py:1 imports parse",
        "commerce_reports/endpoints.py:2 imports config",
        "commerce_reports/lake/bad.py:1 imports sandbox",
        "commerce_reports/sandbox/leak.py:2 imports params",
    ]


def test_the_check_sees_a_circle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = {
        "errors.py": "from .secret import Secret\n",
        "secret.py": "def f():\n    from .errors import ConfigurationError\n",
    }
    _fake_package(tmp_path, monkeypatch, files)
    with pytest.raises(AssertionError, match="errors"):
        test_no_module_imports_itself_through_others()
    with pytest.raises(AssertionError, match="secret"):
        test_the_ground_floor_imports_only_what_lies_below()


def test_only_one_place_replaces_files() -> None:
    """Every write goes through files.save_atomic, the one caller of os.replace."""
    callers = [p.name for p in PACKAGE.rglob("*.py") if "os.replace(" in p.read_text()]
    assert callers == ["files.py"]


def test_only_one_place_says_how_parquet_files_are_read() -> None:
    """Every DuckDB read of Parquet files goes through `db/sources.py`: the lake's files with their
    hive keys typed (`read_sql`), stored files with none (`read_stored`). A `read_parquet` written
    elsewhere would let DuckDB type a `site=` folder by its look (`site=epoch/`: a date)."""
    callers = [
        p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py") if "read_parquet(" in p.read_text()
    ]
    assert callers == ["db/sources.py"]


def test_the_checks_see_a_second_writer_and_a_second_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = {
        "files.py": "import os\nos.replace('a', 'b')\n",
        "db/sources.py": "SQL = 'SELECT * FROM read_parquet([])'\n",
        "db/build.py": "import os\nos.replace('c', 'd')\nSQL = 'read_parquet(x)'\n",
    }
    _fake_package(tmp_path, monkeypatch, files)
    with pytest.raises(AssertionError, match=r"build\.py"):
        test_only_one_place_replaces_files()
    with pytest.raises(AssertionError, match=r"db/build\.py"):
        test_only_one_place_says_how_parquet_files_are_read()


def test_the_ground_floor_imports_only_what_lies_below() -> None:
    for position, name in enumerate(GROUND):
        allowed = set(GROUND[:position])
        path = PACKAGE / f"{name}.py"
        imported = {_part(target) for _, target in _imports(path)} if path.exists() else set()
        assert imported <= allowed, f"{name} imports {sorted(imported - allowed)}"


def test_no_module_imports_itself_through_others() -> None:
    """No circle of imports between the package's modules (a package's own `__init__` aside: it
    only hands its modules' names on)."""
    graph: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        module = path.relative_to(PACKAGE).with_suffix("").as_posix().replace("/", ".")
        graph[module] = {target for _, target in _imports(path)}
    modules = set(graph)
    for module, targets in graph.items():
        graph[module] = {_module_of(t, modules) for t in targets} - {None, module}  # type: ignore[arg-type]
    circles = [sorted(c) for c in _strongly_connected(graph) if len(c) > 1]
    assert circles == []


def _module_of(target: str, modules: set[str]) -> str | None:
    """The module an import names (`db.views.View` -> `db.views`); a package's face is left out."""
    while target and target not in modules:
        target = target.rpartition(".")[0]
    return None if not target or target.endswith("__init__") or f"{target}.__init__" in modules else target


def _strongly_connected(graph: dict[str, set[str]]) -> list[set[str]]:
    """Tarjan's strongly connected components of `graph`."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    components: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                component.add(member)
                if member == node:
                    break
            components.append(component)

    for node in graph:
        if node not in index:
            visit(node)
    return components


# Who may resolve settings: `Settings.from_env` (and the `.env` reader, `environment`) only inside
# config, which keeps the process's settings; `current_settings` only at the entry points, which hand
# what it gives down. The db's public functions are entry points when called without a folder; the
# export runner guards the secrets of the settings the kernel will see. The deals wing is handed
# its settings too (`cr.open_deals_client()`, the `deals` command). `current_sources` (what the
# settings are read from, unchecked) is for `config list` and the commands that say where a
# setting came from (`schedule` keeps what the environment alone sets).
SETTINGS_READERS = {
    "Settings.from_env": ("config",),
    "environment": ("config",),
    "current_sources": ("config", "config_list", "cli"),
    "current_settings": (
        "config",
        "api",
        "loaders",
        "checkup",
        "demo",
        "cli",
        "db.sources",
        "export.notebook",
        "export.formats",  # `cr.export`: the currency of a workbook's money when not handed one
        # the notebooks' helpers: a chart's currency and the alerts' thresholds when not handed them
        "charts.style",
        "alerting.check",
    ),
}


def _settings_reads() -> list[str]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).with_suffix("").as_posix().replace("/", ".")
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = (
                func.id
                if isinstance(func, ast.Name)
                else func.attr
                if isinstance(func, ast.Attribute)
                else ""
            )
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
                name = f"{func.value.id}.{func.attr}" if func.attr == "from_env" else func.attr
            allowed = SETTINGS_READERS.get(name)
            if allowed is not None and not any(module == a or module.startswith(f"{a}.") for a in allowed):
                found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno} calls {name}")
    return found


def test_settings_are_resolved_at_the_entry_points_only() -> None:
    assert _settings_reads() == []


def test_the_settings_check_sees_a_read_below_the_entry_points(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = {
        "client.py": "settings = Settings.from_env()\n",
        "syncing/jobs.py": "from .. import config\npace = config.current_settings().pace\n",
        "api.py": "from .config import current_settings\nsettings = current_settings()\n",
    }
    _fake_package(tmp_path, monkeypatch, files)
    assert _settings_reads() == [
        "commerce_reports/client.py:1 calls Settings.from_env",
        "commerce_reports/syncing/jobs.py:2 calls current_settings",
    ]
