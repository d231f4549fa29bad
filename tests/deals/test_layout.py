"""The deal wing stands on its own (issue 10), checked on the source's imports:

- `deals/` takes from the rest of the toolkit only the HTTP layer, secret handling, the error
  tree's roots, settings (`config`: `Limits`, URL check; it is handed the variables, and never
  reads the environment), the version, and `activity` (a slow wait of a public function says
  itself there, in a notebook as on the command line);
- its sandbox takes only the loopback server (`sandbox.http`) and the error tree, and nothing of
  the deal client: it is written from the contract alone;
- outside `deals/`, only the CLI and `cr.open_deals_client()` (`api`) import it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import commerce_reports

PACKAGE = Path(commerce_reports.__file__).parent
WING_MAY_USE = {"http", "secret", "redaction", "errors", "config", "_version", "_lazy", "activity"}
SANDBOX_MAY_USE = {"sandbox.http", "errors"}
MAY_USE_THE_WING = {"cli.deals", "cli.sandbox", "api"}


def _module(path: Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> Iterator[str]:
    """Every toolkit module `path` imports, relative to the package (`deals.errors`, `http`)."""
    module = _module(path)
    package = [part for part in module.split(".") if part]
    if path.name != "__init__.py":
        package = package[:-1]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            candidates = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                prefix = ".".join(["commerce_reports", *base, *([node.module] if node.module else [])])
            else:
                prefix = node.module or ""
            candidates = [prefix, *(f"{prefix}.{alias.name}" for alias in node.names)]
        else:
            continue
        for name in candidates:
            inner = name.removeprefix("commerce_reports.")
            if name.startswith("commerce_reports.") and _is_module(inner):
                yield inner


def _is_module(name: str) -> bool:
    target = PACKAGE.joinpath(*name.split("."))
    return target.with_suffix(".py").is_file() or (target / "__init__.py").is_file()


def _within(name: str, roots: set[str]) -> bool:
    return any(name == root or name.startswith(f"{root}.") for root in roots)


def test_the_deal_wing_uses_only_the_shared_layers() -> None:
    wing = [p for p in (PACKAGE / "deals").rglob("*.py") if "sandbox" not in p.parts]
    assert len(wing) >= 8
    stray = {
        (_module(p), name)
        for p in wing
        for name in _imports(p)
        if not _within(name, {"deals", *WING_MAY_USE}) or _within(name, {"deals.sandbox"})
    }
    assert stray == set()


def test_the_deals_sandbox_shares_nothing_with_the_client() -> None:
    sandbox = list((PACKAGE / "deals" / "sandbox").rglob("*.py"))
    assert len(sandbox) >= 6
    stray = {
        (_module(p), name)
        for p in sandbox
        for name in _imports(p)
        if not _within(name, {"deals.sandbox", *SANDBOX_MAY_USE})
    }
    assert stray == set()


def test_nothing_outside_the_wing_but_the_cli_imports_it() -> None:
    outside = [p for p in PACKAGE.rglob("*.py") if "deals" not in p.relative_to(PACKAGE).parts[:1]]
    users = {_module(p) for p in outside for name in _imports(p) if _within(name, {"deals"})}
    assert users <= MAY_USE_THE_WING
