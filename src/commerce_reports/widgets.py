"""An interactive dashboard for notebooks: filters that re-query DuckDB, one chart, a status line.

    from commerce_reports.widgets import dashboard
    dashboard(commerce_reports.connect())                  # JupyterLab or the classic notebook
    dashboard(con, Selection(site="alpha"), dimension="network")

Only standard ipywidgets; the chart is drawn with the Vega bundle the dashboard sends once (Altair's
own HTML would fetch Vega from a CDN). Every control re-queries DuckDB (small, aggregated answers);
changes are coalesced: sliders report on release (`continuous_update=False`) and a short timer on
the kernel's event loop lets several quick changes run a single query. The query and the chart live in plain
functions (`DashboardState`, `render_state`), so they are tested and benchmarked without a frontend.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from html import escape
from typing import TYPE_CHECKING, Any

import altair as alt
import ipywidgets as w
import polars as pl

from .charts.dimensions import DIMENSION_TABLE, DIMENSIONS, Dimension
from .charts.offline import chart_html, vega_bundle_html
from .charts.performance import ranking_chart
from .charts.queries import (
    AGGREGATE_METRICS,
    METRICS,
    Metric,
    aggregate_span,
    check_dimension,
    check_top_n,
    filter_options,
    ranking_frame,
    unaggregated,
    unanswered,
)
from .charts.selection import Coverage, Selection, as_selection, check_connection, resolve
from .charts.style import EMPTY_TITLE, METRIC_LABELS, aggregate_note, empty_chart, money_of
from .errors import ValidationError
from .money import Currency
from .redaction import redact

if TYPE_CHECKING:
    from .db.readonly import Connection

__all__ = ["Dashboard", "DashboardBox", "DashboardState", "Rendered", "dashboard", "render_state"]

log = logging.getLogger(__name__)
_ALL = ""  # the "no filter" option of a dropdown (ipywidgets treats a None value as no selection)


@dataclass(frozen=True)
class DashboardState:
    """Everything the dashboard shows: what (a Selection) and how (dimension, metric, top_n)."""

    selection: Selection = field(default_factory=Selection)
    dimension: Dimension = "link"
    metric: Metric = "revenue"
    top_n: int = 15

    def __post_init__(self) -> None:
        if not isinstance(self.selection, Selection):
            raise ValidationError(
                "selection", f"{self.selection!r} is not a Selection", "give Selection(...)"
            )
        check_dimension(self.dimension)
        if self.metric not in METRICS:
            raise ValidationError(
                "metric", f"{self.metric!r} is not a metric", f"use one of {', '.join(METRICS)}"
            )
        check_top_n(self.top_n)


@dataclass(frozen=True)
class Rendered:
    """One answer: the selection it was for, its rows, its chart and a message ('' when all is well)."""

    selection: Selection | None
    data: pl.DataFrame
    chart: alt.TopLevelMixin
    message: str
    seconds: float


def _message_chart(message: str) -> alt.Chart:
    chart: alt.Chart = (
        alt.Chart(pl.DataFrame({"message": [message]}), title=EMPTY_TITLE)
        .mark_text()
        .encode(text="message:N", tooltip=["message:N"])
    )
    return chart


def render_state(
    con: Connection,
    state: DashboardState,
    cover: Coverage | None = None,
    currency: Currency | str | None = None,
) -> Rendered:
    """Query DuckDB for `state` and build its chart. A selection the lake cannot answer and an
    empty one come back as a message and a chart saying so, never as an exception (a dashboard
    must not die on a click). `cover`: the lake's coverage of the sites, when already known;
    money in `currency` (default: the configured one)."""
    started = time.perf_counter()
    check_connection(con)
    if not isinstance(state, DashboardState):
        raise ValidationError("state", f"{state!r} is not a DashboardState", "give DashboardState(...)")
    try:
        sel, cover = resolve(con, state.selection, cover)
    except ValidationError as error:
        return Rendered(
            None, pl.DataFrame(), _message_chart(str(error)), str(error), time.perf_counter() - started
        )
    label = METRIC_LABELS[state.metric][0]
    aggregate = state.metric in AGGREGATE_METRICS
    why = unaggregated(state.dimension, sel, label) if aggregate else None  # (said without a query)
    frame = (
        pl.DataFrame()
        if why
        else ranking_frame(con, state.dimension, sel, metric=state.metric, top_n=state.top_n)
    )
    why = why or unanswered(con, state.dimension, sel, state.metric, label, frame)
    if why is not None:
        chart = empty_chart(sel, f"{label} per {state.dimension}", cover)
        return Rendered(sel, pl.DataFrame(), chart, why, 0.0)
    notes = (aggregate_note(aggregate_span(con, sel)),) if aggregate else ()
    chart = ranking_chart(frame, state.dimension, state.metric, sel, cover, notes=notes, currency=currency)
    message = "" if not frame.is_empty() else f"No data for this selection ({cover.describe(sel)})"
    return Rendered(sel, frame, chart, message, time.perf_counter() - started)


def _html_output(html: str, text: str) -> dict[str, Any]:
    """One display_data output for an Output widget's `outputs`."""
    return {"output_type": "display_data", "data": {"text/html": html, "text/plain": text}, "metadata": {}}


def _choices(values: list[str], everything: str) -> list[tuple[str, str]]:
    return [(everything, _ALL), *((v, v) for v in values)]


class Dashboard:
    """The widgets, wired: `widget` to display, `state`/`rendered` to inspect, `refresh()` to re-query.

    `debounce` (seconds) coalesces quick changes on the kernel's event loop; with 0, or outside a
    running loop (tests, scripts), every change re-queries at once.
    """

    def __init__(
        self,
        con: Connection,
        state: DashboardState | None = None,
        *,
        debounce: float = 0.3,
        currency: Currency | str | None = None,
    ) -> None:
        self.con = check_connection(con)
        self.money = money_of(currency)  # resolved once: every redraw shows the same currency
        state = state or DashboardState()
        if not isinstance(state, DashboardState):
            raise ValidationError("state", f"{state!r} is not a DashboardState", "give DashboardState(...)")
        if isinstance(debounce, bool) or not isinstance(debounce, int | float) or debounce < 0:
            raise ValidationError("debounce", f"{debounce!r} is not a delay", "give seconds >= 0, e.g. 0.3")
        if len(state.selection.sites) > 1:
            raise ValidationError("site", "the dashboard shows one site or all", "give one site or None")
        self.debounce = float(debounce)
        self.refreshes = 0
        self._holding = False
        self._pending: asyncio.TimerHandle | None = None
        site = state.selection.sites[0] if state.selection.sites else None
        options = filter_options(con, site)
        sel, _ = resolve(con, state.selection)
        style = {"description_width": "initial"}
        self.site = w.Dropdown(
            options=_choices(options["sites"], "All sites"),
            value=site or _ALL,
            description="Site",
            style=style,
        )
        self.start = w.DatePicker(value=sel.start, description="From", style=style)
        self.end = w.DatePicker(value=sel.end, description="To", style=style)
        self.network = w.Dropdown(description="Network", style=style)
        self.device = w.Dropdown(description="Device", style=style)
        self.country = w.Dropdown(description="Country", style=style)
        self._set_filter_options(options, state.selection.filters())
        self.dimension = w.ToggleButtons(
            options=[(DIMENSION_TABLE[d].label, d) for d in DIMENSIONS],
            value=state.dimension,
            description="By",
            style=style,
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
        self._vega = w.Output(layout=w.Layout(display="none"))  # holds the Vega bundle's script
        self._page_id = uuid.uuid4().hex[:12]  # element ids unique on a page with several dashboards
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
                self._vega,
            ],
        )
        self.rendered: Rendered = self.refresh()

    # ------------------------------------------------------------------ state

    @property
    def state(self) -> DashboardState:
        """The controls' current values (a ValidationError when they contradict each other)."""
        selection = Selection(
            site=self.site.value or None,
            start=self.start.value,
            end=self.end.value,
            network=self.network.value or None,
            device=self.device.value or None,
            country=self.country.value or None,
        )
        return DashboardState(selection, self.dimension.value, self.metric.value, int(self.top_n.value))

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

    def _set_filter_options(self, options: dict[str, list[str]], chosen: dict[str, str]) -> None:
        """Fill the filter dropdowns with `options`, keeping the `chosen` values they still offer."""
        held, self._holding = self._holding, True
        try:
            for control, key, everything, name in (
                (self.network, "networks", "All networks", "network"),
                (self.device, "devices", "All devices", "device"),
                (self.country, "countries", "All countries", "country"),
            ):
                value = chosen.get(name) or control.value
                control.options = _choices(options[key], everything)
                control.value = value if value in options[key] else _ALL
        finally:
            self._holding = held

    # ------------------------------------------------------------------ events

    def _changed(self, change: dict[str, Any]) -> None:
        if self._holding:
            return
        site_changed = change.get("owner") is self.site
        if site_changed:  # other sites: other networks and countries
            self._set_filter_options(filter_options(self.con, self.site.value or None), {})
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
            self._redraw()
            return
        self._pending = loop.call_later(self.debounce, self._fire)

    def _fire(self) -> None:
        self._pending = None
        self._redraw()

    def _redraw(self) -> None:
        """`refresh()` for a changed control. Its exception would reach no one (the event loop's
        log, a widget's observer) and leave "Loading" shown for good: the status line says it
        instead, in one line (its traceback goes to the debug log), and the next change tries
        again."""
        try:
            self.refresh()
        except Exception as error:
            log.debug("the dashboard could not refresh", exc_info=True)
            said = redact(str(error)).strip().splitlines()
            self.status.value = f"<b>⚠ {escape(type(error).__name__)}: {escape(said[0] if said else '')}</b>"

    def refresh(self) -> Rendered:
        """Query DuckDB for the current controls and show the answer. The stored days its subtitle
        names, and whether the last is partial, are read again each time (about a millisecond:
        `ledger_coverage` is a row per site), so a day a sync added since is said."""
        self.status.value = "<i>⏳ Loading…</i>"
        try:
            state = self.state
        except ValidationError as error:
            rendered = Rendered(None, pl.DataFrame(), _message_chart(str(error)), str(error), 0.0)
        else:
            rendered = render_state(self.con, state, currency=self.money)
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
        """Draw `chart` in the output with the Vega bundle the dashboard carries (no CDN: the chart
        draws in a front end without internet); the bundle is sent once, with the first chart.

        The outputs are set as widget state, not captured from `display()`: a change runs in a
        timer callback of the kernel's event loop, outside any cell, where capture has no target."""
        try:
            from IPython import get_ipython
        except ImportError:  # pragma: no cover - ipywidgets depends on IPython
            return
        if get_ipython() is None:  # plain Python (tests, scripts): keep the chart, draw nothing
            return
        if not self._vega.outputs:
            self._vega.outputs = (_html_output(vega_bundle_html(), "the Vega bundle"),)
        element = f"commerce-dashboard-{self._page_id}-{self.refreshes}"
        self.output.outputs = (_html_output(chart_html(chart.to_dict(), element, wait=True), "a chart"),)

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)  # type: ignore[no-untyped-call]


class DashboardBox(w.VBox):  # type: ignore[misc]
    """The dashboard's top widget; `.dashboard` reaches its controls and current data."""

    def __init__(self, dashboard: Dashboard, children: list[w.Widget]) -> None:
        super().__init__(children)
        self.dashboard = dashboard


def dashboard(
    con: Connection,
    selection: Selection | None = None,
    *,
    dimension: Dimension = "link",
    metric: Metric = "revenue",
    top_n: int = 15,
    debounce: float = 0.3,
    currency: Currency | str | None = None,
    **where: Any,
) -> DashboardBox:
    """The dashboard over `con`, as a widget to display, starting on `selection` (or its fields as
    keywords, e.g. `site="alpha"`) by `dimension`, `metric` and `top_n`; money in `currency`
    (default: the configured one)."""
    state = DashboardState(as_selection(selection, **where), dimension, metric, top_n)
    return Dashboard(con, state, debounce=debounce, currency=currency).widget
