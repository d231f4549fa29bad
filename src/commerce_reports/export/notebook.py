"""Scheduled exports: run a report notebook with papermill, write it as self-contained HTML.

Fit for cron: no prompts; log lines, not bars, when not a TTY; a parameter the notebook does not
declare, or of the wrong type, is refused before anything runs or is written; a failed cell raises
`ExportError` naming the cell (the executed notebook is kept to inspect, every secret in it masked);
secrets are refused as parameters and an output that would contain one is deleted, never left behind.

The kernel runs in the notebook's folder, as Jupyter runs it, and the notebook finds its lake as
every entry point does (see `commerce_reports.locate`): an export sets nothing about it. The
secrets it guards are those of the process's settings (the environment over `.env`, resolved once
by `config.current_settings`) and of the variables the kernel is given.
"""

from __future__ import annotations

import logging
import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config import current_settings
from ..errors import ExportError, ValidationError
from ..files import apply_mode, make_folder, save_atomic
from ..redaction import holds_secret, known_secrets, redact, scrub
from .parameters import check_parameters
from .parts import report_name

__all__ = ["ExportResult", "checked_parameters", "export_notebook", "output_stem", "secrets_in_environment"]

log = logging.getLogger(__name__)
_SECRET_NAME = re.compile(r"key|secret|token|password", re.IGNORECASE)


@dataclass(frozen=True)
class ExportResult:
    notebook: Path
    html: Path
    images: list[Path] = field(default_factory=list)


def output_stem(notebook: Path, params: dict[str, Any]) -> str:
    """A file name from the notebook and its parameters, e.g. `report_site-alpha_start-2026-10-01`.

    Switches (booleans) and None say nothing about the report: left out."""
    if not isinstance(params, dict):
        raise ValidationError("params", f"{params!r} is not a mapping", "give {name: value}")
    named = {k: v for k, v in params.items() if v is not None and not isinstance(v, bool)}
    parts = [notebook.stem] + [f"{name}-{value}" for name, value in sorted(named.items())]
    return re.sub(r"[^A-Za-z0-9._-]+", "_", "_".join(parts))[:180]


def secrets_in_environment(extra: Mapping[str, str] | None = None) -> list[str]:
    """Every value a report must not contain: the known keys, and every `*KEY*`, `*SECRET*`,
    `*TOKEN*` or `*PASSWORD*` variable's value (of the process, and `extra`)."""
    variables = {**current_settings().env, **(extra or {})}
    values = {v for k, v in variables.items() if _SECRET_NAME.search(k) and len(v) >= 6}
    return sorted(values | {s for s in known_secrets() if len(s) >= 6})


def checked_parameters(notebook: Path, params: dict[str, Any]) -> dict[str, Any]:
    """`params` once known safe (no secret names or values) and declared by the notebook's
    `parameters` cell with their types (text read as the declared type), else a ValidationError."""
    _refuse_secrets(params)
    return check_parameters(notebook, params)


def _refuse_secrets(params: dict[str, Any]) -> None:
    secrets = secrets_in_environment()
    for name, value in params.items():
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
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
    environment: Mapping[str, str] | None = None,
    kernel_name: str = "python3",
    timeout: int = 600,
) -> ExportResult:
    """Execute `notebook` with `params` into `out_dir`: the executed .ipynb, a self-contained .html
    (code hidden unless `show_code`), and with `png`/`svg` each chart as an image. The files are
    named after the sites and dates the notebook resolved when its title says them (a report:
    `report_alpha_2026-11-16_2026-11-22.html`, so scheduled runs never overwrite each other), else
    after the parameters.

    `params` must be declared by the notebook's `parameters` cell, of its types (text is read as
    the declared type: '30' for an int, '2026-11-01' for a date); anything else is a
    ValidationError before anything runs or is written. `environment` is added to the kernel's
    environment (e.g. `COMMERCE_REPORTS_DATA_DIR` to report on a lake other than the project's)."""
    import nbformat  # papermill, nbconvert and the kernel: loaded once the arguments are checked
    import papermill

    from .html import chart_specs, notebook_html, save_images
    from .kernel import checked_environment, run_notebook

    if not isinstance(notebook, str | Path) or not Path(notebook).is_file():
        raise ValidationError("notebook", f"{notebook} does not exist", "give the path of an .ipynb file")
    if params is not None and not isinstance(params, dict):
        raise ValidationError("params", f"{params!r} is not a mapping", "give {name: value}")
    source = Path(notebook)
    params = dict(params or {})
    params = checked_parameters(source, params)
    extra = checked_environment(environment)
    secrets = secrets_in_environment(extra)
    folder = make_folder(Path(out_dir))
    stem = output_stem(source, params)
    log.info("executing %s with %s", source, params)
    # papermill saves the notebook as each cell runs: into a private folder of its own, never into
    # `out_dir`, where a run killed midway would leave it partial and unmasked
    with tempfile.TemporaryDirectory(prefix="commerce-reports-export-") as private:
        running = Path(private) / f"{stem}.ipynb"
        try:
            run_notebook(
                source,
                running,
                params,
                cwd=source.parent,
                environment=extra,
                kernel_name=kernel_name,
                timeout=timeout,
            )
        except papermill.PapermillExecutionError as error:
            executed = _masked_copy(running, folder / f"{stem}.ipynb", secrets)  # kept to inspect
            raise ExportError(
                redact(
                    f"cell {error.exec_count} of {source.name} failed: {error.ename}: {error.evalue}; "
                    f"the executed notebook, with the error, is at {executed}",
                    secrets,
                )
            ) from None
        content = running.read_bytes()
        node = nbformat.reads(content.decode(), as_version=4)
        named = report_name(node)  # a report names itself after the period and sites it resolved
        if named is not None:
            stem = re.sub(r"[^A-Za-z0-9._-]+", "_", f"{source.stem}_{named}")[:180]
        if holds_secret(content, secrets):
            raise ExportError(f"{stem}.ipynb would contain a secret value; no output was written")
        executed = save_atomic(folder / f"{stem}.ipynb", content)
    page = save_atomic(folder / f"{stem}.html", notebook_html(node, title=stem, show_code=show_code))
    images = save_images(chart_specs(node), folder, stem, png=png, svg=svg) if png or svg else []
    result = ExportResult(apply_mode(executed), page, [apply_mode(image) for image in images])
    _refuse_leaks(result, secrets)
    log.info("wrote %s (%d charts as images)", page, len(images))
    return result


def _masked_copy(running: Path, executed: Path, secrets: list[str]) -> Path:
    """Write the notebook of a failed run (`running`) to `executed` with every secret value masked
    in every cell and output (an error's message and traceback may quote one, as a printed output
    may), as the console's message masks it: that notebook is kept to inspect, never deleted."""
    import nbformat

    node = nbformat.from_dict(scrub(nbformat.read(running, as_version=4), secrets))
    return save_atomic(executed, nbformat.writes(node))


def _refuse_leaks(result: ExportResult, secrets: list[str]) -> None:
    """Delete every output and fail if the page or an image contains one of the `secrets` (the
    environment's, and the variables the kernel was given; the notebook was checked before it was
    written)."""
    paths = [result.notebook, result.html, *result.images]
    for path in paths[1:]:
        if holds_secret(path.read_bytes(), secrets):
            for doomed in paths:
                doomed.unlink(missing_ok=True)
            raise ExportError(f"{path.name} would contain a secret value; every output was deleted")
