"""The lake's contract, written once: stored columns and types, folder layout, hive keys, SQL types.

    <data_dir>/lake/site=<site>/manifest.json
    <data_dir>/lake/site=<site>/transactions/by=<updateDate|commissionDate|clickDate>/day=YYYY-MM-DD/part.parquet
    <data_dir>/lake/site=<site>/networks/slice=<filters>/grain=<day|month>/start=YYYY-MM-DD/part.parquet
    <data_dir>/lake/site=<site>/merchandise/slice=<filters>/grain=<day|month>/start=YYYY-MM-DD/part.parquet

`<filters>` is the canonical filter set (`all`, or e.g. `country=US&deviceType=MBL`) percent-encoded;
DuckDB and polars decode it back. A name too long for a folder (over 240 bytes) is cut to
`~<hash>~<readable prefix>`; the full filter set is then in the manifest entry's params and in the
file's metadata. A month partition always holds a whole calendar month.

The parser produces these schemas, the store writes them, DuckDB and Spark read them: nobody
else defines a column. This module sits at the bottom of the house (it imports only `params`).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple
from urllib.parse import quote, unquote

from .errors import ConfigurationError, LakeError, ValidationError
from .params import DATE_FIELDS, DateField, DeviceType, Filters, Grain
from .settings import SITE_NAME

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "AGGREGATES",
    "AGGREGATE_SCHEMAS",
    "DATASETS",
    "DATE_COLUMNS",
    "DEVICE_WORDS",
    "FETCHED_AT",
    "FORMER_TYPES",
    "GENERATIONS_FOLDER",
    "HIVE_KEYS",
    "MONEY",
    "MONEY_SUM",
    "PARTITION_GLOBS",
    "PART_FILE",
    "PRODUCT_TYPE",
    "SERVED_AT",
    "TRANSACTION_SCHEMA",
    "UNPARSED",
    "Dataset",
    "PartitionKey",
    "check_lake_path",
    "check_site_name",
    "dataset_schema",
    "lake_root",
    "lake_sites",
    "next_month",
    "readable_type",
    "site_root",
    "slice_folder",
    "sql_type",
]

Dataset = Literal["transactions", "networks", "merchandise"]
DATASETS: tuple[Dataset, ...] = ("transactions", "networks", "merchandise")
AGGREGATES: tuple[Dataset, ...] = ("networks", "merchandise")
PART_FILE = "part.parquet"
# A fetched table's metadata (not stored): when the service answered, from its Date header (ISO, UTC).
SERVED_AT = b"served_at"
# The files' columns have changed twice (clicks and actions keep fractions, partner_product_sub_type;
# money as DECIMAL(18,4), was a binary float, and the service's `totals`): older files are read by
# name and cast (FORMER_TYPES), whatever version wrote them.
# The key of `extra` under which the parser keeps the raw values it could not type.
UNPARSED = "_unparsed"
# Money: the service sends cents; four places keep fractions of a cent, 14 digits before the point.
MONEY_PRECISION, MONEY_SCALE = 18, 4
MONEY_SUM = f"DECIMAL(38, {MONEY_SCALE})"  # a sum of money in SQL (the widest decimal, same scale)
_MAX_SLICE_FOLDER = 240  # bytes of `slice=<name>`: file systems allow 255 per folder name
_HASHED = "~"  # a canonical name never starts with it: marks a cut, hashed folder name
_PREFIX_CHARS = 80


def check_site_name(name: str) -> str:
    if not isinstance(name, str) or not SITE_NAME.fullmatch(name):
        raise ValidationError(
            "site", f"{name!r} is not a usable site name", "use lower-case letters, digits, '-' or '_'"
        )
    return name


GENERATIONS_FOLDER = "views"  # the published generations of the lake: folders of hard links (db/published.py)


def lake_root(data_dir: Path) -> Path:
    """The lake's folder in the data folder `data_dir` (see `check_lake_path`)."""
    check_lake_path(Path(data_dir))
    return Path(data_dir) / "lake"


def check_lake_path(data_dir: Path) -> Path:
    """`data_dir` unless a folder of its path is named like a partition key (`site=shop`): DuckDB
    reads the first `key=value` folder of a file's path as that column, so every site below
    `site=shop/` would read as `shop`; or its path holds a backslash, which DuckDB reads as a
    folder separator everywhere (`a\\b` as `a/b`): nothing could be read or written there; or a
    `?`, after which DuckDB reads a database's path as options (`q?x/c.duckdb` logs to `q.wal?x/`);
    or its path is not UTF-8 (a name written in another encoding), which DuckDB and Arrow cannot
    open: every file would be found unreadable, and `verify` would quarantine the whole lake. A
    ConfigurationError says so, before anything is read."""
    path = str(data_dir.absolute())
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        shown = os.fsencode(data_dir).decode("utf-8", "backslashreplace")
        raise ConfigurationError(
            f"the data folder {shown} has a name in its path that is not UTF-8 (written in another "
            "encoding): DuckDB and Parquet open UTF-8 paths only, and would find none of its files. "
            "Rename the folder (or choose another data folder) with a UTF-8 name"
        ) from None
    if "\\" in path:
        raise ConfigurationError(
            f"the data folder {data_dir} has a backslash in its path: DuckDB reads it as a folder "
            "separator, and would read and write the lake elsewhere. Rename the folder (or choose "
            "another data folder) without one"
        )
    if "?" in path:
        raise ConfigurationError(
            f"the data folder {data_dir} has a '?' in its path: DuckDB reads what follows it in a "
            "database's path as options, and could never write the catalog there (every sync would "
            "fail at its end). Rename the folder (or choose another data folder) without one"
        )
    for part in data_dir.absolute().parts:
        key, equals, _ = part.partition("=")
        if equals and key in _PATH_KEYS:
            raise ConfigurationError(
                f"the data folder {data_dir} is below a folder named {part!r}: DuckDB would read it as "
                f"the {key} of every file of the lake. Move the data folder (or rename that folder) "
                f"so that no folder of its path is named {key}=..."
            )
    return data_dir


def site_root(data_dir: Path, site: str) -> Path:
    return lake_root(data_dir) / f"site={check_site_name(site)}"


def lake_sites(data_dir: Path) -> list[str]:
    """The sites with a folder in the lake, sorted. A folder `site=<name>` whose name is no usable
    site name (a copy a file manager made beside one: `site=alpha copy`) holds no site: it is left
    out, with a warning naming it, rather than failing every read or counting as a site."""
    root = lake_root(data_dir)
    try:
        with os.scandir(root) as entries:
            named = [
                e.name.removeprefix("site=") for e in entries if e.is_dir() and e.name.startswith("site=")
            ]
    except (FileNotFoundError, NotADirectoryError):
        return []
    strays = [name for name in named if not SITE_NAME.fullmatch(name)]
    for name in strays:
        if (root, name) not in _warned_folders:
            _warned_folders.add((root, name))
            import logging  # (here: `status` loads this module, and no logging, to start fast)

            logging.getLogger(__name__).warning(
                "%s is not the folder of a site (a site name is lower-case letters, digits, '-' or '_'): "
                "left out of every read; rename it to site=<name> or move it out of the lake",
                root / f"site={name}",
            )
    return sorted(set(named).difference(strays))


_warned_folders: set[tuple[Path, str]] = set()  # said once per process


def slice_folder(canonical: str) -> str:
    """The folder name (after `slice=`) of a canonical filter set: percent-encoded, or, when that
    is too long for a folder, `~<hash>~<readable prefix>` (the same filters always give the same name)."""
    encoded = quote(canonical, safe="")
    if len("slice=") + len(encoded) <= _MAX_SLICE_FOLDER:
        return encoded
    digest = hashlib.sha256(canonical.encode()).hexdigest()[:24]
    prefix = ""
    for char in canonical:
        piece = quote(char, safe="")
        if len(prefix) + len(piece) > _PREFIX_CHARS:
            break
        prefix += piece
    return f"{_HASHED}{digest}{_HASHED}{prefix}"


def next_month(day: date) -> date:
    """The first day of the month after `day`'s."""
    return (day.replace(day=28) + timedelta(days=4)).replace(day=1)


@dataclass(frozen=True, order=True)
class PartitionKey:
    """One stored request: a transactions day (by one date field) or an aggregate window of a slice."""

    dataset: Dataset
    start: date
    by: DateField | None = None  # transactions only
    slice: str | None = None  # aggregates only: Filters.canonical
    grain: Grain | None = None  # aggregates only

    def __post_init__(self) -> None:
        if self.dataset == "transactions":
            if self.by not in DATE_FIELDS or self.slice is not None or self.grain is not None:
                raise ValidationError("by", f"{self.by!r} is not a date field", f"use one of {DATE_FIELDS}")
        elif self.dataset in AGGREGATES:
            if self.by is not None or self.slice is None or self.grain not in ("day", "month"):
                raise ValidationError("grain", f"{self.grain!r} is not a grain", "use 'day' or 'month'")
            if self.grain == "month" and self.start.day != 1:
                raise ValidationError("start", f"{self.start} is not the first of a month", "month windows")
        else:
            raise ValidationError("dataset", f"{self.dataset!r} is not a dataset", f"use one of {DATASETS}")

    @classmethod
    def transactions(cls, day: date, by: DateField = "updateDate") -> PartitionKey:
        return cls("transactions", day, by=by)

    @classmethod
    def aggregate(cls, dataset: Dataset, start: date, filters: Filters, grain: Grain) -> PartitionKey:
        return cls(dataset, start, slice=filters.canonical, grain=grain)

    @property
    def end(self) -> date:
        """The day after the partition's last day (windows exclude their end)."""
        if self.grain == "month":
            return next_month(self.start)
        return self.start + timedelta(days=1)

    @property
    def endpoint(self) -> str:
        return self.dataset

    @property
    def filters(self) -> Filters:
        return Filters.from_canonical(self.slice) if self.slice else Filters()

    @property
    def relpath(self) -> str:
        """Folder of the partition below its site folder."""
        if self.dataset == "transactions":
            return f"transactions/by={self.by}/day={self.start.isoformat()}"
        folder = slice_folder(self.slice or "all")
        return f"{self.dataset}/slice={folder}/grain={self.grain}/start={self.start.isoformat()}"

    @classmethod
    def from_relpath(cls, relpath: str, params: Mapping[str, str] | None = None) -> PartitionKey:
        """The key stored at `relpath`. A cut slice name needs the partition's `params` (its
        manifest entry's, or its file's metadata) to recover the whole filter set."""
        if not isinstance(relpath, str):
            raise LakeError(f"{relpath!r} is not a partition path of this lake")
        parts = relpath.strip("/").split("/")
        try:
            values = dict(part.split("=", 1) for part in parts[1:])
            if parts[0] == "transactions":
                by = values["by"]
                if by not in DATE_FIELDS:
                    raise KeyError(by)
                return cls.transactions(date.fromisoformat(values["day"]), by)
            if parts[0] in AGGREGATES:
                grain = values["grain"]
                if grain not in ("day", "month"):
                    raise KeyError(grain)
                return cls(
                    parts[0],
                    date.fromisoformat(values["start"]),
                    slice=_slice_of(values["slice"], params),
                    grain=grain,  # type: ignore[arg-type]
                )
        except (KeyError, ValueError):
            pass
        raise LakeError(f"{relpath!r} is not a partition path of this lake")

    def params(self) -> dict[str, str]:
        """The service query parameters that fetch this partition (they name it in full)."""
        if self.dataset == "transactions":
            return {str(self.by): self.start.isoformat()}
        return {
            "clickDateStart": self.start.isoformat(),
            "clickDateEnd": self.end.isoformat(),
            **self.filters.to_params(),
        }

    def describe(self) -> str:
        if self.dataset == "transactions":
            return f"transactions {self.by}={self.start}"
        return f"{self.dataset} [{self.slice}] {self.start}..{self.end - timedelta(days=1)}"


def _slice_of(folder: str, params: Mapping[str, str] | None) -> str:
    """The canonical filter set of a slice folder name; a cut name is recovered from `params`."""
    if not folder.startswith(_HASHED):
        return unquote(folder)
    if params is None:
        raise LakeError(
            f"slice={folder} is a cut name: its filters are in the manifest entry's params "
            "or the file's metadata"
        )
    filters = {k: v for k, v in params.items() if k not in ("clickDateStart", "clickDateEnd")}
    canonical = Filters.from_params(filters).canonical
    if slice_folder(canonical) != folder:
        raise LakeError(f"slice={folder} does not match the filters {canonical!r} recorded for it")
    return canonical


# ---------------------------------------------------------------- stored columns ----
# The Arrow schemas are built on first use (PEP 562 `__getattr__` below): they need pyarrow, and
# most of what imports this module (status, a sync's plan, the CLI's start-up) needs only the layout.

_ARROW_NAMES = {
    "MONEY": "money",
    "PRODUCT_TYPE": "product_type",
    "TRANSACTION_SCHEMA": "transactions",
    "AGGREGATE_SCHEMAS": "aggregates",
    "FETCHED_AT": "fetched_at",
}

if TYPE_CHECKING:
    MONEY: pa.Decimal128Type
    PRODUCT_TYPE: pa.ListType
    TRANSACTION_SCHEMA: pa.Schema
    AGGREGATE_SCHEMAS: dict[str, pa.Schema]
    FETCHED_AT: pa.Field


class _Columns(NamedTuple):
    """The lake's Arrow types, made once pyarrow is loaded."""

    money: pa.Decimal128Type
    product_type: pa.ListType
    transactions: pa.Schema
    aggregates: dict[str, pa.Schema]
    fetched_at: pa.Field


@functools.cache
def _columns() -> _Columns:
    import pyarrow as pa

    money = pa.decimal128(MONEY_PRECISION, MONEY_SCALE)
    product_type = pa.list_(
        pa.struct(
            [
                ("product_id", pa.string()),
                ("product_name", pa.string()),
                ("price", money),
                ("quantity", pa.float64()),
            ]
        )
    )
    utm = [
        pa.field(f"{side}_utm_{part}", pa.string())
        for side in ("link", "page")
        for part in ("source", "medium", "campaign", "term", "content")
    ]
    transactions = pa.schema(
        [
            pa.field("account_id", pa.int64()),
            pa.field("campaign_id", pa.int64()),
            pa.field("campaign_name", pa.string()),
            pa.field("revenue_id", pa.string()),
            pa.field("commission_id", pa.string()),
            pa.field("commission_date", pa.date32()),
            pa.field("update_date", pa.date32()),
            pa.field("order_value", money),
            pa.field("publisher_net_revenue", money),
            pa.field("program_type", pa.string()),
            pa.field("click_id", pa.string()),
            pa.field("click_date", pa.date32()),
            pa.field("cuid", pa.string()),
            *utm,
            pa.field("page_url", pa.string()),
            pa.field("link_url", pa.string()),
            pa.field("partner_product", pa.string()),
            pa.field("partner_product_sub_type", pa.string()),
            pa.field("country", pa.string()),
            pa.field("device", pa.string()),
            pa.field("merchant_group_id", pa.int64()),
            pa.field("merchant_group_name", pa.string()),
            pa.field("network", pa.string()),
            pa.field("products", product_type),
            pa.field("extra", pa.string()),  # what the service sent that no column holds, as JSON
        ]
    )
    window = [pa.field("window_start", pa.date32()), pa.field("window_end", pa.date32())]
    filter_columns = [pa.field(name, pa.string()) for name in Filters().as_columns()]
    metrics: dict[str, list[pa.Field]] = {
        "networks": [
            pa.field("network_name", pa.string()),
            pa.field("revenue", money),
            pa.field("clicks", pa.float64()),
            pa.field("sales", money),
            pa.field("actions", pa.float64()),
            pa.field("conversion_rate", pa.float64()),
            pa.field("epc", money),
        ],
        "merchandise": [
            pa.field("product_name", pa.string()),
            pa.field("merchant_group_name", pa.string()),
            pa.field("merchant_group_id", pa.int64()),
            pa.field("revenue", money),
            pa.field("sales", money),
            pa.field("actions", pa.float64()),
        ],
    }
    # The answer's totals, the same on each row: the object as the service sent it (JSON text), and
    # those the rows' sums can be set beside, typed (NULL when not sent or not typable).
    totals: dict[str, list[pa.Field]] = {
        "networks": [
            pa.field("total_revenue", money),
            pa.field("total_clicks", pa.float64()),
            pa.field("total_sales", money),
            pa.field("total_actions", pa.float64()),
        ],
        "merchandise": [
            pa.field("total_revenue", money),
            pa.field("total_sales", money),
            pa.field("total_actions", pa.float64()),
        ],
    }
    stamps = [pa.field("extra", pa.string()), *window, *filter_columns]
    aggregates = {
        dataset: pa.schema([*fields, pa.field("totals", pa.string()), *totals[dataset], *stamps])
        for dataset, fields in metrics.items()
    }
    fetched_at = pa.field("fetched_at", pa.timestamp("us", tz="UTC"))
    return _Columns(money, product_type, transactions, aggregates, fetched_at)


def __getattr__(name: str) -> Any:
    field_name = _ARROW_NAMES.get(name)
    if field_name is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(_columns(), field_name)


# The stored column of each date field a transactions partition is asked by.
DATE_COLUMNS: dict[str, str] = {
    "updateDate": "update_date",
    "commissionDate": "commission_date",
    "clickDate": "click_date",
}

# Device codes of the filters and the words transactions carry (UKN: not known, stored as NULL).
DEVICE_WORDS: dict[str, str | None] = {
    d.value: (None if d is DeviceType.UKN else d.label) for d in DeviceType
}


def dataset_schema(dataset: str) -> pa.Schema:
    """The columns a stored partition of `dataset` holds (the hive keys come from its path)."""
    if dataset not in DATASETS:
        raise ValidationError("dataset", f"{dataset!r} is not a dataset", f"use one of {', '.join(DATASETS)}")
    import pyarrow as pa

    columns = _columns()
    base = columns.transactions if dataset == "transactions" else columns.aggregates[dataset]
    return pa.schema([*base.remove_metadata(), columns.fetched_at])


# ---------------------------------------------------------------- hive keys and SQL types ----

# Folders below a site folder, and the hive keys they carry (typed: a site named "2024" stays text).
PARTITION_GLOBS: dict[str, str] = {
    "transactions": "transactions/by=*/day=*",
    "networks": "networks/slice=*/grain=*/start=*",
    "merchandise": "merchandise/slice=*/grain=*/start=*",
}
HIVE_KEYS: dict[str, dict[str, str]] = {
    "transactions": {"site": "VARCHAR", "by": "VARCHAR", "day": "DATE"},
    "networks": {"site": "VARCHAR", "slice": "VARCHAR", "grain": "VARCHAR", "start": "DATE"},
    "merchandise": {"site": "VARCHAR", "slice": "VARCHAR", "grain": "VARCHAR", "start": "DATE"},
}
_PATH_KEYS = frozenset(key for keys in HIVE_KEYS.values() for key in keys)
# By Arrow's name of the type (`str(pa.date32())` is "date32[day]"): no pyarrow needed to hold them.
_SIMPLE_TYPES = {
    "int64": "BIGINT",
    "double": "DOUBLE",
    "string": "VARCHAR",
    "date32[day]": "DATE",
    "bool": "BOOLEAN",
}
# Columns an older version stored with another type (Arrow's name of it), read as today's by a cast:
# money was a binary float before schema version 3 (a float read as DECIMAL(18,4) is the amount it
# stood for: the service's cents), clicks and actions integers before version 2.
_MONEY_COLUMNS = ("order_value", "publisher_net_revenue", "revenue", "sales", "epc")
_FLOAT_ITEM = "struct<product_id: string, product_name: string, price: double, quantity: double>"
FORMER_TYPES: dict[str, frozenset[str]] = {
    **{name: frozenset({"double"}) for name in _MONEY_COLUMNS},
    **{name: frozenset({"int64"}) for name in ("clicks", "actions")},
    "products": frozenset({f"list<element: {_FLOAT_ITEM}>", f"list<item: {_FLOAT_ITEM}>"}),
}


def readable_type(column: str, arrow: pa.DataType, expected: pa.DataType) -> bool:
    """Whether a stored column of type `arrow` reads as the `expected` type of today's schema: the
    same type, or a former one (FORMER_TYPES) that a cast turns into it."""
    return bool(arrow == expected or str(arrow) in FORMER_TYPES.get(column, ()))


def sql_type(arrow: pa.DataType) -> str:
    """The SQL type (DuckDB's spelling) of an Arrow type the lake's schemas use."""
    import pyarrow as pa

    if str(arrow) in _SIMPLE_TYPES:
        return _SIMPLE_TYPES[str(arrow)]
    if pa.types.is_timestamp(arrow):
        return "TIMESTAMPTZ" if arrow.tz else "TIMESTAMP"
    if pa.types.is_decimal(arrow):
        return f"DECIMAL({arrow.precision},{arrow.scale})"
    if pa.types.is_list(arrow):
        return sql_type(arrow.value_type) + "[]"
    if pa.types.is_struct(arrow):
        members = ", ".join(f'"{f.name}" {sql_type(f.type)}' for f in arrow)
        return f"STRUCT({members})"
    raise ValidationError("type", f"{arrow} is not a type of the lake's schemas", "see contract.py")


def untyped_rows(table: pa.Table) -> int:
    """How many rows of a transactions table hold values the parser could not type: their raw values
    are kept in `extra` under UNPARSED. A partition with such rows is not settled (its totals miss them)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not isinstance(table, pa.Table):
        raise ValidationError("table", f"{type(table).__name__} is not an Arrow table", "pass a parsed table")
    if "extra" not in table.column_names:
        return 0  # a file written before the column existed: nothing was kept untyped
    extra = table.column("extra")
    if not pa.types.is_string(extra.type) and not pa.types.is_large_string(extra.type):
        raise ValidationError(
            "table", f"its extra column is {extra.type}, not JSON text", "pass a parsed table"
        )
    candidates = pc.filter(extra, pc.match_substring(extra, f'"{UNPARSED}"'))
    return sum(1 for text in candidates.to_pylist() if _holds_unparsed(text))


def _holds_unparsed(text: str | None) -> bool:
    try:
        value = json.loads(text or "null")
    except ValueError:
        return False
    return isinstance(value, dict) and bool(value.get(UNPARSED))
