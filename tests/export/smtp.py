"""A real SMTP server on loopback for the delivery tests (aiosmtpd): it keeps every message it
accepts, raw, and checks the login it is given."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, Envelope, LoginPassword, Session

__all__ = ["Mailbox", "smtp_server"]


@dataclass
class Mailbox:
    """What the server received: (envelope sender, recipients, raw bytes) per message, and logins."""

    user: str
    password: str
    messages: list[tuple[str, list[str], bytes]] = field(default_factory=list)
    logins: list[str] = field(default_factory=list)
    unknown: set[str] = field(default_factory=set)  # recipients it refuses ("550 no such user")

    async def handle_RCPT(
        self, server: Any, session: Session, envelope: Envelope, address: str, options: list[str]
    ) -> str:
        if address in self.unknown:
            return "550 no such user"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: Any, session: Session, envelope: Envelope) -> str:
        content = envelope.original_content or b""
        self.messages.append((str(envelope.mail_from), list(envelope.rcpt_tos), bytes(content)))
        return "250 OK"

    def authenticate(
        self, server: Any, session: Session, envelope: Envelope, mechanism: str, data: Any
    ) -> AuthResult:
        if isinstance(data, LoginPassword) and (data.login.decode(), data.password.decode()) == (
            self.user,
            self.password,
        ):
            self.logins.append(data.login.decode())
            return AuthResult(success=True)
        return AuthResult(success=False, handled=False)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def smtp_server(user: str, password: str) -> Iterator[tuple[Mailbox, int]]:
    """An SMTP server on 127.0.0.1 that requires a login (plain text: loopback only) and keeps
    the messages: (mailbox, port)."""
    mailbox = Mailbox(user, password)
    port = _free_port()
    controller = Controller(
        mailbox,
        hostname="127.0.0.1",
        port=port,
        authenticator=mailbox.authenticate,
        auth_required=True,
        auth_require_tls=False,
    )
    controller.start()
    try:
        yield mailbox, port
    finally:
        controller.stop()
