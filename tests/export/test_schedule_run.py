"""`commerce-reports schedule` end to end: the crontab lines it writes, run as cron runs them (by
`/bin/sh`, with cron's bare environment), sync the project's lake from a sandbox served on
loopback (the project's key and address in its `.env`, as a real service's would be) and mail the
weekly report through a real SMTP server on loopback; the log they append to is read back, and
`schedule list` reads each job's last run from it. The sync runs at its scheduled time under
libfaketime; the report runs on the real clock, because libfaketime breaks the kernel's sleeps
(ipykernel's `time.sleep` fails with EINVAL under it).

The sandbox serves a small world (a site of 10 transactions a day), and the project's report
notebook is a small one (the full report's cells are `test_report.py`'s business): what is tested
here is the schedule, not the report.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from commerce_reports.cli import main
from commerce_reports.project import init_project
from commerce_reports.sandbox import SandboxConfig, run_sandbox
from tests.export.smtp import smtp_server
from tests.export.test_export import small_notebook
from tests.scheduling import fake_crontab

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(600),  # a sync, then a kernel
    pytest.mark.skipif(shutil.which("faketime") is None, reason="needs Debian's faketime"),
    pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS:UserWarning"),
]

SMTP_PASSWORD = "smtp-pass-schedule-5e4f3a2b"
SITE_KEY = "sandbox-alpha-key"  # the sandbox's key of its site alpha


def test_the_written_jobs_run_as_cron_runs_them_and_log_each_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = init_project(tmp_path / "shop").folder
    shutil.copyfile(small_notebook(tmp_path), project / "notebooks" / "report.ipynb")
    table = fake_crontab(tmp_path, monkeypatch)
    monkeypatch.chdir(project)
    today = datetime.now(UTC).date()
    cron_environment = {  # what cron gives a job, and this test's private user folders
        "HOME": str(tmp_path),
        "LOGNAME": "reports",
        "PATH": "/usr/bin:/bin",
        "SHELL": "/bin/sh",
        "XDG_CACHE_HOME": os.environ["XDG_CACHE_HOME"],
        "XDG_DATA_HOME": os.environ["XDG_DATA_HOME"],
        "DONT_FAKE_MONOTONIC": "1",  # libfaketime: the wall clock only (see library-notes)
    }
    world = SandboxConfig(pace=0.0, transactions_per_day=10, first_day=today - timedelta(days=120))
    with run_sandbox(world) as sandbox, smtp_server("reports@example.org", SMTP_PASSWORD) as (mailbox, port):
        with (project / ".env").open("a") as env:  # what the jobs read: nothing of it in the crontab
            env.write(
                f"COMMERCE_REPORTS_SECRET_KEY={SITE_KEY}\nCOMMERCE_REPORTS_SITE=alpha\n"
                f"COMMERCE_REPORTS_BASE_URL={sandbox.base_url}\nCOMMERCE_REPORTS_PACE=0\n"
                f"COMMERCE_REPORTS_SMTP_URL=smtp://reports@example.org@127.0.0.1:{port}\n"
                f"COMMERCE_REPORTS_SMTP_PASSWORD={SMTP_PASSWORD}\n"
            )
        assert main(["schedule", "add", "--cron", "--email", "boss@example.org"]) == 0
        lines = table.read_text().splitlines()
        assert [line.split()[:5] for line in lines] == [["0", "5", "*", "*", "*"], ["0", "6", "*", "*", "1"]]
        for line, clock in zip(lines, (["faketime", f"{today} 05:00:00"], []), strict=True):
            command = line.split(None, 5)[5]  # after the five time fields: what cron hands /bin/sh
            done = subprocess.run(
                [*clock, "/bin/sh", "-c", command],
                cwd=tmp_path,
                env=cron_environment,
                capture_output=True,
                text=True,
                timeout=540,
            )
            log = (project / "data" / "logs" / "schedule.log").read_text()
            assert done.returncode == 0, f"{command}\n{done.stdout}{done.stderr}\n{log}"
            assert done.stdout == done.stderr == ""  # everything went into the log
    assert f"== {today}T05:00:" in log  # the sync's clock: its scheduled time
    assert "sync started: commerce-reports sync --no-progress\n" in log
    assert "report started: commerce-reports export --sync --notebook notebooks/report.ipynb" in log
    ended = [line for line in log.splitlines() if " ended: " in line]
    assert len(ended) == 2 and all("ended: exit 0 after" in line for line in ended)
    assert "lake: " + str(project / "data") in log  # the sync ran in the project, on its lake
    reports = list((project / "data" / "reports").glob("*.html"))
    assert len(reports) == 1 and str(reports[0].resolve()) in log  # the export printed its path
    assert len(mailbox.messages) == 1 and mailbox.messages[0][1] == ["boss@example.org"]
    assert (project / "data" / "lake" / "site=alpha" / "manifest.json").is_file()
    assert SMTP_PASSWORD not in log + table.read_text() and SITE_KEY not in log + table.read_text()

    capsys.readouterr()
    assert main(["schedule", "list"]) == 0
    listed = capsys.readouterr().out
    assert f"cron    sync    0 5 * * *             {project}; last run {today}T05:0" in listed
    assert f"cron    report  0 6 * * 1             {project}; last run {today}T" in listed
