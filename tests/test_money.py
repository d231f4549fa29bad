"""Money: the currency is a setting (ISO 4217, checked), and every amount is written by it."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from commerce_reports.config import Settings
from commerce_reports.errors import ConfigurationError
from commerce_reports.money import Currency


@pytest.mark.parametrize(
    ("code", "amount", "written"),
    [
        ("USD", 1234.5, "$1,234.50"),
        ("usd", -3.1, "-$3.10"),
        ("EUR", Decimal("52330.64"), "€52,330.64"),
        ("GBP", 0, "£0.00"),
        ("JPY", 1234.5, "¥1,235"),  # no minor units (rounded half away from zero, as DuckDB's round)
        ("CHF", 12, "CHF\u00a012.00"),  # a symbol of letters keeps its space
        ("BHD", 1.2345, "BHD\u00a01.235"),  # three minor units
    ],
)
def test_amounts_are_written_with_the_currencys_symbol_and_minor_units(
    code: str, amount: float | Decimal, written: str
) -> None:
    assert Currency.of(code).format(amount) == written


def test_a_signed_amount_an_epc_and_a_missing_one() -> None:
    euro = Currency.of("EUR")
    assert euro.format(5, signed=True) == "+€5.00" and euro.format(-5, signed=True) == "-€5.00"
    assert euro.format(0.1746, digits=3) == "€0.175" and euro.format(None) == "–"
    assert (euro.d3_format(), Currency.of("JPY").d3_format(), euro.label("Revenue")) == (
        ",.2f",
        ",.0f",
        "Revenue (EUR)",
    )


@pytest.mark.parametrize(
    "code, amount, written",
    [
        ("JPY", 1234.5, "¥1,235"),  # half away from zero, as the views round money (babel: to even)
        ("USD", 2.125, "$2.13"),
        ("USD", Decimal("2.135"), "$2.14"),
        ("USD", -0.005, "-$0.01"),
        ("USD", -0.004, "$0.00"),  # no "-$0.00"
        ("USD", float("nan"), "–"),
    ],
)
def test_money_is_rounded_half_away_from_zero_as_the_views_round_it(
    code: str, amount: object, written: str
) -> None:
    assert Currency.of(code).format(amount) == written  # type: ignore[arg-type]


@pytest.mark.parametrize("code", ["EURO", "ZZZ", "", "  ", 978])
def test_a_code_iso_4217_does_not_know_is_refused(code: object) -> None:
    with pytest.raises(
        ConfigurationError, match=r"where: .* (is not an ISO 4217 currency code|is not a currency)"
    ):
        Currency.of(code, "where")  # type: ignore[arg-type]


def test_the_setting_comes_from_the_environment_then_the_project_marker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert Settings.from_env().currency.code == "USD"  # the default
    (tmp_path / "commerce-reports.toml").write_text('data_dir = "data"\ncurrency = "gbp"\n')
    assert Settings.from_env().currency == Currency.of("GBP")
    (tmp_path / ".env").write_text("COMMERCE_REPORTS_CURRENCY=EUR\n")
    assert Settings.from_env().currency.code == "EUR"
    monkeypatch.setenv("COMMERCE_REPORTS_CURRENCY", "jpy")  # the environment wins over .env
    assert Settings.from_env().currency.code == "JPY"
    monkeypatch.setenv("COMMERCE_REPORTS_CURRENCY", "yen")
    with pytest.raises(ConfigurationError, match="COMMERCE_REPORTS_CURRENCY: 'YEN' is not an ISO 4217"):
        Settings.from_env()
    monkeypatch.delenv("COMMERCE_REPORTS_CURRENCY")
    (tmp_path / ".env").unlink()
    (tmp_path / "commerce-reports.toml").write_text("currency = 12\n")
    with pytest.raises(ConfigurationError, match=r"commerce-reports\.toml: currency: 12 is not a currency"):
        Settings.from_env()
