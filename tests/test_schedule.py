"""`commerce-reports schedule`: the lines and units it writes, checked by parsing them (systemd's
own parser where there is one), installed in a stand-in crontab and a private unit folder, listed
and removed. Running what it writes end to end is `tests/export/test_schedule_run.py`."""

from __future__ import annotations

import os
import re
import shutil
import signal
import stat
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest

from commerce_reports.cli import main
from commerce_reports.errors import ValidationError
from commerce_reports.project import init_project
from commerce_reports.schedule import When
from tests.scheduling import fake_crontab
from tests.waiting import wait_for

SYSTEMD_ANALYZE = shutil.which("systemd-analyze")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = init_project(tmp_path / "my shop").folder  # a space in the path: quoted everywhere
    monkeypatch.chdir(folder / "notebooks")  # anywhere in the project
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))  # the user's unit folder
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    return folder


def test_times_are_checked_and_written_for_cron_and_systemd() -> None:
    daily, weekly = When.parse("5:00"), When.parse("06:30", "fri")
    assert (daily.cron(), daily.calendar()) == ("0 5 * * *", "*-*-* 05:00:00")
    assert (weekly.cron(), weekly.calendar()) == ("30 6 * * 5", "Fri *-*-* 06:30:00")
    assert When.parse("0:00", "sunday").cron() == "0 0 * * 0"  # cron counts from Sunday
    assert weekly.next_after(datetime(2026, 11, 27, 6, 31)) == datetime(2026, 12, 4, 6, 30)  # a Friday
    assert daily.next_after(datetime(2026, 11, 27, 4, 59)) == datetime(2026, 11, 27, 5, 0)
    for at, day in (("25:00", None), ("5", None), ("05:00", "mo"), ("05:00", "someday")):
        with pytest.raises(ValidationError):
            When.parse(at, day)


@pytest.mark.skipif(SYSTEMD_ANALYZE is None, reason="systemd-analyze is not installed")
@pytest.mark.parametrize("day", [None, "monday", "sun"])
def test_systemd_reads_our_calendar_as_we_mean_it(day: str | None) -> None:
    when = When.parse("06:05", day)
    done = subprocess.run(
        [str(SYSTEMD_ANALYZE), "calendar", when.calendar()], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0 and f"Normalized form: {when.calendar()}" in done.stdout


def test_print_shows_the_crontab_lines_with_the_environment_but_no_secret(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COMMERCE_REPORTS_CURRENCY", "EUR")  # set here only: the job needs it
    monkeypatch.setenv("COMMERCE_REPORTS_SMTP_PASSWORD", "pw-in-the-shell-123")
    monkeypatch.setenv("COMMERCE_REPORTS_SMTP_URL", "smtp://reports@example.org@mail.example.org:587")
    (project / ".env").write_text("COMMERCE_REPORTS_DIALECT=published\n")  # the job reads .env itself
    argv = ["schedule", "add", "--print", "--email", "boss@example.org", "--sync-args", "--country US"]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    sync, report = out.splitlines()
    assert sync.startswith("0 5 * * * cd '") and report.startswith("0 6 * * 1 cd '")
    assert f"cd '{project}' && COMMERCE_REPORTS_CURRENCY=EUR " in sync
    assert "schedule run --job sync --log" in sync and sync.split(" -- ")[1].startswith(
        "sync --no-progress --country US"
    )
    assert "-- export --sync --notebook notebooks/report.ipynb --email boss@example.org #" in report
    assert "pw-in-the-shell" not in out and "DIALECT" not in out
    assert "COMMERCE_REPORTS_SMTP_PASSWORD is set in your environment only" in err
    assert not Path(project / "data" / "logs").exists()  # printed, nothing else


SECRET_SAID = "holds a secret"
BASE = "COMMERCE_REPORTS_BASE_URL"


@pytest.mark.parametrize(
    "variable, value, said",
    [
        # a user and a password in the address: refused as every base URL holding one is, masked
        (BASE, "https://reports:sk-live-0123456789abcdef@api.example.com/v1", "a user or a password"),
        # an address with a query is no base URL at all (every path is appended to it): refused first
        (BASE, "https://api.example.com/v1?token=abcdef0123456789", "has a query"),
        ("COMMERCE_REPORTS_SMTP_URL", "smtp://reports:pw-0123456789abc@mail.example.org:587", SECRET_SAID),
        (
            "COMMERCE_REPORTS_BASE_URL",
            "https://api.example.com/sk-live-0123456789abcdef/v1",
            SECRET_SAID,
        ),  # the key
    ],
)
def test_a_setting_holding_a_secret_is_never_written_into_a_job(
    variable: str,
    value: str,
    said: str,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("COMMERCE_REPORTS_SECRET_KEY", "sk-live-0123456789abcdef")
    monkeypatch.setenv(variable, value)
    for kind in ("--cron", "--systemd"):
        assert main(["schedule", "add", "--print", kind, "--no-report"]) == 2
        out, err = capsys.readouterr()
        assert f"error: {variable}: " in err and said in err, err
        assert said != SECRET_SAID or "the project's .env" in err
        assert "0123456789" not in out + err
    assert not (project.parent / "config").exists()


@pytest.mark.parametrize(
    "setting, argv, message",
    [
        ("COMMERCE_REPORTS_PACE=abc", [], "COMMERCE_REPORTS_PACE: 'abc' is not a number of seconds"),
        ("COMMERCE_REPORTS_DIALECT=bogus", [], "COMMERCE_REPORTS_DIALECT"),
        ("COMMERCE_REPORTS_MAIL_FROM=Reports\n<r@example.org>", [], "holds a line break"),  # cuts a line
        (None, ["--email", "boss@example.org"], "COMMERCE_REPORTS_SMTP_URL is not set"),
        (None, ["--email", "boss@example.org", "--no-report"], "--no-report schedules none"),
    ],
)
def test_a_setting_no_job_could_use_is_refused_before_anything_is_scheduled(
    setting: str | None,
    argv: list[str],
    message: str,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    if setting is not None:
        monkeypatch.setenv(*setting.split("=", 1))
    assert main(["schedule", "add", "--cron", *argv]) == 2
    assert message in capsys.readouterr().err


def test_a_secret_set_in_this_shell_and_in_env_is_warned_about_only_when_they_differ(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COMMERCE_REPORTS_SECRET_KEY", "sk-shell-0123456789")
    (project / ".env").write_text("COMMERCE_REPORTS_SECRET_KEY=sk-shell-0123456789\n")
    assert main(["schedule", "add", "--print", "--no-report"]) == 0
    assert "COMMERCE_REPORTS_SECRET_KEY" not in capsys.readouterr().err  # the job reads the same one
    (project / ".env").write_text("COMMERCE_REPORTS_SECRET_KEY=sk-other-0123456789\n")
    assert main(["schedule", "add", "--print", "--no-report"]) == 0
    assert (
        "differs from the project's .env: the scheduled jobs use the one in .env" in capsys.readouterr().err
    )


def test_a_relative_data_folder_is_the_job_s_as_it_is_this_shell_s_and_its_log_is_in_it(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Run in notebooks/: the shell's `mydata` is notebooks/mydata; the job runs in the project
    folder, so it is written whole. One in .env is the job's own, relative to the project folder."""
    monkeypatch.setenv("COMMERCE_REPORTS_DATA_DIR", "mydata")
    assert main(["schedule", "add", "--print", "--no-report"]) == 0
    line = capsys.readouterr().out
    lake = project / "notebooks" / "mydata"
    assert f"COMMERCE_REPORTS_DATA_DIR='{lake}' " in line and f"--log '{lake}/logs/schedule.log'" in line
    monkeypatch.delenv("COMMERCE_REPORTS_DATA_DIR")
    (project / ".env").write_text("COMMERCE_REPORTS_DATA_DIR=lake-of-env\n")
    assert main(["schedule", "add", "--print", "--no-report"]) == 0
    assert f"--log '{project}/lake-of-env/logs/schedule.log'" in capsys.readouterr().out


def test_a_site_key_named_in_sites_toml_and_set_in_this_shell_only_is_warned_about(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "data").mkdir()
    (project / "data" / "sites.toml").write_text('[sites.recipes]\nsecret_key_env = "RECIPES_SECRET_KEY"\n')
    monkeypatch.setenv("RECIPES_SECRET_KEY", "sk-recipes-0123456789")
    assert main(["schedule", "add", "--print", "--no-report"]) == 0
    out, err = capsys.readouterr()
    assert "warning: RECIPES_SECRET_KEY (the key of site recipes" in err and "0123456789" not in out + err
    (project / ".env").write_text("RECIPES_SECRET_KEY=sk-recipes-0123456789\n")
    assert main(["schedule", "add", "--print", "--no-report"]) == 0
    assert "RECIPES_SECRET_KEY" not in capsys.readouterr().err  # in .env: the job reads it


def test_a_unit_s_environment_keeps_a_dollar_as_it_is(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`$` is a variable in ExecStart= only: systemd reads Environment= values as they are."""
    from commerce_reports.config import current_sources
    from commerce_reports.schedule import schedule_plan, systemd_units

    monkeypatch.setenv("COMMERCE_REPORTS_DATA_DIR", str(project / "lake $X 100%"))
    units = systemd_units(schedule_plan(report_day=None, sources=current_sources()))
    (service,) = [text for name, text in units.items() if name.endswith("sync.service")]
    assert f'Environment="COMMERCE_REPORTS_DATA_DIR={project}/lake $X 100%%"' in service
    assert "lake $$X 100%%/logs" in service  # the log's path in ExecStart=: both escaped


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--at", "5pm"], "'5pm' is not a time of day"),
        (["--report-day", "someday"], "not a day of the week"),
        (["--email", "boss"], "'boss' is not an address"),
        (["--sync-args", "--grain week"], "is not what `sync` takes (argument --grain: invalid choice"),
        (["--sync-args=--help"], "is not what `sync` takes (it prints the help of `sync`)"),
        (["--sync-args=--plan"], "--plan in a daily sync: the job would print its plan and never sync"),
        (["--sync-args", "--start 2026-11-01 --end 2026-11-10"], "--end in a daily sync"),
        (["--sync-args", "--data-dir /tmp/elsewhere"], "--data-dir in a daily sync"),
        (["--sync-args", "--start 2999-01-01"], "--start 2999-01-01 is in the future"),
        (["--serve"], "no `serve` command"),
    ],
)
def test_a_wrong_option_exits_2_before_anything_is_written(
    argv: list[str], message: str, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if (
        argv == ["--serve"]
        and "serve" in main.__globals__["build_parser"]()._subparsers._group_actions[0].choices
    ):
        pytest.skip("this build has a serve command")
    assert main(["schedule", "add", "--cron", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err  # one line, whatever `sync` would have printed
    assert not (project.parent / "config").exists()


def test_outside_a_project_schedule_says_where_to_run_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["schedule", "add", "--print"]) == 2
    assert "no commerce-reports.toml at or above" in capsys.readouterr().err


def test_cron_lines_replace_this_projects_own_and_keep_the_rest(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    table = fake_crontab(tmp_path, monkeypatch)
    table.write_text("MAILTO=me@example.org\n15 3 * * * /usr/local/bin/backup\n")
    assert main(["schedule", "add", "--cron"]) == 0
    assert main(["schedule", "add", "--cron", "--at", "04:15", "--no-report"]) == 0  # again: replaced
    lines = table.read_text().splitlines()
    assert lines[:2] == ["MAILTO=me@example.org", "15 3 * * * /usr/local/bin/backup"]
    assert len(lines) == 3 and lines[2].startswith("15 4 * * * cd ")
    capsys.readouterr()
    assert main(["schedule", "list"]) == 0
    assert f"cron    sync    15 4 * * *            {project}" in capsys.readouterr().out
    assert main(["schedule", "remove"]) == 0
    assert table.read_text().splitlines() == lines[:2]
    assert main(["schedule", "remove"]) == 0
    assert f"nothing was scheduled for {project}" in capsys.readouterr().out


def test_a_moved_project_s_old_jobs_are_flagged_and_removed(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Its jobs fail every day (`cd` to a folder that is gone); `add` in the new place cannot
    replace them (their tags name the old path), so they are said and removed by name."""
    table = fake_crontab(tmp_path, monkeypatch)
    odd = init_project(tmp_path / "it's 100% mine").folder  # a quote and a percent sign: cron's own
    monkeypatch.chdir(odd)
    assert main(["schedule", "add", "--cron", "--no-report"]) == 0
    moved = odd.rename(tmp_path / "moved")
    monkeypatch.chdir(moved)
    assert main(["schedule", "add", "--cron", "--no-report"]) == 0
    assert f"warning: jobs of {odd} are still scheduled and its folder is gone" in capsys.readouterr().err
    assert main(["schedule", "list"]) == 0
    listed = capsys.readouterr().out
    assert f"{odd} (this folder is gone: the job fails)" in listed and f"{moved}\n" in listed
    assert main(["schedule", "remove", "--gone"]) == 0
    assert "removed from the crontab" in capsys.readouterr().out
    (line,) = table.read_text().splitlines()
    assert f"cd {moved} &&" in line
    assert main(["schedule", "remove", "--gone"]) == 0
    assert "no scheduled job belongs to a folder that is gone" in capsys.readouterr().out


def test_without_cron_the_error_says_what_to_do_instead(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    assert main(["schedule", "add", "--cron"]) == 1
    assert "no `crontab` command here" in capsys.readouterr().err


@pytest.mark.skipif(SYSTEMD_ANALYZE is None, reason="systemd-analyze is not installed")
def test_systemd_units_parse_and_without_a_user_manager_the_files_stay_with_the_way_to_enable_them(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / ".env").write_text(
        "COMMERCE_REPORTS_SMTP_URL=smtp://reports@example.org@mail.example.org:587\n"
    )
    code = main(["schedule", "add", "--systemd", "--email", "boss@example.org"])
    err = capsys.readouterr().err
    units = sorted((tmp_path / "config" / "systemd" / "user").iterdir())
    assert [u.name.rsplit("-", 1)[-1] for u in units] == [
        "report.service", "report.timer", "sync.service", "sync.timer"
    ]  # fmt: skip
    if code == 1:  # this machine: no systemd user session
        assert "could not enable them" in err and "systemctl --user enable --now" in err
    verified = subprocess.run(
        [str(SYSTEMD_ANALYZE), "verify", *map(str, units)], capture_output=True, text=True, timeout=120
    )
    assert verified.returncode == 0 and verified.stderr == "", verified.stderr
    sync = next(u for u in units if u.name.endswith("sync.service")).read_text()
    assert f"WorkingDirectory={project}\n" in sync and "Type=oneshot" in sync
    assert "OnCalendar=Mon *-*-* 06:00:00\nPersistent=true" in units[1].read_text()
    assert main(["schedule", "list"]) == 0
    listed = capsys.readouterr().out
    assert "systemd sync    *-*-* 05:00:00" in listed and "systemd report  Mon *-*-* 06:00:00" in listed
    assert main(["schedule", "remove", "--systemd"]) == 0
    assert not list((tmp_path / "config" / "systemd" / "user").iterdir())


def test_a_stopped_job_stops_its_command_and_says_so_in_the_log(tmp_path: Path) -> None:
    """systemd stops a job with SIGTERM to the wrapper: it is passed on, the command ends (never
    left running on its own), the log says how, and the exit status is a shell's (143)."""
    log = tmp_path / "schedule.log"
    seed = str(900_000 + os.getpid() % 99_999)  # names this test's command among the machine's
    wrapper = subprocess.Popen(
        [sys.executable, "-m", "commerce_reports", "schedule", "run", "--job", "serve", "--log", str(log),
         "--", "sandbox", "--port", "0", "--fast", "--seed", seed]
    )  # fmt: skip
    try:
        wait_for(lambda: log.is_file() and "Reports sandbox at" in log.read_text(), "the sandbox to start")
        wrapper.send_signal(signal.SIGTERM)
        assert wrapper.wait(timeout=60) in (0, 143)
    finally:
        wrapper.kill()
    lines = log.read_text().splitlines()
    assert re.search(r" serve ended: (stopped by SIGTERM|exit 0) after \d+ s$", lines[-1]), lines[-1]
    assert not _running_with(f"--seed\0{seed}\0")  # the command ended too: none left on its own


def _running_with(words: str) -> list[str]:
    """The processes of this machine whose command line holds `words` (NUL-separated, as /proc says)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if words.encode() in cmdline.read_bytes():
                found.append(cmdline.parent.name)
        except OSError:  # ended meanwhile
            continue
    return found


def test_schedule_run_logs_a_run_between_two_lines_and_exits_with_its_status(tmp_path: Path) -> None:
    log = tmp_path / "logs" / "schedule.log"
    argv = ["schedule", "run", "--job", "probe", "--log", str(log), "--", "config", "get", "base_url"]
    assert main(argv) == 1  # `config get` of a setting not set exits 1: a failed run
    lines = log.read_text().splitlines()
    assert lines[0].startswith("== 20") and lines[0].endswith(
        " probe started: commerce-reports config get base_url"
    )
    assert lines[1] == "base_url is not set"  # the command's own output, in between
    assert " probe ended: exit 1 after " in lines[-1] and len(lines) == 3
    assert stat.S_IMODE(log.stat().st_mode) == 0o600  # as private as the lake
