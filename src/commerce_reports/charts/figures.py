"""A figure as people read it in text (the report's tables, the alerts' sentences, the mail): money
written by its `Currency` (an EPC with one digit more), rates as percentages, counts grouped. Plain
Python, no Altair: the alerts write their figures with it too."""

from __future__ import annotations

from decimal import Decimal

from ..money import Currency

__all__ = ["figure"]

_RATES = frozenset({"return_rate", "conversion_rate"})
_MONEY = frozenset({"revenue", "order_value"})


def figure(metric: str, value: float | Decimal | int | None, money: Currency) -> str:
    """`value` of `metric` as text: revenue and revenue per order in `money`, EPC with one digit
    more, return and conversion rates in percent, anything else a grouped count; None: '–'."""
    if value is None:
        return "–"
    if metric in _MONEY:
        return money.format(value)
    if metric == "epc":
        return money.format(value, digits=max(money.digits + 1, 2))  # (¥0.3 hid a 4% move)
    if metric in _RATES:
        return f"{value:.2%}"
    return f"{value:,.0f}"
