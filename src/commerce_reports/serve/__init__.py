"""`commerce-reports serve`: the dashboard as a web page, for people who never open Jupyter.

    from commerce_reports.serve import ServeConfig, serve_dashboard
    serve_dashboard(ServeConfig(data_dir, currency, thresholds), token=Secret("..."))

The period picker and its comparison with the previous period, leaderboards of networks,
merchants, links, devices and countries with their change, a drill from a network into its
merchants and links, the period's alerts, the lake's freshness and whether each figure is final;
behind a token, on loopback unless told otherwise, read-only over the lake. Panel serves it
(`pip install 'commerce-reports[serve]'`). Names load on first use (PEP 562): the period rules
alone do not load Panel.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names

if TYPE_CHECKING:
    from .board import Board, View, make_board
    from .page import DashboardPage, ServeConfig
    from .period import PERIODS, Period, period_of
    from .server import serve_dashboard

__all__ = [
    "PERIODS",
    "Board",
    "DashboardPage",
    "Period",
    "ServeConfig",
    "View",
    "make_board",
    "period_of",
    "serve_dashboard",
]

_HOMES = {
    "Board": "board",
    "View": "board",
    "make_board": "board",
    "DashboardPage": "page",
    "ServeConfig": "page",
    "PERIODS": "period",
    "Period": "period",
    "period_of": "period",
    "serve_dashboard": "server",
}

__getattr__, __dir__ = lazy_names(__name__, _HOMES, __all__)
