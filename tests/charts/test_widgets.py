"""The dashboard, driven from Python: set a control's value, check what it re-queried."""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import duckdb
import ipywidgets as w
import pytest

from commerce_reports import widgets
from commerce_reports.charts import EMPTY_TITLE, Selection
from commerce_reports.db import connect
from commerce_reports.errors import ValidationError
from commerce_reports.widgets import (
    Dashboard,
    DashboardBox,
    DashboardState,
    Rendered,
    dashboard,
    render_state,
)
from tests.charts.conftest import END, NOW, START
from tests.lakes import sandbox_lake

MONTH = DashboardState(Selection(start=START, end=END))


def test_controls_are_filled_from_duckdb(con: duckdb.DuckDBPyConnection) -> None:
    board = Dashboard(con, MONTH, debounce=0)
    assert [v for _, v in board.site.options] == ["", "alpha", "beta"]
    assert len(board.network.options) > 5 and board.network.value == ""
    assert {v for _, v in board.device.options} >= {"Desktop", "Mobile"}
    assert ("US", "US") in board.country.options
    assert board.top_n.continuous_update is False
    assert 1 <= board.data.height <= 15 and board.message == ""
    assert "rows" in board.status.value


def test_changing_a_control_requeries(con: duckdb.DuckDBPyConnection) -> None:
    board = Dashboard(con, MONTH, debounce=0)
    before = board.refreshes
    board.dimension.value = "network"
    assert board.refreshes == before + 1
    networks = set(board.data["key"].to_list())
    board.metric.value = "epc"
    assert board.data["epc"].is_not_null().all()
    assert board.data["epc"].to_list() == sorted(board.data["epc"].to_list(), reverse=True)
    board.top_n.value = 3
    assert board.data.height == 3 and set(board.data["key"].to_list()) <= networks | set()
    board.dimension.value = "device"
    board.network.value = board.network.options[1][1]
    assert board.state.selection.network == board.network.options[1][1]
    assert set(board.data["key"].to_list()) <= {"Desktop", "Mobile", "Tablet", "Unknown"}


def test_site_change_reloads_the_filter_options(con: duckdb.DuckDBPyConnection) -> None:
    board = Dashboard(con, MONTH, debounce=0)
    board.site.value = "beta"
    assert board.state.selection.site == "beta"
    assert board.rendered.selection is not None and board.rendered.selection.site == "beta"


def test_an_empty_selection_says_so(con: duckdb.DuckDBPyConnection) -> None:
    board = Dashboard(con, MONTH, debounce=0)
    with board.hold():
        board.start.value = date(2020, 1, 1)
        board.end.value = date(2020, 1, 31)
    assert board.data.is_empty()
    assert board.message.startswith("No data for this selection")
    assert board.rendered.chart.to_dict()["title"]["text"] == EMPTY_TITLE
    assert "No data for this selection" in board.status.value


def test_bad_input_and_unavailable_metrics_are_messages_not_errors(con: duckdb.DuckDBPyConnection) -> None:
    board = Dashboard(con, MONTH, debounce=0)
    board.start.value = date(2026, 3, 20)  # after the end
    assert "start" in board.message and board.data.is_empty()
    assert board.rendered.chart.to_dict()["title"] == EMPTY_TITLE
    board.start.value = START
    board.metric.value = "clicks"  # links have no clicks: the service aggregates them elsewhere
    assert "only per device, country and network" in board.message


@pytest.mark.parametrize(
    ("dimension", "metric", "filters", "said"),
    [
        (
            "country",
            "epc",
            {"device": "Mobile"},
            "EPC, earnings per click: not aggregated by the service per country for device Mobile (it "
            "slices its reports by one filter at a time): clear the device filter, or show it per device",
        ),
        (
            "network",
            "clicks",
            {"device": "Mobile", "country": "US"},
            "Clicks: not aggregated by the service per network for device Mobile and country US (it "
            "slices its reports by one filter at a time): clear the device or the country filter",
        ),
    ],
)
def test_a_metric_the_service_does_not_aggregate_under_the_filters_says_so_not_no_data(
    con: duckdb.DuckDBPyConnection, dimension: str, metric: str, filters: dict[str, str], said: str
) -> None:
    """It said "No data for this selection (beta · ... · device Mobile)"."""
    sel = Selection(site="beta", start=START, end=END, **filters)
    rendered = render_state(con, DashboardState(sel, dimension, metric))  # type: ignore[arg-type]
    assert rendered.message == said and rendered.data.is_empty()
    cleared = replace(sel, device=None)  # as it advises
    answered = render_state(con, DashboardState(cleared, dimension, metric))  # type: ignore[arg-type]
    assert answered.message == "" and not answered.data.is_empty()


@pytest.mark.parametrize(
    ("dimension", "country", "said"),
    [
        (
            "network",
            "DE",
            "Clicks per network: the lake keeps no report of the service for country DE (a sync keeps "
            "a country's reports when asked: `commerce-reports sync --country DE`)",
        ),
        ("network", "US", ""),  # kept: the lake's sync asked for it
    ],
)
def test_a_slice_the_lake_never_kept_says_how_to_keep_it_not_no_data(
    con: duckdb.DuckDBPyConnection, dimension: str, country: str, said: str
) -> None:
    """The service aggregates clicks per network for any one country, but a sync keeps a country's
    reports only when asked (the lake was synced with US and GB): it said "No data"."""
    sel = Selection(site="beta", start=START, end=END, country=country)
    rendered = render_state(con, DashboardState(sel, dimension, "clicks"))  # type: ignore[arg-type]
    assert rendered.message == said
    assert rendered.data.is_empty() == bool(said)


def test_hold_queries_once(con: duckdb.DuckDBPyConnection) -> None:
    board = Dashboard(con, MONTH, debounce=0)
    before = board.refreshes
    with board.hold():
        board.dimension.value = "country"
        board.metric.value = "orders"
        board.top_n.value = 5
    assert board.refreshes == before + 1
    assert board.data.height == 5 and board.data["orders"].is_sorted(descending=True)


def test_quick_changes_are_coalesced_on_the_event_loop(con: duckdb.DuckDBPyConnection) -> None:
    async def scenario() -> tuple[int, int, str]:
        board = Dashboard(con, MONTH, debounce=0.05)
        before = board.refreshes
        board.dimension.value = "network"
        board.metric.value = "orders"
        board.top_n.value = 4
        loading = board.status.value
        await asyncio.sleep(0.3)
        return board.refreshes - before, board.data.height, loading

    refreshes, rows, loading = asyncio.run(scenario())
    assert refreshes == 1 and rows == 4
    assert "Loading" in loading


async def _settled(board: Dashboard) -> None:
    """Wait, on the event loop, until the dashboard's queued refresh has said how it ended."""
    deadline = time.monotonic() + 10
    while "Loading" in board.status.value:
        assert time.monotonic() < deadline, "the dashboard still says Loading"
        await asyncio.sleep(0.01)


def test_a_refresh_that_fails_says_why_and_the_next_change_tries_again(
    con: duckdb.DuckDBPyConnection, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An exception in the debounced refresh (on the event loop, where no one sees it) left
    "Loading" shown for good."""
    failures = [duckdb.ConnectionException("Connection Error: Connection has already been closed\nat ...")]

    def failing_once(*args: Any, **kwargs: Any) -> Rendered:
        if failures:
            raise failures.pop()
        return render_state(*args, **kwargs)

    async def scenario() -> tuple[str, Dashboard]:
        board = Dashboard(con, MONTH, debounce=0.01)
        monkeypatch.setattr(widgets, "render_state", failing_once)
        board.metric.value = "orders"
        await _settled(board)
        failed = board.status.value
        board.top_n.value = 4
        await _settled(board)
        return failed, board

    failed, board = asyncio.run(scenario())
    assert failed == "<b>⚠ ConnectionException: Connection Error: Connection has already been closed</b>"
    assert board.data.height == 4 and "rows" in board.status.value


def test_a_change_after_the_connection_closed_says_so_at_once(con: duckdb.DuckDBPyConnection) -> None:
    cursor = con.cursor()
    board = Dashboard(cursor, MONTH, debounce=0)
    cursor.close()
    board.metric.value = "orders"  # (it raised into the widget's observer)
    assert "closed" in board.status.value and "Loading" not in board.status.value


def test_dashboard_is_a_widget_and_the_query_is_a_plain_function(con: duckdb.DuckDBPyConnection) -> None:
    box = dashboard(con, start=START, end=END, dimension="product", debounce=0)
    assert isinstance(box, DashboardBox) and isinstance(box, w.Widget)
    assert box.dashboard.data.height >= 1
    rendered = render_state(con, DashboardState(Selection(start=START, end=END), "product", top_n=2))
    assert rendered.data.height == 2 and rendered.message == ""
    assert rendered.chart.to_dict()["mark"]["type"] == "bar"


def test_the_chart_says_the_days_it_covers(con: duckdb.DuckDBPyConnection) -> None:
    board = Dashboard(con, DashboardState(Selection(site="alpha")), debounce=0)
    assert (board.start.value, board.end.value) == (START, END)  # the days the lake holds
    subtitle = board.rendered.chart.to_dict()["title"]["subtitle"][0]
    assert subtitle.startswith(f"alpha · {START} to {END}; {END} partial")


def test_a_redraw_after_a_sync_says_the_days_the_lake_holds_now(tmp_path: Path) -> None:
    """A sync adds a day while the dashboard is shown: the next redraw's subtitle names it, and
    it is the partial one (it named the days stored when the dashboard was made)."""
    first, day = END - timedelta(days=1), END + timedelta(days=1)
    sandbox_lake(tmp_path, now=NOW, days=2, countries=(), first_day=START)
    with connect(tmp_path) as con:
        board = Dashboard(con, DashboardState(Selection(site="alpha"), "network"), debounce=0)
        assert _subtitle(board).startswith(f"alpha · {first} to {END}; {END} partial")
        sandbox_lake(tmp_path, now=NOW + timedelta(days=1), days=1, countries=(), first_day=START)
        board.end.value = day
        assert board.data.height >= 1
        assert _subtitle(board).startswith(f"alpha · {first} to {day}; {day} partial")


def _subtitle(board: Dashboard) -> str:
    subtitle: str = board.rendered.chart.to_dict()["title"]["subtitle"][0]
    return subtitle


@pytest.mark.parametrize(
    ("make", "parameter"),
    [
        (lambda con: Dashboard(con, {"site": "alpha"}), "state"),  # type: ignore[arg-type]
        (lambda con: Dashboard(con, debounce=-1), "debounce"),
        (lambda con: Dashboard("data/commerce.duckdb"), "con"),  # type: ignore[arg-type]
        (lambda con: dashboard(con, site=["alpha", "beta"]), "site"),
        (lambda con: dashboard(con, dimension="page"), "dimension"),
        (lambda con: dashboard(con, top_n=0), "top_n"),
        (lambda con: render_state(con, "links"), "state"),  # type: ignore[arg-type]
    ],
)
def test_bad_arguments_are_validation_errors(
    con: duckdb.DuckDBPyConnection, make: object, parameter: str
) -> None:
    with pytest.raises(ValidationError) as raised:
        make(con)  # type: ignore[operator]
    assert raised.value.parameter == parameter
