"""Money as people read it: the currency the service reports in (an ISO 4217 code, a setting:
`COMMERCE_REPORTS_CURRENCY` or `currency` in commerce-reports.toml, default USD), its symbol and
minor units, and amounts written with them. Charts, the report and the dashboard all format money
here, so no symbol is written anywhere else.

    euro = Currency.of("EUR")
    euro.format(1234.5)                  # '€1,234.50'
    euro.format(-3.1, signed=True)       # '-€3.10'
    euro.format(0.1745, digits=3)        # '€0.174' (an EPC)
    Currency.of("JPY").format(1234.5)    # '¥1,235' (no minor units)
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from functools import cache

from .errors import ConfigurationError

__all__ = ["DEFAULT_CURRENCY", "Currency"]

DEFAULT_CURRENCY = "USD"
_LOCALE = "en_US"  # the toolkit's words are English: grouping with commas, the symbol first


@dataclass(frozen=True)
class Currency:
    """An ISO 4217 currency: its code, the symbol readers know it by, its minor units."""

    code: str
    symbol: str
    digits: int

    @classmethod
    def of(cls, code: str | Currency | None = None, where: str = "currency") -> Currency:
        """The currency of an ISO 4217 code (any case; None: USD), or a ConfigurationError naming
        `where` (the setting it came from) with an example."""
        if isinstance(code, Currency):
            return code
        text = DEFAULT_CURRENCY if code is None else _code(code, where)
        found = _currency(text)
        if found is None:
            raise ConfigurationError(
                f"{where}: {text!r} is not an ISO 4217 currency code; give one such as USD, EUR or GBP"
            )
        return found

    def format(
        self, amount: float | Decimal | int | None, *, digits: int | None = None, signed: bool = False
    ) -> str:
        """`amount` with the symbol and grouping, rounded to the currency's minor units (or
        `digits`, e.g. 3 for an EPC); `signed` writes a + before a positive amount. None: '–'."""
        if amount is None:
            return "–"
        from babel.numbers import format_currency

        places = self.digits if digits is None else digits
        pattern = f"¤#,##0{'.' + '0' * places if places else ''}"
        text = format_currency(amount, self.code, format=pattern, locale=_LOCALE, currency_digits=False)
        if self.symbol[-1:].isalpha():  # CHF1.00 reads badly: CHF 1.00
            text = text.replace(self.symbol, self.symbol + "\u00a0", 1)
        return f"+{text}" if signed and amount > 0 else text

    def d3_format(self, digits: int | None = None) -> str:
        """A d3/Vega number format for amounts of this currency (the symbol goes in the label)."""
        return f",.{self.digits if digits is None else digits}f"

    def label(self, text: str) -> str:
        """An axis or column title for money: 'Revenue (EUR)'."""
        return f"{text} ({self.code})"


def _code(value: object, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ConfigurationError(
            f"{where}: {value!r} is not a currency; give an ISO 4217 code, e.g. USD or EUR"
        )
    return value.strip().upper()


@cache
def _currency(code: str) -> Currency | None:
    """The currency of a code (upper case), or None when ISO 4217 has no such code."""
    import pycountry
    from babel.numbers import get_currency_precision, get_currency_symbol

    if len(code) != 3 or pycountry.currencies.get(alpha_3=code) is None:
        return None
    return Currency(code, get_currency_symbol(code, locale=_LOCALE), get_currency_precision(code))
