"""Bodies the sandbox serves in each dialect read on the fast path into the same columns."""

from __future__ import annotations

from datetime import date

import httpx
import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from commerce_reports.parse import parse_aggregate, parse_transactions, untyped_rows
from commerce_reports.sandbox import run_sandbox
from tests.published_schema import validate_response
from tests.sandbox.conftest import ALPHA, small_config

DAYS = ("2026-02-09", "2026-02-10", "2026-02-11")
MONTH = {"clickDateStart": "2026-02-01", "clickDateEnd": "2026-03-01"}
# What the two wires say differently: the revenue id's spelling ("rv12" or 12), the sub type (the
# contract's shape has none), and the product of a row without click detail (published sends UNK).
WIRE_DIFFERENCES = {"revenue_id", "partner_product_sub_type", "partner_product"}


def served(dialect: str, date_style: str = "iso") -> tuple[pa.Table, pa.Table]:
    """A few days of transactions and a month of networks from a fresh sandbox, parsed strictly."""
    with (
        run_sandbox(small_config(dialect=dialect, date_style=date_style)) as running,
        httpx.Client(base_url=running.base_url, headers=ALPHA, timeout=10) as http,
    ):
        days = []
        for day in DAYS:
            answer = http.get("/v1/reports/transactions", params={"updateDate": day})
            if dialect == "published":
                validate_response(str(answer.url), 200, orjson.loads(answer.content), strict=True)
            days.append(parse_transactions(answer.content, strict=True))
        networks = http.get("/v1/reports/networks", params=MONTH)
    start, end = (date.fromisoformat(MONTH[key]) for key in ("clickDateStart", "clickDateEnd"))
    return pa.concat_tables(days), parse_aggregate("networks", networks.content, start, end)


@pytest.fixture(scope="module")
def contract() -> tuple[pa.Table, pa.Table]:
    return served("contract")


@pytest.mark.parametrize("date_style", ["iso", "mixed"])
def test_both_dialects_read_on_the_fast_path_into_the_same_columns(
    contract: tuple[pa.Table, pa.Table], date_style: str
) -> None:
    (ours, our_networks), (theirs, their_networks) = contract, served("published", date_style)
    assert ours.num_rows > 100 and theirs.num_rows == ours.num_rows
    assert theirs["extra"].null_count == theirs.num_rows and untyped_rows(theirs) == 0
    for name in set(ours.column_names) - WIRE_DIFFERENCES:
        assert theirs[name].equals(ours[name]), name
    detail = pc.is_valid(ours["click_id"])
    assert theirs["partner_product"].filter(detail).equals(ours["partner_product"].filter(detail))
    assert theirs["partner_product"].filter(pc.invert(detail)).unique().to_pylist() == ["Unknown"]
    assert theirs["partner_product_sub_type"].null_count < theirs.num_rows
    assert their_networks.equals(our_networks) and their_networks.num_rows > 0
