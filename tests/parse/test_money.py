"""Money is read exactly from the JSON text on both paths and in every shape; what does not fit
DECIMAL(18,4) is kept untyped, never rounded."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import orjson
import pytest

from commerce_reports.contract import UNPARSED
from commerce_reports.errors import MalformedResponseError
from commerce_reports.parse import parse_transactions, untyped_rows
from tests.factories import body, nested, published

MARK = "@money@"
# Texts a service may send, and the amount each stands for, to the last digit.
EXACT: list[tuple[str, Decimal]] = [
    ("0.1", Decimal("0.1")),  # a binary float would be 0.1000000000000000055...
    ("0.3", Decimal("0.3")),
    ("-0.0001", Decimal("-0.0001")),
    ("12345678901234.5678", Decimal("12345678901234.5678")),  # 18 digits: no float holds them
    ("99999999999999.9999", Decimal("99999999999999.9999")),
    ("17", Decimal(17)),
    ("12.50000", Decimal("12.5")),
    ("-1.23450000", Decimal("-1.2345")),  # zeros past the fourth place: nothing to round
    ("1.5e2", Decimal(150)),  # an exponent: the tolerant path reads it
    ('"7.25"', Decimal("7.25")),  # a string in JSON's spelling of a number, as numbers are read
]
# Texts that do not fit: more places, too large, not finite, not a number.
UNFIT = [
    "0.12345",
    "0.00005",  # DuckDB's DECIMAL(18,4) alone would round it to 0.0001
    "99999999999999.99990001",
    "0.10000000000000000000001",  # 23 places: DuckDB alone would round it to 0.1
    "1e-30",  # likewise, through an exponent
    "100000000000000",
    "1e400",
    "-Infinity",
    "NaN",
    '"12,50"',
]


def _bodies(text: str) -> dict[str, bytes]:
    """A body per shape, with `text` as the revenue of the second row, and as the price of its item."""
    item = [{"productId": "p9", "productName": "Mug", "price": MARK, "quantity": 1}]
    shapes = {
        "nested": [nested(1), nested(2, commission={"publisherNetRevenue": MARK}, product=item)],
        "published": [published(1), published(2, publisherRevenue=MARK, merchandise=item)],
    }
    return {shape: body(rows).replace(f'"{MARK}"'.encode(), text.encode()) for shape, rows in shapes.items()}


def _amounts(table: Any) -> tuple[Any, Any]:
    return table["publisher_net_revenue"][1].as_py(), table["products"][1].as_py()[0]["price"]


@pytest.mark.parametrize("text, amount", EXACT, ids=[t for t, _ in EXACT])
def test_money_is_exact_on_both_paths_and_both_shapes(text: str, amount: Decimal) -> None:
    for shape, raw in _bodies(text).items():
        fast_path = "e" not in text and '"' not in text  # a string, or an exponent, is read tolerantly
        if fast_path:
            strict = parse_transactions(raw, strict=True)
            assert _amounts(strict) == (amount, amount), shape
        tolerant = parse_transactions(raw.replace(b'{"transactions"', b'{"page":1,"transactions"', 1))
        assert _amounts(tolerant) == (amount, amount), shape
        assert tolerant["publisher_net_revenue"].type == tolerant["order_value"].type
        assert str(tolerant["order_value"].type) == "decimal128(18, 4)"
        assert untyped_rows(tolerant) == 0


@pytest.mark.parametrize("text", UNFIT)
def test_money_that_does_not_fit_is_untyped_with_its_raw_text_never_rounded(text: str) -> None:
    for shape, raw in _bodies(text).items():
        with pytest.raises(MalformedResponseError, match="not exactly a known shape"):
            parse_transactions(raw, strict=True)
        table = parse_transactions(raw)
        assert table["publisher_net_revenue"][1].as_py() is None, shape
        assert table["products"][1].as_py() is None  # an item that cannot be typed: the list is kept raw
        assert table["publisher_net_revenue"][0].as_py() == Decimal("6.25")  # the other row is whole
        unparsed = orjson.loads(table["extra"][1].as_py())[UNPARSED]
        written = {value for value in (unparsed["publisher_net_revenue"], unparsed["products"][0]["price"])}
        assert written == {orjson.loads(text) if text[0] == '"' else _kept(text)}
        assert untyped_rows(table) == 1


def _kept(text: str) -> Any:
    """How extra holds a number's raw text: as a JSON number, or as a string when no float reads it."""
    try:
        number = orjson.loads(text)
    except orjson.JSONDecodeError:
        return text
    return number


def test_a_number_no_float_holds_keeps_its_text_in_extra() -> None:
    table = parse_transactions(_bodies("0.10000000000000000000001")["nested"])
    assert '"publisher_net_revenue":0.10000000000000000000001' in table["extra"][1].as_py()
