"""The fast path's machinery: parallel parts, a cut in the wrong place, the portable scratch file."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from commerce_reports.errors import MalformedResponseError
from commerce_reports.parse import fast, parse_transactions
from commerce_reports.parse.tolerant import read_tolerant
from tests.factories import body, nested, published


@pytest.fixture
def small_parts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Split every body into parts, however small, as a big body is."""
    monkeypatch.setattr(fast, "_PART_BYTES", 0)


@pytest.mark.usefixtures("small_parts")
@pytest.mark.parametrize("make", [nested, published])
def test_a_body_read_in_parallel_parts_keeps_every_row_in_order(make: object) -> None:
    rows = [make(n) for n in range(40)]  # type: ignore[operator]
    data = body(rows)
    start, end = fast._array_span(data)
    assert len(fast._parts(data, start, end, 3)) == 3
    table = parse_transactions(data, strict=True)
    assert table["commission_id"].to_pylist() == [f"c{n}" for n in range(40)]
    assert table.equals(read_tolerant(data))


@pytest.mark.usefixtures("small_parts")
def test_a_cut_inside_an_element_falls_back_to_a_whole_read() -> None:
    rows = [published(n) for n in range(5)]
    rows[2]["merchandise"].append({"revenueId": 9, "productId": "p9"})  # looks like an element's start
    data = body(rows)
    start, end = fast._array_span(data)
    trap = data.index(b'},{"revenueId":9')
    assert fast._parts(data, start, end, 2)[0][1] == trap + 1  # the cut lands inside row 2
    table = parse_transactions(data)
    assert table["commission_id"].to_pylist() == [f"c{n}" for n in range(5)]
    assert table.equals(read_tolerant(data))


def test_without_memfd_a_scratch_file_is_used_and_removed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fast, "_MEMFD", False)
    before = set(Path(tempfile.gettempdir()).glob("commerce-reports-parse-*"))
    table = parse_transactions(body([published(n) for n in range(3)]), strict=True)
    assert table.num_rows == 3
    assert set(Path(tempfile.gettempdir()).glob("commerce-reports-parse-*")) == before


def test_no_room_for_the_in_memory_file_reads_the_body_tolerantly(monkeypatch: pytest.MonkeyPatch) -> None:
    def full(*chunks: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(fast, "_in_memory_file", full)
    data = body([published(n) for n in range(3)])
    with pytest.raises(MalformedResponseError, match="No space left"):
        parse_transactions(data, strict=True)
    assert parse_transactions(data).equals(read_tolerant(data))


@pytest.mark.parametrize("make", [nested, published])
def test_a_small_body_is_read_tolerantly_a_large_one_fast_into_the_same_table(
    make: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fast path costs DuckDB ~10 ms of planning whatever the body: below 64 KiB the tolerant
    path is quicker, and it gives the table the fast path gives (`strict` still reads fast)."""
    read_fast = fast.read_fast
    fast_reads: list[int] = []

    def counted(data: bytes) -> object:
        fast_reads.append(len(data))
        return read_fast(data)

    monkeypatch.setattr("commerce_reports.parse.read_fast", counted)
    small, large = (body([make(n) for n in range(count)]) for count in (20, 200))  # type: ignore[operator]
    assert len(small) < 64 << 10 <= len(large)
    assert parse_transactions(small).equals(read_fast(small))
    assert fast_reads == []
    assert parse_transactions(small, strict=True).equals(read_fast(small))
    assert parse_transactions(large).equals(read_tolerant(large))
    assert fast_reads == [len(small), len(large)]
