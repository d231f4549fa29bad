"""Output formats, declared once: `sql --format`, `cr.export(data, path)` and the tests read
`OUTPUT_FORMATS`, so a format added here is a choice of the command, a suffix `cr.export`
recognises, and is tested for every view.

    import commerce_reports as cr
    cr.export(frame, "top-links.xlsx")                                  # a polars frame
    cr.export(con.sql("SELECT * FROM site_performance"), "sites.csv")   # a DuckDB relation
    cr.export("SELECT * FROM transactions", "all.parquet")              # SQL over the views

Rows go out in batches as they are read, whatever the result's size. Money stays exact: DECIMAL
columns are written as their digits (CSV, JSON as strings, Parquet as decimals, xlsx as numbers in
the currency's format); floats a query computed are rounded where their noise would show.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ..errors import ValidationError
from ..params import as_bool

if TYPE_CHECKING:
    import duckdb
    import polars as pl
    from polars._typing import PolarsDataType

    from ..db.readonly import ReadOnlyRelation
    from ..money import Currency

__all__ = [
    "OUTPUT_FORMATS",
    "OutputFormat",
    "check_writable",
    "export_table",
    "format_of",
    "frames_of",
    "save_frames",
    "write_frames",
]

_DIGITS = 12  # floats: enough digits to keep every figure, none of the float noise

# The days polars can write as dates (chrono's -262143-01-01 to +262142-12-31, 400 years being
# 146,097 days), from 1970-01-01; DuckDB's reach further, to years of seven digits.
_FIRST_POLARS_DAY = (date(1857, 1, 1) - date(1970, 1, 1)).days - 660 * 146_097
_LAST_POLARS_DAY = (date(2142, 12, 31) - date(1970, 1, 1)).days + 650 * 146_097
_INFINITY = {"DATE": 2**31 - 1, "TIMESTAMP": 2**63 - 1}  # DuckDB's, stored; -infinity is its negative
_PER_DAY = {"days": 1, "ms": 86_400_000, "us": 86_400_000_000, "ns": 86_400_000_000_000}


@dataclass(frozen=True)
class OutputFormat:
    """One way to write a table: its name (`--format NAME`), the suffixes that choose it, whether
    it is bytes, whether nested values (structs, lists) go out as JSON text (`flat`), a line for
    `--help` and the docs, and `write(frames, out, currency)` returning the rows written."""

    name: str
    suffixes: tuple[str, ...]
    binary: bool
    flat: bool
    about: str
    write: Callable[[Iterable[pl.DataFrame], IO[Any], Currency], int]


def check_writable(frame: pl.DataFrame, form: str) -> None:
    """Refuse, with a ValidationError naming the column, its type and what would do, a value of
    `frame` that polars cannot write as `form`: a date or timestamp of DuckDB's infinity or past
    the years polars knows, a BLOB in JSON, nested ones too: polars would panic, printing Rust's
    message. Parquet is written through Arrow and takes them all."""
    import polars as pl

    for column in frame.iter_columns():
        kinds = set(_scalar_types(column.dtype))
        advice = f'cast it to VARCHAR ("{column.name}"::VARCHAR)'
        if form in ("json", "jsonl") and pl.Binary in kinds:
            raise ValidationError(
                f'column "{column.name}"',
                f"it holds BLOB values, which polars cannot write as {form}",
                f'{advice}, hex("{column.name}") or to_base64("{column.name}"), or write csv or parquet',
            )
        if pl.Date in kinds or pl.Datetime in kinds:
            for scalars in _scalars(column):
                unwritable = _unwritable_moment(scalars)
                if unwritable is not None:
                    raise ValidationError(
                        f'column "{column.name}"',
                        f"it holds {unwritable}, which polars cannot write as {form}",
                        f"{advice}, or write parquet",
                    )


def _scalar_types(dtype: PolarsDataType) -> Iterator[PolarsDataType]:
    """The types of the values in a column of `dtype`, a list's items and a struct's fields
    included, as their classes (`pl.Datetime`, not its unit)."""
    import polars as pl

    if isinstance(dtype, pl.List | pl.Array):
        yield from _scalar_types(dtype.inner)
    elif isinstance(dtype, pl.Struct):
        for field in dtype.fields:
            yield from _scalar_types(field.dtype)
    else:
        yield dtype.base_type()


def _scalars(column: pl.Series) -> Iterator[pl.Series]:
    """The values of `column` as columns of one type each: a list's items, a struct's fields."""
    import polars as pl

    if isinstance(column.dtype, pl.List | pl.Array):
        yield from _scalars(column.explode())
    elif isinstance(column.dtype, pl.Struct):
        for field in column.struct.unnest().iter_columns():
            yield from _scalars(field)
    else:
        yield column


def _unwritable_moment(column: pl.Series) -> str | None:
    """The first value of a date or timestamp column that polars cannot write, in words (a
    TIMESTAMP of infinity, a DATE outside the years it knows), else None; other columns: None.
    Read as the stored numbers: reading them as dates is what panics."""
    import polars as pl

    dtype, unit = column.dtype, "days"
    if isinstance(dtype, pl.Datetime):
        kind, unit = "TIMESTAMP", dtype.time_unit
    elif dtype == pl.Date:
        kind = "DATE"
    else:
        return None
    infinity, per_day = _INFINITY[kind], _PER_DAY[unit]
    first, last = (
        max(_FIRST_POLARS_DAY * per_day, -infinity + 1),
        min((_LAST_POLARS_DAY + 1) * per_day - 1, infinity - 1),
    )
    stored = column.to_physical()
    beyond = stored.filter((stored < first) | (stored > last))
    if beyond.is_empty():
        return None
    value = beyond[0]
    outside = f"outside the years -262143 to 262142 ({value:,} {unit} from 1970-01-01)"
    return f"a {kind} " + {infinity: "of infinity", -infinity: "of -infinity"}.get(value, outside)


def _checked(frames: Iterable[pl.DataFrame], form: str) -> Iterator[pl.DataFrame]:
    """`frames`, each refused before it is written if it holds a value polars cannot write as `form`."""
    for frame in frames:
        check_writable(frame, form)
        yield frame


def _rounded(frame: pl.DataFrame) -> pl.DataFrame:
    """Floats a query computed to 12 significant digits, so what a sum of floats leaves
    (299902.75000000006) does not reach a file, and nothing else: a float is no money column by its
    name (an EPC of 0.2616, a change of 0.1385 kept whole; cutting them to the cent changed them).
    DECIMAL money goes out exact."""
    import polars as pl

    floats = [n for n, t in frame.schema.items() if t.is_float()]
    return frame.with_columns(*(pl.col(n).round_sig_figs(_DIGITS) for n in floats))


def _csv(frames: Iterable[pl.DataFrame], out: IO[Any], currency: Currency) -> int:
    rows = 0
    for number, frame in enumerate(_checked(frames, "csv")):
        out.write(_rounded(frame).write_csv(include_header=number == 0))
        rows += frame.height
    return rows


def _json(frames: Iterable[pl.DataFrame], out: IO[Any], currency: Currency) -> int:
    rows = 0
    for frame in _checked(frames, "json"):
        if frame.height:
            out.write(("," if rows else "[") + _rounded(frame).write_json()[1:-1])  # objects, no brackets
            rows += frame.height
    out.write("]\n" if rows else "[]\n")
    return rows


def _jsonl(frames: Iterable[pl.DataFrame], out: IO[Any], currency: Currency) -> int:
    rows = 0
    for frame in _checked(frames, "jsonl"):
        if frame.height:
            out.write(_rounded(frame).write_ndjson())
            rows += frame.height
    return rows


def _parquet(frames: Iterable[pl.DataFrame], out: IO[Any], currency: Currency) -> int:
    import pyarrow.parquet as pq

    writer: pq.ParquetWriter | None = None
    rows = 0
    try:
        for frame in frames:
            table = frame.to_arrow()
            if writer is None:
                writer = pq.ParquetWriter(out, table.schema, compression="zstd")
            writer.write_table(table.cast(writer.schema))
            rows += frame.height
    finally:
        if writer is not None:
            writer.close()
    return rows


def _xlsx(frames: Iterable[pl.DataFrame], out: IO[Any], currency: Currency) -> int:
    from .workbook import write_workbook

    return write_workbook(_checked(frames, "xlsx"), out, currency)


def _registered(*formats: OutputFormat) -> dict[str, OutputFormat]:
    """The formats by name, each name and suffix declared once (a suffix claimed twice would be
    the first's, whatever the second says)."""
    names = [f.name for f in formats]
    suffixes = [s for f in formats for s in f.suffixes]
    for declared, what in ((names, "name"), (suffixes, "suffix")):
        twice = sorted({d for d in declared if declared.count(d) > 1})
        if twice:
            raise ValidationError(
                "OUTPUT_FORMATS", f"the {what} {twice[0]!r} is declared twice", "give it to one format"
            )
    return {f.name: f for f in formats}


# The registry: one entry per format. `sql --format` offers them in this order.
OUTPUT_FORMATS: dict[str, OutputFormat] = _registered(
    OutputFormat(
        "csv", (".csv",), False, True, "comma-separated, a header line, nested values as JSON", _csv
    ),
    OutputFormat(
        "json", (".json",), False, False, "one JSON array of row objects (DECIMAL as strings)", _json
    ),
    OutputFormat("jsonl", (".jsonl", ".ndjson"), False, False, "JSON Lines: one row object a line", _jsonl),
    OutputFormat(
        "parquet", (".parquet",), True, False, "Parquet (zstd), the types kept as they are", _parquet
    ),
    OutputFormat(
        "xlsx",
        (".xlsx",),
        True,
        True,
        "an Excel workbook: money in the currency's format, real dates and booleans, a frozen header",
        _xlsx,
    ),
)


def format_of(path: Path, name: str | None = None) -> OutputFormat:
    """The format called `name`, else the one the path's suffix names; a ValidationError listing
    the formats otherwise."""
    known = ", ".join(OUTPUT_FORMATS)
    if name is not None:
        if not isinstance(name, str) or name.lower() not in OUTPUT_FORMATS:
            raise ValidationError("format", f"{name!r} is not an output format", f"give one of {known}")
        return OUTPUT_FORMATS[name.lower()]
    suffix = path.suffix.lower()
    for output in OUTPUT_FORMATS.values():
        if suffix in output.suffixes:
            return output
    suffixes = ", ".join(s for f in OUTPUT_FORMATS.values() for s in f.suffixes)
    raise ValidationError(
        "path", f"{path.name!r} has no suffix of an output format", f"end it with {suffixes}, or give format="
    )


def frames_of(
    data: Any,
    *,
    flat: bool,
    max_rows: int | None = None,
    data_dir: str | Path | None = None,
    batch_rows: int = 32_768,
) -> Iterator[pl.DataFrame]:
    """`data` (a polars DataFrame or LazyFrame, a DuckDB relation, or SQL over the views of the
    lake at `data_dir`) as frames of at most `batch_rows` rows, read as they are consumed; `flat`
    gives nested values as JSON text. One path for all three: DuckDB reads the rows and flattens."""
    import duckdb
    import polars as pl

    from ..db import connect, stream
    from ..db.readonly import ReadOnlyRelation

    if isinstance(data, str):
        with connect(data_dir) as con:
            yield from stream(con, data, limit=max_rows, flat=flat, batch_rows=batch_rows)
        return
    if isinstance(data, pl.LazyFrame):
        data = data.collect()
    if isinstance(data, pl.DataFrame):
        source: Any = data
    elif isinstance(data, duckdb.DuckDBPyRelation | ReadOnlyRelation):  # connect()'s is read-only
        source = data.to_arrow_reader(batch_rows)
    else:
        raise ValidationError(
            "data",
            f"a {type(data).__name__} is not a table to export",
            "give a polars DataFrame, a DuckDB relation (con.sql(...)) or SQL text",
        )
    with duckdb.connect() as con:
        con.register("exported", source)
        yield from stream(con, "SELECT * FROM exported", limit=max_rows, flat=flat, batch_rows=batch_rows)


def write_frames(
    frames: Iterable[pl.DataFrame],
    output: OutputFormat,
    out: IO[Any],
    currency: Currency,
    progress: Callable[[int], None] | None = None,
) -> int:
    """Write `frames` as `output` into `out` (text or bytes, as the format is); `progress(rows)`
    is told each batch's rows as it goes. The rows written."""
    if progress is not None:
        frames = _counted(frames, progress)
    return output.write(frames, out, currency)


def _counted(frames: Iterable[pl.DataFrame], progress: Callable[[int], None]) -> Iterator[pl.DataFrame]:
    for frame in frames:
        yield frame
        progress(frame.height)  # the writer asked for the next batch: this one is written


def export_table(
    data: duckdb.DuckDBPyRelation | ReadOnlyRelation | pl.DataFrame | pl.LazyFrame | str,
    path: str | Path,
    *,
    format: str | None = None,
    max_rows: int | None = None,
    data_dir: str | Path | None = None,
    currency: str | None = None,
    progress: bool | None = None,
) -> Path:
    """Write a table to `path` and return its absolute path: `data` is a polars frame, a DuckDB
    relation (`con.sql(...)`) or SQL over the lake's views (of `data_dir`, default: the
    configured lake); the format is `format` or the path's suffix (`OUTPUT_FORMATS`: csv, json,
    jsonl, parquet, xlsx). The file appears whole or not at all, in a folder that must exist.
    `max_rows` limits the rows; `currency` (an ISO code, default: the configured one) formats
    money in a workbook; `progress` shows rows written (default: in a terminal or a notebook)."""
    from ..money import Currency

    if not isinstance(path, str | Path) or not str(path).strip():
        raise ValidationError("path", f"{path!r} is not a file path", "give e.g. 'sites.xlsx'")
    if progress is not None:
        as_bool(progress, "progress")
    target = Path(path).expanduser().absolute()
    output = format_of(target, format)
    if not target.parent.is_dir():
        raise ValidationError("path", f"the folder {target.parent} does not exist", "create it first")
    if target.is_dir():
        raise ValidationError("path", f"{target} is a folder", "give a file name")
    if max_rows is not None and (
        isinstance(max_rows, bool) or not isinstance(max_rows, int) or not 0 <= max_rows < 2**62
    ):
        raise ValidationError(
            "max_rows", f"{max_rows!r} is not a number of rows", "give an int from 0 to 2**62, or None"
        )
    money = Currency.of(currency) if currency is not None else _configured_currency()
    frames = frames_of(data, flat=output.flat, max_rows=max_rows, data_dir=data_dir)
    save_frames(frames, target, output, money, progress)
    return target


def save_frames(
    frames: Iterable[pl.DataFrame],
    target: Path,
    output: OutputFormat,
    currency: Currency,
    progress: bool | None = None,
) -> int:
    """Write `frames` as `output` to the file `target`, whole or not at all (`files.save_atomic`:
    a failed query leaves no half file); `progress` shows the rows written (default: in a terminal
    or a notebook). The rows written."""
    from ..errors import LakeError
    from ..files import save_atomic

    written = 0

    def write(temp: Path) -> None:
        nonlocal written
        mode = {"mode": "wb"} if output.binary else {"mode": "w", "encoding": "utf-8", "newline": ""}
        with open(temp, **mode) as out:  # type: ignore[call-overload]
            written = write_frames(frames, output, out, currency, shown.advance)

    from ..activity import Step

    shown = Step(f"writing {target.name}", shown=progress, unit="rows")
    with shown if progress is not False else nullcontext():
        try:
            save_atomic(target, write)
        except OSError as error:
            raise LakeError(f"could not write {target}: {error.strerror or error}") from None
    return written


def _configured_currency() -> Currency:
    from ..config import current_settings

    return current_settings().currency
