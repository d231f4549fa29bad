"""Loopback test servers served from a thread of their own, shut down and closed at exit."""

from __future__ import annotations

import socketserver
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TypeVar

Server = TypeVar("Server", bound=socketserver.BaseServer)


@contextmanager
def serving(server: Server) -> Iterator[Server]:
    """Serve `server` in a daemon thread until exit, then shut it down and close it. It polls for
    its shutdown every 20 ms (socketserver's default, half a second, is what each teardown waited)."""
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
