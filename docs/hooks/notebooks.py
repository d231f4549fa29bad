"""mkdocs hook: the notebooks (the repository's notebooks/, the one copy) become pages under
notebooks/, with their outputs: each is executed at build time against the embedded sandbox (no key
is configured for a build), as `commerce-reports export` runs a notebook, into a lake of the
build's own, so every chart is drawn, offline, on the page. An executed notebook is kept in
`.cache/docs/` for the day (the sandbox's data follows the date) and for as long as the notebook
and the package are unchanged; a notebook that fails fails the build. Runs before mkdocs-jupyter
turns the notebooks into pages (a higher priority than its `on_files`)."""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
CACHE = ROOT / ".cache" / "docs"
log = logging.getLogger("mkdocs.hooks.notebooks")


@event_priority(100)
def on_files(files: Files, config: Any) -> Files:
    """mkdocs event: add `notebooks/<name>.ipynb`, executed, for each notebook."""
    executed = CACHE / "notebooks"
    for notebook in sorted(NOTEBOOKS.glob("*.ipynb")):
        _execute(notebook, executed / notebook.name)
        files.append(
            File(
                f"notebooks/{notebook.name}",
                src_dir=str(CACHE),
                dest_dir=config["site_dir"],
                use_directory_urls=config["use_directory_urls"],
            )
        )
    return files


def _stamp(notebook: Path) -> str:
    """What an executed copy depends on: the notebook, the package's source and the day."""
    digest = hashlib.sha256(notebook.read_bytes())
    for source in sorted((ROOT / "src" / "commerce_reports").rglob("*.py")):
        digest.update(source.read_bytes())
    return f"{digest.hexdigest()[:16]}-{datetime.now(UTC).date()}"


def _execute(notebook: Path, target: Path) -> None:
    """`target`: `notebook` executed against the sandbox (kept while its stamp holds)."""
    from commerce_reports.export import export_notebook

    stamp = target.with_suffix(".stamp")
    wanted = _stamp(notebook)
    if target.is_file() and stamp.is_file() and stamp.read_text() == wanted:
        return
    started = time.monotonic()
    first = (
        "" if (CACHE / "lake").is_dir() else " (the first syncs the sandbox into .cache/docs/lake: minutes)"
    )
    log.info("executing %s against the sandbox%s", notebook.name, first)
    environment = {"COMMERCE_REPORTS_DATA_DIR": str(CACHE / "lake")}
    keys = [name for name in os.environ if name.startswith("COMMERCE_REPORTS_")]
    if keys:  # the site shows the sandbox's figures, never a user's own
        raise RuntimeError(f"unset {', '.join(keys)} to build the docs: the notebooks run on the sandbox")
    with tempfile.TemporaryDirectory() as out:
        result = export_notebook(notebook, out, environment=environment, show_code=True)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(result.notebook, target)
    stamp.write_text(wanted)
    log.info("executed %s in %.0f s", notebook.name, time.monotonic() - started)
