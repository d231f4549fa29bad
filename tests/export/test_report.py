"""The scheduled report as people receive it: exported by the command (a real process) from the
alerts lake (two sites, the last week holding an incident), named after the period it resolved,
written beside the lake, and mailed through a real SMTP server on loopback."""

from __future__ import annotations

import email
import os
import re
import shutil
import subprocess
import sys
from datetime import timedelta
from email.message import EmailMessage
from email.policy import default
from pathlib import Path

import pytest

from commerce_reports.errors import DeliveryError
from commerce_reports.export.mail import MailSettings, send
from tests.browser import chart_marks, chromium_available, external_references, rendered_dom
from tests.export.smtp import smtp_server
from tests.export.test_export import small_notebook
from tests.lakes import ALERTS_NOW, alerts_lake

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(600),  # the alerts lake, then a kernel
    # the loopback server takes a login without TLS: the one place the client allows it
    pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS:UserWarning"),
]
REPORT = Path(__file__).resolve().parents[2] / "notebooks" / "report.ipynb"
LAST = ALERTS_NOW.date() - timedelta(days=1)
SITE_KEY = "sk-live-report-mail-0f1e2d3c4b"
SMTP_PASSWORD = "smtp-pass-9a8b7c6d5e4f"


def _export(data_dir: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "commerce_reports", "export", *args]
    return subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "COMMERCE_REPORTS_DATA_DIR": str(data_dir), **env},
    )


@pytest.mark.xdist_group("alerts-lake")  # on the worker that builds the alerts lake
def test_the_weekly_report_is_written_beside_the_lake_and_mailed(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"  # a copy: the export writes into the data folder
    shutil.copytree(alerts_lake(tmp_path_factory), data_dir)
    with smtp_server("reports@example.org", SMTP_PASSWORD) as (mailbox, port):
        done = _export(
            data_dir,
            "--notebook",
            str(REPORT),
            "--param",
            "sync=false",
            "--param",
            f"end={LAST}",
            "--email",
            "boss@example.org,team@example.org",
            env={
                "COMMERCE_REPORTS_SMTP_URL": f"smtp://reports@example.org@127.0.0.1:{port}",
                "COMMERCE_REPORTS_SMTP_PASSWORD": SMTP_PASSWORD,
                "ANALYTICS_API_KEY": SITE_KEY,  # named like a secret: must reach neither page nor mail
            },
        )
    assert done.returncode == 0, done.stderr
    first = LAST - timedelta(days=6)
    page = data_dir / "reports" / f"report_alpha-beta_{first}_{LAST}.html"
    assert done.stdout.strip() == str(page) and page.is_absolute()  # the one line printed: the path
    assert (data_dir / "reports" / f"report_alpha-beta_{first}_{LAST}.ipynb").is_file()
    html = page.read_text()
    assert external_references(html) == []
    # The title: both sites (the configured ones: no `site` given), the period, when, the currency.
    assert "Commerce report: alpha, beta</h1>" in html and f"<b>{first} to {LAST}</b> (7 days)" in html
    assert "Generated 20" in html and "amounts in USD" in html
    # The alerts of the report's own days first, the incident's cause heading its group, why below
    # it; then the comparison with the week before and what moved revenue.
    assert html.index("<h2>Alerts</h2>") < html.index("This period against the previous one")
    assert (
        "<b>alpha · network Northwind Affiliates: revenue per order $" in html
        and "why: revenue per order -" in html
    )
    assert f"judged on alpha {first} to {LAST}" in html and f"{LAST}, down " in html
    summary = html.split("This period against the previous one", 1)[1].split("</table>", 1)[0]
    for row in ("Revenue", "Orders", "Returns", "Return rate", "Clicks", "EPC", "Conversion"):
        assert f">{row}</td>" in summary, row  # clicks and EPC: the daily windows of both weeks
    assert f"{first - timedelta(days=7)} to {first - timedelta(days=1)}" in summary
    assert "clicks × EPC = revenue" in html and "What moved revenue" in html
    assert "<h3>By network</h3>" in html and "<h3>Top 10 merchants by revenue</h3>" in html
    networks = html.split("<h3>Top 10 networks by revenue</h3>", 1)[1].split("</table>", 2)[1]
    assert f"Clicks of {first} to {LAST}" in networks  # the table's own days, not the month's
    assert re.search(r"stored \d+ partitions|\d+ requests", html) is None  # no sync text
    assert SITE_KEY not in html and SMTP_PASSWORD not in html
    if chromium_available():
        marks = chart_marks(rendered_dom(page))
        assert len(marks) == 7 and all(count > 0 for count in marks), marks

    (sender, recipients, raw) = mailbox.messages[0]
    assert len(mailbox.messages) == 1 and mailbox.logins == ["reports@example.org"]
    assert (sender, recipients) == ("reports@example.org", ["boss@example.org", "team@example.org"])
    assert SITE_KEY.encode() not in raw and SMTP_PASSWORD.encode() not in raw
    message = email.message_from_bytes(raw, _class=EmailMessage, policy=default)
    assert message["Subject"].startswith(f"Commerce report: alpha, beta, {first} to {LAST} (")
    assert message["To"] == "boss@example.org, team@example.org" and message["From"] == "reports@example.org"
    body = message.get_body(preferencelist=("html",))
    assert body is not None and "Northwind Affiliates" in body.get_content()
    assert "This period against the previous one" in body.get_content()
    text = message.get_body(preferencelist=("plain",))
    assert text is not None and "Northwind Affiliates" in text.get_content()
    plain = text.get_content()
    assert "&nbsp;" not in plain and "<" not in plain  # text, not HTML stripped of its tags
    revenue_row = next(line for line in plain.splitlines() if line.startswith("Revenue "))
    assert len(revenue_row.split()) == 4 and revenue_row.split()[-1].endswith("%")  # a row of its table
    assert f"{first} to {LAST}" in plain and "What moved revenue" in plain
    (attachment,) = list(message.iter_attachments())
    assert attachment.get_filename() == page.name and attachment.get_content_type() == "text/html"
    assert attachment.get_content().replace("\r\n", "\n") == html  # mail carries text with CRLF


def test_a_failed_delivery_exits_1_and_keeps_the_report(tmp_path: Path) -> None:
    with smtp_server("reports@example.org", "the-right-one") as (_, port):
        done = _export(
            tmp_path / "data",
            "--notebook",
            str(small_notebook(tmp_path)),
            "--email",
            "boss@example.org",
            env={
                "COMMERCE_REPORTS_SMTP_URL": f"smtp://reports@example.org@127.0.0.1:{port}",
                "COMMERCE_REPORTS_SMTP_PASSWORD": SMTP_PASSWORD,  # not the server's
            },
        )
    kept = tmp_path / "data" / "reports" / "small.html"
    assert done.returncode == 1 and kept.is_file(), done.stderr
    assert f"mailing the report to boss@example.org through 127.0.0.1:{port} ..." in done.stderr
    # the server's code and words, and what to check (it was Python's tuple: (535, b'5.7.8 ...'))
    refused = "535 5.7.8 Authentication credentials invalid (check the user in COMMERCE_REPORTS_SMTP_URL"
    assert f"could not be mailed through 127.0.0.1:{port}: {refused}" in done.stderr, done.stderr
    assert f"the report stays at {kept}" in done.stderr and "Traceback" not in done.stderr
    assert SMTP_PASSWORD not in done.stderr + done.stdout


def test_a_recipient_refused_is_said_with_the_reason_and_who_got_the_report() -> None:
    message = EmailMessage()
    message["To"], message["From"], message["Subject"] = (
        "boss@example.org, bad@example.org",
        "r@example.org",
        "w",
    )
    message.set_content("the week")
    with smtp_server("reports@example.org", "pw") as (mailbox, port):
        mailbox.unknown = {"bad@example.org"}
        settings = MailSettings.from_env(
            {
                "COMMERCE_REPORTS_SMTP_URL": f"smtp://reports@example.org@127.0.0.1:{port}",
                "COMMERCE_REPORTS_SMTP_PASSWORD": "pw",
            }
        )
        with pytest.raises(DeliveryError) as raised:
            send(message, settings)
    assert str(raised.value) == (
        f"the mail server at 127.0.0.1:{port} refused bad@example.org (550 no such user); "
        "the report was sent to boss@example.org"
    )
    assert [to for _, to, _ in mailbox.messages] == [["boss@example.org"]]


@pytest.mark.parametrize(
    ("env", "said"),
    [
        ({}, "COMMERCE_REPORTS_SMTP_URL is not set"),
        ({"COMMERCE_REPORTS_SMTP_URL": "smtp://me:pw@mail.example.org"}, "holds a password: put it in"),
        ({"COMMERCE_REPORTS_SMTP_URL": "http://mail.example.org"}, "is not smtp://"),
        ({"COMMERCE_REPORTS_SMTP_URL": "smtp://relay.example.org"}, "COMMERCE_REPORTS_MAIL_FROM is not set"),
    ],
)
def test_mail_settings_are_checked_before_anything_runs(
    tmp_path: Path, env: dict[str, str], said: str
) -> None:
    from commerce_reports.errors import ConfigurationError
    from commerce_reports.export.mail import MailSettings

    with pytest.raises(ConfigurationError, match=said):
        MailSettings.from_env(env)
    settings = MailSettings.from_env(
        {
            "COMMERCE_REPORTS_SMTP_URL": "smtps://relay.example.org",
            "COMMERCE_REPORTS_SMTP_PASSWORD": SMTP_PASSWORD,
            "COMMERCE_REPORTS_MAIL_FROM": "Reports <r@example.org>",
        }
    )
    assert (settings.security, settings.port) == ("ssl", 465) and SMTP_PASSWORD not in repr(settings)
