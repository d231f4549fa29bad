"""`commerce-reports export`: run a report notebook and write it as self-contained HTML."""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
from pathlib import Path
from typing import Any

from ..errors import DeliveryError, ValidationError
from .options import known_sites

log = logging.getLogger(__name__)


def _param(text: str) -> tuple[str, str]:
    """`name=value`, the value kept as text: the notebook's parameters cell says its type."""
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"{text!r} is not name=value")
    return name.strip(), value


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "export",
        help="run a report notebook (papermill) and write self-contained HTML",
        description="Executes the notebook with the given parameters into --out (default: reports/ in the "
        "data folder the notebook reads): the executed .ipynb and an .html that renders offline, named "
        "after the sites and dates the report resolved (or the parameters), and prints the HTML's path. "
        "With --email, mails the report's title, alerts and summary with the HTML attached, through "
        "COMMERCE_REPORTS_SMTP_URL (smtp://user@host:587 uses STARTTLS; smtps://user@host:465 TLS) and "
        "COMMERCE_REPORTS_SMTP_PASSWORD; the sender is COMMERCE_REPORTS_MAIL_FROM or the SMTP user. "
        "A parameter the notebook's parameters cell does not declare, or of another type (dates: "
        "YYYY-MM-DD), exits 2 and writes nothing; a failed cell exits 1 (the executed notebook is kept); "
        "a failed delivery exits 1 and keeps the report. Secrets are read from the environment, never "
        "passed as parameters.",
    )
    parser.add_argument("--notebook", type=Path, required=True, help="e.g. notebooks/report.ipynb")
    parser.add_argument("--param", type=_param, action="append", default=[], help="name=value (repeatable)")
    parser.add_argument(
        "--out",
        type=Path,
        help="output folder (default: <data dir>/reports, beside the lake the notebook reads)",
    )
    parser.add_argument(
        "--email",
        metavar="ADDRESSES",
        help="mail the report to a@x.org[,b@y.org] (see COMMERCE_REPORTS_SMTP_URL)",
    )
    parser.add_argument("--png", action="store_true", help="also write each chart as PNG")
    parser.add_argument("--svg", action="store_true", help="also write each chart as SVG")
    parser.add_argument("--show-code", action="store_true", help="keep the code cells in the HTML")
    parser.add_argument("--sync", action="store_true", help="sync the lake first (the site from the params)")
    parser.set_defaults(handler=_export)


def _export(args: argparse.Namespace) -> int:
    from ..config import current_settings
    from ..export import checked_parameters, export_notebook  # papermill and nbconvert: only when used
    from ..export.mail import MailSettings, mail_report, recipients

    try:
        params = checked_parameters(args.notebook, dict(args.param))
        to = recipients(args.email) if args.email is not None else None
    except ValidationError as error:  # a usage error: exit 2, as argparse does, before anything runs
        print(f"error: {error}", file=sys.stderr)
        return 2
    site = params.get("site")
    if isinstance(site, str):  # where the kernel runs (the notebook's folder): the sites it will see
        with contextlib.chdir(args.notebook.resolve().parent):
            known_sites("export", [site], None, stored=False)
    # Where the notebook's kernel runs (its folder), so both find the same lake and settings.
    with contextlib.chdir(args.notebook.resolve().parent):
        settings = current_settings()
    mail = MailSettings.from_env(settings.env) if to else None  # a wrong setting fails before the run
    out = args.out if args.out is not None else settings.data_dir / "reports"
    if args.sync:
        from ..api import SyncOptions, sync

        with contextlib.chdir(args.notebook.resolve().parent):
            synced = sync(sites=params.get("site"), options=SyncOptions(progress=False))
        log.warning("sync before export: %s", synced.summary())
        if synced.failed:
            return 1
    result = export_notebook(args.notebook, out, params, png=args.png, svg=args.svg, show_code=args.show_code)
    print(result.html.resolve())
    for image in result.images:
        print(image.resolve())
    if to and mail:
        try:
            mail_report(result, to, mail)
        except DeliveryError as error:
            raise DeliveryError(f"{error}; the report stays at {result.html.resolve()}") from None
        print(f"mailed to {', '.join(to)}", file=sys.stderr)
    return 0
