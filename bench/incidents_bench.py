"""Alerts against staged incidents, replayed day by day: how soon each is named (its driver first),
how many other alerts come with it, and how many alerts the ordinary world raises (false alarms).

    .venv/bin/python bench/incidents_bench.py [--seeds 31,32,33,34] [--transactions-per-day 400]
        [--onset 2026-11-16] [--replay-days 4] [--incidents value,conversion,clicks,merchant,link]

For each seed (worlds the test suite never uses), the two demo sites' lake as a daily sync at 06:00
UTC keeps it (the ledger and the networks report per day: unfiltered, per device, five countries
and the five busiest merchants' `merchantGroupIds` slices; `tests/alerting/world.py`, checked
against a lake synced over loopback by `tests/alerting/test_alerts.py`), 75 days of it:

- the ordinary world, judged over `--days 7` and `--days 28` up to the last replayed day: every
  alert is a false alarm (the baseline the incidents' extra alerts are read against);
- each incident staged on site alpha from `--onset`, on the busiest key of its scope: a country's
  revenue per order -60% (GB), a device's conversion -70% (Mobile), a network's clicks doubled with
  revenue flat, a merchant that stops paying, a link that stops converting. On the morning after
  each of the replayed days (`--days 7`), the incident is *named* when a group of alerts has its
  key as cause; the delay is the number of days from its first day to that morning (1: the morning
  after its first day). Extra alerts are those outside its groups, on the day it is named.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository: tests.alerting.world

from commerce_reports.alerting import AlertReport, alerts
from commerce_reports.sandbox import Incident
from commerce_reports.sandbox.catalog import busiest
from commerce_reports.sandbox.world import World
from tests.alerting.world import world_lake

HISTORY_DAYS = 75
SITES = ("alpha", "beta")
KINDS = {  # name: (scope, incident, the driver it should be named by)
    "value": ("country", "country={country},epc=-60%", "order_value"),
    "conversion": ("device", "device={device},conversion=-70%", "conversion_rate"),
    "clicks": ("network", "network={network},clicks=+100%", "clicks"),
    "merchant": ("merchant", "merchant={merchant},conversion=-100%", "conversion_rate"),
    "link": ("link", "link={link},conversion=-100%", "orders"),
}


@dataclass(frozen=True)
class Replay:
    """One incident of one seed replayed: the day it was named (None: not within the replay), by
    which rule and driver, and the alerts outside its groups that day (or on the last day)."""

    kind: str
    key: str
    delay: int | None
    rule: str
    driver: str | None
    extra: list[str]


def _morning(day: date) -> datetime:
    return datetime.combine(day + timedelta(days=1), datetime.min.time(), UTC).replace(hour=7)


def _judge(seed: int, now: datetime, tpd: int, days: int, incidents: tuple[Incident, ...]) -> AlertReport:
    with world_lake(
        seed=seed, now=now, days=HISTORY_DAYS, sites=SITES, transactions_per_day=tpd, incidents=incidents
    ) as con:
        return alerts(con, days=days, data_dir=tempfile.mkdtemp(prefix="incidents-bench-"), now=now)


def _keys(seed: int, onset: date, tpd: int) -> dict[str, str]:
    catalog = World(seed, SITES, onset, tpd).catalog("alpha")
    return {
        "network": str(busiest(catalog, "network")[0]),
        "merchant": str(busiest(catalog, "merchant_group_name")[0]),
        "link": str(busiest(catalog, "link_url")[0]),
        "device": "Mobile",
        "country": "GB",
    }


def replay(seed: int, kind: str, onset: date, days: int, tpd: int) -> Replay:
    """The incident `kind` staged on alpha from `onset`, judged each morning for `days` days."""
    scope, spec, _ = KINDS[kind]
    key = _keys(seed, onset, tpd)[scope]
    incident = Incident.parse(f"site=alpha,{spec.format(**{scope: key})},from={onset}")
    report = None
    for k in range(days):
        report = _judge(seed, _morning(onset + timedelta(days=k)), tpd, 7, (incident,))
        named = [
            g for g in report.groups if (g.cause.site, g.cause.scope, g.cause.key) == ("alpha", scope, key)
        ]
        if named:
            extra = [a.describe() for g in report.groups if g not in named for a in g.alerts]
            rule = named[0].cause.rule.name if named[0].cause.rule else ""
            return Replay(kind, key, k + 1, rule, named[0].driver, extra)
    extra = [a.describe() for a in report.alerts] if report else []
    return Replay(kind, key, None, "", None, extra)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seeds", default="31,32,33,34", help="comma-separated sandbox seeds")
    parser.add_argument("--transactions-per-day", type=int, default=400)
    parser.add_argument("--onset", type=date.fromisoformat, default=date(2026, 11, 16))
    parser.add_argument("--replay-days", type=int, default=4, help="mornings judged after the onset")
    parser.add_argument("--incidents", default=",".join(KINDS), help=f"some of {', '.join(KINDS)}")
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    kinds = args.incidents.split(",")
    last = args.onset + timedelta(days=args.replay_days - 1)
    tpd = args.transactions_per_day
    print(f"{len(SITES)} sites, {tpd} transactions a day, {HISTORY_DAYS} days; onset {args.onset}")
    print(
        "seed  incident     key                             named   rule              driver           extra"
    )
    false_alarms = 0
    for seed in seeds:
        started = time.perf_counter()
        ordinary = {
            days: _judge(seed, _morning(last), args.transactions_per_day, days, ()) for days in (7, 28)
        }
        took = time.perf_counter() - started
        false_alarms += sum(len(r.alerts) for r in ordinary.values())
        print(
            f"{seed:<5} ordinary world: {len(ordinary[7].alerts)} alerts over --days 7, "
            f"{len(ordinary[28].alerts)} over --days 28 (to {last}; {ordinary[28].series} series; "
            f"{took:.0f} s)"
        )
        for report in ordinary.values():
            for alert in report.alerts:
                print(f"      false alarm: {alert.describe()}")
        for kind in kinds:
            result = replay(seed, kind, args.onset, args.replay_days, args.transactions_per_day)
            named = f"day {result.delay}" if result.delay else "no"
            print(
                f"{seed:<5} {kind:<12} {result.key[:30]:<31} {named:<7} {result.rule:<17} "
                f"{result.driver or '-':<16} {len(result.extra)}"
            )
            for line in result.extra:
                print(f"      extra: {line}")
    print(f"false alarms in all: {false_alarms}")


if __name__ == "__main__":
    main()
