"""Money as people read it: the currency the service reports in (an ISO 4217 code, a setting:
`COMMERCE_REPORTS_CURRENCY` or `currency` in commerce-reports.toml, default USD), its symbol and
minor units, and amounts written with them. Charts, the report and the dashboard all format money
here, so no symbol is written anywhere else.

    euro = Currency.of("EUR")
    euro.format(1234.5)                  # '€1,234.50'
    euro.format(-3.1, signed=True)       # '-€3.10'
    euro.format(0.1745, digits=3)        # '€0.175' (an EPC; half away from zero, as the views round)
    Currency.of("JPY").format(1234.5)    # '¥1,235' (no minor units)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from .errors import ConfigurationError

if TYPE_CHECKING:
    from decimal import Decimal

__all__ = ["DEFAULT_CURRENCY", "Currency"]

DEFAULT_CURRENCY = "USD"
_LOCALE = "en_US"  # the toolkit's words are English: grouping with commas, the symbol first


@dataclass(frozen=True)
class Currency:
    """An ISO 4217 currency: its code, checked when made; the symbol readers know it by and its
    minor units are looked up on first use (babel's tables take a tenth of a second to load, and
    most commands never write an amount)."""

    code: str

    @classmethod
    def of(cls, code: str | Currency | None = None, where: str = "currency") -> Currency:
        """The currency of an ISO 4217 code (any case; None: USD), or a ConfigurationError naming
        `where` (the setting it came from) with an example."""
        if isinstance(code, Currency):
            return code
        text = DEFAULT_CURRENCY if code is None else _code(code, where)
        if not _is_iso_4217(text):
            raise ConfigurationError(
                f"{where}: {text!r} is not an ISO 4217 currency code; give one such as USD, EUR or GBP"
            )
        return cls(text)

    @property
    def symbol(self) -> str:
        """The symbol readers know it by in English: '€' for EUR, 'CHF' for CHF."""
        return _looked_up(self.code)[0]

    @property
    def digits(self) -> int:
        """Its minor units: 2 for USD, 0 for JPY, 3 for BHD."""
        return _looked_up(self.code)[1]

    def format(
        self, amount: float | Decimal | int | None, *, digits: int | None = None, signed: bool = False
    ) -> str:
        """`amount` with the symbol and grouping, rounded half away from zero (as the views round
        money) to the currency's minor units (or `digits`, e.g. 3 for an EPC); `signed` writes a +
        before a positive amount. None: '–'."""
        rounded = self.amount(amount, digits=digits)
        if rounded is None:
            return "–"
        from babel.numbers import format_currency

        places = self.digits if digits is None else digits
        pattern = f"¤#,##0{'.' + '0' * places if places else ''}"
        text = format_currency(rounded, self.code, format=pattern, locale=_LOCALE, currency_digits=False)
        if self.symbol[-1:].isalpha():  # CHF1.00 reads badly: CHF 1.00
            text = text.replace(self.symbol, self.symbol + "\u00a0", 1)
        return f"+{text}" if signed and rounded > 0 else text

    def amount(self, amount: float | Decimal | int | None, *, digits: int | None = None) -> Decimal | None:
        """`amount` as a Decimal rounded half away from zero (as the views round money) to the
        currency's minor units (or `digits`); None for None or a ratio of nothing."""
        if amount is None:
            return None
        from decimal import ROUND_HALF_UP, Decimal

        exact = amount if isinstance(amount, Decimal) else Decimal(str(amount))  # (a float as written)
        if not exact.is_finite():
            return None
        places = self.digits if digits is None else digits
        rounded = exact.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
        return rounded.copy_abs() if rounded == 0 else rounded  # no minus before a zero

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


def _is_iso_4217(code: str) -> bool:
    """Whether ISO 4217 has the code (upper case). The default needs no look-up: pycountry's
    table (with the importlib.metadata it loads) is read only for another code."""
    if code == DEFAULT_CURRENCY:
        return True
    if len(code) != 3:
        return False
    import pycountry

    return pycountry.currencies.get(alpha_3=code) is not None


@cache
def _looked_up(code: str) -> tuple[str, int]:
    """The symbol and minor units of an ISO 4217 code, in the toolkit's locale."""
    from babel.numbers import get_currency_precision, get_currency_symbol

    return get_currency_symbol(code, locale=_LOCALE), get_currency_precision(code)
