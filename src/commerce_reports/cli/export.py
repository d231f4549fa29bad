"""`commerce-reports export`: run a report notebook and write it as self-contained HTML."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path
from typing import Any

from ..export import export_notebook

log = logging.getLogger(__name__)


def _param(text: str) -> tuple[str, Any]:
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"{text!r} is not name=value")
    return name.strip(), _value(value)


def _value(text: str) -> Any:
    """Numbers, true/false and none become Python values; everything else stays text."""
    lowered = text.strip().lower()
    if lowered in ("none", "null"):
        return None
    if lowered in ("true", "false"):
        return lowered == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "export",
        help="run a report notebook (papermill) and write self-contained HTML",
        description="Executes the notebook with the given parameters into --out: the executed .ipynb and "
        "an .html that renders offline, named from the parameters. Exits non-zero when a cell fails "
        "(the executed notebook is kept). Secrets are read from the environment, never passed as parameters.",
    )
    parser.add_argument("--notebook", type=Path, required=True, help="e.g. notebooks/report.ipynb")
    parser.add_argument("--param", type=_param, action="append", default=[], help="name=value (repeatable)")
    parser.add_argument("--out", type=Path, default=Path("reports"), help="output folder (default reports/)")
    parser.add_argument("--png", action="store_true", help="also write each chart as PNG")
    parser.add_argument("--svg", action="store_true", help="also write each chart as SVG")
    parser.add_argument("--show-code", action="store_true", help="keep the code cells in the HTML")
    parser.add_argument(
        "--sync", action="store_true", help="sync the lake first (data_dir and site from the params)"
    )
    parser.set_defaults(handler=_export)


def _export(args: argparse.Namespace) -> int:
    params = dict(args.param)
    if args.sync:
        from ..api import SyncOptions, sync

        synced = sync(
            sites=params.get("site"), data_dir=params.get("data_dir"), options=SyncOptions(progress=False)
        )
        log.warning("sync before export: %s", synced.summary())
        if synced.failed:
            return 1
    result = export_notebook(
        args.notebook, args.out, params, png=args.png, svg=args.svg, show_code=args.show_code
    )
    print(result.html)
    for image in result.images:
        print(image)
    return 0
