"""The origins a reverse proxy serves the dashboard as: read as a browser's `Origin` names them
(Bokeh reads a bare host as port 80, and a browser names no default port), anything else refused
before the server starts, by the library as by the command line."""

from __future__ import annotations

from pathlib import Path

import pytest

from commerce_reports.errors import ValidationError
from commerce_reports.serve.origins import websocket_origin


@pytest.mark.parametrize(
    ("given", "allowed"),
    [
        ("https://dash.example.org", "dash.example.org"),
        ("https://Dash.Example.org:443/", "dash.example.org"),
        ("http://10.0.0.5:8080", "10.0.0.5:8080"),
        ("dash.example.org:8443", "dash.example.org:8443"),
        ("dash.example.org:443", "dash.example.org"),  # a browser sends no :443: Bokeh's :80 matches it
    ],
)
def test_an_origin_is_held_as_a_browser_names_it(given: str, allowed: str) -> None:
    assert websocket_origin(given) == allowed


@pytest.mark.parametrize(
    "given",
    [
        "",
        "garbage",
        "*",
        "dash.example.org:0",
        "dash.example.org:https",
        "ftp://dash.example.org",
        "https://dash.example.org/board",
        "https://user@dash.example.org",
        "https://dash.example.org:99999",
        "[::1]:8080",
    ],
)
def test_what_is_no_origin_is_refused_saying_what_one_looks_like(given: str) -> None:
    with pytest.raises(
        ValidationError, match=r"is not an origin; give HOST:PORT .* https://dash.example.org"
    ):
        websocket_origin(given)


def test_the_library_refuses_an_origin_before_the_server_starts(tmp_path: Path) -> None:
    from commerce_reports.alerting import Thresholds
    from commerce_reports.money import Currency
    from commerce_reports.secret import Secret
    from commerce_reports.serve import ServeConfig, serve_dashboard

    config = ServeConfig(tmp_path, Currency.of("USD"), Thresholds())
    with pytest.raises(ValidationError, match="origins: '' is not an origin"):
        serve_dashboard(config, port=0, token=Secret("x" * 16), origins=[""], say=pytest.fail)
