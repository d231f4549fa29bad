"""`commerce-reports schedule`: the daily sync and the weekly report as crontab lines or systemd
user timers; what is scheduled; remove it; and `run`, the wrapper each job runs through."""

from __future__ import annotations

import argparse
import sys

from .parser import add_command

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without loading typing: `--help` starts at once
if TYPE_CHECKING:
    from typing import Any

    from ..schedule import SchedulePlan
    from .parser import CommandParser

__all__ = ["register"]

NOT_INSTALLED = {1: "the jobs could not be installed (no crontab command, no systemd user manager)"}


def register(subparsers: Any) -> None:
    """Add the `schedule` command and its actions."""
    add_command(
        subparsers,
        "schedule",
        help="sync every day and mail the weekly report: crontab lines or systemd user timers",
        description="Schedule this project's daily sync and weekly report (export --sync --notebook "
        "notebooks/report.ipynb, mailed with --email) as crontab lines or systemd user timers, list what "
        "is scheduled, or remove it. Jobs run in the project folder and read its git-ignored .env: no "
        "secret goes into a crontab or a unit. Their output goes to <data dir>/logs/schedule.log, a line "
        "before and after each run. Times are the machine's local time.",
        examples=[
            "commerce-reports schedule add --email boss@example.org",
            "commerce-reports schedule add --print",
            "commerce-reports schedule list",
        ],
        define=_actions,
    )


def _actions(parser: CommandParser) -> None:
    parser.set_defaults(handler=_missing_action(parser))
    actions = parser.add_subparsers(dest="schedule_action", metavar="ACTION")
    add_command(
        actions,
        "add",
        help="write (or --print) this project's jobs",
        description="Write this project's jobs into the user's crontab (--cron) or as systemd user units "
        "(--systemd), replacing the ones it had; the default is systemd when its user manager runs, "
        "else cron. A sync every day (--at), the report every week (--report-day, --report-at; "
        "--no-report: none), and with --serve the dashboard as a service.",
        examples=[
            "commerce-reports schedule add --print",
            "commerce-reports schedule add --cron --email boss@example.org",
            "commerce-reports schedule add --systemd --at 06:30 --report-day fri --report-at 07:00",
            'commerce-reports schedule add --sync-args "--country US --country GB" --no-report',
            "commerce-reports schedule add --systemd --serve",
        ],
        exits=NOT_INSTALLED,
        define=_add_arguments,
        handler=_add,
    )
    add_command(
        actions,
        "list",
        help="every job scheduled, and its last run",
        description="Every job scheduled for this user (crontab lines and systemd units), and for this "
        "project's, its last run as the log records it.",
        examples=["commerce-reports schedule list"],
        define=lambda _: None,
        handler=_list,
    )
    add_command(
        actions,
        "remove",
        help="remove this project's jobs",
        description="Remove this project's crontab lines and systemd units (stopped and disabled first); "
        "--gone: those of every project whose folder is gone.",
        examples=[
            "commerce-reports schedule remove",
            "commerce-reports schedule remove --cron",
            "commerce-reports schedule remove --gone",
        ],
        define=_remove_arguments,
        handler=_remove,
    )
    add_command(
        actions,
        "run",
        help="run a command with its output appended to the log (what each job runs)",
        description="Run `commerce-reports COMMAND...` with its output appended to --log, between a line "
        "saying when it started and one saying how it ended; exit with the command's status.",
        examples=["commerce-reports schedule run --job sync --log data/logs/schedule.log -- sync"],
        exits={1: "the command failed (any status of the command's own)"},
        define=_run_arguments,
        handler=_run,
    )


def _add_arguments(add: CommandParser) -> None:
    _kinds(add)
    add.add_argument("--print", action="store_true", help="print the lines or units, install nothing")
    add.add_argument("--at", default="05:00", metavar="HH:MM", help="the daily sync's time (default 05:00)")
    add.add_argument(
        "--report-day", default="monday", metavar="DAY", help="the report's day (default monday)"
    )
    add.add_argument(
        "--report-at", default="06:00", metavar="HH:MM", help="the report's time (default 06:00)"
    )
    add.add_argument("--no-report", action="store_true", help="only the daily sync")
    add.add_argument(
        "--email",
        metavar="ADDRESSES",
        help="mail the report to a@x.org[,b@y.org] (COMMERCE_REPORTS_SMTP_URL)",
    )
    add.add_argument(
        "--sync-args",
        default="",
        metavar="ARGS",
        help='more options of the daily sync, e.g. "--country US" (one option alone: --sync-args=--refresh)',
    )
    add.add_argument("--serve", action="store_true", help="also run `commerce-reports serve` as a service")


def _run_arguments(run: CommandParser) -> None:
    from pathlib import Path

    run.add_argument("--job", default="", help="the job's name in the log (default: the command)")
    run.add_argument("--log", type=Path, required=True, help="the log file (appended to)")
    run.add_argument("arguments", nargs="*", help="-- then the command's arguments")


def _kinds(parser: CommandParser) -> None:
    kinds = parser.add_mutually_exclusive_group()
    kinds.add_argument("--cron", dest="kind", action="store_const", const="cron", help="the user's crontab")
    kinds.add_argument(
        "--systemd", dest="kind", action="store_const", const="systemd", help="systemd user timers"
    )


def _remove_arguments(parser: CommandParser) -> None:
    _kinds(parser)
    parser.add_argument(
        "--gone",
        action="store_true",
        help="remove the jobs of every project whose folder is gone (moved or deleted), from anywhere",
    )


def _missing_action(parser: CommandParser) -> Any:
    def handler(args: argparse.Namespace) -> int:
        parser.print_help(sys.stderr)
        return 2

    return handler


def _usage(parameter: str, problem: str, allowed: str = "") -> Exception:
    """A usage error (exit 2); `cli.options` loads when one is raised, not for `--help`."""
    from .options import UsageError

    return UsageError(parameter, problem, allowed)


def _checked_sync_arguments(text: str) -> list[str]:
    """The daily sync's extra options, refused (exit 2) unless `sync` takes them and knows the
    sites they name."""
    import shlex

    from . import build_parser
    from .options import known_sites

    try:
        arguments = shlex.split(text)
    except ValueError as error:
        raise _usage("--sync-args", f"{text!r} is not a command line ({error})") from None
    import contextlib
    import io
    from datetime import date

    said = io.StringIO()
    try:
        with contextlib.redirect_stderr(said), contextlib.redirect_stdout(said):  # (said below, in one line)
            sync = build_parser().parse_args(["sync", *arguments])
    except SystemExit:
        mark = "commerce-reports sync: error: "
        errors = [line.removeprefix(mark) for line in said.getvalue().splitlines() if line.startswith(mark)]
        why = errors[0] if errors else "it prints the help of `sync`"
        raise _usage(
            "--sync-args", f"{text!r} is not what `sync` takes ({why})", "see commerce-reports sync --help"
        ) from None
    for option, given, why in _NOT_DAILY:
        if getattr(sync, given):
            raise _usage("--sync-args", f"{option} in a daily sync: {why}", "leave it out")
    if sync.start is not None and sync.start > date.today():
        raise _usage("--sync-args", f"--start {sync.start} is in the future: no sync would store a day", "")
    known_sites("schedule add", sync.sites, sync.data_dir, stored=False)
    return arguments


# The options of `sync` that a daily job cannot take, and why.
_NOT_DAILY = (
    ("--plan", "plan", "the job would print its plan and never sync"),
    ("--end", "end", "a fixed last day: the job would stop bringing new days in"),
    ("--data-dir", "data_dir", "the job's lake is the project's (its report and log are there)"),
)


def _default_kind() -> str:
    import os
    import shutil
    from pathlib import Path

    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if runtime and (Path(runtime) / "systemd").is_dir() and shutil.which("systemctl"):
        return "systemd"
    return "cron"


def _add(args: argparse.Namespace) -> int:
    from ..errors import ConfigurationError

    plan = _schedule_plan(args)
    for warning in plan.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    kind = args.kind or ("cron" if args.print else _default_kind())
    if args.print:
        _print_plan(plan, kind)
        return 0
    try:
        _install(plan, kind)
    except ConfigurationError as error:  # this machine has no cron, or no systemd user manager
        print(f"error: {error}", file=sys.stderr)
        return 1
    from ..schedule import gone_projects, installed

    for gone in gone_projects(installed()):  # this project moved, say: its old jobs fail every day
        print(
            f"warning: jobs of {gone} are still scheduled and its folder is gone: "
            "`commerce-reports schedule remove --gone` removes them",
            file=sys.stderr,
        )
    return 0


def _schedule_plan(args: argparse.Namespace) -> SchedulePlan:
    """The jobs `schedule add` asks for, every option checked first (a usage error, exit 2)."""
    from ..config import current_settings, current_sources
    from ..errors import ValidationError
    from ..schedule import schedule_plan

    settings = current_settings()  # a setting no job could use is said now, not at every run
    sync_arguments = _checked_sync_arguments(args.sync_args)
    email = _checked_recipients(args.email)
    if email and args.no_report:
        raise _usage("--email", "mails the weekly report, and --no-report schedules none", "leave one out")
    if email:  # no mail server, or one that cannot be used: said now, not by every report job
        from ..export.mail import MailSettings

        MailSettings.from_env(settings.env)
    if args.serve:
        _check_serve()
    try:
        return schedule_plan(
            sync_at=args.at,
            report_day=None if args.no_report else args.report_day,
            report_at=args.report_at,
            email=email,
            sync_arguments=sync_arguments,
            serve=args.serve,
            sources=current_sources(),
        )
    except ValidationError as error:
        raise _usage(error.parameter, error.problem, error.allowed) from None


def _checked_recipients(text: str | None) -> list[str]:
    """The report's addresses (none without --email), refused (exit 2) when one is not one."""
    if text is None:
        return []
    from ..errors import ValidationError
    from ..settings import recipients  # checks the addresses (and loads no export stack)

    try:
        return recipients(text)
    except ValidationError as error:
        raise _usage(error.parameter, error.problem, error.allowed) from None


def _check_serve() -> None:
    """Refuse --serve (exit 2) in a build without the `serve` command."""
    from . import build_parser

    commands = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    if not any("serve" in action.choices for action in commands):
        raise _usage("--serve", "this version has no `serve` command", "leave --serve out")


def _print_plan(plan: SchedulePlan, kind: str) -> None:
    """The crontab lines or systemd units of `plan`, printed: nothing installed."""
    from ..schedule import crontab_text, systemd_units

    if kind == "cron":
        print(crontab_text(plan), end="")
        return
    for name, text in systemd_units(plan).items():
        print(f"# {name}\n{text}")


def _install(plan: SchedulePlan, kind: str) -> None:
    """Install `plan` in the user's crontab or systemd user timers, saying what was written."""
    import shlex

    from ..schedule import install_cron, install_systemd

    if kind == "cron":
        for line in install_cron(plan):
            print(f"crontab: {line}")
    else:
        for path in install_systemd(plan):
            print(f"wrote {path}")
    for job in plan.jobs:
        print(
            f"{job.name}: {job.when or 'always, as a service'}: commerce-reports {shlex.join(job.arguments)}"
        )
    print(f"log: {plan.log}")


def _list(args: argparse.Namespace) -> int:
    from ..config import current_sources
    from ..locate import project_root, where
    from ..schedule import gone_projects, installed, last_runs

    found = installed()
    if not found:
        print("nothing scheduled (`commerce-reports schedule add` schedules this project)")
        return 0
    root = project_root()
    log = where(env=current_sources().variables()).path / "logs" / "schedule.log"
    runs = last_runs(log) if root is not None else {}
    gone = gone_projects(found)
    for job in found:
        mine = root is not None and job.project == str(root)
        last = f"; last run {runs[job.job]}" if mine and job.job in runs else ""
        flag = " (this folder is gone: the job fails)" if job.project in gone else ""
        print(f"{job.kind:<8}{job.job:<8}{job.when:<22}{job.project}{flag}{last}")
    if root is not None and runs:
        print(f"log: {log}")
    if gone:
        print("`commerce-reports schedule remove --gone` removes the jobs of folders that are gone")
    return 0


def _remove(args: argparse.Namespace) -> int:
    import shutil
    from pathlib import Path

    from ..locate import project_root
    from ..schedule import gone_projects, installed, remove_cron, remove_systemd

    if args.gone:  # the jobs of projects moved or deleted: their slugs name the old paths
        projects = [Path(project) for project in gone_projects(installed())]
        if not projects:
            print("no scheduled job belongs to a folder that is gone")
    else:
        root = project_root()
        if root is None:
            raise _usage(
                "project",
                f"no commerce-reports.toml at or above {Path.cwd()}",
                "run it in the project (or --gone: the jobs of folders that are gone)",
            )
        projects = [root]
    for project in projects:
        removed = 0
        if args.kind in (None, "cron") and (args.kind == "cron" or shutil.which("crontab")):
            for line in remove_cron(project):
                print(f"removed from the crontab: {line}")
                removed += 1
        if args.kind in (None, "systemd"):
            for path in remove_systemd(project):
                print(f"removed {path}")
                removed += 1
        if not removed:
            print(f"nothing was scheduled for {project}")
    return 0


def _run(args: argparse.Namespace) -> int:
    from ..schedule import run_logged

    arguments = args.arguments[1:] if args.arguments[:1] == ["--"] else args.arguments
    if not arguments:
        raise _usage("schedule run", "no command given", "e.g. schedule run --log LOG -- sync --no-progress")
    return run_logged(args.job or arguments[0], arguments, args.log)
