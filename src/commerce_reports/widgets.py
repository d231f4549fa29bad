"""An interactive dashboard for notebooks: filters that re-query DuckDB, one chart, a status line.

    from commerce_reports.widgets import dashboard
    dashboard(commerce_reports.connect())       # JupyterLab or the classic notebook

Only standard ipywidgets. Every control re-queries DuckDB (small, aggregated answers); changes are
coalesced: sliders report on release (`continuous_update=False`) and a short timer on the kernel's
event loop lets several quick changes run a single query. The query and the chart live in plain
functions (`DashboardState`, `render_state`), so they are tested and benchmarked without a frontend.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import date
from html import escape
from typing import Any

import altair as alt
import duckdb
import ipywidgets as w
import polars as pl

from .charts.performance import ranking_chart
from .charts.queries import (
    AGGREGATE_METRICS,
    DIMENSIONS,
    METRICS,
    Dimension,
    Metric,
    Selection,
    filter_options,
    ranking_frame,
    select,
)
from .charts.style import EMPTY_TITLE, METRIC_LABELS, empty_chart
from .errors import ValidationError

__all__ = ["Dashboard", "DashboardBox", "DashboardState", "Rendered", "dashboard", "render_state"]

_ALL = ""  # the "no filter" option of a dropdown (ipywidgets treats a None value as no selection)
_AGGREGATED_BY = ("device", "country", "network")


@dataclass(frozen=True)
class DashboardState:
    """Everything the dashboard shows, as plain values."""

    site: str | None = None
    start: date | None = None
    end: date | None = None
    network: str | None = None
    device: str | None = None
    country: str | None = None
    dimension: Dimension = "link"
    metric: Metric = "revenue"
    top_n: int = 15


@dataclass(frozen=True)
class Rendered:
    """One answer: the selection it was for, its rows, its chart and a message ('' when all is well)."""

    selection: Selection | None
    data: pl.DataFrame
    chart: alt.TopLevelMixin
    message: str
    seconds: float


def render_state(con: duckdb.DuckDBPyConnection, state: DashboardState) -> Rendered:
    """Query DuckDB for `state` and build its chart. Bad input and empty selections come back as a
    message and a chart saying so, never as an exception (a dashboard must not die on a click)."""
    started = time.perf_counter()
    try:
        sel = select(
            con,
            state.site,
            state.start,
            state.end,
            network=state.network,
            device=state.device,
            country=state.country,
        )
    except ValidationError as error:
        frame = pl.DataFrame()
        chart = (
            alt.Chart(pl.DataFrame({"message": [str(error)]}), title=EMPTY_TITLE)
            .mark_text()
            .encode(text="message:N", tooltip=["message:N"])
        )
        return Rendered(None, frame, chart, str(error), time.perf_counter() - started)
    label = METRIC_LABELS[state.metric][0]
    if state.metric in AGGREGATE_METRICS and state.dimension not in _AGGREGATED_BY:
        message = f"{label} is aggregated by the service only per device, country and network"
        return Rendered(sel, pl.DataFrame(), empty_chart(sel, f"{label} per {state.dimension}"), message, 0.0)
    frame = ranking_frame(con, state.dimension, sel, metric=state.metric, top_n=state.top_n)
    chart = ranking_chart(frame, state.dimension, state.metric, sel)
    message = "" if not frame.is_empty() else f"No data for this selection ({sel.describe()})"
    return Rendered(sel, frame, chart, message, time.perf_counter() - started)


def _choices(values: list[str], everything: str) -> list[tuple[str, str]]:
    return [(everything, _ALL), *((v, v) for v in values)]


class Dashboard:
    """The widgets, wired: `widget` to display, `state`/`rendered` to inspect, `refresh()` to re-query.

    `debounce` (seconds) coalesces quick changes on the kernel's event loop; with 0, or outside a
    running loop (tests, scripts), every change re-queries at once.
    """

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        state: DashboardState = DashboardState(),
        *,
        debounce: float = 0.3,
    ) -> None:
        self.con = con
        self.debounce = debounce
        self.refreshes = 0
        self._holding = False
        self._pending: asyncio.TimerHandle | None = None
        options = filter_options(con, state.site)
        last = date.fromisoformat(options["last_day"][0]) if options["last_day"] else date.today()
        sel = select(con, state.site, state.start, state.end or last)
        style = {"description_width": "initial"}
        self.site = w.Dropdown(
            options=_choices(options["sites"], "All sites"),
            value=state.site or _ALL,
            description="Site",
            style=style,
        )
        self.start = w.DatePicker(value=sel.start, description="From", style=style)
        self.end = w.DatePicker(value=sel.end, description="To", style=style)
        self.network = w.Dropdown(description="Network", style=style)
        self.device = w.Dropdown(description="Device", style=style)
        self.country = w.Dropdown(description="Country", style=style)
        self._set_filter_options(options, state)
        self.dimension = w.ToggleButtons(
            options=[(d.title(), d) for d in DIMENSIONS], value=state.dimension, description="By", style=style
        )
        self.metric = w.Dropdown(
            options=[(METRIC_LABELS[m][0], m) for m in METRICS],
            value=state.metric,
            description="Metric",
            style=style,
        )
        self.top_n = w.IntSlider(
            value=state.top_n, min=1, max=50, description="Top", continuous_update=False, style=style
        )
        self.status = w.HTML()
        self.output = w.Output(layout=w.Layout(min_height="320px"))
        controls = [
            self.site,
            self.start,
            self.end,
            self.network,
            self.device,
            self.country,
            self.dimension,
            self.metric,
            self.top_n,
        ]
        for control in controls:
            control.observe(self._changed, names="value")
        self.widget = DashboardBox(
            self,
            [
                w.HBox([self.site, self.start, self.end]),
                w.HBox([self.network, self.device, self.country]),
                w.HBox([self.dimension]),
                w.HBox([self.metric, self.top_n]),
                self.status,
                self.output,
            ],
        )
        self.rendered: Rendered = self.refresh()

    # ------------------------------------------------------------------ state

    @property
    def state(self) -> DashboardState:
        """The controls' current values."""
        return DashboardState(
            site=self.site.value or None,
            start=self.start.value,
            end=self.end.value,
            network=self.network.value or None,
            device=self.device.value or None,
            country=self.country.value or None,
            dimension=self.dimension.value,
            metric=self.metric.value,
            top_n=int(self.top_n.value),
        )

    @property
    def data(self) -> pl.DataFrame:
        """The rows of the chart shown now."""
        return self.rendered.data

    @property
    def message(self) -> str:
        return self.rendered.message

    @contextmanager
    def hold(self) -> Iterator[None]:
        """Change several controls, then query once."""
        self._holding = True
        try:
            yield
        finally:
            self._holding = False
        self._schedule()

    def _set_filter_options(self, options: dict[str, list[str]], state: DashboardState) -> None:
        held, self._holding = self._holding, True
        try:
            for control, key, everything, value in (
                (self.network, "networks", "All networks", state.network),
                (self.device, "devices", "All devices", state.device),
                (self.country, "countries", "All countries", state.country),
            ):
                control.options = _choices(options[key], everything)
                control.value = value if value in options[key] else _ALL
        finally:
            self._holding = held

    # ------------------------------------------------------------------ events

    def _changed(self, change: dict[str, Any]) -> None:
        if self._holding:
            return
        site = self.site
        if change.get("owner") is site:  # other sites, other networks and countries
            self._set_filter_options(filter_options(self.con, self.site.value or None), self.state)
        self._schedule()

    def _schedule(self) -> None:
        self.status.value = "<i>⏳ Loading…</i>"
        if self._pending is not None:
            self._pending.cancel()
            self._pending = None
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if self.debounce <= 0 or loop is None:
            self.refresh()
            return
        self._pending = loop.call_later(self.debounce, self._fire)

    def _fire(self) -> None:
        self._pending = None
        self.refresh()

    def refresh(self) -> Rendered:
        """Query DuckDB for the current controls and show the answer."""
        self.status.value = "<i>⏳ Loading…</i>"
        rendered = render_state(self.con, self.state)
        self.rendered = rendered
        self.refreshes += 1
        if rendered.message:
            self.status.value = f"<b>{escape(rendered.message)}</b>"
        else:
            self.status.value = (
                f"{rendered.data.height} rows · {rendered.seconds * 1000:.0f} ms · "
                f"{escape(rendered.selection.describe() if rendered.selection else '')}"
            )
        self._show(rendered.chart)
        return rendered

    def _show(self, chart: alt.TopLevelMixin) -> None:
        try:
            from IPython import get_ipython
            from IPython.display import display
        except ImportError:  # pragma: no cover - ipywidgets depends on IPython
            return
        if get_ipython() is None:  # plain Python (tests, scripts): keep the chart, draw nothing
            return
        self.output.clear_output(wait=True)
        with self.output:
            display(chart)  # type: ignore[no-untyped-call]

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)  # type: ignore[no-untyped-call]


class DashboardBox(w.VBox):  # type: ignore[misc]
    """The dashboard's top widget; `.dashboard` reaches its controls and current data."""

    def __init__(self, dashboard: Dashboard, children: list[w.Widget]) -> None:
        super().__init__(children)
        self.dashboard = dashboard


def dashboard(con: duckdb.DuckDBPyConnection, *, debounce: float = 0.3, **state: Any) -> DashboardBox:
    """The dashboard over `con`, as a widget to display (keyword arguments: initial
    `DashboardState` fields, e.g. `site="alpha", dimension="network"`)."""
    return Dashboard(con, replace(DashboardState(), **state), debounce=debounce).widget
