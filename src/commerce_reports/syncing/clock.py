"""Whose clock dates what a sync stores: the service's, when this machine's disagrees with it.

A day is settled once it was fetched a settle window after it ended (`plan.SettlePolicy`). If this
machine's clock runs ahead of the service's, a day the service is still filling looks long ended
here: stored as settled with part of its rows, it would never be asked for again. So every answer's
`Date` header (the service's clock, kept on the fetched table by the client) is compared with the
local clock: past `CLOCK_TOLERANCE`, what was fetched is dated by the earlier of the two (a clock
ahead never settles a day early; a clock behind only asks later than it could), and the sync says
which clock is off and by how much.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from ..contract import SERVED_AT

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["CLOCK_TOLERANCE", "fetched_moment", "skew_sentence"]

CLOCK_TOLERANCE = timedelta(minutes=10)


def fetched_moment(table: pa.Table, local: datetime) -> tuple[datetime, timedelta | None]:
    """When `table` counts as fetched, and the skew (`local` minus the service's clock) when it is
    past the tolerance (None within it, or when the service sent no `Date`)."""
    raw = (table.schema.metadata or {}).get(SERVED_AT)
    if not raw:
        return local, None
    try:
        served = datetime.fromisoformat(raw.decode())
    except ValueError:
        return local, None
    skew = local - served
    if abs(skew) <= CLOCK_TOLERANCE:
        return local, None
    return min(local, served), skew


def _span(delta: timedelta) -> str:
    seconds = int(abs(delta).total_seconds())
    days, rest = divmod(seconds, 86_400)
    hours, rest = divmod(rest, 3600)
    minutes = rest // 60
    parts = [f"{days} day{'s' * (days != 1)}"] if days else []
    parts += [f"{hours} h"] if hours else []
    parts += [f"{minutes} min"] if minutes and not days else []
    return " ".join(parts) or f"{seconds} s"


def skew_sentence(skew: timedelta) -> str:
    """What a skew means, in words: which clock is off, by how much, and what was done."""
    if skew > timedelta():
        return (
            f"this machine's clock is {_span(skew)} ahead of the service's (its Date header): what "
            "was fetched is dated by the service's clock, so no day the service may still be filling "
            "is settled; set this machine's clock (NTP)"
        )
    return (
        f"this machine's clock is {_span(skew)} behind the service's (its Date header): the newest "
        "days are asked for later than they could be; set this machine's clock (NTP)"
    )
