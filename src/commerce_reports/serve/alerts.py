"""The period's alerts on the served dashboard: `cr.alerts()` for the period's days (at most its last
31, as the report shows them), as HTML, grouped by cause. The one place the page reads alerts.

Judging alerts reads weeks of daily series and runs seconds of Python (4 s at 1 M transactions),
so the page asks for them after the figures are shown, keeps each answer for its generation of
the lake, and has them judged in a process of its own at a lower priority (`AlertJudge`): in the
server's process a judgment held the interpreter's lock most of the time it ran, and every
visitor's clicks meanwhile took three times as long.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from datetime import datetime
from html import escape
from pathlib import Path

from ..alerting import AlertReport, Thresholds, alerts
from ..db import connect
from ..db.readonly import Connection
from ..money import Currency
from .board import View

__all__ = ["ALERT_DAYS", "AlertJudge", "alerts_html", "period_alerts"]

ALERT_DAYS = 31
"""The most days of a period judged (as the report does): a year's period judges its last month."""
_NICE = 10  # the judge's priority below the server's: a click's queries come first
_judging: dict[Path, Connection] = {}  # in the judge's process: its connection to the lake


def period_alerts(
    con: Connection,
    view: View,
    *,
    data_dir: Path,
    thresholds: Thresholds,
    currency: Currency,
    now: datetime | None = None,
) -> AlertReport:
    """The alerts of the view's site (every site: None) over the last days of its period, up to
    its last day, and the lake's health."""
    return alerts(
        con,
        site=view.site,
        days=min(view.period.days, ALERT_DAYS),
        as_of=view.period.end,
        thresholds=thresholds,
        currency=currency,
        data_dir=data_dir,
        now=now,
        progress=False,  # a visitor's page: the server's log is no place for each judgement
    )


def alerts_html(report: AlertReport) -> str:
    """The report as the page shows it: a heading with the count (and the causes they come from),
    each cause's sentence (what, where, how big, over which days, against what) with why and the
    alerts it explains under it, and what could not be judged. A page that lays them out itself
    reads `report.groups` or `report.to_dict()`."""
    count, causes = len(report.alerts), len(report.groups)
    heading = f"Alerts: {count}" if count else "Alerts: none"
    if 0 < causes < count - len(report.health):
        heading += f" from {causes} cause{'s' if causes != 1 else ''}"
    return f"<h3>{escape(heading)}</h3>{report.to_html()}"


def _start_judging(data_dir: Path) -> None:
    """In the judge's process, before its first judgment: a lower priority than the server's (its
    DuckDB threads inherit it), Ctrl-C left to the server that stops it, and the lake's read-only
    connection."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.nice(_NICE)
    _judging[data_dir] = connect(data_dir)


def _judge(
    data_dir: Path, view: View, thresholds: Thresholds, currency: Currency, now: datetime
) -> AlertReport:
    """In the judge's process: the alerts of `view`."""
    return period_alerts(
        _judging[data_dir], view, data_dir=data_dir, thresholds=thresholds, currency=currency, now=now
    )


class AlertJudge:
    """Judges the alerts of one server's visitors, one view at a time, in a process of its own
    that reads the lake through its own read-only connection: started on the first ask, and ended
    once what it was asked is judged (its memory freed: judgments are rare, once per generation,
    hour and period), or when it died. A pool's own replacement of a worker after each task is not
    used: it starts an idle process right away, which a stopping server would then wait for."""

    def __init__(self, data_dir: Path) -> None:
        self._data_dir = data_dir
        self._lock = threading.Lock()
        self._pool: ProcessPoolExecutor | None = None  # the pool that takes the next judgment
        self._processes: set[multiprocessing.process.BaseProcess] = set()  # every judge's process

    def submit(
        self, view: View, *, thresholds: Thresholds, currency: Currency, now: datetime
    ) -> Future[AlertReport]:
        """The alerts of `view`, once judged (a failure is the future's exception)."""
        with self._lock:
            for _ in range(2):  # a pool whose process died refuses work: the next one takes it
                if self._pool is None:  # spawned: a fork would copy the server's threads and locks
                    self._pool = ProcessPoolExecutor(
                        max_workers=1,
                        mp_context=multiprocessing.get_context("spawn"),
                        initializer=_start_judging,
                        initargs=(self._data_dir,),
                    )
                pool = self._pool
                try:
                    judged = pool.submit(_judge, self._data_dir, view, thresholds, currency, now)
                except BrokenProcessPool:
                    self._pool = None
                    continue
                # the pool starts its process in `submit`: it is known before any close
                started = getattr(pool, "_processes", {}).values()
                self._processes = {p for p in self._processes if p.is_alive()} | set(started)
                break
            else:
                raise BrokenProcessPool("the alerts' process could not be started")
        judged.add_done_callback(lambda _: self._retire(pool))
        return judged

    def _retire(self, pool: ProcessPoolExecutor) -> None:
        """A judgment of `pool` ended: the pool takes no more, and its process ends once what was
        queued on it is judged; the next ask starts another."""
        with self._lock:
            if self._pool is pool:
                self._pool = None
        pool.shutdown(wait=False)

    def close(self) -> None:
        """End every judge's process without waiting for a judgment under way (a pool's own
        shutdown, and the server's exit with it, would wait for it); what is queued is cancelled."""
        with self._lock:
            pool, self._pool = self._pool, None
            processes, self._processes = self._processes, set()
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:  # terminate_workers() in Python 3.14
            if process.is_alive():
                process.terminate()
