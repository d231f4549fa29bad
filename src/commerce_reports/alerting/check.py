"""`alerts()`: what changed that matters, per site and per network, device, country, merchant and
link, why (each group of alerts under the cause that explains it), and whether the lake itself is
healthy (synced recently, no partition failing sync after sync).

    import commerce_reports as cr
    report = cr.alerts(days=7)          # the last week, on the rules and thresholds of commerce-reports.toml
    print(report.describe())            # each cause: what, where, how big, over which days, why, where else
    report.frame()                      # the alerts as a polars frame; report.to_dict() for a page
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from ..activity import checked_progress, said
from ..charts.selection import Selection, check_connection, resolve
from ..config import current_settings
from ..errors import ConfigurationError, ValidationError
from ..money import Currency
from ..params import as_days
from .alert import AlertReport
from .group import group_alerts
from .health import health_alerts
from .judge import judge
from .thresholds import Thresholds

if TYPE_CHECKING:
    from ..db.readonly import Connection

__all__ = ["alerts"]


def alerts(
    con: Connection | None = None,
    *,
    site: str | Iterable[str] | None = None,
    days: int = 7,
    as_of: date | str | None = None,
    thresholds: Thresholds | None = None,
    currency: Currency | str | None = None,
    data_dir: str | Path | None = None,
    now: datetime | None = None,
    progress: bool | None = None,
) -> AlertReport:
    """The alerts of the `days` days up to `as_of`, not after today (default: each site's last
    complete ledger day), each day judged as the last of spans of 1 to 7 days, for `site`
    (default: all), grouped by cause. Each measure is judged on the days its data allows (clicks
    once counted); the report says which (`AlertReport.judged`) and what could not be.

    `con` defaults to `connect(data_dir)`; the lake's health is judged on `data_dir`, else on the
    lake `con` reads, else on the configured one; `thresholds` and `currency` to the configured ones
    (`[alerts]` and `currency` in commerce-reports.toml, `COMMERCE_REPORTS_CURRENCY`); `now` (the
    clock the lake's freshness is judged on) to the current time. Judging a lake of months takes
    seconds: `progress` says so while it runs (default: a counter in a terminal or a notebook, a
    line at its start and end elsewhere; False: nothing)."""
    _check_arguments(days, thresholds, data_dir, now, progress)
    last_day = _last_day(as_of, (now or datetime.now(UTC)).date())
    # what was not handed in comes from the process's settings (resolved once, kept)
    limits = thresholds or Thresholds.from_table(current_settings().alerts)
    money = Currency.of(currency) if currency is not None else current_settings().currency
    folder = Path(data_dir) if data_dir is not None else None
    if folder is None and con is not None:  # the health of the lake `con` reads, not the configured one's
        from ..db.connection import folder_of

        folder = folder_of(con)
    folder = folder or current_settings().data_dir
    expected = _configured_sites(folder) if site is None else ()
    with said("judging every series of the lake and its health", progress):
        if con is not None:
            return _judged(con, site, days, last_day, limits, money, folder, expected, now)
        from ..db import connect

        with connect(folder) as own:
            return _judged(own, site, days, last_day, limits, money, folder, expected, now)


def _configured_sites(folder: Path) -> tuple[str, ...]:
    """The sites the settings name, when `folder` is the configured lake (a site of them the lake
    does not hold was never synced: an alert); none for another lake, or settings `check` refuses."""
    settings = current_settings()
    if folder != settings.data_dir:
        return ()
    from ..sites import configured_sites

    try:
        return tuple(configured_sites(settings))
    except ConfigurationError:
        return ()


def _judged(
    con: Connection,
    site: str | Iterable[str] | None,
    days: int,
    last_day: date | None,
    limits: Thresholds,
    money: Currency,
    folder: Path,
    expected: tuple[str, ...],
    now: datetime | None,
) -> AlertReport:
    """The report `alerts` gives, over `con`; the health of the lake in `folder`, which should hold
    the `expected` sites."""
    check_connection(con)
    chosen, _ = resolve(con, Selection(site=site))  # a site the lake does not hold is an error
    health = health_alerts(folder, expected, chosen.sites, limits, now or datetime.now(UTC))
    judgement = judge(con, chosen.sites, days, last_day, limits)
    groups = group_alerts(con, judgement)
    ordered = tuple(health) + tuple(alert for group in groups for alert in group.alerts)
    return AlertReport(
        ordered,
        tuple(groups),
        tuple(judgement.judged),
        judgement.series,
        tuple(judgement.notes),
        limits,
        money,
    )


def _last_day(as_of: date | str | None, today: date) -> date | None:
    """`as_of` as a day not after `today`, by the one rule of days (`params.as_days`): a future
    day holds no figure, and a report judged on none would read as all clear."""
    try:
        return as_days(None, as_of, today)[1]
    except ValidationError as error:
        raise ValidationError("as_of", error.problem, error.allowed) from None


def _check_arguments(
    days: object, thresholds: object, data_dir: object, now: object, progress: object
) -> None:
    if isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= 3660:
        raise ValidationError("days", f"{days!r} is not a count of days", "give 1 or more, e.g. 7")
    if thresholds is not None and not isinstance(thresholds, Thresholds):
        raise ValidationError(
            "thresholds", f"{thresholds!r} is not Thresholds", "give Thresholds(...) or None"
        )
    if data_dir is not None and (not isinstance(data_dir, str | Path) or not str(data_dir).strip()):
        raise ValidationError("data_dir", f"{data_dir!r} is not a folder path", "give a str or Path, or None")
    if now is not None and (not isinstance(now, datetime) or now.tzinfo is None):
        raise ValidationError("now", f"{now!r} is not an aware datetime", "give datetime.now(UTC) or similar")
    checked_progress(progress)
