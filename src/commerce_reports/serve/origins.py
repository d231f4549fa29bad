"""The addresses the dashboard is reached at, checked before it loads: the host it binds to, and
the origins whose pages may open its websocket (a reverse proxy's), read into the form Bokeh's
allowlist compares with a browser's `Origin`. Light (no Panel): `commerce-reports serve` checks
its words with it first."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from ..errors import ValidationError

__all__ = ["HOST_NAME", "websocket_origin"]

HOST_NAME = r"[A-Za-z0-9]([A-Za-z0-9.-]{0,252})"  # a host name or an IPv4 address (`re` compiles it once)
_DEFAULT_PORTS = {"http": 80, "https": 443}  # a browser's `Origin` names no port when it is its scheme's


def websocket_origin(text: str) -> str:
    """`text`, an address a reverse proxy serves the dashboard as (`HOST:PORT`, or the URL a browser
    shows, e.g. `https://dash.example.org`), as Bokeh's allowlist holds it: `host:port`, or the host
    alone for a default port (the browser's `Origin` then names none, which Bokeh reads as the
    host alone). Anything else is refused here: Bokeh refused an empty one only once the server had
    started, and let a bare word or `HOST:443` match no browser at all."""
    host, port = _host_and_port(text.strip())
    if not re.fullmatch(HOST_NAME, host) or not 0 < port <= 65535:
        raise ValidationError(
            "origins",
            f"{text!r} is not an origin",
            "give HOST:PORT (e.g. dash.example.org:8443) or the URL the dashboard is reached at "
            "(e.g. https://dash.example.org)",
        )
    return host.lower() if port in _DEFAULT_PORTS.values() else f"{host.lower()}:{port}"


def _host_and_port(origin: str) -> tuple[str, int]:
    """The host and port `origin` names (a URL's default port when it names none); `("", 0)` when
    it is neither `HOST:PORT` nor an http(s) URL with nothing past its address."""
    if "://" not in origin:
        host, _, digits = origin.rpartition(":")
        return (host, int(digits)) if digits.isascii() and digits.isdigit() else ("", 0)
    url = urlsplit(origin)
    try:
        port = url.port
    except ValueError:  # a port that is no number, or out of range
        return "", 0
    default = _DEFAULT_PORTS.get(url.scheme)
    if default is None or "@" in url.netloc or url.path not in ("", "/") or url.query or url.fragment:
        return "", 0
    return url.hostname or "", default if port is None else port
