"""`commerce-reports serve`: the dashboard as a web page, behind a token, in the foreground (a user
service runs it as it is: log lines on stderr, a clean stop on SIGTERM or Ctrl-C)."""

from __future__ import annotations

import argparse
import re
import sys

from .parser import add_command

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without loading typing: `--help` starts at once
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from .parser import CommandParser

__all__ = ["ENV_SERVE_HOST", "ENV_SERVE_PORT", "ENV_SERVE_TOKEN", "MIN_TOKEN", "register"]

ENV_SERVE_TOKEN = "COMMERCE_REPORTS_SERVE_TOKEN"
ENV_SERVE_HOST = "COMMERCE_REPORTS_SERVE_HOST"
ENV_SERVE_PORT = "COMMERCE_REPORTS_SERVE_PORT"
DEFAULT_HOST, DEFAULT_PORT = "127.0.0.1", 8866
MIN_TOKEN = 16  # characters: a shorter one could be guessed over the network


def register(subparsers: Any) -> None:
    """Add the `serve` subcommand to the `commerce-reports` parser."""
    add_command(
        subparsers,
        "serve",
        help="the dashboard as a web page (period comparisons, leaderboards, drill-down, alerts)",
        description="Serve the dashboard over the lake as a web page: pick a period and compare it with "
        "the one before, read the leaderboards of networks, merchants, links, devices and countries with "
        "their change, drill from a network into its merchants and links, read the period's alerts and "
        "how fresh and final the figures are. Read-only over the lake; every visitor signs in with a token "
        f"(generated and printed at start, or ${ENV_SERVE_TOKEN}, or --token-file). Binds to loopback "
        "unless --host says otherwise. Runs in the foreground until SIGTERM or Ctrl-C (exit 0).",
        examples=[
            "commerce-reports serve",
            "commerce-reports serve --port 9000 --data-dir /srv/reports/data",
            "COMMERCE_REPORTS_SERVE_TOKEN=$(cat ~/.serve-token) commerce-reports serve",
            "commerce-reports serve --host 0.0.0.0 --token-file ~/.config/commerce-reports/serve-token",
        ],
        define=_arguments,
        handler=_serve,
    )


def _arguments(parser: CommandParser) -> None:
    from pathlib import Path

    from .options import add_data_dir

    parser.add_argument(
        "--host",
        help=f"the address to listen on (default ${ENV_SERVE_HOST}, else {DEFAULT_HOST}: this machine only; "
        "0.0.0.0 serves every network this machine is on)",
    )
    parser.add_argument(
        "--port", type=_port, help=f"the port (default ${ENV_SERVE_PORT}, else {DEFAULT_PORT}; 0: any free)"
    )
    parser.add_argument(
        "--token-file",
        type=Path,
        help=f"read the access token from this file (default ${ENV_SERVE_TOKEN}, else a new one, printed)",
    )
    parser.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        type=_origin,
        metavar="HOST:PORT",
        help="an address a reverse proxy serves the dashboard as: HOST:PORT, or the URL it is reached at, "
        "e.g. https://dash.example.org (repeatable)",
    )
    add_data_dir(parser)


def _port(text: str) -> int:
    if not text.isdigit() or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a TCP port: give 0 to 65535")
    return int(text)


def _origin(text: str) -> str:
    """An origin a reverse proxy serves the dashboard as, as given (`serve_dashboard` reads it),
    else a usage error while the command line is read: before the token is said or Panel loads."""
    from ..errors import ValidationError
    from ..serve.origins import websocket_origin

    try:
        websocket_origin(text)
    except ValidationError as error:
        raise argparse.ArgumentTypeError(f"{error.problem}; {error.allowed}") from None
    return text


def _host(text: str) -> str:
    """An IP address or a host name to bind, else a usage error."""
    import ipaddress  # here, not at the top: `--help` loads every command's module

    from ..serve.origins import HOST_NAME
    from .options import UsageError

    candidate = text.strip()
    try:
        ipaddress.ip_address(candidate.strip("[]"))
        return candidate.strip("[]")
    except ValueError:
        if re.fullmatch(HOST_NAME, candidate):
            return candidate
    raise UsageError("--host", f"{text!r} is not an address or host name", "give e.g. 127.0.0.1 or 0.0.0.0")


def _token(token_file: Path | None, env: dict[str, str]) -> tuple[str | None, str]:
    """The token chosen (None: generate one) and where it came from."""
    from .options import UsageError

    if token_file is not None:
        try:
            text = token_file.expanduser().read_text().strip()
        except (OSError, UnicodeDecodeError) as error:
            raise UsageError(
                "--token-file", f"cannot read {token_file}: {error}", "give a readable file"
            ) from None
        chosen, source = text, f"--token-file {token_file}"
    else:
        chosen, source = env.get(ENV_SERVE_TOKEN, "").strip(), ENV_SERVE_TOKEN
    if not chosen:
        if token_file is not None:
            raise UsageError("--token-file", f"{token_file} is empty", "write the token in it")
        return None, "generated"
    if len(chosen) < MIN_TOKEN or any(c.isspace() for c in chosen):
        raise UsageError(
            source.split()[0],
            f"the token is {len(chosen)} characters or holds spaces",
            f"give at least {MIN_TOKEN} characters without spaces, e.g. what "
            "`python -c 'import secrets; print(secrets.token_urlsafe(24))'` prints, "
            "or leave it unset to have one generated",
        )
    return chosen, source


def _listenable(host: str, port: int) -> None:
    """The address checked before the dashboard loads (seconds of Panel) and the token is said: a
    port another server listens on, or a host that does not resolve or is not this machine's, is one
    line naming it, exit 2. Port 0 (any free one) is bound too: the host is still checked."""
    import errno
    import socket

    from .options import UsageError

    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror as error:
        raise UsageError(
            "--host",
            f"{host} does not resolve ({error.strerror})",
            "give 127.0.0.1, 0.0.0.0 or a name that resolves to an address of this machine",
        ) from None
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # (a port in TIME_WAIT is free)
        try:
            probe.bind(address)
        except OSError as error:
            if error.errno == errno.EADDRINUSE:
                raise UsageError(
                    "--port",
                    f"{host}:{port} is taken: another server listens there (a dashboard still running?)",
                    "stop it, or give another --port (0: any free one)",
                ) from None
            raise UsageError(
                "--host",
                f"{host} is not an address of this machine ({error.strerror})",
                "give 127.0.0.1, 0.0.0.0 or one of this machine's addresses",
            ) from None


def _serve(args: argparse.Namespace) -> int:
    from ..config import current_settings
    from .options import UsageError, existing_lake

    settings = current_settings()
    env = settings.env
    host = _host(args.host or env.get(ENV_SERVE_HOST, "") or DEFAULT_HOST)
    port = args.port
    if port is None:
        configured = env.get(ENV_SERVE_PORT, "").strip()
        try:
            port = _port(configured) if configured else DEFAULT_PORT
        except argparse.ArgumentTypeError as error:
            raise UsageError(ENV_SERVE_PORT, str(error), "give 0 to 65535") from None
    chosen, source = _token(args.token_file, env)
    data_dir = existing_lake("serve", args.data_dir)  # a mistyped folder: exit 2, nothing created
    _listenable(host, port)
    from ..activity import Step

    with Step("loading the dashboard (Panel, DuckDB)", say=say):
        from ..alerting import Thresholds
        from ..db import ensure_lake
        from ..errors import ConfigurationError
        from ..secret import Secret

        ensure_lake(data_dir)  # an empty lake: say how to fill it rather than serve nothing
        try:
            from ..serve import ServeConfig, serve_dashboard
            from ..serve.server import is_loopback
        except ImportError as error:
            raise ConfigurationError(
                f"the dashboard server is not installed ({error.name} is missing): "
                "pip install 'commerce-reports[serve]'"
            ) from None
    token = Secret(chosen) if chosen else Secret(_new_token())
    config = ServeConfig(data_dir, settings.currency, Thresholds.from_table(settings.alerts))
    if not is_loopback(host):
        say(
            f"warning: serving on {host}, reachable from other machines: anyone who can reach this address "
            "can try the token, and the traffic is not encrypted. Put a TLS reverse proxy in front of it "
            "(--allow-origin names the address it serves), or use --host 127.0.0.1"
        )
    if chosen is None:
        say(f"access token (generated; set {ENV_SERVE_TOKEN} to choose one): {token.reveal()}")
    else:
        say(f"access token: the one in {source}")
    serve_dashboard(config, host=host, port=port, token=token, origins=args.allow_origin, say=say)
    return 0


def _new_token() -> str:
    import secrets

    return secrets.token_urlsafe(24)


def say(line: str) -> None:
    """One log line on stderr, at once (a service's journal reads it as it comes)."""
    print(line, file=sys.stderr, flush=True)
