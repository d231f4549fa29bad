"""A report delivered by mail: an HTML body with the report's title, alerts and summary, the whole
report attached (it opens offline, in any browser), sent through the SMTP server the environment
names:

    COMMERCE_REPORTS_SMTP_URL=smtp://reports@example.org@mail.example.org:587   # STARTTLS
    COMMERCE_REPORTS_SMTP_URL=smtps://reports@example.org@mail.example.org:465  # TLS from the start
    COMMERCE_REPORTS_SMTP_PASSWORD=...     # a secret: masked wherever text is shown or stored
    COMMERCE_REPORTS_MAIL_FROM=Reports <reports@example.org>   # default: the user, if an address

`smtp://` upgrades the connection with STARTTLS when the server offers it; a server that does not
is only given a password on loopback (a local relay): anywhere else that would send it in clear,
and the delivery fails instead. The password never goes into the URL.
"""

from __future__ import annotations

import re
import smtplib
import ssl
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import formatdate, make_msgid, parseaddr
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import unquote, urlsplit

from ..activity import said
from ..errors import ConfigurationError, DeliveryError
from ..redaction import holds_secret, redact
from ..secret import Secret
from ..settings import ADDRESS as _ADDRESS
from ..settings import check_smtp_url, recipients
from .parts import report_parts

if TYPE_CHECKING:  # the settings and addresses are checked before an export loads papermill
    from .notebook import ExportResult

__all__ = [
    "ENV_MAIL_FROM",
    "ENV_SMTP_PASSWORD",
    "ENV_SMTP_URL",
    "MailSettings",
    "mail_report",
    "recipients",
    "report_message",
    "send",
]

ENV_SMTP_URL = "COMMERCE_REPORTS_SMTP_URL"
ENV_SMTP_PASSWORD = "COMMERCE_REPORTS_SMTP_PASSWORD"
ENV_MAIL_FROM = "COMMERCE_REPORTS_MAIL_FROM"
_LOOPBACK = ("127.", "::1", "localhost")
_BODY_PARTS = ("title", "alerts", "summary")


@dataclass(frozen=True)
class MailSettings:
    """Where and how to send: the SMTP server, its security (`starttls` or `ssl`), the login, the
    sender. Built from the environment by `from_env`; its repr never shows the password."""

    host: str
    port: int
    security: Literal["starttls", "ssl"]
    sender: str
    user: str | None = None
    password: Secret | None = None
    timeout: float = 60.0

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> MailSettings:
        """The settings of `COMMERCE_REPORTS_SMTP_URL` (+ `_PASSWORD`, `COMMERCE_REPORTS_MAIL_FROM`),
        or a ConfigurationError saying what to set."""
        url = env.get(ENV_SMTP_URL, "").strip()
        if not url:
            raise ConfigurationError(
                f"{ENV_SMTP_URL} is not set: give the mail server, e.g. smtp://reports@example.org@mail.example.org:587"
            )
        parts = urlsplit(check_smtp_url(url, ENV_SMTP_URL))
        try:
            port = parts.port or (465 if parts.scheme == "smtps" else 587)
        except ValueError:
            raise ConfigurationError(f"{ENV_SMTP_URL}: the port is not a number from 1 to 65535") from None
        user = unquote(parts.username) if parts.username else None
        secret = env.get(ENV_SMTP_PASSWORD, "")
        password = Secret(secret) if secret.strip() else None
        sender = env.get(ENV_MAIL_FROM, "").strip() or (user if user and re.fullmatch(_ADDRESS, user) else "")
        if not sender or not re.search(_ADDRESS, parseaddr(sender)[1] or ""):
            raise ConfigurationError(
                f"{ENV_MAIL_FROM} is not set (and the SMTP user is not an address): give the sender, "
                "e.g. Reports <reports@example.org>"
            )
        security: Literal["starttls", "ssl"] = "ssl" if parts.scheme == "smtps" else "starttls"
        return cls(str(parts.hostname), port, security, sender, user, password)

    def __repr__(self) -> str:
        login = f"{self.user}:***@" if self.password else (f"{self.user}@" if self.user else "")
        scheme = "smtps" if self.security == "ssl" else "smtp"
        return f"MailSettings({scheme}://{login}{self.host}:{self.port}, from {self.sender!r})"


def report_message(
    report: Path, notebook: Mapping[str, Any], to: list[str], sender: str, subject: str | None = None
) -> EmailMessage:
    """The mail of an exported report: the notebook's title, alerts and summary as the HTML body,
    their plain-text twins as the text part (tables aligned in columns, nothing escaped), the
    report's HTML file attached."""
    parts = {name: (meta, html) for name, meta, html in report_parts(notebook)}
    texts = {name: text for name, _, text in report_parts(notebook, "text/plain")}
    body = "".join(parts[name][1] for name in _BODY_PARTS if name in parts)
    if not body:
        body = f"<p>{escape(report.name)}</p>"
    heading = parts.get("title", ({}, ""))[0]
    alerts = parts.get("alerts", ({}, ""))[0].get("count")
    said = subject or (
        "Commerce report: "
        + (
            f"{', '.join(heading['sites'])}, {heading['start']} to {heading['end']}"
            if heading
            else report.stem
        )
        + (f" ({alerts} alert{'s' if alerts != 1 else ''})" if alerts else "")
    )
    message = EmailMessage()
    message["Subject"] = said
    message["From"] = sender
    message["To"] = ", ".join(to)
    message["Date"] = formatdate(localtime=False, usegmt=True)
    message["Message-ID"] = make_msgid(domain=(parseaddr(sender)[1].rpartition("@")[2] or None))
    note = (
        "<p style='color:#555'>The whole report is attached: open it in a browser (it needs no network).</p>"
    )
    text = "\n\n".join(texts[name].strip() for name in _BODY_PARTS if texts.get(name, "").strip())
    message.set_content((text or report.name) + "\n\nThe whole report is attached.\n")
    message.add_alternative(f"<!DOCTYPE html><html><body>{body}{note}</body></html>", subtype="html")
    message.add_attachment(report.read_text(encoding="utf-8"), subtype="html", filename=report.name)
    return message


def send(message: EmailMessage, settings: MailSettings) -> None:
    """Send `message` through the server of `settings`, or a DeliveryError saying why not (secrets
    masked); the report stays on disk either way."""
    where = f"{settings.host}:{settings.port}"
    context = ssl.create_default_context()
    to = ", ".join(message.get_all("To", []))
    try:
        with said(f"mailing the report to {to} through {where}"):
            refused = _delivered(message, settings, where, context)
    except DeliveryError:
        raise
    except (smtplib.SMTPException, OSError, ssl.SSLError) as error:
        raise DeliveryError(
            f"the report could not be mailed through {where}: {_refusal(error, settings)}"
        ) from None
    if refused:
        sent = sorted(set(_addresses(to)) - set(refused))
        raise DeliveryError(
            f"the mail server at {where} refused "
            + "; ".join(f"{address} ({_refusal(refused[address], settings)})" for address in sorted(refused))
            + (f"; the report was sent to {', '.join(sent)}" if sent else "")
        )


def _addresses(header: str) -> list[str]:
    from email.utils import getaddresses

    return [address for _, address in getaddresses([header])]


def _refusal(error: BaseException | tuple[int, bytes], settings: MailSettings) -> str:
    """A mail server's refusal in words: its code and text (not Python's tuple of them), a wait
    that ran out as such, a login refused with what to check (secrets masked)."""
    text: bytes | str
    if isinstance(error, tuple):
        code, text = error
    elif isinstance(error, smtplib.SMTPResponseException):
        code, text = error.smtp_code, error.smtp_error
    elif isinstance(error, TimeoutError):
        return f"no answer within {settings.timeout:g} s"
    else:
        return redact(str(error))
    words = f"{code} {redact(text.decode(errors='replace') if isinstance(text, bytes) else text)}"
    if isinstance(error, smtplib.SMTPAuthenticationError):
        words += f" (check the user in {ENV_SMTP_URL} and {ENV_SMTP_PASSWORD})"
    return words


def _delivered(
    message: EmailMessage, settings: MailSettings, where: str, context: ssl.SSLContext
) -> dict[str, tuple[int, bytes]]:
    """Send `message`; the recipients the server refused (the others got it)."""
    if settings.security == "ssl":
        server: smtplib.SMTP = smtplib.SMTP_SSL(
            settings.host, settings.port, timeout=settings.timeout, context=context
        )
    else:
        server = smtplib.SMTP(settings.host, settings.port, timeout=settings.timeout)
    with server:
        server.ehlo()
        if settings.security == "starttls" and server.has_extn("starttls"):
            server.starttls(context=context)
            server.ehlo()
        elif (
            settings.security == "starttls" and settings.password and not settings.host.startswith(_LOOPBACK)
        ):
            raise DeliveryError(
                f"the mail server at {where} offers no STARTTLS: the password would travel in clear; "
                "use an smtps:// address or a server that offers STARTTLS"
            )
        if settings.user and settings.password:
            server.login(settings.user, settings.password.reveal())
        return server.send_message(message)


def mail_report(result: ExportResult, to: str | Iterable[str], settings: MailSettings) -> EmailMessage:
    """Mail an exported report (see `report_message`) to `to`, and return the message sent. A
    message that would carry a secret is not sent (DeliveryError); nor is one the server refuses."""
    addresses = recipients(to)
    import nbformat

    from .notebook import secrets_in_environment

    notebook = nbformat.read(result.notebook, as_version=4)
    message = report_message(result.html, notebook, addresses, settings.sender)
    secrets = secrets_in_environment()
    parts = [message.as_bytes(), *(part.get_content() for part in message.walk() if not part.is_multipart())]
    if any(holds_secret(part, secrets) for part in parts):  # (each part as sent, and as read)
        raise DeliveryError(f"the mail of {result.html.name} would contain a secret value; it was not sent")
    send(message, settings)
    return message
