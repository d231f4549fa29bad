"""What an alert is and how it reads: one `Alert` per change or health problem, the `AlertGroup`
of the alerts one cause explains, and the `AlertReport` of one evaluation (its sentences, a frame,
a JSON-ready structure for pages, an HTML block, the exit code).

The structure a page reads (`AlertReport.to_dict()`, documented there) never needs parsing a
sentence: every figure, date, scope, rule and share is a field."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from html import escape
from typing import Any, Literal

import polars as pl

from ..charts.dimensions import DIMENSION_TABLE
from ..charts.figures import figure
from ..money import Currency
from .drivers import OTHERS, contributors
from .rules import AlertMetric, Rule
from .series import SITE_SCOPE
from .thresholds import Thresholds

__all__ = ["Alert", "AlertGroup", "AlertReport", "JudgedDays"]

NAMES = {
    "revenue": "revenue",
    "orders": "orders net of returns",  # (the tables' Orders count every transaction)
    "order_value": "revenue per order",
    "clicks": "clicks",
    "epc": "EPC",
    "conversion_rate": "conversion rate",
    "returns": "returns",
}
_FACTOR_NAMES = {**NAMES, "conversion_rate": "conversion"}
_PLURALS = {
    "network": "networks",
    "device": "devices",
    "country": "countries",
    "merchant": "merchants",
    "link": "links",
}
_INSIDE = {
    SITE_SCOPE: ("device", "country", "network", "merchant", "link"),
    "network": ("merchant", "link"),
    "merchant": ("link",),
    "device": (),
    "country": (),
    "link": (),
}
"""The dimensions whose keys a change of a scope is named by (a merchant's: its links)."""
_NOTABLE = 0.1  # a contributor holding less of the change is not named


@dataclass(frozen=True)
class Alert:
    """One alert. `kind` "change": `rule` found a series (`metric` of `scope` `key` on `site`) at
    `value` over the `days` days from `since` to `as_of` (its figure and its span, always the same
    span), a `change` from its `baseline` (the median of `weeks` weeks of the same weekdays; usual
    `spread` around it), `z` spreads away, with `at_stake` of revenue (the baseline's revenue over
    the span less the span's). "stale": the site was last synced at `since`. "failing": partitions
    failed in several syncs in a row (`detail`)."""

    kind: Literal["change", "stale", "failing"]
    site: str
    scope: str = SITE_SCOPE
    key: str = ""
    rule: Rule | None = None
    value: float | None = None
    baseline: float | None = None
    spread: float | None = None
    change: float | None = None
    since: date | None = None
    as_of: date | None = None
    days: int = 0
    weeks: int = 0
    z: float | None = None
    at_stake: float | None = None
    detail: str = ""

    @property
    def metric(self) -> AlertMetric | None:
        """What changed (None for the lake's health)."""
        return self.rule.metric if self.rule else None

    @property
    def where(self) -> str:
        """'alpha', or 'alpha · network Foxglove Network'."""
        if self.scope == SITE_SCOPE:
            return self.site
        return f"{self.site} · {DIMENSION_TABLE[self.scope].label.lower()} {self.key}"

    @property
    def span(self) -> str:
        """'on 2026-11-23', or 'over the 3 days from 2026-11-21 to 2026-11-23'."""
        if self.days == 1:
            return f"on {self.as_of}"
        return f"over the {self.days} days from {self.since} to {self.as_of}"

    def describe(self, currency: Currency | str | None = None) -> str:
        """One sentence, in its rule's wording: what, where, how big, over which days, against what."""
        if self.kind != "change" or self.rule is None:
            return f"{self.where}: {self.detail}"
        money = Currency.of(currency)
        metric = self.rule.metric
        return self.rule.wording.format(
            where=self.where,
            measure=NAMES[metric],
            value=figure(metric, self.value, money),
            span=self.span,
            direction="down" if (self.change or 0.0) < 0 else "up",
            change=f"{abs(self.change or 0.0):.0%}",
            baseline=figure(metric, self.baseline, money),
            spread=figure(metric, self.spread, money),
            weeks=self.weeks,
            at_stake=money.format(max(self.at_stake or 0.0, 0.0)),
        )

    def to_dict(self, currency: Currency | str | None = None) -> dict[str, Any]:
        """The alert's fields, JSON-ready (dates as ISO text, the revenue at stake as decimal text
        in the currency's minor units), with its sentence as `message`."""
        stake = Currency.of(currency).amount(self.at_stake)
        return {
            "kind": self.kind,
            "rule": self.rule.name if self.rule else None,
            "site": self.site,
            "scope": self.scope,
            "key": self.key,
            "metric": self.metric,
            "value": self.value,
            "baseline": self.baseline,
            "spread": self.spread,
            "change": self.change,
            "since": self.since.isoformat() if self.since else None,
            "as_of": self.as_of.isoformat() if self.as_of else None,
            "days": self.days,
            "weeks": self.weeks,
            "z": self.z,
            "at_stake": None if stake is None else str(stake),
            "detail": self.detail,
            "message": self.describe(currency),
        }


@dataclass(frozen=True)
class AlertGroup:
    """Change alerts of one site that one cause explains. `cause` is the alert of the cause's own
    scope on its `driver` (the factor of revenue that moved it most: clicks, conversion_rate,
    orders or order_value, changed by `driver_change`); `members` are the knock-on alerts (other
    metrics of the same key, and the broader or crossing scopes its change explains), the broadest
    first. `explained` is the broadest member (the cause itself when alone) and `share` the part
    of its change the cause accounts for; `decomposition` splits `explained`'s change (span against
    the mean of the baseline weeks at the same age) by factor and key (`explain.SCHEMA`)."""

    cause: Alert
    driver: str | None
    driver_change: float | None
    members: tuple[Alert, ...]
    explained: Alert
    share: float | None
    decomposition: pl.DataFrame = field(repr=False, compare=False)

    @property
    def alerts(self) -> tuple[Alert, ...]:
        """The cause, then its members."""
        return (self.cause, *self.members)

    def why(self, currency: Currency | str | None = None) -> str:
        """What drives it: the driver's change, and the share of the broadest change it explains."""
        money = Currency.of(currency)
        parts = []
        if self.driver is not None and self.driver_change is not None:
            parts.append(f"{_FACTOR_NAMES[self.driver]} {self.driver_change:+.0%}")
        if self.explained is not self.cause and self.share is not None and self.explained.rule:
            falls = "drop" if (self.explained.change or 0.0) < 0 else "rise"
            share = min(max(self.share, 0.0), 1.0)
            metric = NAMES[self.explained.rule.metric]
            parts.append(f"which explains {share:.0%} of the {falls} in {metric} of {self.explained.where}")
        total = self.decomposition.filter(pl.col("dimension") == "total")["contribution"]
        moved = float(total[0]) if len(total) else 0.0
        returns = self.explained.metric == "returns"  # (revenue's contributors are bystanders of those)
        if returns or moved * (self.explained.change or 0.0) <= 0:  # revenue did not move with it
            return "; ".join(parts)
        top = contributors(self.decomposition, _INSIDE[self.explained.scope], limit=3)
        named = [
            f"{row['dimension']} {row['key']} {money.format(row['contribution'])} ({row['share']:.0%})"
            for row in top.iter_rows(named=True)
            if row["key"] != OTHERS and row["share"] >= _NOTABLE
        ]
        if named:
            parts.append("largest contributors: " + ", ".join(named))
        return "; ".join(parts)

    def also(self) -> str:
        """The members in a phrase: 'alpha (revenue, orders); countries US, GB; networks A, B, +2'."""
        seen: dict[tuple[str, str], list[str]] = {}
        for alert in self.members:
            if alert.rule is not None:
                seen.setdefault((alert.scope, alert.key), []).append(NAMES[alert.rule.metric])
        phrases: list[str] = []
        by_scope: dict[str, list[str]] = {}
        for (scope, key), metrics in seen.items():
            if (scope, key) == (self.cause.scope, self.cause.key):
                phrases.append(f"its {', '.join(metrics)}")
            elif scope == SITE_SCOPE:
                phrases.append(f"{key} ({', '.join(metrics)})")
            else:
                by_scope.setdefault(scope, []).append(key)
        for scope, keys in by_scope.items():
            label = _PLURALS[scope] if len(keys) > 1 else DIMENSION_TABLE[scope].label.lower()
            shown = ", ".join(keys[:4]) + (f", +{len(keys) - 4}" if len(keys) > 4 else "")
            phrases.append(f"{label} {shown}")
        return "; ".join(phrases)

    def describe(self, currency: Currency | str | None = None) -> list[str]:
        """The cause's sentence, then why, then where else it shows."""
        lines = [self.cause.describe(currency)]
        why = self.why(currency)
        if why:
            lines.append(f"why: {why}")
        also = self.also()
        if also:
            lines.append(f"also seen in: {also}")
        return lines

    def to_dict(self, currency: Currency | str | None = None) -> dict[str, Any]:
        """The group, JSON-ready (see `AlertReport.to_dict`)."""
        return {
            "cause": self.cause.to_dict(currency),
            "driver": self.driver,
            "driver_change": self.driver_change,
            "explained": self.explained.to_dict(currency),
            "share": self.share,
            "members": [alert.to_dict(currency) for alert in self.members],
            "decomposition": [_plain(row) for row in self.decomposition.iter_rows(named=True)],
            "why": self.why(currency),
            "also": self.also(),
        }


@dataclass(frozen=True)
class JudgedDays:
    """The days one family of measures was judged on for a site: `measures` (the ledger's:
    revenue, orders, order value, returns; or the clicks': clicks, EPC, conversion) from
    `first` to `last` (None: none), and `note` on the days asked that could not be judged, why."""

    site: str
    measures: tuple[str, ...]
    first: date | None
    last: date | None
    note: str = ""

    def describe(self) -> str:
        what = ", ".join(NAMES[m] for m in self.measures)
        days = f"{self.first} to {self.last}" if self.first and self.last else "no day"
        return f"{self.site}: {what} judged on {days}" + (f" ({self.note})" if self.note else "")


@dataclass(frozen=True)
class AlertReport:
    """Alerts of one evaluation: `alerts` (health first, then each group's cause and members, the
    largest groups first), `groups` (the change alerts by cause), the days each family of measures
    was judged per site (`judged`), how many series were judged, what could not be checked and
    why (`unchecked`), and the thresholds and currency used."""

    alerts: tuple[Alert, ...]
    groups: tuple[AlertGroup, ...]
    judged: tuple[JudgedDays, ...]
    series: int
    unchecked: tuple[str, ...]
    thresholds: Thresholds
    currency: Currency = field(default_factory=Currency.of)

    @property
    def exit_code(self) -> int:
        """What `commerce-reports alerts` exits with: 0 with no alert, 3 with alerts (for cron)."""
        return 3 if self.alerts else 0

    @property
    def health(self) -> tuple[Alert, ...]:
        """The lake's own alerts (stale, failing)."""
        return tuple(alert for alert in self.alerts if alert.kind != "change")

    def lines(self) -> list[str]:
        """The alerts, one sentence each."""
        return [alert.describe(self.currency) for alert in self.alerts]

    def summary(self) -> str:
        """One line: how many alerts (and causes), how many series judged, on which days."""
        sites = sorted({j.site for j in self.judged})
        days = "; ".join(_site_days([j for j in self.judged if j.site == s]) for s in sites)
        changes, health = len(self.alerts) - len(self.health), len(self.health)
        causes = f" from {_count(len(self.groups), 'cause')}" if 0 < len(self.groups) < changes else ""
        count = _count(len(self.alerts), "alert")
        if changes and health:
            count += f": {_count(changes, 'change')}{causes}, {health} on the lake's health"
        elif health:
            count += " on the lake's health"
        else:
            count += causes
        return f"{count} ({self.series} series judged on {days or 'no complete days'})"

    def describe(self) -> str:
        """The summary, the health alerts, each group (its cause, why, where else), then what could
        not be judged."""
        text = [self.summary(), *(f"- {alert.describe(self.currency)}" for alert in self.health)]
        for group in self.groups:
            first, *rest = group.describe(self.currency)
            text += [f"- {first}", *(f"    {line}" for line in rest)]
        text += [f"not judged: {j.describe()}" for j in self.judged if j.note]
        text += [f"not checked: {note}" for note in self.unchecked]
        return "\n".join(text)

    def frame(self) -> pl.DataFrame:
        """The alerts as a frame: one row each, with its `group` (an index into `groups`; null for
        health) and `role` (cause or knock-on); money (`at_stake`) a decimal in the report's
        currency."""
        role: dict[int, tuple[int, str]] = {}
        for number, group in enumerate(self.groups):
            for alert in group.alerts:
                role[id(alert)] = (number, "cause" if alert is group.cause else "knock-on")
        rows = [
            {
                **{k: v for k, v in alert.to_dict(self.currency).items() if k in _SCHEMA},
                "at_stake": self.currency.amount(alert.at_stake),
                "since": alert.since,
                "as_of": alert.as_of,
                "group": role.get(id(alert), (None, None))[0],
                "role": role.get(id(alert), (None, None))[1],
            }
            for alert in self.alerts
        ]
        return pl.DataFrame(rows, schema={**_SCHEMA, "at_stake": pl.Decimal(38, self.currency.digits)})

    def to_dict(self) -> dict[str, Any]:
        """The evaluation, JSON-ready, for pages that show it (`commerce-reports serve`):

        - `summary` (str), `exit_code` (0 or 3), `currency` (ISO code);
        - `judged`: per site and family of measures, `site`, `measures`, `first`, `last` (ISO
          dates or null) and `note` (what could not be judged, why);
        - `health`: the lake's alerts (`Alert.to_dict`: kind, site, detail, message, ...);
        - `groups`: per cause, `cause` (an alert), `driver` (clicks, conversion_rate, orders or
          order_value) and `driver_change` (a fraction), `explained` (the broadest alert it
          explains) and `share` (of its change), `members` (knock-on alerts), `decomposition`
          (rows of `explain.SCHEMA`, money as decimal text), `why` and `also` (sentences);
        - `unchecked`: what could not be checked at all, why.

        An alert is `kind`, `rule`, `site`, `scope`, `key`, `metric`, `value`, `baseline`,
        `spread`, `change` (a fraction), `since`, `as_of` (ISO dates), `days`, `weeks`, `z`,
        `at_stake` (revenue, as decimal text), `detail` and `message` (its sentence)."""
        money = self.currency
        return {
            "summary": self.summary(),
            "exit_code": self.exit_code,
            "currency": money.code,
            "judged": [
                {
                    "site": j.site,
                    "measures": list(j.measures),
                    "first": j.first.isoformat() if j.first else None,
                    "last": j.last.isoformat() if j.last else None,
                    "note": j.note,
                }
                for j in self.judged
            ],
            "health": [alert.to_dict(money) for alert in self.health],
            "groups": [group.to_dict(money) for group in self.groups],
            "unchecked": list(self.unchecked),
        }

    def to_html(self) -> str:
        """The alerts as an HTML block (what the report and the mail show at the top): each cause
        in bold, why and where else below it."""
        items = [f"<li>{escape(alert.describe(self.currency))}</li>" for alert in self.health]
        for group in self.groups:
            first, *rest = group.describe(self.currency)
            notes = "".join(f"<br><small>{escape(line)}</small>" for line in rest)
            items.append(f"<li><b>{escape(first)}</b>{notes}</li>")
        if items:
            body = f"<ul>{''.join(items)}</ul>"
        elif self.series:
            body = "<p>No alert: nothing moved beyond its usual range.</p>"
        else:  # (nothing judged: no word on what moved, the notes below say why)
            body = "<p>No alert, and no series judged: there is not enough history to tell.</p>"
        said = [f"Not judged: {j.describe()}" for j in self.judged if j.note]
        said += [f"Not checked: {n}" for n in self.unchecked]
        small = "".join(f"<p><small>{escape(n)}</small></p>" for n in said)
        return f'<div class="commerce-alerts"><p>{escape(self.summary())}</p>{body}{small}</div>'

    def _repr_html_(self) -> str:
        return self.to_html()

    def __repr__(self) -> str:
        return self.describe()


def _count(number: int, thing: str) -> str:
    return f"{number} {thing}{'s' if number != 1 else ''}"


def _site_days(judged: list[JudgedDays]) -> str:
    """'alpha 2026-11-17 to 2026-11-23' (clicks' days added when they differ)."""
    if not judged:
        return ""
    first, *rest = judged
    text = f"{first.site} {first.first} to {first.last}" if first.first else f"{first.site} no day"
    for other in rest:
        if (other.first, other.last) != (first.first, first.last):
            span = f"{other.first} to {other.last}" if other.first else "no day"
            text += f" ({', '.join(NAMES[m] for m in other.measures)}: {span})"
    return text


def _plain(row: dict[str, Any]) -> dict[str, Any]:
    return {k: str(v) if isinstance(v, Decimal) else v for k, v in row.items()}


_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    "kind": pl.String,
    "rule": pl.String,
    "site": pl.String,
    "scope": pl.String,
    "key": pl.String,
    "metric": pl.String,
    "value": pl.Float64,
    "baseline": pl.Float64,
    "change": pl.Float64,
    "since": pl.Date,
    "as_of": pl.Date,
    "days": pl.Int64,
    "weeks": pl.Int64,
    "z": pl.Float64,
    "at_stake": pl.Decimal(38, 2),  # (the report's currency's minor units: `frame`)
    "group": pl.Int64,
    "role": pl.String,
    "message": pl.String,
}
