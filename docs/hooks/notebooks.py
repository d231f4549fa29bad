"""mkdocs hook: the notebooks the package ships (src/commerce_reports/notebooks/, the one copy)
become pages under notebooks/, without a copy in docs/. Runs before mkdocs-jupyter turns them into
pages (a higher priority than its `on_files`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "commerce_reports"


@event_priority(100)
def on_files(files: Files, config: Any) -> Files:
    """mkdocs event: add `notebooks/<name>.ipynb` for each packaged notebook."""
    for notebook in sorted((PACKAGE / "notebooks").glob("*.ipynb")):
        files.append(
            File(
                f"notebooks/{notebook.name}",
                src_dir=str(PACKAGE),
                dest_dir=config["site_dir"],
                use_directory_urls=config["use_directory_urls"],
            )
        )
    return files
