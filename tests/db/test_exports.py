"""Every view exports in every format `sql` writes, nested columns included, and a result of any
size streams: rows are fetched in batches and written as they come, `--max-rows` limits the query."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import zipfile
from datetime import datetime
from decimal import Decimal
from pathlib import Path

import duckdb
import openpyxl
import polars as pl
import pyarrow.parquet as pq
import pytest

from commerce_reports.cli import main
from commerce_reports.cli.sql import write_query
from commerce_reports.db import VIEWS, stream
from commerce_reports.errors import ValidationError
from commerce_reports.export import OUTPUT_FORMATS
from commerce_reports.export.formats import OutputFormat, _registered
from tests.db.conftest import SyncedLake


def _read_csv(path: Path) -> tuple[list[str], int]:
    frame = pl.read_csv(path, infer_schema=False)
    return frame.columns, frame.height


def _read_json(path: Path) -> tuple[list[str], int]:
    data = json.loads(path.read_text())
    return list(data[0]), len(data)


def _read_jsonl(path: Path) -> tuple[list[str], int]:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    return list(rows[0]), len(rows)


def _read_parquet(path: Path) -> tuple[list[str], int]:
    return pq.read_schema(path).names, pq.read_metadata(path).num_rows


def _read_xlsx(path: Path) -> tuple[list[str], int]:
    """The header (as openpyxl reads it) and the rows under it, counted in the sheet's XML: openpyxl
    reading every cell was most of this test's time (2 s of 3.8 for `transaction_versions`)."""
    header = next(openpyxl.load_workbook(path, read_only=True).active.iter_rows(max_row=1, values_only=True))
    with zipfile.ZipFile(path) as book:
        [sheet] = [name for name in book.namelist() if name.startswith("xl/worksheets/sheet")]
        return list(header), book.read(sheet).count(b"<row ") - 1


# How each registered format is read back: a format added to OUTPUT_FORMATS needs its reader here.
READ_BACK = {
    "csv": _read_csv,
    "json": _read_json,
    "jsonl": _read_jsonl,
    "parquet": _read_parquet,
    "xlsx": _read_xlsx,
}


def test_every_registered_format_is_read_back() -> None:
    assert set(READ_BACK) == set(OUTPUT_FORMATS)


def test_every_list_of_formats_in_the_docs_lists_every_registered_one() -> None:
    """The registry drives `--help` and these tests; the docs list the formats by hand, so a format
    added (as CONTRIBUTING says: one entry) left them stale. A run of three or more names is a list."""
    names = "|".join(sorted(OUTPUT_FORMATS, key=len, reverse=True))
    listing = re.compile(rf"(?:\.?\b(?:{names})\b(?:[\s,|\\]|and\s)*){{3,}}")
    root = Path(__file__).parents[2]
    places = [
        root / "README.md",
        *(root / "docs").rglob("*.md"),
        *(root / "src" / "commerce_reports").rglob("*.py"),
    ]
    stale = [
        f"{place.relative_to(root)}: {found.group(0).strip()!r}"
        for place in places
        for found in listing.finditer(place.read_text())
        if set(OUTPUT_FORMATS) - set(re.findall(rf"\b(?:{names})\b", found.group(0)))
    ]
    assert stale == [], (
        "lists of the output formats that leave a registered one out (add it to each):\n" + "\n".join(stale)
    )


def test_a_suffix_is_one_format_s() -> None:
    # ("tsv", (".tsv", ".csv")) passed every test while --output x.csv still wrote CSV (the probe has
    # a name no format has, so that it fails on the suffix alone, whatever formats are registered)
    csv = OUTPUT_FORMATS["csv"]
    tsv = OutputFormat("probe_tsv", (".tsv_probe", ".csv"), False, True, "tab-separated", csv.write)
    with pytest.raises(ValidationError, match=r"the suffix '\.csv' is declared twice"):
        _registered(*OUTPUT_FORMATS.values(), tsv)


def _count(con: duckdb.DuckDBPyConnection, view: str) -> int:
    row = con.execute(f"SELECT count(*) FROM {view}").fetchall()
    return int(row[0][0])


@pytest.mark.parametrize("view", list(VIEWS))
def test_every_view_in_every_format(
    view: str, synced_con: duckdb.DuckDBPyConnection, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = _count(synced_con, view)
    assert rows > 0, view
    relation = synced_con.sql(f"SELECT * FROM {view} LIMIT 0")
    columns = relation.columns
    nested = [c for c, t in zip(columns, relation.types, strict=True) if t.id in ("struct", "list", "map")]
    target = tmp_path / f"{view}.txt"
    write_query(synced_con, f"SELECT * FROM {view}", "table", target, None)
    assert target.read_text().startswith(f"shape: ({min(rows, 40)}, {len(columns)})"), view
    for name, output in OUTPUT_FORMATS.items():
        target = tmp_path / f"{view}{output.suffixes[0]}"
        write_query(synced_con, f"SELECT * FROM {view}", name, target, None)
        assert READ_BACK[name](target) == (columns, rows), (view, name)
        if output.flat and name == "csv":
            frame = pl.read_csv(target, infer_schema=False)
            for column in nested:  # JSON text, one cell each
                assert all(json.loads(v) is not None for v in frame[column].drop_nulls()), (view, column)
    assert capsys.readouterr().out == ""  # every format went to its file


def test_cr_export_takes_a_frame_a_relation_or_sql(synced: SyncedLake, tmp_path: Path) -> None:
    import commerce_reports as cr

    with cr.connect(synced.data_dir) as con:
        relation = con.sql("SELECT site, revenue FROM site_performance ORDER BY site, window_start")
        expected = relation.pl()
        written = cr.export(relation, tmp_path / "sites.parquet")
    assert written == tmp_path / "sites.parquet" and pl.read_parquet(written).equals(expected)
    frame = pl.DataFrame({"a": [1, 2], "nested": [[1], [2, 3]]})
    assert pl.read_csv(cr.export(frame, tmp_path / "f.csv"))["nested"].to_list() == ["[1]", "[2,3]"]
    sql = cr.export("SELECT count(*) AS n FROM transactions", tmp_path / "n.json", data_dir=synced.data_dir)
    assert json.loads(sql.read_text())[0]["n"] > 0
    assert cr.export(frame, tmp_path / "f.data", format="jsonl").read_text().count("\n") == 2
    with pytest.raises(cr.ValidationError, match="no suffix of an output format"):
        cr.export(frame, tmp_path / "f.data")
    with pytest.raises(cr.ValidationError, match="does not exist"):
        cr.export(frame, tmp_path / "missing" / "f.csv")
    with pytest.raises(cr.ValidationError, match="is not a table to export"):
        cr.export([1, 2], tmp_path / "f.csv")
    assert not (tmp_path / "missing").exists()


def test_a_workbook_is_what_excel_users_expect(synced_con: duckdb.DuckDBPyConnection, tmp_path: Path) -> None:
    """Money as numbers in the currency's format at its full scale, real booleans and dates,
    timestamps with their zone in the format, a frozen header, columns as wide as their values."""
    sql = (
        "SELECT site, day, revenue, transactions, complete, fetched_at, 'a long label of a network' label, "
        "12345678901.2345::DECIMAL(38,4) AS big, 123456789012.3456::DECIMAL(38,4) AS too_precise "
        "FROM daily_performance JOIN (SELECT max(fetched_at) AS fetched_at FROM transactions) ON true "
        "ORDER BY site, day"
    )
    expected = synced_con.sql(sql).pl()
    target = tmp_path / "daily.xlsx"
    write_query(synced_con, sql, "xlsx", target, None)
    book = openpyxl.load_workbook(target)
    sheet = book.active
    header, first, *rest = sheet.iter_rows(values_only=True)
    assert header == tuple(expected.columns) and len(rest) == expected.height - 1
    site, day, revenue, orders, complete, fetched, _label, big, too_precise = first
    assert site == expected["site"][0]
    assert isinstance(day, datetime) and day.date() == expected["day"][0]
    assert Decimal(str(revenue)) == expected["revenue"][0]  # every place of DECIMAL(38,4), as a number
    assert orders == expected["transactions"][0] and complete is expected["complete"][0]
    zone = expected.schema["fetched_at"].time_zone  # type: ignore[attr-defined]
    assert isinstance(fetched, datetime) and fetched == expected["fetched_at"][0].replace(tzinfo=None)
    assert big == 12345678901.2345 and too_precise == "123456789012.3456"  # 16 digits: never rounded
    assert sheet.cell(2, 3).number_format == '"$"#,##0.0000;-"$"#,##0.0000'
    assert sheet.cell(2, 2).number_format == "yyyy-mm-dd"
    assert sheet.cell(2, 6).number_format == f'yyyy-mm-dd hh:mm:ss "{zone}"'
    assert sheet.freeze_panes == "A2" and sheet.cell(1, 1).font.b
    widths = {letter: dim.width for letter, dim in sheet.column_dimensions.items()}
    assert widths["G"] >= len("a long label of a network") > widths["A"] >= len("site")


def test_nested_columns_become_json_text_for_flat_formats(synced_con: duckdb.DuckDBPyConnection) -> None:
    frame = pl.concat(list(stream(synced_con, "SELECT products FROM transactions LIMIT 5", flat=True)))
    assert frame.schema["products"] == pl.String
    assert all(isinstance(json.loads(v), list) for v in frame["products"])


def test_intervals_and_unions_are_their_text_in_every_format(
    synced: SyncedLake, synced_con: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    # Polars cannot hold them: `sql "SELECT now() - fetched_at ..."` was a Rust panic and 114 lines
    # of traceback, in every format and from cr.export.
    sql = "SELECT INTERVAL 3 DAY AS age, union_value(k := 1) AS u, [INTERVAL 2 HOUR] AS ages, 1 AS n"
    for flat in (False, True):
        [frame] = stream(synced_con, sql, flat=flat)
        assert frame.row(0) == ("3 days", "1", "['02:00:00']", 1)
    assert (
        main(["sql", sql, "--output", str(tmp_path / "ages.xlsx"), "--data-dir", str(synced.data_dir)]) == 0
    )
    sheet = openpyxl.load_workbook(tmp_path / "ages.xlsx").active
    assert sheet is not None and [c.value for c in sheet[2]] == ["3 days", "1", "['02:00:00']", 1]


# Values polars cannot write as text (it panicked, printing Rust's message before "error:
# unexpected PanicException"): DuckDB's infinities, and moments past the years polars knows
UNWRITABLE_MOMENTS = {
    "'infinity'::TIMESTAMP": "a TIMESTAMP of infinity",
    "'-infinity'::DATE": "a DATE of -infinity",
    "'infinity'::TIMESTAMPTZ": "a TIMESTAMP of infinity",
    "'infinity'::TIMESTAMP_NS": "a TIMESTAMP of infinity",
    "'294247-01-10'::TIMESTAMP": "a TIMESTAMP outside the years -262143 to 262142",
    "'5000000-01-01'::DATE": "a DATE outside the years -262143 to 262142",
    "['infinity'::TIMESTAMP]": "a TIMESTAMP of infinity",  # nested (CSV and xlsx write it as JSON text)
}


@pytest.mark.parametrize("value", list(UNWRITABLE_MOMENTS))
def test_a_moment_polars_cannot_write_is_refused_in_one_line_and_parquet_keeps_it(
    value: str, synced: SyncedLake, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    data = ["--data-dir", str(synced.data_dir)]
    sql = f"SELECT 1 AS n, {value} AS moment"
    flat_json = value.startswith("[")  # a list goes out as JSON text: its text is DuckDB's
    for form in ("table", *(f for f, output in OUTPUT_FORMATS.items() if not (flat_json and output.flat))):
        written = ["--output", str(tmp_path / f"t.{form}")] if form in ("parquet", "xlsx") else []
        code = main(["sql", sql, *(written or ["--format", form]), *data])
        out, err = capfd.readouterr()
        if form == "parquet":
            assert code == 0, err
            kept = duckdb.sql(f"SELECT moment = {value} FROM '{tmp_path / 't.parquet'}'").fetchall()
            assert kept == [(True,)]
            continue
        assert code == 2, (form, err)
        [said] = [line for line in err.splitlines() if line.startswith("error")]
        assert said.startswith(f'error: column "moment": it holds {UNWRITABLE_MOMENTS[value]}'), said
        assert 'cast it to VARCHAR ("moment"::VARCHAR), or write parquet' in said
        assert "panicked" not in err and "unexpected" not in err and out == ""
        assert not (tmp_path / f"t.{form}").exists()


def test_cr_export_refuses_a_moment_polars_cannot_write(tmp_path: Path) -> None:
    import commerce_reports as cr

    relation = duckdb.sql("SELECT 'infinity'::DATE AS until")
    with pytest.raises(cr.ValidationError, match=r'column "until": it holds a DATE of infinity.*as csv'):
        cr.export(relation, tmp_path / "until.csv")
    assert list(tmp_path.iterdir()) == []


def test_bits_big_integers_and_zoned_times_are_their_text_in_every_format(
    synced_con: duckdb.DuckDBPyConnection,
) -> None:
    # Polars read a BIT or a VARINT as its bytes (`--output t.xlsx`: "unexpected ComputeError"), a
    # UHUGEINT past 2^127 as -1 and a TIME WITH TIME ZONE without its offset
    sql = (
        "SELECT '101'::BIT AS bits, '123456789012345678901234567890123456789'::VARINT AS big, "
        "340282366920938463463374607431768211455::UHUGEINT AS huge, '12:00:00+02'::TIMETZ AS noon"
    )
    text = (
        "101",
        "123456789012345678901234567890123456789",
        "340282366920938463463374607431768211455",
        "12:00:00+02",
    )
    for flat in (False, True):
        [frame] = stream(synced_con, sql, flat=flat)
        assert frame.row(0) == text


def test_a_blob_is_its_text_in_csv_and_xlsx_its_bytes_in_parquet_and_refused_in_json(
    synced: SyncedLake, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    # A BLOB was "unexpected ComputeError" in CSV and xlsx and a Rust panic in JSON
    data = ["--data-dir", str(synced.data_dir)]
    sql = "SELECT 'x\\x00\\xFF'::BLOB AS b, [b] AS bs"
    for form in ("csv", "xlsx", "parquet"):
        assert main(["sql", sql, "--output", str(tmp_path / f"b.{form}"), *data]) == 0
    assert pl.read_csv(tmp_path / "b.csv").row(0) == ("x\\x00\\xFF", '["x\\\\x00\\\\xFF"]')
    sheet = openpyxl.load_workbook(tmp_path / "b.xlsx").active
    assert sheet is not None and sheet["A2"].value == "x\\x00\\xFF"
    assert pq.read_table(tmp_path / "b.parquet").to_pylist() == [{"b": b"x\x00\xff", "bs": [b"x\x00\xff"]}]
    capfd.readouterr()
    for form in ("json", "jsonl"):
        assert main(["sql", sql, "--format", form, *data]) == 2
        out, err = capfd.readouterr()
        assert out == "" and "panicked" not in err
        assert err.startswith(
            f'error: column "b": it holds BLOB values, which polars cannot write as {form}; '
        )
        assert 'cast it to VARCHAR ("b"::VARCHAR), hex("b") or to_base64("b")' in err


def test_a_workbook_writes_a_moment_past_excel_s_last_day_as_text(tmp_path: Path) -> None:
    """Excel's dates end with 9999-12-31: a serial number past it was written and read #VALUE!."""
    import commerce_reports as cr

    relation = duckdb.sql(
        "SELECT * FROM (VALUES ('9999-12-31'::DATE, '9999-12-31 23:59:59'::TIMESTAMP), "
        "('10000-01-01'::DATE, '10000-01-01 00:00:00'::TIMESTAMP)) AS t(day, moment)"
    )
    cr.export(relation, tmp_path / "far.xlsx")
    sheet = openpyxl.load_workbook(tmp_path / "far.xlsx").active
    assert sheet is not None
    last, past = list(sheet.iter_rows(min_row=2, values_only=True))
    assert last == (datetime(9999, 12, 31), datetime(9999, 12, 31, 23, 59, 59))
    assert past == ("+10000-01-01", "+10000-01-01 00:00:00.000000")


def test_max_rows_limits_the_query_and_batches_are_bounded(synced_con: duckdb.DuckDBPyConnection) -> None:
    huge = "SELECT a.range AS a, b.range AS b FROM range(100000) a, range(100000) b"  # 10^10 rows
    frames = list(stream(synced_con, huge, limit=70_000, batch_rows=30_000))
    assert [f.height for f in frames] == [30_000, 30_000, 10_000]
    batches = stream(synced_con, huge, batch_rows=1_000)
    assert next(batches).height == 1_000  # the first batch comes without computing the rest
    batches.close()
    empty = list(stream(synced_con, "SELECT 1 AS a, [1] AS b WHERE false", flat=True))
    assert [f.columns for f in empty] == [["a", "b"]] and empty[0].height == 0


def test_a_huge_result_streams_to_standard_output_in_bounded_memory(
    synced: SyncedLake, tmp_path: Path
) -> None:
    """The 10^10-row cross join, read until 200,000 rows and cut off (`| head`): the first rows
    arrive at once and the process stays small (it used to materialise the result: 21.6 GB)."""
    code = (
        "import resource, sys\n"
        "from commerce_reports.cli import main\n"
        "code = main(sys.argv[1:])\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n"
        "sys.exit(code)\n"
    )
    sql = "SELECT a.range FROM range(100000) a, range(100000) b"
    command = [sys.executable, "-c", code, "sql", sql, "--format", "csv", "--data-dir", str(synced.data_dir)]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        assert proc.stdout.readline() == b"range\n"
        for _ in range(200_000):
            assert proc.stdout.readline()
        proc.stdout.close()  # the reader goes away, as `head` does
        proc.wait(timeout=60)
        err = proc.stderr.read().decode()
    assert proc.returncode == 141, err  # as a shell says a reader gone (`sql --help`)
    assert "Traceback" not in err
    peak_mb = int(err.split()[-1]) / 1024
    # Typically 290 MB (the data stack loaded); one full suite run saw 1,038 MB, so the bound is
    # 2 GB: a tenth of what materialising the result took
    assert peak_mb < 2048, f"peak RSS {peak_mb:.0f} MB"


def test_sql_output_formats_from_the_command_line(
    synced: SyncedLake, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = ["--data-dir", str(synced.data_dir)]
    assert main(["sql", "SELECT * FROM transactions", "--format", "csv", "--max-rows", "3", *data]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 4 and lines[0].startswith("site,commission_id,")
    assert main(["sql", "SELECT * FROM site_performance", "--format", "xlsx", *data]) == 2
    assert "xlsx is not text: it needs --output FILE" in capsys.readouterr().err
    assert main(["sql", "SELECT site FROM site_performance", "--max-rows", "1", *data]) == 0
    assert "the first 1 rows; --max-rows N shows more" in capsys.readouterr().out
    target = tmp_path / "t.xlsx"
    assert (
        main(["sql", "SELECT * FROM transactions", "--format", "xlsx", "--output", str(target), *data]) == 0
    )
    assert openpyxl.load_workbook(target, read_only=True).active.max_row > 1
    assert (
        main(
            [
                "sql",
                "SELECT 1/0::INT AS x, error('boom')",
                "--format",
                "csv",
                "--output",
                str(tmp_path / "x.csv"),
                *data,
            ]
        )
        == 1
    )
    assert "boom" in capsys.readouterr().err and not (tmp_path / "x.csv").exists()  # no half file


def test_a_workbook_batch_with_a_rare_value_is_written_the_long_way_and_one_without_the_short(
    tmp_path: Path,
) -> None:
    """Each batch checks its columns once for a value the short way cannot write (text to escape
    or cut, a date before 1900, a decimal past a spreadsheet number's 15 digits): a batch that has
    one is written the long way, the next, without, the short way; both read back the same."""
    from datetime import date

    from commerce_reports.export.workbook import write_workbook
    from commerce_reports.money import Currency

    schema = {"text": pl.String, "day": pl.Date, "amount": pl.Decimal(38, 4)}
    rare = pl.DataFrame(
        {
            "text": ["a & b <c>\x01", "x" * 40_000],
            "day": [date(1899, 12, 1), date(2026, 1, 2)],
            "amount": [Decimal("123456789012.3456"), Decimal("-0.0001")],
        },
        schema=schema,
    )
    plain = pl.DataFrame(
        {"text": ["plain", None], "day": [date(2026, 1, 3), None], "amount": [Decimal("12.5"), Decimal(1)]},
        schema=schema,
    )
    with (tmp_path / "rare.xlsx").open("wb") as out:
        assert write_workbook([rare, plain], out, Currency("USD")) == 4
    rows = list(openpyxl.load_workbook(tmp_path / "rare.xlsx").active.iter_rows(min_row=2, values_only=True))
    assert rows[0] == ("a & b <c>", "1899-12-01", "123456789012.3456")  # escaped, as text, as text
    assert rows[1][0] == "x" * 32_767 and rows[1][1] == datetime(2026, 1, 2) and rows[1][2] == -0.0001
    assert rows[2] == ("plain", datetime(2026, 1, 3), 12.5)
    assert rows[3] == (None, None, 1)


def test_a_workbook_sheet_deflated_in_pieces_is_the_text_a_plain_zip_entry_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sheet's rows are deflated as they are made and its head (the widths, known at the end)
    and tail apart, then joined in the zip entry: the entry's CRC-32 and size are the whole
    text's (zipfile checks both as it reads), and its text is the one the standard library's own
    entry holds where it cannot take the pieces (the rows are then inflated and written as text)."""
    from commerce_reports.export import workbook
    from commerce_reports.money import Currency

    frames = [
        pl.DataFrame(
            {"n": list(range(start, start + 50_000)), "text": [f"row {n} & more" for n in range(50_000)]}
        )
        for start in (0, 50_000)
    ]
    with (tmp_path / "pieces.xlsx").open("wb") as out:
        assert workbook.write_workbook(frames, out, Currency("USD")) == 100_000
    with zipfile.ZipFile(tmp_path / "pieces.xlsx") as package:
        assert package.testzip() is None  # every entry's CRC-32 is its text's
        text = package.read("xl/worksheets/sheet1.xml")
    assert text.startswith(b"<?xml") and b'<dimension ref="A1:B100001"/>' in text
    assert text.endswith(
        b'<c r="B100001" t="inlineStr"><is><t>row 49999 &amp; more</t></is></c></row></sheetData></worksheet>'
    )

    monkeypatch.setattr(workbook, "_ENTRY_INTERNALS", ("_compressor", "_no_such_attribute"))
    with (tmp_path / "plain.xlsx").open("wb") as out:
        workbook.write_workbook(frames, out, Currency("USD"))
    with zipfile.ZipFile(tmp_path / "plain.xlsx") as package:
        assert package.testzip() is None and package.read("xl/worksheets/sheet1.xml") == text
