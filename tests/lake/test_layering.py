"""The lake is storage only: it imports nothing of the client, the sync, the database or the sandbox."""

from __future__ import annotations

import ast
from pathlib import Path

import commerce_reports

PACKAGE = Path(commerce_reports.__file__).parent
FORBIDDEN = {
    "lake": ("client", "http", "sync", "db", "sandbox", "api", "charts", "widgets", "export"),
    "sync": ("db", "sandbox", "api", "charts", "widgets", "export"),
}


def imported(module: Path) -> set[str]:
    """Top-level toolkit packages or modules a file imports (relative imports resolved)."""
    names: set[str] = set()
    depth_of_file = len(module.relative_to(PACKAGE).parts) - 1
    for node in ast.walk(ast.parse(module.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                parts = module.relative_to(PACKAGE).parts[: depth_of_file - node.level + 1]
                target = [*parts, *(node.module or "").split(".")] if node.module else list(parts)
                if not target or target == [""]:
                    names.update(alias.name for alias in node.names)
                else:
                    names.add(target[0])
            elif node.module and node.module.startswith("commerce_reports."):
                names.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            names.update(a.name.split(".")[1] for a in node.names if a.name.startswith("commerce_reports."))
    return names


def test_the_lake_and_the_sync_import_only_what_sits_below_them() -> None:
    for package, forbidden in FORBIDDEN.items():
        for module in sorted((PACKAGE / package).glob("*.py")):
            wrong = imported(module) & set(forbidden)
            assert not wrong, f"{module.relative_to(PACKAGE)} imports {sorted(wrong)}"
    assert "client" in imported(PACKAGE / "sync" / "run.py")  # the check sees relative imports
