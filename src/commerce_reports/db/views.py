"""The views, as SQL: names, comments and definitions (the names are public interface).

Each definition reads other views through the placeholder `{src}` (a schema) and the lake through
`{transactions}`, `{networks}` and `{merchandise}` (see `sources.py`), and the stored ledger days
the manifests list through `{ledger}` (see `coverage.ledger_select`). Installed in schema `live`
they compute everything from the lake's files; `refresh_rollups` writes the result of those marked
`rollup` to Parquet, and the `main` views read those files instead (see `connection.py`).

Dates. Transaction figures count by commission date (the day a transaction was earned; ground
truth's default). The service aggregates only by click date, so aggregate figures (clicks, EPC,
conversion rate, the aggregate's revenue) are those of the stored month window of clicks; views
joining both are one row per calendar month and say so.

Periods. A view whose rows cover a period (`period`: a day, a month, a report window) also has two
columns said by `coverage.py` from the manifests: `complete` (the lake holds the whole period) and
`final` (the service will no longer revise it). They are added when a view is read, never stored in
a rollup: they change with time and syncs, the figures do not.

Money. Stored money is DECIMAL(18,4); every sum of it is DECIMAL(38,4) (`_sum`: spelled out, as
Spark's sum of a decimal is narrower), so sums are exact and identical on both engines. A money
figure that is a quotient (EPC) or a share (an item's part of its transaction) is rounded half away
from zero to 4 places by arithmetic both engines do alike (`_per`, `_money_of`). Ratios
(return_rate, conversion_rate) stay DOUBLE.

Spark runs these views too (`commerce_reports.spark` translates them with sqlglot), so the SQL keeps
to forms both engines run alike.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..contract import (
    AGGREGATE_SCHEMAS,
    DATASETS,
    MONEY_SCALE,
    MONEY_SUM,
    TRANSACTION_SCHEMA,
    sql_type,
)
from ..errors import ValidationError
from ..params import FILTER_NAMES, DeviceType

__all__ = [
    "LEDGER",
    "PERIOD_KINDS",
    "PERIOD_NOTE",
    "VIEWS",
    "VIEW_LIST",
    "Merge",
    "PeriodKind",
    "Rollup",
    "View",
    "contract_problems",
    "read_rollups",
    "reads_reports",
    "render",
    "with_inputs",
]

PERIOD_NOTE = (
    " complete: the lake holds the whole period (every updateDate day stored and settled, report "
    "windows fetched after they settled); final: the service will no longer revise it (the same, "
    "up to the end of the revision horizon after the period)."
)


@dataclass(frozen=True)
class PeriodKind:
    """A kind of period a view's rows cover: the columns `coverage.py` reads to say whether a row's
    period is `complete` and `final` (a view of this kind must have them), and the date column a
    rollup of such rows is stored by."""

    name: str
    date_column: str
    requires: tuple[str, ...]
    about: str  # what a row's period is, for the documentation


PERIOD_KINDS: dict[str, PeriodKind] = {
    kind.name: kind
    for kind in (
        PeriodKind("day", "day", ("site", "day"), "a commission day"),
        PeriodKind(
            "month",
            "window_start",
            ("site", "window_start", "window_end", "report_fetched_at"),
            "a calendar month: transactions by commission month beside the stored report window",
        ),
        PeriodKind(
            "window",
            "window_start",
            ("site", "window_start", "window_end", "fetched_at"),
            "a stored report window",
        ),
    )
}


def _refuse(view: str, rule: str, detail: str, fix: str) -> ValidationError:
    """The error of a declaration that breaks a rule of the views' contract."""
    return ValidationError(f"view {view}", f'breaks the rule "{rule}": {detail}', fix)


@dataclass(frozen=True)
class Merge:
    """How a rollup's rows over separate sets of transactions add up, so that a refresh can update
    a month by the changed transactions alone (see `db/merge.py`).

    Rows of the same keys (the rollup's) add their `sums` (a transaction's old row is subtracted);
    `firsts` keep the least known value; `derived` columns are computed again from the merged row
    (SQL over its columns). Any other column comes from the aggregate reports (the rollup over no
    transactions): a view that reads no report declares every column (`contract_problems`).
    """

    sums: tuple[str, ...]  # with `transactions`: a row whose count falls to 0 is gone
    derived: tuple[tuple[str, str], ...] = ()
    firsts: tuple[str, ...] = ()

    @property
    def columns(self) -> tuple[str, ...]:
        """Every column the merge declares (sums, firsts, derived)."""
        return (*self.sums, *self.firsts, *(name for name, _ in self.derived))


@dataclass(frozen=True)
class Rollup:
    """How a view is kept as Parquet (see `db/build.py`): a file per month of `date_column`, a row
    per `keys` (the site and the date column among them); with a `merge`, a month is updated by its
    changed transactions alone, without one it is computed again from its stored transactions."""

    date_column: str
    keys: tuple[str, ...]
    merge: Merge | None = None


@dataclass(frozen=True)
class View:
    """One public view: what a row is, its SQL template, whether a rollup keeps it (and how), and
    the kind of period a row covers (`PERIOD_KINDS`; None: a row is no period).

    The rules a declaration can break without its SQL being run are checked here, when it is made
    (at import); those that need its columns, by `contract_problems` (one fast test runs it)."""

    name: str
    comment: str
    sql: str
    rollup: Rollup | None = None
    period: str | None = None

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[a-z][a-z0-9_]*", self.name):
            raise _refuse(
                self.name, "a view's name is a lowercase SQL name", repr(self.name), "e.g. 'daily_x'"
            )
        if self.period is not None and self.period not in PERIOD_KINDS:
            raise _refuse(
                self.name,
                "a period is one of the kinds",
                f"period {self.period!r}",
                f"use {', '.join(PERIOD_KINDS)}",
            )
        if self.rollup is not None:
            self._check_rollup(self.rollup)

    def _check_rollup(self, rollup: Rollup) -> None:
        for column in ("site", rollup.date_column):
            if column not in rollup.keys:
                raise _refuse(
                    self.name,
                    "a rollup's keys hold the site and its date column",
                    f"column {column} is not among its keys {rollup.keys}",
                    "list it in Rollup(keys=...)",
                )
        kind = PERIOD_KINDS.get(self.period or "")
        if kind is not None and rollup.date_column != kind.date_column:
            raise _refuse(
                self.name,
                f"a rollup of {kind.name} periods is stored by their {kind.date_column}",
                f"its date column is {rollup.date_column}",
                f"give Rollup(date_column={kind.date_column!r}, ...)",
            )
        if rollup.merge is None:
            return
        merge = rollup.merge
        if "transactions" not in merge.sums:
            raise _refuse(
                self.name,
                "a Merge sums transactions",
                "column transactions is not among its sums (it says which rows are left)",
                "add 'transactions' to Merge(sums=...)",
            )
        declared = [*rollup.keys, *merge.columns]
        for column in sorted({c for c in declared if declared.count(c) > 1}):
            raise _refuse(
                self.name,
                "a merge column is declared once",
                f"column {column} is declared more than once among keys, sums, firsts and derived",
                "keep it in one of them",
            )

    @property
    def merge(self) -> Merge | None:
        """How the view's rollup merges a change (None: no rollup, or one computed again)."""
        return None if self.rollup is None else self.rollup.merge

    @property
    def reads(self) -> tuple[str, ...]:
        """The views its SQL reads (`{src}.<name>`), sorted."""
        return tuple(sorted(set(re.findall(r"\{src\}\.(\w+)", self.sql))))

    @property
    def datasets(self) -> tuple[str, ...]:
        """The lake datasets its SQL reads directly (`{<dataset>}`)."""
        return tuple(d for d in DATASETS if "{" + d + "}" in self.sql)


def render(view: View, src: str, sources: dict[str, str]) -> str:
    """The view's SELECT with `{src}` and the lake sources filled in."""
    sql = view.sql.replace("{src}", src)
    for dataset, select in sources.items():
        sql = sql.replace("{" + dataset + "}", f"({select})")
    return sql


def _declared(*views: View) -> tuple[View, ...]:
    """`views` as the list of views: each name once, each view reading only views declared before
    it (the order in which they are created, typed and built)."""
    seen: dict[str, View] = {}
    for view in views:
        if view.name in seen:
            raise _refuse(
                view.name, "a view is declared once", f"a second view named {view.name}", "rename one"
            )
        for name in view.reads:
            if name not in seen:
                raise _refuse(
                    view.name,
                    "a view reads only views declared before it",
                    f"it reads {name}, declared after it or not at all",
                    f"declare {name} first, or read an existing view",
                )
            _check_rollup_read(view, seen[name])
        seen[view.name] = view
    return views


def _check_rollup_read(view: View, read: View) -> None:
    """A rollup reading another (not `transactions`) is stored by the same date column: the days
    or months a change touches in it are then among those the refresh writes to the one it reads."""
    if view.rollup is None or read.rollup is None or read.name == "transactions":
        return
    if view.rollup.date_column != read.rollup.date_column:
        raise _refuse(
            view.name,
            "a rollup reads only rollups stored by its own date column",
            f"it reads {read.name}, stored by {read.rollup.date_column}, and is stored by "
            f"{view.rollup.date_column}",
            f"read {read.name}'s own inputs instead, or store both by one date column",
        )


_TXN = [f.name for f in TRANSACTION_SCHEMA]
_UTM = [c for c in _TXN if "_utm_" in c]
_FILTERS = list(FILTER_NAMES)


def _columns(names: list[str], prefix: str = "") -> str:
    return ", ".join(prefix + n for n in names)


def _aggregate_columns(dataset: str) -> str:
    """window_end, the report's own columns, the filter columns, extra (the typed totals are in
    `report_totals`)."""
    skip = ("window_start", "window_end", "extra", *_FILTERS, *_TOTALS)
    metrics = [f.name for f in AGGREGATE_SCHEMAS[dataset] if f.name not in skip]
    return _columns(["window_end", *metrics, *_FILTERS, "extra"])


_TOTALS = [f.name for f in AGGREGATE_SCHEMAS["networks"] if f.name.startswith("total_")]
_MONEY = sql_type(AGGREGATE_SCHEMAS["networks"].field("revenue").type)  # DECIMAL(18,4)
_UNIT = f"0.{'0' * (MONEY_SCALE - 1)}1"  # the smallest amount: 0.0001
_UNITS = 10**MONEY_SCALE


def _sum(column: str) -> str:
    """SQL: the exact sum of a money column, typed alike on DuckDB and Spark."""
    return f"CAST(sum({column}) AS {MONEY_SUM})"


def _per(amount: str, count: str) -> str:
    """SQL: money divided by a whole count (NULL when 0), rounded half away from zero to 4 places in
    integers: DuckDB divides decimals in binary floating point, Spark in decimals; this is exact on both."""
    units = f"CAST({amount} * {_UNITS} AS BIGINT)"
    n = f"nullif({count}, 0)"
    rounded = (
        f"CASE WHEN {units} < 0 THEN -((2 * -{units} + {n}) // (2 * {n})) "
        f"ELSE (2 * {units} + {n}) // (2 * {n}) END"
    )
    return f"CAST(CAST({rounded} AS DECIMAL(18, 0)) * {_UNIT} AS {_MONEY})"


def _money_of(number: str) -> str:
    """SQL: a DOUBLE as money, rounded half away from zero to 4 places. Both engines turn the decimal
    into the same double, multiply alike, and round a double to a whole number alike."""
    return f"CAST(CAST(round(({number}) * {_UNITS}) AS DECIMAL(18, 0)) * {_UNIT} AS {_MONEY})"


_DEVICE_CODES = {d.label: d.value for d in DeviceType}
_DEVICE_OF_CODE = (
    "CASE device_type " + " ".join(f"WHEN '{c}' THEN '{w}'" for w, c in _DEVICE_CODES.items()) + " END"
)

# Transaction measures shared by every view that sums transactions (one definition, no twins).
_MEASURES = f"""
    {_sum("publisher_net_revenue")} AS revenue,
    {_sum("order_value")} AS order_value,
    count(*) AS transactions,
    count(*) FILTER (WHERE returned) AS returns,
    count(*) FILTER (WHERE returned) / count(*) AS return_rate"""


def _slice(only: str | None) -> str:
    """Aggregate rows of the slice filtered by `only` alone (None: the unfiltered `all` slice)."""
    return " AND ".join(f"{f} IS {'NOT ' if f == only else ''}NULL" for f in _FILTERS)


def _monthly(key: str, txn_key: str, agg_key: str, only: str | None, extra: str = "") -> str:
    """Transactions by commission month (`txn_key`) full-joined with the month windows of the
    networks slice filtered by `only` (`agg_key`) on (site, month, `key`)."""
    keys = f", {txn_key} AS {key}" if key else ""
    agg_keys = f", {agg_key} AS {key}" if key else ""
    using = f", {key}" if key else ""
    return f"""
WITH t AS (
    SELECT site, date_trunc('month', commission_date)::DATE AS window_start{keys},{_MEASURES}
    FROM {{src}}.transactions
    WHERE commission_date IS NOT NULL
    GROUP BY ALL
), a AS (
    SELECT site, window_start{agg_keys}, sum(clicks)::BIGINT AS clicks,
           {_sum("revenue")} AS aggregate_revenue, {_sum("sales")} AS sales, sum(actions)::BIGINT AS actions,
           min(fetched_at) AS report_fetched_at
    FROM {{src}}.networks
    WHERE grain = 'month' AND {_slice(only)}
    GROUP BY ALL
)
SELECT site, window_start, (window_start + INTERVAL 1 MONTH)::DATE AS window_end{using},
       coalesce(revenue, 0) AS revenue, coalesce(order_value, 0) AS order_value,
       coalesce(transactions, 0) AS transactions, coalesce(returns, 0) AS returns, return_rate,
       clicks, aggregate_revenue, sales, actions,
       {_per("aggregate_revenue", "clicks")} AS epc, actions / nullif(clicks, 0) AS conversion_rate,
       report_fetched_at{extra}
FROM t FULL JOIN a USING (site, window_start{using})"""


LEDGER = "ledger"  # the placeholder of the stored ledger days (a relation of the manifests)

# Without click detail the contract dialect leaves `partnerProduct` out (stored NULL) where the
# published one must send the code UNK (stored Unknown): `transactions` shows both as Unknown, as it
# does `device` (left out, or UKN: NULL either way).
_UNKNOWN_WHEN_NULL = {"partner_product": "coalesce(partner_product, 'Unknown') AS partner_product"}

# A transaction's versions, latest first (ties: latest fetched). Spark runs the views too (translated
# by sqlglot) and refuses a frame on a ranking and, before 4.0, FILTER on a window aggregate: so
# `transactions` ranks over this frame-free window and counts with CASE.
_LATEST_FIRST = "PARTITION BY site, commission_id ORDER BY update_date DESC NULLS LAST, fetched_at DESC"

_SUMS = ("revenue", "order_value", "transactions", "returns")
_RETURN_RATE = ("return_rate", "returns / nullif(transactions, 0)")


def _monthly_rollup(key: str, *derived: tuple[str, str]) -> Rollup:
    """The rollup of a `_monthly` view keyed by `key` ('' for none), merged by its changes."""
    keys = ("site", "window_start", "window_end", *((key,) if key else ()))
    return Rollup("window_start", keys, Merge(_SUMS, (_RETURN_RATE, *derived)))


def _window_sums(dataset: str, clicks: str, reported_clicks: str) -> str:
    """The sums of one aggregate dataset's stored rows per window, beside the totals it reported."""
    return f"""SELECT site, '{dataset}' AS dataset, slice, grain, start AS window_start, window_end,
           count(*) AS row_count, {_sum("revenue")} AS revenue, {_sum("sales")} AS sales,
           {clicks} AS clicks, sum(actions) AS actions, min(total_revenue) AS reported_revenue,
           min(total_sales) AS reported_sales, {reported_clicks} AS reported_clicks,
           min(total_actions) AS reported_actions, max(fetched_at) AS fetched_at
    FROM {{{dataset}}}
    GROUP BY site, slice, grain, start, window_end"""


def _beside(measure: str, money: bool) -> str:
    """A measure summed, reported, and their difference (money: exact, as DECIMAL(38,4))."""
    reported = f"CAST(reported_{measure} AS {MONEY_SUM})" if money else f"reported_{measure}"
    return f"{measure}, reported_{measure}, {reported} - {measure} AS {measure}_difference"


_MONTH_NOTE = (
    "transaction figures (revenue, order_value, transactions, returns) by commission date; clicks, "
    "aggregate_revenue, sales, actions, epc, conversion_rate from the stored month window ({slice}) "
    "of clicks, NULL when not stored, and report_fetched_at, when that window was fetched."
)

VIEW_LIST: tuple[View, ...] = _declared(
    View(
        "transaction_versions",
        "One row per stored version of a transaction: each partition file's rows, with site, "
        "partition_by (updateDate|commissionDate|clickDate) and partition_day (filter it: prunes files).",
        f"""SELECT site, "by" AS partition_by, day AS partition_day, {_columns(_TXN)}, fetched_at
FROM {{transactions}}""",
    ),
    View(
        "ledger_coverage",
        "One row per site that stores transaction ledger days: first_day and last_day, the first and "
        "last updateDate day stored (settled or not; a day fetched with no transaction counts, as its "
        "partition holds no row), and last_fetched_at, when the last day was fetched (before that day "
        "ended: it is partial).",
        f"SELECT site, first_day, last_day, last_fetched_at FROM {{{LEDGER}}}",
    ),
    View(
        "transactions",
        "One row per (site, commission_id): its latest stored version by update_date (ties: latest "
        "fetched_at), with version_count (versions in the updateDate ledger), original_revenue, adjusted "
        "(changed after it first appeared) "
        "and returned (revenue or order value adjusted down, or a negative transaction: a separate "
        "return). device and partner_product NULL show as Unknown. Filter on commission_date.",
        f"""SELECT site, commission_id, commission_date, update_date, click_date,
       {
            _columns(
                [
                    _UNKNOWN_WHEN_NULL.get(c, c)
                    for c in _TXN
                    if c not in ("commission_id", "commission_date", "update_date", "click_date", "device")
                ]
            )
        },
       coalesce(device, 'Unknown') AS device, fetched_at,
       version_count, first_update_date, original_revenue, version_count > 1 AS adjusted,
       coalesce(publisher_net_revenue < 0 OR publisher_net_revenue < original_revenue
                OR order_value < original_order_value, false) AS returned
FROM {{src}}.transaction_versions
JOIN (  -- the latest version's partition, found on narrow rows: sorting whole rows costs 3x more
    SELECT site, commission_id, partition_by, partition_day,
           greatest(count(CASE WHEN partition_by = 'updateDate' THEN 1 END) OVER versions, 1)
               AS version_count,
           last_value(update_date) OVER versions AS first_update_date,
           last_value(publisher_net_revenue) OVER versions AS original_revenue,
           last_value(order_value) OVER versions AS original_order_value
    FROM {{src}}.transaction_versions
    WHERE commission_id IS NOT NULL
    WINDOW versions AS ({_LATEST_FIRST} ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)
    QUALIFY row_number() OVER ({_LATEST_FIRST}) = 1
) AS latest USING (site, commission_id, partition_by, partition_day)""",
        rollup=Rollup("commission_date", ("site", "commission_id", "commission_date")),
    ),
    View(
        "transaction_items",
        "One row per product of a current transaction (its product array unnested); revenue and "
        "order_value are the transaction's, split by each item's share of price x quantity (as the "
        "merchandise report splits them), rounded to 4 places. Filter on commission_date.",
        f"""SELECT site, commission_id, commission_date, click_date, network, merchant_group_id,
       merchant_group_name, device, country, returned, item.product_id, item.product_name,
       item.price, item.quantity,
       coalesce(CAST(item.price AS DOUBLE) * item.quantity / nullif(items_value, 0), 1 / n_items) AS share,
       {_money_of("publisher_net_revenue * share")} AS revenue,
       {_money_of("order_value * share")} AS order_value
FROM (
    SELECT *, unnest(products) AS item, array_length(products) AS n_items,  -- len() is a string's on Spark
           list_sum(list_transform(products, lambda p: CAST(p.price AS DOUBLE) * p.quantity)) AS items_value
    FROM {{src}}.transactions
    WHERE array_length(products) > 0
)""",
    ),
    View(
        "networks",
        "One row per network of a stored networks report window: window_start (filter it: prunes "
        "files), window_end (excluded), grain, slice and one column per filter (NULL: not filtered).",
        f"""SELECT site, start AS window_start, {_aggregate_columns("networks")}, grain, slice, fetched_at
FROM {{networks}}""",
        period="window",
    ),
    View(
        "merchandise",
        "One row per product and merchant of a stored merchandise report window: window_start "
        "(filter it: prunes files), window_end (excluded), grain, slice and the filter columns.",
        f"""SELECT site, start AS window_start, {_aggregate_columns("merchandise")}, grain, slice, fetched_at
FROM {{merchandise}}""",
        period="window",
    ),
    View(
        "link_performance",
        "One row per site, day (commission date) and link: link_url with page_url, cuid and the "
        "link and page UTM tags; revenue, order_value, transactions, returns, return_rate. Sum "
        "over days for a range.",
        f"""SELECT site, commission_date AS day, link_url, page_url, cuid, {_columns(_UTM)},{_MEASURES}
FROM {{src}}.transactions
GROUP BY ALL""",
        rollup=Rollup(
            "day", ("site", "day", "link_url", "page_url", "cuid", *_UTM), Merge(_SUMS, (_RETURN_RATE,))
        ),
        period="day",
    ),
    View(
        "network_link_performance",
        "One row per site, day (commission date), network, merchant (merchant_group_name) and link "
        "(link_url): revenue, order_value, transactions, returns, return_rate, adjusted. Sum over days "
        "for a range, over links for a merchant, over merchants for a network.",
        f"""SELECT site, commission_date AS day, network, merchant_group_name, link_url,{_MEASURES},
    count(*) FILTER (WHERE adjusted) AS adjusted
FROM {{src}}.transactions
GROUP BY ALL""",
        rollup=Rollup(
            "day",
            ("site", "day", "network", "merchant_group_name", "link_url"),
            Merge((*_SUMS, "adjusted"), (_RETURN_RATE,)),
        ),
        period="day",
    ),
    View(
        "daily_performance",
        "One row per site and day (commission date): revenue, order_value, transactions, returns, "
        "return_rate, adjusted, networks and links earning that day.",
        f"""SELECT site, day, {_sum("revenue")} AS revenue, {_sum("order_value")} AS order_value,
    sum(transactions)::BIGINT AS transactions, sum(returns)::BIGINT AS returns,
    sum(returns) / sum(transactions) AS return_rate,
    sum(adjusted)::BIGINT AS adjusted,
    count(DISTINCT network) AS networks,
    count(DISTINCT link_url) AS links
FROM {{src}}.network_link_performance
GROUP BY ALL""",
        # Its distinct counts do not add up (no Merge), but a day's networks and links are those of
        # its rows in network_link_performance: a changed day is computed again from those (some
        # thousands of rows), not from the day's transactions.
        rollup=Rollup("day", ("site", "day")),
        period="day",
    ),
    View(
        "device_performance",
        "One row per site, calendar month (window_start, window_end excluded) and device; "
        + _MONTH_NOTE.format(slice="deviceType=<code>"),
        _monthly("device", "device", _DEVICE_OF_CODE, "device_type"),
        rollup=_monthly_rollup("device"),
        period="month",
    ),
    View(
        "country_performance",
        "One row per site, calendar month (window_start, window_end excluded) and country (upper "
        "case; NULL: no click detail); " + _MONTH_NOTE.format(slice="country=<code>"),
        _monthly("country", "upper(country)", "country", "country"),
        rollup=_monthly_rollup("country"),
        period="month",
    ),
    View(
        "network_performance",
        "One row per site, calendar month (window_start, window_end excluded) and network; "
        + _MONTH_NOTE.format(slice="all")
        + " revenue_gap = aggregate_revenue - revenue.",
        _monthly(
            "network",
            "network",
            "network_name",
            None,
            ",\n       aggregate_revenue - coalesce(revenue, 0) AS revenue_gap",
        ),
        rollup=_monthly_rollup("network", ("revenue_gap", "aggregate_revenue - revenue")),
        period="month",
    ),
    View(
        "merchandise_performance",
        "One row per site, calendar month (window_start, window_end excluded), product_name and "
        "merchant_group_id: revenue, order_value, quantity, transactions and returns from the "
        "transaction items (commission date; revenue split by item value) next to revenue, sales "
        "and actions of the stored merchandise month window (`all` slice; click date), NULL when "
        "not stored.",
        f"""WITH by_transaction AS (  -- a transaction's items of a product: counting these needs no DISTINCT
    SELECT site, date_trunc('month', commission_date)::DATE AS window_start, product_name,
           merchant_group_id, commission_id, min(merchant_group_name) AS merchant_group_name,
           {_sum("revenue")} AS revenue, {_sum("order_value")} AS order_value, sum(quantity) AS quantity,
           bool_or(returned) AS returned
    FROM {{src}}.transaction_items
    WHERE commission_date IS NOT NULL
    GROUP BY ALL
), t AS (
    SELECT site, window_start, product_name, merchant_group_id,
           min(merchant_group_name) AS merchant_group_name, {_sum("revenue")} AS revenue,
           {_sum("order_value")} AS order_value, sum(quantity) AS quantity, count(*) AS transactions,
           count(*) FILTER (WHERE returned) AS returns
    FROM by_transaction
    GROUP BY ALL
), a AS (
    SELECT site, window_start, product_name, merchant_group_id,
           min(merchant_group_name) AS merchant_group_name, {_sum("revenue")} AS aggregate_revenue,
           {_sum("sales")} AS sales, sum(actions)::BIGINT AS actions, min(fetched_at) AS report_fetched_at
    FROM {{src}}.merchandise
    WHERE grain = 'month' AND {_slice(None)}
    GROUP BY ALL
)
SELECT site, window_start, (window_start + INTERVAL 1 MONTH)::DATE AS window_end, product_name,
       merchant_group_id, coalesce(t.merchant_group_name, a.merchant_group_name) AS merchant_group_name,
       coalesce(revenue, 0) AS revenue, coalesce(order_value, 0) AS order_value,
       coalesce(quantity, 0) AS quantity, coalesce(transactions, 0) AS transactions,
       coalesce(returns, 0) AS returns, aggregate_revenue, sales, actions, report_fetched_at
FROM t FULL JOIN a USING (site, window_start, product_name, merchant_group_id)""",
        rollup=Rollup(
            "window_start",
            ("site", "window_start", "window_end", "product_name", "merchant_group_id"),
            Merge(
                ("revenue", "order_value", "quantity", "transactions", "returns"),
                firsts=("merchant_group_name",),
            ),
        ),
        period="month",
    ),
    View(
        "site_performance",
        "One row per site and calendar month (window_start, window_end excluded); "
        + _MONTH_NOTE.format(slice="all"),
        _monthly("", "", "", None),
        rollup=_monthly_rollup(""),
        period="month",
    ),
    View(
        "report_totals",
        "One row per site, aggregate dataset (networks|merchandise), slice, grain and stored window: "
        "row_count, and for revenue, sales, clicks (networks only) and actions the sum of the stored "
        "rows, the service's own total of the answer (reported_*, from its `totals`; NULL when it sent "
        "none, or when the window was stored by a version that did not keep them: an upgraded lake's "
        "windows until fetched again) and reported minus summed (*_difference).",
        f"""WITH windows AS (
    {_window_sums("networks", "sum(clicks)", "min(total_clicks)")}
    UNION ALL
    {_window_sums("merchandise", "CAST(NULL AS DOUBLE)", "CAST(NULL AS DOUBLE)")}
)
SELECT site, dataset, slice, grain, window_start, window_end, row_count,
       {_beside("revenue", True)},
       {_beside("sales", True)},
       {_beside("clicks", False)},
       {_beside("actions", False)},
       fetched_at
FROM windows""",
        period="window",
    ),
    View(
        "country_device_performance",
        "One row per site, day (commission date), country (upper case; NULL: no click detail) and "
        "device: revenue, order_value, transactions, returns, return_rate. Sum over days for a range.",
        f"""SELECT site, commission_date AS day, upper(country) AS country, device,{_MEASURES}
FROM {{src}}.transactions
GROUP BY ALL""",
        rollup=Rollup("day", ("site", "day", "country", "device"), Merge(_SUMS, (_RETURN_RATE,))),
        period="day",
    ),
    View(
        "network_clicks",
        "One row per site, stored networks report window (window_start, window_end excluded, grain, "
        "slice, fetched_at) and network with the window's filter columns (network_name, device_type, "
        "country): clicks. The networks report's clicks in a few files instead of one per window: "
        "what comparisons read clicks from.",
        """SELECT site, window_start, window_end, grain, slice, fetched_at, network_name, device_type,
       country, sum(clicks) AS clicks
FROM {src}.networks
GROUP BY ALL""",
        rollup=Rollup(
            "window_start",
            (
                "site",
                "window_start",
                "window_end",
                "grain",
                "slice",
                "fetched_at",
                "network_name",
                "device_type",
                "country",
            ),
        ),
        period="window",
    ),
)

VIEWS: dict[str, str] = {view.name: view.comment + (PERIOD_NOTE if view.period else "") for view in VIEW_LIST}


def with_inputs(views: Iterable[View]) -> list[View]:
    """`views` and the views without a rollup that they read (`transaction_items`, the reports),
    directly or through each other, in VIEW_LIST order: what computing them installs (a rollup they
    read is handed in)."""
    chosen = set(views)
    wanted: set[str] = set()
    for view in reversed(VIEW_LIST):  # a view reads only views declared before it
        if view in chosen or (view.rollup is None and view.name in wanted):
            wanted.update(view.reads)
    return [v for v in VIEW_LIST if v in chosen or (v.rollup is None and v.name in wanted)]


def read_rollups(view: View) -> tuple[View, ...]:
    """The rollups but `transactions` that `view` reads, directly or through views without a rollup
    (`daily_performance` reads `network_link_performance`): a refresh computes its changed days or
    months from the rows it writes to those."""
    names = {name for v in with_inputs([view]) for name in v.reads} - {"transactions", view.name}
    return tuple(v for v in VIEW_LIST if v.name in names and v.rollup is not None)


def reads_transactions(view: View) -> bool:
    """Whether `view` reads the `transactions` rollup, directly, through views without a rollup
    (`transaction_items`) or through the rollups it reads: whether a changed transaction can change
    its rows."""
    direct = any("transactions" in v.reads for v in with_inputs([view]))
    return direct or any(map(reads_transactions, read_rollups(view)))


def reads_reports(view: View) -> bool:
    """Whether `view` reads the aggregate reports (`networks`, `merchandise`), directly, through
    views without a rollup or through the rollups it reads."""
    direct = any(d in AGGREGATE_SCHEMAS for v in with_inputs([view]) for d in v.datasets)
    return direct or any(map(reads_reports, read_rollups(view)))


_NUMBERS = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UBIGINT", "DECIMAL", "DOUBLE", "FLOAT")


def contract_problems(views: Sequence[View] = VIEW_LIST) -> list[str]:
    """What each declaration of `views` breaks that only its columns tell, a line per broken rule
    naming the view, the rule and the column (empty: nothing). Each view's SQL is bound over typed,
    empty lake files in an in-memory DuckDB, in the order given; then its period kind's columns, its
    rollup's keys and each column of its merge are looked for among the columns it has. One fast
    test runs it over VIEW_LIST (`tests/db/test_views.py`)."""
    import duckdb

    from .coverage import ledger_select
    from .sources import typed_empty

    sources = {dataset: typed_empty(dataset) for dataset in DATASETS} | {LEDGER: ledger_select(())}
    problems: list[str] = []
    checked: dict[str, tuple[str, ...]] = {}  # the views bound so far: their columns, for sqlglot
    with duckdb.connect() as con:
        con.execute("CREATE SCHEMA checked")
        for view in views:
            sql = render(view, "checked", sources)
            try:
                con.execute(f"CREATE VIEW checked.{view.name} AS {sql}")
                described = con.execute(f"DESCRIBE checked.{view.name}").fetchall()
            except duckdb.Error as error:
                first_line = str(error).strip().splitlines()[0]
                refused = _refuse(
                    view.name, "its SQL binds over the lake's columns", first_line, "mend its SQL"
                )
                problems.append(str(refused))
                continue
            columns = {str(name): str(kind) for name, kind, *_ in described}
            found = _column_problems(view, columns)
            if not found and view.rollup is not None and view.rollup.merge is not None:
                read = tuple(checked.items())  # (the views it may read, with their columns)
                found = list(_aggregate_problems(view.name, view.rollup.merge, sql, read))
            problems += [str(refused) for refused in found]
            checked[view.name] = tuple(columns)
    return problems


@functools.cache  # (a probe declared after VIEW_LIST checks every view of it again)
def _aggregate_problems(
    name: str, merge: Merge, sql: str, read: tuple[tuple[str, tuple[str, ...]], ...]
) -> tuple[ValidationError, ...]:
    """The columns of `merge` that the aggregate making them (found by each column's lineage
    through the view's `sql`, sqlglot's, down to the first aggregate on each path; `read`: the
    views before it, with their columns) cannot merge: a sum that is no sum or count of rows (a
    distinct count, a max: a merged month would add them), a first that is no least value (min).
    Only a test of merged months would see it, minutes later."""
    from sqlglot import exp
    from sqlglot.lineage import Node, lineage

    schema = {"checked": {view: dict.fromkeys(columns, "UNKNOWN") for view, columns in read}}  # (names)

    def making(node: Node) -> list[exp.AggFunc]:
        own = [a for a in node.expression.find_all(exp.AggFunc) if a.find_ancestor(exp.AggFunc) is None]
        return own or [a for below in node.downstream for a in making(below)]

    checks: list[tuple[str, tuple[type[exp.AggFunc], ...], str, str]]
    checks = [(c, (exp.Sum, exp.Count), "sums", "a sum or a count of rows") for c in merge.sums]
    checks += [(c, (exp.Min,), "firsts", "the least value, min(...)") for c in merge.firsts]
    every = lineage(None, sql, schema=schema, dialect="duckdb")  # each column's, the SQL qualified once
    nodes = every if isinstance(every, dict) else {every.name: every}
    found = []
    for column, kinds, role, wanted in checks:
        for made in making(nodes[column]):
            if isinstance(made, kinds) and made.find(exp.Distinct) is None:
                continue
            found.append(
                _refuse(
                    name,
                    f"a Merge's {role} are each {wanted}",
                    f"column {column} is {made.sql('duckdb')}",
                    "declare it where it merges (sums: sum or count; firsts: min; else derived), or "
                    "drop the Merge: a changed month is then computed again",
                )
            )
    return tuple(found)


# What to do about a period column a view lacks, where more than "add it" can be said.
_FIXES = {
    "report_fetched_at": "add it to its SQL: a month with no report window of its own takes it from the "
    "networks month window of the `all` slice, LEFT JOIN on (site, window_start), and then its rollup "
    "takes no Merge (CONTRIBUTING.md, 'Add a view')",
}


def _column_problems(view: View, columns: Mapping[str, str]) -> list[ValidationError]:
    """The rules `view` breaks, given its columns (name -> DuckDB type)."""
    found = []
    if view.period is not None:
        kind = PERIOD_KINDS[view.period]
        rule = f"a {kind.name} period has the columns {', '.join(kind.requires)}"
        fix = "add it to its SQL (coverage.py reads it to say complete and final)"
        found += [
            _refuse(view.name, rule, f"it has no column {c}", _FIXES.get(c, fix))
            for c in kind.requires
            if c not in columns
        ]
    if view.rollup is not None:
        rule = "a rollup's keys are columns of the view"
        missing = [c for c in view.rollup.keys if c not in columns]
        found += [_refuse(view.name, rule, f"it has no column {c}", "mend Rollup(keys=...)") for c in missing]
    if view.rollup is not None and view.rollup.merge is not None:
        found += _merge_problems(view, view.rollup.keys, view.rollup.merge, columns)
    return found


def _merge_problems(
    view: View, keys: tuple[str, ...], merge: Merge, columns: Mapping[str, str]
) -> list[ValidationError]:
    """The rules a view's `merge` breaks, given the view's columns (name -> DuckDB type)."""
    rule = "a merge column is a column of the view"
    missing = [c for c in merge.columns if c not in columns]
    found = [_refuse(view.name, rule, f"it has no column {c}", "mend its Merge") for c in missing]
    found += [
        _refuse(view.name, "a merge sums numbers", f"column {c} is {columns[c]}", "sum a count or an amount")
        for c in merge.sums
        if c in columns and not columns[c].startswith(_NUMBERS)
    ]
    if reads_reports(view):  # any other column comes from the report side
        return found
    undeclared = [c for c in columns if c not in keys and c not in merge.columns]
    return found + [
        _refuse(
            view.name,
            "a view that reads no report declares every column in its Merge",
            f"column {c} is neither a key, a sum, a first nor derived: a merged month would have "
            "nowhere to take it from",
            "add it to Merge(sums=...) if it adds up, to firsts if it is the least value, or to derived "
            "(SQL over the merged row); a column that is none of these (a max, a distinct count) takes "
            "no Merge: drop the Merge, and a changed month is computed again",
        )
        for c in undeclared
    ]
