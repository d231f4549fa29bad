"""`commerce-reports export`: run a report notebook and write it as self-contained HTML.

Everything it is given is checked before papermill, nbconvert or a kernel loads (they take
seconds, more on a busy machine): the notebook's path, its parameters (read from its JSON), the
site, the addresses and mail settings, the output folder. A mistake is one line and exit 2.
"""

from __future__ import annotations

import argparse
import sys

from .parser import add_command

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without loading typing: `--help` starts at once
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from ..config import Settings
    from .parser import CommandParser

__all__ = ["register"]


def _param(text: str) -> tuple[str, str]:
    """`name=value`, the value kept as text: the notebook's parameters cell says its type."""
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"{text!r} is not name=value, e.g. start=2026-11-01")
    return name.strip(), value


def register(subparsers: Any) -> None:
    """Add the `export` subcommand to the `commerce-reports` parser."""
    add_command(
        subparsers,
        "export",
        help="run a report notebook (papermill) and write self-contained HTML",
        description="Executes the notebook with the given parameters into --out (default: reports/ in the "
        "data folder the notebook reads): the executed .ipynb and an .html that renders offline, named "
        "after the sites and dates the report resolved (or the parameters), and prints the HTML's path. "
        "With --email, mails the report's title, alerts and summary with the HTML attached, through "
        "COMMERCE_REPORTS_SMTP_URL (smtp://user@host:587 uses STARTTLS; smtps://user@host:465 TLS) and "
        "COMMERCE_REPORTS_SMTP_PASSWORD; the sender is COMMERCE_REPORTS_MAIL_FROM or the SMTP user. "
        "Each --param must be declared by the notebook's parameters cell and is read as its type (dates: "
        "YYYY-MM-DD). Secrets are read from the environment, never passed as parameters. A relative "
        "COMMERCE_REPORTS_DATA_DIR is the folder it names from where the command runs, as for every "
        "other command (the kernel runs in the notebook's folder).",
        examples=[
            "commerce-reports export --notebook notebooks/report.ipynb",
            "commerce-reports export --notebook notebooks/report.ipynb --param site=alpha "
            "--param start=2026-10-01 --param end=2026-10-31 --out reports/",
            "commerce-reports export --sync --notebook notebooks/report.ipynb --email boss@example.org",
        ],
        exits={
            1: "a cell failed (the executed notebook is kept), an output would hold a secret (every "
            "output deleted), or the mail was not delivered (the report is kept)"
        },
        define=_arguments,
        handler=_export,
    )


def _arguments(parser: CommandParser) -> None:
    from pathlib import Path

    parser.add_argument(
        "--notebook", type=Path, required=True, metavar="FILE", help="e.g. notebooks/report.ipynb"
    )
    parser.add_argument(
        "--param",
        type=_param,
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a parameter of the notebook, e.g. start=2026-11-01 (dates YYYY-MM-DD; repeatable)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        metavar="FOLDER",
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


def _kernel_settings(notebook: Path) -> tuple[Settings, dict[str, str]]:
    """The settings the notebook's kernel will resolve (it runs in the notebook's folder), and
    the variables to hand it so that it finds the lake the command line would: a relative
    COMMERCE_REPORTS_DATA_DIR names a folder from where the command runs, not from the notebook's."""
    from contextlib import chdir  # here, not at the top: `--help` loads every command's module

    from ..config import ENV_DATA_DIR, current_settings

    here = current_settings()
    environment: dict[str, str] = {}
    chosen = here.env.get(ENV_DATA_DIR, "").strip()
    if chosen:
        environment[ENV_DATA_DIR] = str(here.data_dir)  # absolute, resolved here
    with chdir(notebook.parent):
        kernel = current_settings()
    return kernel, environment


def _out_folder(out: Path | None, settings: Settings, environment: dict[str, str]) -> Path:
    """--out, checked (its parent must exist); else the reports folder beside the lake, made with
    it (an export with --sync may be what first fills the lake)."""
    from pathlib import Path

    from .options import output_folder

    if out is not None:
        return output_folder("--out", out)
    lake = Path(environment.get("COMMERCE_REPORTS_DATA_DIR") or settings.data_dir)
    return output_folder("--out", lake / "reports", parents=True)


def _window_checked(params: dict[str, Any]) -> dict[str, Any]:
    """The days and countries a notebook is asked for, checked before its kernel starts, as the
    shipped notebooks read `start`, `end`, `days` and `countries` (a start after the end, an end
    after today, no day at all, 'USA' for a country failed in a cell seconds later, leaving a
    failed notebook behind)."""
    import re
    from datetime import UTC, date, datetime

    from ..errors import ValidationError
    from ..params import FIRST_DAY, Filters, as_days
    from .options import UsageError

    def day(name: str) -> object:  # a date or its text (papermill passes text), else left alone
        value = params.get(name)
        text = isinstance(value, str) and re.fullmatch(r"\d{4}-\d\d-\d\d", value)
        return value if isinstance(value, date) or text else None

    try:
        as_days(day("start"), day("end"), datetime.now(UTC).date())
    except ValidationError as error:
        raise UsageError.of(error, f"--param {error.parameter}") from None
    days = params.get("days")
    most = (datetime.now(UTC).date() - FIRST_DAY).days + 1  # (the days back to 1970)
    if isinstance(days, int) and not isinstance(days, bool) and not 1 <= days <= most:
        raise UsageError("--param days", f"{days} is not a count of days", f"give 1 to {most:,}")
    countries = params.get("countries")
    for country in [countries] if isinstance(countries, str) else countries or ():
        try:
            Filters.of(country=country)
        except ValidationError as error:
            raise UsageError.of(error, "--param countries") from None
    return params


def _export(args: argparse.Namespace) -> int:
    from contextlib import chdir

    from ..export.mail import MailSettings, recipients
    from ..export.notebook import checked_parameters  # plain Python: papermill loads later
    from .options import UsageError, known_sites

    notebook = args.notebook.expanduser().absolute()
    if not notebook.is_file():
        raise UsageError("--notebook", f"{notebook} does not exist", "give the path of an .ipynb file")
    params = _window_checked(checked_parameters(notebook, dict(args.param)))
    to = recipients(args.email) if args.email is not None else None
    settings, environment = _kernel_settings(notebook)
    site = params.get("site")
    if isinstance(site, str):  # the sites the kernel will see, from its folder
        with chdir(notebook.parent):
            known_sites("export", [site], None, stored=False, option="--param site")
    mail = MailSettings.from_env(settings.env) if to else None  # a wrong setting fails before the run
    out = _out_folder(args.out, settings, environment)
    if args.sync and _synced(notebook, site, environment) != 0:
        return 1
    from ..activity import Step
    from ..export import export_notebook  # papermill and nbconvert: only now

    with Step(f"running {notebook.name} in a kernel"):
        result = export_notebook(
            notebook,
            out,
            params,
            png=args.png,
            svg=args.svg,
            show_code=args.show_code,
            environment=environment,
        )
    print(result.html.resolve())
    for image in result.images:
        print(image.resolve())
    if to and mail:
        _mail(result, to, mail)
    return 0


def _synced(notebook: Path, site: Any, environment: dict[str, str]) -> int:
    """Sync the lake the notebook reads (the site its parameters name, else every site)."""
    from contextlib import chdir

    from ..api import SyncOptions, sync

    with chdir(notebook.parent):
        synced = sync(
            sites=site,
            data_dir=environment.get("COMMERCE_REPORTS_DATA_DIR"),
            options=SyncOptions(progress=False),
        )
    print(f"sync before export: {synced.summary()}", file=sys.stderr)
    return 1 if synced.failed else 0


def _mail(result: Any, to: list[str], mail: Any) -> None:
    from ..errors import DeliveryError
    from ..export.mail import mail_report

    try:
        mail_report(result, to, mail)
    except DeliveryError as error:
        raise DeliveryError(f"{error}; the report stays at {result.html.resolve()}") from None
    print(f"mailed to {', '.join(to)}", file=sys.stderr)
