"""The dashboard's web server: Panel (on Bokeh and tornado) serving one page per visitor, behind a
token, in the foreground until SIGTERM or Ctrl-C.

    serve_dashboard(config, host="127.0.0.1", port=8866, token=Secret("..."))

Safe by default: it binds to loopback unless told otherwise; every page, websocket and file needs
the token (a login form asks for it once, then a signed cookie carries it); websockets are taken
only from the server's own origin; nothing runs code a visitor sends (there is no kernel, no code
cell, no file browser: the only routes are the page, its websocket, Panel's and Bokeh's own
scripts, the Vega bundle, and the login and logout forms); the lake is read through
`db.connect()`, which reads only the data folder's lake, rollups and published generations.
"""

from __future__ import annotations

import ipaddress
import logging
import secrets
import signal
import socket
import threading
from collections.abc import Callable, Sequence
from importlib.resources import files
from pathlib import Path
from typing import Any

import panel as pn
from panel.io.server import get_server

from ..errors import ValidationError
from ..secret import Secret
from .origins import websocket_origin
from .page import DashboardPage, ServeConfig, Shared
from .vega import BUNDLE_ROUTE, BundleHandler, use_package_vega

__all__ = ["is_loopback", "serve_dashboard"]

log = logging.getLogger(__name__)

_TEMPLATES = files(__package__)


def is_loopback(host: str) -> bool:
    """True for an address only this machine reaches (127.0.0.0/8, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _free_port(host: str) -> int:
    """A port free on `host` now (the server binds it next; websockets need it named up front)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.bind((host.strip("[]"), 0))
        return int(probe.getsockname()[1])


def _origins(host: str, port: int, extra: Sequence[str]) -> list[str]:
    """The origins whose pages may open the dashboard's websocket: its own address, and what a
    reverse proxy in front of it is reached as (`extra`)."""
    if is_loopback(host):
        own = [f"127.0.0.1:{port}", f"localhost:{port}"]
    elif host in ("0.0.0.0", "::"):
        own = [f"{name}:{port}" for name in (socket.gethostname(), socket.getfqdn())]
    else:
        own = [f"{host}:{port}"]
    return list(dict.fromkeys([*own, *extra]))


def _template(name: str) -> str:
    """The path of one of the package's page templates (the login and logout forms: no CDN)."""
    return str(Path(str(_TEMPLATES.joinpath(name))))


def serve_dashboard(
    config: ServeConfig,
    *,
    host: str = "127.0.0.1",
    port: int = 8866,
    token: Secret,
    origins: Sequence[str] = (),
    say: Callable[[str], None] = print,
    started: Callable[[str], None] | None = None,
) -> None:
    """Serve the dashboard over `config` at `host`:`port` (0: any free port) until SIGTERM or
    Ctrl-C; every visitor signs in with `token`. `origins` adds the addresses a reverse proxy
    serves it as (`HOST:PORT` or a URL, `origins.websocket_origin`). `say` gets the log lines (the
    address first); `started` is called with the address once the server listens."""
    _check_serving(config, token, port)
    proxied = [websocket_origin(origin) for origin in origins]
    port = port or _free_port(host)
    use_package_vega()
    shared = Shared(config.data_dir)
    visitors = _Visitors(config, shared, say)

    server = get_server(
        visitors.page,
        port=port,
        address=host,
        show=False,
        start=False,
        title="Commerce dashboard",
        websocket_origin=_origins(host, port, proxied),
        basic_auth=token.reveal(),
        cookie_secret=Secret(secrets.token_urlsafe(32)).reveal(),  # cookies end with the server
        login_template=_template("login.html"),
        logout_template=_template("logout.html"),
        extra_patterns=[(BUNDLE_ROUTE, BundleHandler)],
    )
    loop = server.io_loop

    def stop(signum: int, _frame: Any) -> None:
        say(f"stopping ({signal.Signals(signum).name})")
        loop.add_callback_from_signal(loop.stop)

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    address = f"http://{host if ':' not in host else f'[{host}]'}:{port}/"
    try:
        server.start()
        say(f"serving the dashboard of {config.data_dir} at {address}")
        if started is not None:
            started(address)
        loop.start()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        server.stop()
        visitors.close()
        shared.close()
        say("stopped")


def _check_serving(config: ServeConfig, token: Secret, port: int) -> None:
    """Refuse what `serve_dashboard` cannot serve with, before anything starts."""
    if not isinstance(config, ServeConfig):
        raise ValidationError("config", f"{config!r} is not a ServeConfig", "give ServeConfig(data_dir, ...)")
    if not isinstance(token, Secret):
        raise ValidationError("token", "is not a Secret", "give Secret(the token)")
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise ValidationError("port", f"{port!r} is not a TCP port", "give 0 to 65535 (0: any free port)")


class _Visitors:
    """The open pages of a served dashboard: a page of its own for each visitor (over the server's
    `shared` lake), said as it opens and closes (`say`), all closed with the server."""

    def __init__(self, config: ServeConfig, shared: Shared, say: Callable[[str], None]) -> None:
        self.config, self.shared, self.say = config, shared, say
        self.open: set[DashboardPage] = set()
        self.lock = threading.Lock()

    def page(self) -> Any:
        """A new visitor's page (Panel calls it at each session)."""
        visitor = DashboardPage(self.config, self.shared)
        with self.lock:
            self.open.add(visitor)
            count = len(self.open)
        self.say(f"a visitor opened the dashboard ({count} open)")

        def closed(_context: Any) -> None:
            visitor.close()
            with self.lock:
                self.open.discard(visitor)
                left = len(self.open)
            self.say(f"a visitor left ({left} open)")

        async def first_answer() -> None:
            await visitor.refresh()

        pn.state.on_session_destroyed(closed)
        pn.state.onload(first_answer)
        return visitor.layout

    def close(self) -> None:
        """Close every page still open."""
        with self.lock:
            pages = list(self.open)
        for visitor in pages:
            visitor.close()
