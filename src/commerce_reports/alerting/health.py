"""The lake's own health, for alerts: a configured site never synced, a site not synced for longer
than expected, and partitions that failed sync after sync (recorded by each sync in
`failures.json`, see `lake.failures`)."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from ..contract import lake_sites
from ..errors import LakeError
from ..lake import Manifest, load_failures
from .alert import Alert
from .thresholds import Thresholds

__all__ = ["health_alerts"]


def health_alerts(
    folder: Path, expected: tuple[str, ...], sites: tuple[str, ...], limits: Thresholds, now: datetime
) -> list[Alert]:
    """A site of those `expected` (the configured ones) that the lake does not hold, one of
    `sites` (none: all) not synced for longer than `stale_hours`, and partitions failing sync
    after sync."""
    stored = lake_sites(folder)
    out = [
        Alert(
            "stale",
            site,
            detail="configured, but never synced: no figure or alert covers it until "
            f"`commerce-reports sync --site {site}` fetches it",
        )
        for site in expected
        if site not in stored
    ]
    for site in [s for s in stored if not sites or s in sites]:
        try:
            manifest = Manifest.load(folder, site)
        except LakeError as error:
            out.append(Alert("stale", site, detail=f"{error}"))
            continue
        fetched = [entry.fetched_at for entry in manifest]
        if fetched:
            last = max(fetched)
            age = now - last
            if age > timedelta(hours=limits.stale_hours):
                out.append(
                    Alert(
                        "stale",
                        site,
                        since=last.date(),
                        detail=f"the lake was last synced {_ago(age)} ago ({last:%Y-%m-%d %H:%M} UTC), "
                        f"more than {limits.stale_hours:g} hours: figures and alerts miss what came since",
                    )
                )
        failing = [r for r in load_failures(folder, site).values() if r.count >= limits.failing_syncs]
        if failing:
            failing.sort(key=lambda r: (-r.count, r.relpath))
            listed = "; ".join(f"{r.what} ({r.count} syncs: {r.reason})" for r in failing[:5])
            more = f"; and {len(failing) - 5} more" if len(failing) > 5 else ""
            out.append(
                Alert(
                    "failing",
                    site,
                    since=min(r.first for r in failing).date(),
                    detail=f"{len(failing)} partition{'s' if len(failing) != 1 else ''} failed in "
                    f"{limits.failing_syncs} or more syncs in a row: {listed}{more}",
                )
            )
    return out


def _ago(age: timedelta) -> str:
    hours = age.total_seconds() / 3600
    return f"{hours:.0f} hours" if hours < 48 else f"{hours / 24:.1f} days"
