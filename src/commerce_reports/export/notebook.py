"""Scheduled exports: run a report notebook with papermill, write it as self-contained HTML.

Fit for cron: no prompts; log lines, not bars, when not a TTY; a failed cell raises `ExportError`
naming the cell (the executed notebook is kept to inspect); secrets are refused as parameters and
an output that would contain one is deleted, never left behind.
"""

from __future__ import annotations

import logging
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat
import papermill

from ..errors import ExportError, ValidationError
from ..secret import known_secrets
from .html import chart_specs, notebook_html, save_images

__all__ = ["ExportResult", "export_notebook", "output_stem"]

log = logging.getLogger(__name__)
_SECRET_NAME = re.compile(r"key|secret|token|password", re.IGNORECASE)


@dataclass(frozen=True)
class ExportResult:
    notebook: Path
    html: Path
    images: list[Path] = field(default_factory=list)


def output_stem(notebook: Path, params: dict[str, Any]) -> str:
    """A file name from the notebook and its parameters, e.g. `report_site-alpha_start-2026-10-01`.

    Folders and switches (`data_dir`, booleans, None) say nothing about the report: left out."""
    named = {k: v for k, v in params.items() if k != "data_dir" and v is not None and not isinstance(v, bool)}
    parts = [notebook.stem] + [f"{name}-{value}" for name, value in sorted(named.items())]
    return re.sub(r"[^A-Za-z0-9._-]+", "_", "_".join(parts))[:180]


def _secrets_in_environment() -> list[str]:
    values = {v for k, v in os.environ.items() if _SECRET_NAME.search(k) and len(v) >= 6}
    return sorted(values | {s for s in known_secrets() if len(s) >= 6})


def _check_params(params: dict[str, Any]) -> None:
    secrets = _secrets_in_environment()
    for name, value in params.items():
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise ValidationError("param", f"{name!r} is not a parameter name", "use a Python identifier")
        if _SECRET_NAME.search(name):
            raise ValidationError(
                "param",
                f"{name!r} looks like a secret",
                "secrets stay in the environment: the notebook reads them there",
            )
        if isinstance(value, str) and value in secrets:
            raise ValidationError(
                "param", f"the value of {name!r} is a secret", "pass secrets through the environment"
            )


def export_notebook(
    notebook: Path | str,
    out_dir: Path | str,
    params: dict[str, Any] | None = None,
    *,
    png: bool = False,
    svg: bool = False,
    show_code: bool = False,
    kernel_name: str = "python3",
    timeout: int = 600,
) -> ExportResult:
    """Execute `notebook` with `params` into `out_dir`: the executed .ipynb, a self-contained .html
    (code hidden unless `show_code`), and with `png`/`svg` each chart as an image."""
    source = Path(notebook)
    if not source.is_file():
        raise ValidationError("notebook", f"{source} does not exist", "give the path of an .ipynb file")
    params = dict(params or {})
    _check_params(params)
    folder = Path(out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    stem = output_stem(source, params)
    executed = folder / f"{stem}.ipynb"
    log.info("executing %s with %s", source, params)
    try:
        papermill.execute_notebook(
            str(source),
            str(executed),
            parameters=params,
            kernel_name=kernel_name,
            progress_bar=sys.stderr.isatty(),
            log_output=False,
            execution_timeout=timeout,
            cwd=str(source.parent),
        )
    except papermill.PapermillExecutionError as error:
        raise ExportError(
            f"cell {error.exec_count} of {source.name} failed: {error.ename}: {error.evalue}; "
            f"the executed notebook, with the error, is at {executed}"
        ) from None
    node = nbformat.read(executed, as_version=4)
    page = folder / f"{stem}.html"
    page.write_text(notebook_html(node, title=stem, show_code=show_code), encoding="utf-8")
    images = save_images(chart_specs(node), folder, stem, png=png, svg=svg) if png or svg else []
    result = ExportResult(executed, page, images)
    _refuse_leaks(result)
    log.info("wrote %s (%d charts as images)", page, len(images))
    return result


def _refuse_leaks(result: ExportResult) -> None:
    """Delete every output and fail if any of them contains a secret value of the environment."""
    secrets = _secrets_in_environment()
    paths = [result.notebook, result.html, *result.images]
    for path in paths:
        content = path.read_bytes()
        if any(secret.encode() in content for secret in secrets):
            for doomed in paths:
                doomed.unlink(missing_ok=True)
            raise ExportError(f"{path.name} would contain a secret value; every output was deleted")
