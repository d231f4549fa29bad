"""Why revenue changed, without files: the decomposition of a change into factors (clicks,
conversion, revenue per order) and contributors, adding up to the change to the last digit."""

from __future__ import annotations

from decimal import Decimal

import polars as pl
import pytest

from commerce_reports.alerting.drivers import OTHERS, SCHEMA, contributors, decompose


def _sides(
    rows: list[tuple[str, str, float, float, float, float, float | None, float | None]],
) -> pl.DataFrame:
    names = ("dimension", "key", "revenue", "revenue_previous", "orders", "orders_previous")
    return pl.DataFrame(
        [dict(zip((*names, "clicks", "clicks_previous"), row, strict=True)) for row in rows],
        schema={
            "dimension": pl.String,
            "key": pl.String,
            **dict.fromkeys(names[2:], pl.Float64),
            "clicks": pl.Float64,
            "clicks_previous": pl.Float64,
        },
    )


# A site whose mobile orders fell 70% (clicks held, each order paying as before), desktop as it was.
MOBILE = _sides(
    [
        ("total", "Total", 1360.0, 2000.0, 132.0, 200.0, 20000.0, 20000.0),
        ("device", "Mobile", 360.0, 1000.0, 36.0, 100.0, 12000.0, 12000.0),
        ("device", "Desktop", 1000.0, 1000.0, 96.0, 100.0, 8000.0, 8000.0),
    ]
)


def test_a_change_splits_into_factors_that_add_up_exactly() -> None:
    frame = decompose(MOBILE)
    assert frame.schema == pl.Schema(SCHEMA)
    total = frame.row(0, named=True)
    assert total["contribution"] == Decimal("-640.0000") and total["share"] == pytest.approx(1.0)
    effects = [total[c] for c in ("clicks_effect", "conversion_effect", "order_value_effect")]
    assert sum(effects, Decimal(0)) == total["contribution"]  # to the last digit, rounding included
    assert total["clicks_effect"] == 0 and total["orders_effect"] == total["conversion_effect"]
    assert total["driver"] == "conversion_rate" and total["driver_change"] == pytest.approx(132 / 200 - 1)
    mobile = frame.filter(pl.col("key") == "Mobile").row(0, named=True)
    assert mobile["share"] == pytest.approx(1.0) and mobile["driver"] == "conversion_rate"
    assert mobile["driver_change"] == pytest.approx(-0.64)
    assert frame.filter(pl.col("dimension") == "device")["contribution"].sum() == total["contribution"]


def test_the_largest_contributors_come_first_and_the_rest_in_one_row() -> None:
    rows = [("total", "Total", 700.0, 1000.0, 70.0, 100.0, None, None)]
    rows += [("network", f"N{n}", 70.0 - 30 * (n == 3), 100.0, 7.0, 10.0, None, None) for n in range(10)]
    frame = decompose(_sides(rows), top_n=3)
    keys = frame.filter(pl.col("dimension") == "network")["key"].to_list()
    assert keys[0] == "N3" and keys[-1] == OTHERS and len(keys) == 4
    assert frame.filter(pl.col("dimension") == "network")["contribution"].sum() == Decimal("-300.0000")
    total = frame.row(0, named=True)
    assert total["driver"] == "orders" and total["clicks_effect"] is None  # no clicks: orders x value
    assert contributors(frame, limit=1)["key"].to_list() == ["N3"]


def test_a_key_new_or_gone_moves_by_its_orders() -> None:
    frame = decompose(
        _sides(
            [
                ("total", "Total", 100.0, 150.0, 10.0, 15.0, None, None),
                ("merchant", "Gone", 0.0, 50.0, 0.0, 5.0, None, None),
            ]
        )
    )
    gone = frame.filter(pl.col("key") == "Gone").row(0, named=True)
    assert gone["orders_effect"] == Decimal("-50.0000") and gone["order_value_effect"] is None
    assert (gone["driver"], gone["driver_change"]) == ("orders", -1.0)


def test_a_network_that_lost_half_its_clicks_is_driven_by_its_clicks() -> None:
    """Clicks -42%, orders -46% (a little more, past the slack), each order paying 8% less: the
    driver was 'revenue per order -8%', the clicks factor dropped for conversion's -7%."""
    from commerce_reports.alerting.alert import Alert
    from commerce_reports.alerting.group import _driver, _Sums

    figures = {
        "orders": _Sums(486.0, 900.0),
        "clicks": _Sums(5836.0, 10065.0),
        "revenue": _Sums(2990.0, 6040.0),
    }

    class Ledger:
        def total(self, alert: Alert, measure: str, own: object) -> _Sums:
            return figures[measure]

    driver, change = _driver(Alert("change", "alpha", "network", "Driftwood Commerce"), Ledger())  # type: ignore[arg-type]
    assert driver == "clicks" and change == pytest.approx(5836.5 / 10065.5 - 1)


def test_a_returns_spike_is_its_own_driver() -> None:
    """A network's returns +252% was explained by 'clicks +15%' and the site's revenue contributors."""
    from commerce_reports.alerting.alert import Alert
    from commerce_reports.alerting.group import _driver
    from commerce_reports.alerting.rules import RULES

    rule = next(r for r in RULES if r.metric == "returns")
    spike = Alert("change", "alpha", "network", "Summit Partners", rule=rule, change=2.52)
    assert _driver(spike, None) == ("returns", 2.52)  # type: ignore[arg-type]  (no ledger read)
