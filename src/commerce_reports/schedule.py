"""Run a project every morning without thinking: the daily sync and the weekly report as crontab
lines or systemd user timers (and, optionally, the dashboard as a user service).

    plan = schedule_plan(Path("."), email=["boss@example.org"])
    print(crontab_text(plan))                  # what `commerce-reports schedule add --cron --print` shows
    install_cron(plan)                         # the user's crontab, this project's lines replaced

Every job runs in the project folder, so it reads the project's git-ignored `.env` (no secret is
ever written into a crontab or a unit), through `commerce-reports schedule run`, which appends the
command's output to the project's log between a line saying when it started and one saying how it
ended. The environment a job needs beyond `.env` (the non-secret `COMMERCE_REPORTS_*` variables
set where the schedule was made) is written into the line or the unit.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO

from .config import Sources
from .errors import ConfigurationError, ValidationError
from .files import save_atomic
from .locate import ENV_DATA_DIR, MARKER, project_root, where
from .redaction import redact
from .settings import ENVIRONMENT, SETTINGS
from .sites import SITES_FILE, site_settings

__all__ = [
    "DAYS",
    "Installed",
    "Job",
    "SchedulePlan",
    "When",
    "crontab_text",
    "install_cron",
    "install_systemd",
    "installed",
    "last_runs",
    "remove_cron",
    "remove_systemd",
    "run_logged",
    "schedule_plan",
    "systemd_units",
    "unit_folder",
]

DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_CRON_DAYS = (1, 2, 3, 4, 5, 6, 0)  # cron counts from Sunday (0)
_TAG = "# commerce-reports:"  # ends each of our crontab lines: `# commerce-reports:<slug>:<job>`
_REPORT = Path("notebooks") / "report.ipynb"
_SERVE_TOKEN = "COMMERCE_REPORTS_SERVE_TOKEN"  # `commerce-reports serve`'s access token


@dataclass(frozen=True)
class When:
    """A time of day (the machine's local time), every day or on one weekday (0: Monday)."""

    hour: int
    minute: int
    weekday: int | None = None

    @classmethod
    def parse(cls, at: str, day: str | None = None) -> When:
        """`05:00` (and `monday`), or a ValidationError with an example."""
        match = re.fullmatch(r"(\d{1,2}):(\d{2})", at.strip()) if isinstance(at, str) else None
        if match is None or int(match[1]) > 23 or int(match[2]) > 59:
            raise ValidationError("time", f"{at!r} is not a time of day", "give HH:MM, e.g. 05:00")
        weekday = None
        if day is not None:
            text = day.strip().lower()
            found = [name for name in DAYS if name.startswith(text)] if len(text) >= 3 else []
            if len(found) != 1:
                raise ValidationError("day", f"{day!r} is not a day of the week", "give e.g. monday (or mon)")
            weekday = DAYS.index(found[0])
        return cls(int(match[1]), int(match[2]), weekday)

    def cron(self) -> str:
        """The crontab's five fields: `0 5 * * *`, `0 6 * * 1`."""
        day = "*" if self.weekday is None else str(_CRON_DAYS[self.weekday])
        return f"{self.minute} {self.hour} * * {day}"

    def calendar(self) -> str:
        """systemd's OnCalendar: `*-*-* 05:00:00`, `Mon *-*-* 06:00:00`."""
        day = "" if self.weekday is None else DAYS[self.weekday][:3].capitalize() + " "
        return f"{day}*-*-* {self.hour:02d}:{self.minute:02d}:00"

    def next_after(self, moment: datetime) -> datetime:
        """The first time at or after `moment` (naive local time) this runs."""
        candidate = moment.replace(hour=self.hour, minute=self.minute, second=0, microsecond=0)
        while candidate < moment or (self.weekday is not None and candidate.weekday() != self.weekday):
            candidate += timedelta(days=1)
        return candidate

    def __str__(self) -> str:
        day = "every day" if self.weekday is None else f"every {DAYS[self.weekday].capitalize()}"
        return f"{day} at {self.hour:02d}:{self.minute:02d}"


@dataclass(frozen=True)
class Job:
    """One scheduled command: its name (`sync`, `report`, `serve`), when it runs (None: always, a
    service) and the `commerce-reports` arguments it runs."""

    name: str
    when: When | None
    arguments: tuple[str, ...]


@dataclass(frozen=True)
class SchedulePlan:
    """What to schedule for one project: its folder, the log, the program, the environment the jobs
    need beyond the project's `.env`, and the jobs."""

    project: Path
    log: Path
    program: tuple[str, ...]
    environment: dict[str, str]
    jobs: tuple[Job, ...]
    warnings: tuple[str, ...] = field(default=())

    @property
    def slug(self) -> str:
        """This project's name in unit names and crontab tags: its folder's name and a hash of its path."""
        name = re.sub(r"[^a-z0-9]+", "-", self.project.name.lower()).strip("-")[:24] or "project"
        return f"{name}-{hashlib.sha256(str(self.project).encode()).hexdigest()[:8]}"

    def command(self, job: Job) -> list[str]:
        """The job's command line: `commerce-reports schedule run --job NAME --log LOG -- <arguments>`."""
        return [
            *self.program,
            "schedule",
            "run",
            "--job",
            job.name,
            "--log",
            str(self.log),
            "--",
            *job.arguments,
        ]


def schedule_plan(
    *,
    sync_at: str = "05:00",
    report_day: str | None = "monday",
    report_at: str = "06:00",
    email: Sequence[str] = (),
    sync_arguments: Sequence[str] = (),
    serve: bool = False,
    sources: Sources | None = None,
) -> SchedulePlan:
    """The jobs of the project at or above the working folder: a sync every day at `sync_at`, the report
    (`export --sync --notebook notebooks/report.ipynb`, mailed to `email` when given) every
    `report_day` at `report_at` (None: no report), and `serve` (the dashboard) as a service.
    `sources` (the resolved settings' sources) say which variables come from the environment only:
    non-secret ones are written into the jobs' environment, secrets only warned about (a job reads
    the project's `.env`; nothing secret goes into a crontab or a unit)."""
    root = project_root()
    if root is None:
        raise ValidationError(
            "project",
            f"no {MARKER} at or above {Path.cwd()}",
            "run it in the project folder (`commerce-reports init <folder>` makes one)",
        )
    if any(ord(c) < 32 for c in str(root)):  # a crontab line or a unit would be cut there
        raise ValidationError("project", f"{str(root)!r} holds a line break", "rename the project folder")
    jobs = [Job("sync", When.parse(sync_at), ("sync", "--no-progress", *sync_arguments))]
    if report_day is not None:
        if not (root / _REPORT).is_file():
            raise ValidationError(
                "report",
                f"{root / _REPORT} is not there",
                f"`commerce-reports init {shlex.quote(str(root))}` copies it",
            )
        mail = ("--email", ",".join(email)) if email else ()
        jobs.append(
            Job(
                "report",
                When.parse(report_at, report_day),
                ("export", "--sync", "--notebook", str(_REPORT), *mail),
            )
        )
    if serve:
        jobs.append(Job("serve", None, ("serve",)))
    environment, warnings = _job_environment(sources or Sources({}))
    if serve and not (sources or Sources({})).variables().get(_SERVE_TOKEN, "").strip():
        warnings += (
            f"{_SERVE_TOKEN} is not set: the served dashboard makes a token at each start and prints it "
            f"into the log; `commerce-reports config set serve_token` (or {_SERVE_TOKEN} in .env) keeps one",
        )
    variables = {**(sources.variables() if sources else {}), **environment}
    if variables.get(ENV_DATA_DIR, "").strip():  # (one from .env, relative: to the job's folder)
        variables[ENV_DATA_DIR] = str(root / Path(variables[ENV_DATA_DIR]).expanduser())
    lake = where(env=variables)
    warnings += _shell_only_site_keys(lake.path, sources or Sources({}))
    return SchedulePlan(
        root, lake.path / "logs" / "schedule.log", _program(), environment, tuple(jobs), warnings
    )


def _shell_only_site_keys(data_dir: Path, sources: Sources) -> tuple[str, ...]:
    """A warning per site of `<data dir>/sites.toml` whose key's variable is set in this shell only:
    a job reads the project's `.env`, not this shell's environment."""
    try:
        found = site_settings(data_dir)
    except ConfigurationError:  # a sites file the job's own sync will refuse, saying why
        return ()
    warnings = []
    for each in found:
        variable, name = str(each.value), each.name.split(".")[1]
        if (
            each.name.endswith(".secret_key_env")
            and sources.environ.get(variable)
            and not sources.dotenv.get(variable)
        ):
            warnings.append(
                f"{variable} (the key of site {name}, named in {data_dir / SITES_FILE}) is set in your "
                "environment only: the scheduled jobs will not see it (they read the project's .env); "
                "put it there"
            )
    return tuple(warnings)


def _program() -> tuple[str, ...]:
    """This installation's command, by absolute path: the script beside the interpreter, else
    `python -m commerce_reports`."""
    script = Path(sys.executable).parent / "commerce-reports"
    return (str(script),) if script.is_file() else (sys.executable, "-m", "commerce_reports")


def _job_environment(sources: Sources) -> tuple[dict[str, str], tuple[str, ...]]:
    """The toolkit's non-secret variables set in the environment (not in `.env`, which the job
    reads itself), and a warning per secret a job would not see. A value holding a secret (a key
    in an address, a URL's password) is refused: a crontab line or a unit would carry it in clear."""
    environment: dict[str, str] = {}
    warnings: list[str] = []
    found = {
        setting: sources.members(setting.name) if setting.family else [sources.found(setting.name)]
        for setting in SETTINGS
        if setting.variable is not None
    }
    secrets = [str(e.value) for setting, every in found.items() if setting.secret for e in every if e.value]
    for setting, all_found in found.items():
        for each in all_found:
            if each.source != ENVIRONMENT:
                continue
            if setting.secret:
                in_dotenv = sources.dotenv.get(each.where, "").strip()
                if not in_dotenv:
                    warnings.append(
                        f"{each.where} is set in your environment only: the scheduled jobs will not see "
                        f"it (they read the project's .env); `commerce-reports config set {each.name}` puts "
                        "it there"
                    )
                elif in_dotenv != str(each.value).strip():
                    warnings.append(
                        f"{each.where} in your environment differs from the project's .env: the scheduled "
                        "jobs use the one in .env"
                    )
                continue
            value = str(each.value)
            if any(ord(c) < 32 for c in value):
                raise ValidationError(
                    each.where, f"{value!r} holds a line break", "a crontab line would be cut there"
                )
            if setting.name == "data_dir":  # as this shell means it: the job runs in the project folder
                value = str(Path(value).expanduser().absolute())
            if redact(value, secrets) != value:
                raise ValidationError(
                    each.where,
                    f"holds a secret ({redact(value, secrets)}): a crontab line or a unit would hold it "
                    "in clear",
                    "set it in the project's .env instead (git-ignored; the jobs read it), and unset it here",
                )
            environment[each.where] = value
    return environment, tuple(warnings)


# -- crontab -------------------------------------------------------------------------------------


def crontab_text(plan: SchedulePlan) -> str:
    """This project's crontab lines, each tagged with the project and job."""
    lines = []
    for job in plan.jobs:
        when = "@reboot" if job.when is None else job.when.cron()
        variables = " ".join(
            f"{name}={shlex.quote(value)}" for name, value in sorted(plan.environment.items())
        )
        command = " ".join(shlex.quote(part) for part in plan.command(job))
        line = f"cd {shlex.quote(str(plan.project))} && {variables + ' ' if variables else ''}{command}"
        lines.append(f"{when} {line.replace('%', chr(92) + '%')} {_TAG}{plan.slug}:{job.name}")
    return "\n".join(lines) + "\n"


def _crontab(*arguments: str, text: str | None = None) -> subprocess.CompletedProcess[str]:
    program = shutil.which("crontab")
    if program is None:
        raise ConfigurationError(
            "there is no `crontab` command here (no cron): install cron, use --systemd, or add the lines "
            "`commerce-reports schedule add --print` shows to your scheduler yourself"
        )
    return subprocess.run([program, *arguments], input=text, capture_output=True, text=True, timeout=60)


def _current_crontab() -> list[str]:
    done = _crontab("-l")
    if done.returncode != 0 and "no crontab" not in done.stderr.lower():
        raise ConfigurationError(f"`crontab -l` failed: {done.stderr.strip()}")
    return done.stdout.splitlines() if done.returncode == 0 else []


def _write_crontab(lines: list[str]) -> None:
    done = _crontab("-", text="\n".join(lines) + "\n" if lines else "")
    if done.returncode != 0:
        raise ConfigurationError(f"`crontab -` refused the new crontab: {done.stderr.strip()}")


def install_cron(plan: SchedulePlan) -> list[str]:
    """Put this project's lines into the user's crontab (its older lines replaced, every other
    line kept); the lines written."""
    kept = [line for line in _current_crontab() if f"{_TAG}{plan.slug}:" not in line]
    ours = crontab_text(plan).splitlines()
    _write_crontab([*kept, *ours])
    return ours


def remove_cron(project: Path) -> list[str]:
    """Take this project's lines out of the user's crontab; the lines removed."""
    slug = _slug(project)
    lines = _current_crontab()
    removed = [line for line in lines if f"{_TAG}{slug}:" in line]
    if removed:
        _write_crontab([line for line in lines if f"{_TAG}{slug}:" not in line])
    return removed


# -- systemd -------------------------------------------------------------------------------------


def unit_folder() -> Path:
    """Where systemd looks for the user's own units: `$XDG_CONFIG_HOME/systemd/user`."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "systemd" / "user"


def systemd_units(plan: SchedulePlan) -> dict[str, str]:
    """This project's unit files by name: a service per job, and a timer per timed job."""
    units: dict[str, str] = {}
    project = str(plan.project).replace("%", "%%")  # a whole-line value: only specifiers escaped
    for job in plan.jobs:
        name = f"commerce-reports-{plan.slug}-{job.name}"
        environment = "".join(
            f"Environment={_systemd_quote(f'{key}={value}', expands=False)}\n"
            for key, value in sorted(plan.environment.items())
        )
        command = " ".join(_systemd_quote(part) for part in plan.command(job))
        kind = "Type=oneshot\n" if job.when is not None else "Restart=on-failure\nRestartSec=10\n"
        install = "" if job.when is not None else "\n[Install]\nWantedBy=default.target\n"
        units[f"{name}.service"] = (
            f"# commerce-reports schedule of {plan.project}\n"
            f"[Unit]\nDescription=commerce-reports {job.name} of {project}\n\n"
            f"[Service]\n{kind}WorkingDirectory={project}\n{environment}"
            f"ExecStart={command}\n{install}"
        )
        if job.when is not None:
            units[f"{name}.timer"] = (
                f"# commerce-reports schedule of {plan.project}\n"
                f"[Unit]\nDescription=commerce-reports {job.name} of {project}, {job.when}\n\n"
                f"[Timer]\nOnCalendar={job.when.calendar()}\nPersistent=true\n\n"
                "[Install]\nWantedBy=timers.target\n"
            )
    return units


def _systemd_quote(text: str, *, expands: bool = True) -> str:
    """One word of a unit's command line (`expands`: `$` is a variable there) or of an
    `Environment=` line (where it is not): double-quoted when needed, `%` (and there `$`) escaped."""
    escaped = re.sub(r"([%$])" if expands else "(%)", r"\1\1", text)  # doubled, as systemd reads them
    if re.fullmatch(r"[A-Za-z0-9_@%+=:,./-]+", escaped):
        return escaped
    return '"' + escaped.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _systemctl(*arguments: str) -> str | None:
    """Run `systemctl --user ...`; None when it worked, else why not."""
    program = shutil.which("systemctl")
    if program is None:
        return "there is no systemctl here"
    try:
        done = subprocess.run([program, "--user", *arguments], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as error:
        return str(error)
    return None if done.returncode == 0 else (done.stderr.strip() or f"exit {done.returncode}")


def install_systemd(plan: SchedulePlan) -> list[Path]:
    """Write this project's units into the user's unit folder and enable them (timers, and the
    service of a job without a time); the files written. When systemd's user manager cannot be
    reached, the files stay and a ConfigurationError says how to enable them."""
    folder = unit_folder()
    for old in folder.glob(f"commerce-reports-{plan.slug}-*"):
        old.unlink()
    written = [save_atomic(folder / name, text) for name, text in systemd_units(plan).items()]
    enabled = [p.name for p in written if p.suffix == ".timer"] + [
        p.name for p in written if p.suffix == ".service" and "WantedBy=default.target" in p.read_text()
    ]
    problem = _systemctl("daemon-reload") or _systemctl("enable", "--now", *enabled)
    if problem is not None:
        raise ConfigurationError(
            f"wrote {len(written)} units into {folder} but could not enable them ({problem}): in a session "
            f"with systemd's user manager, run `systemctl --user daemon-reload && systemctl --user enable "
            f"--now {' '.join(enabled)}`, or use --cron"
        )
    return written


def remove_systemd(project: Path) -> list[Path]:
    """Stop, disable and delete this project's units; the files deleted."""
    found = sorted(unit_folder().glob(f"commerce-reports-{_slug(project)}-*"))
    if found:
        _systemctl("disable", "--now", *[p.name for p in found])  # no user manager: nothing runs them
        for path in found:
            path.unlink()
        _systemctl("daemon-reload")
    return found


def _slug(project: Path) -> str:
    return SchedulePlan(project, project, (), {}, ()).slug


# -- what is installed ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Installed:
    """One scheduled job found: how (`cron` or `systemd`), its project and job, when, and the last
    run the project's log records."""

    kind: str
    project: str
    job: str
    when: str
    where: str
    last_run: str = ""


def installed() -> list[Installed]:
    """Every job this toolkit scheduled for the user: the lines of the crontab (where there is
    one) and the units of the user's unit folder."""
    found: list[Installed] = []
    if shutil.which("crontab") is not None:
        for line in _current_crontab():
            if _TAG not in line:
                continue
            job = line.rsplit(":", 1)[1].strip()
            fields = 1 if line.startswith("@") else 5
            when = " ".join(line.split()[:fields])
            found.append(Installed("cron", _cron_project(line, fields), job, when, "crontab"))
    for unit in sorted(unit_folder().glob("commerce-reports-*.service")):
        job = unit.stem.rsplit("-", 1)[1]
        timer = unit.with_suffix(".timer")
        calendar = re.search(r"^OnCalendar=(.+)$", timer.read_text(), re.M) if timer.is_file() else None
        of = re.search(r"^# commerce-reports schedule of (.+)$", unit.read_text(), re.M)
        found.append(
            Installed("systemd", of[1] if of else "?", job, calendar[1] if calendar else "always", str(unit))
        )
    return found


def _cron_project(line: str, fields: int) -> str:
    """The project folder a crontab line of ours changes into (`cd <folder> && ...`), as the shell
    reads it once cron has turned `\\%` back into `%`; "?" when the line is not of that shape."""
    command = line.split(None, fields)[-1].rsplit(f" {_TAG}", 1)[0].replace("\\%", "%")
    try:
        words = shlex.split(command)
    except ValueError:
        return "?"
    return words[1] if len(words) > 2 and words[0] == "cd" and words[2] == "&&" else "?"


def gone_projects(jobs: Sequence[Installed]) -> list[str]:
    """The project folders of `jobs` that are no longer there (moved or deleted: their jobs fail)."""
    return sorted({job.project for job in jobs if job.project != "?" and not Path(job.project).is_dir()})


def last_runs(log: Path) -> dict[str, str]:
    """The last run of each job (`sync`, `report`) the log records: when it ended and how
    (`2026-11-23T05:00:41Z: exit 0 after 41 s`)."""
    last: dict[str, str] = {}
    if log.is_file():
        for line in log.read_text(errors="replace").splitlines():
            match = re.match(r"^== (\S+) (\S+) ended: (.+)$", line)
            if match:
                last[match[2]] = f"{match[1]}: {match[3]}"
    return last


# -- running a job -------------------------------------------------------------------------------


def run_logged(job: str, arguments: Sequence[str], log: Path) -> int:
    """Run `commerce-reports <arguments>` with its output appended to `log`, between a line saying
    when job `job` started and one saying how it ended (exit status and seconds); its exit status."""
    if not arguments:
        raise ValidationError("command", "nothing to run", "e.g. commerce-reports schedule run -- sync")
    from .files import make_folder, modes

    make_folder(log.parent)
    started = datetime.now(UTC)
    name = re.sub(r"\s+", "-", job.strip()) or arguments[0]
    descriptor = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, modes().file)  # as private as the lake
    with os.fdopen(descriptor, "a") as out:
        out.write(
            f"== {started:%Y-%m-%dT%H:%M:%SZ} {name} started: commerce-reports {shlex.join(arguments)}\n"
        )
        out.flush()
        code = _run_child([sys.executable, "-m", "commerce_reports", *arguments], out)
        ended = datetime.now(UTC)
        seconds = (ended - started).total_seconds()
        how = f"stopped by {signal.Signals(-code).name}" if code < 0 else f"exit {code}"
        out.write(f"== {ended:%Y-%m-%dT%H:%M:%SZ} {name} ended: {how} after {seconds:.0f} s\n")
    return 128 - code if code < 0 else code  # a signal's death as a shell says it (143: SIGTERM)


def _run_child(command: list[str], out: IO[str]) -> int:
    """Run `command` with its output into `out` until it ends, whatever stops this process: a
    SIGTERM or SIGHUP (systemd stopping the job, a closed terminal) is passed on to it, and
    Ctrl-C, which reaches it too, is left to it to finish; its exit status (-N: killed by signal N)."""
    child = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)

    def pass_on(number: int, _frame: object) -> None:
        child.send_signal(number)

    kept = {}
    with contextlib.suppress(ValueError):  # (a thread other than the main one cannot take signals)
        kept = {number: signal.signal(number, pass_on) for number in (signal.SIGTERM, signal.SIGHUP)}
    try:
        while True:
            try:
                return child.wait()
            except KeyboardInterrupt:  # (the child got it too: it stops in its own time, cleanly)
                continue
    finally:
        for number, handler in kept.items():
            signal.signal(number, handler)
