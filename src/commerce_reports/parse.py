"""One response body -> one typed Arrow table. Pure functions, no I/O beyond a scratch file.

Transactions arrive nested (contract 2.1) or flat (service notes); both read into the same
snake_case columns. Unknown fields are never dropped: they go to a JSON `extra` column.

Fast path: the `{"transactions": [...]}` wrapper is cut off and DuckDB reads the array with
explicit columns (both shapes' keys at once). An exact census then proves nothing was dropped:
every key in the body contributes one `":`, so the body's count of `":` must equal the keys the
typed table accounts for (non-null values, plus keys whose value is null). Anything else (unknown
keys, odd values, another envelope) takes the tolerant path: orjson and a walk over the rows.
"""

from __future__ import annotations

import gc
import os
import tempfile
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any

import duckdb
import orjson
import pyarrow as pa
import pyarrow.compute as pc

from .contract import AGGREGATE_SCHEMAS, DEVICE_WORDS, PRODUCT_TYPE, TRANSACTION_SCHEMA
from .errors import MalformedResponseError, ValidationError
from .params import Filters

__all__ = [
    "parse_aggregate",
    "parse_transactions",
]

_DEVICE_CODES = DEVICE_WORDS
_UTM_KEYS = ("utmSource", "utmMedium", "utmCampaign", "utmTerm", "utmContent")


@dataclass(frozen=True)
class _Field:
    column: str
    type: pa.DataType
    nested: tuple[str, ...]  # path in the nested shape
    flat: tuple[tuple[str, ...], ...]  # candidate paths in the flat shape, first present wins


def _utm_fields(prefix: str, info: str) -> list[_Field]:
    snake = {
        "utmSource": "source",
        "utmMedium": "medium",
        "utmCampaign": "campaign",
        "utmTerm": "term",
        "utmContent": "content",
    }
    return [
        _Field(f"{prefix}_utm_{snake[key]}", pa.string(), ("click", info, key), ((info, key),))
        for key in _UTM_KEYS
    ]


def _f(column: str, type_: pa.DataType, group: str, key: str, *flat_keys: str) -> _Field:
    return _Field(column, type_, (group, key), tuple((k,) for k in (key, *flat_keys)))


_PRODUCT_KEYS = {
    "productId": "product_id",
    "productName": "product_name",
    "price": "price",
    "quantity": "quantity",
}

_FIELDS: tuple[_Field, ...] = (
    _f("account_id", pa.int64(), "account", "accountId"),
    _f("campaign_id", pa.int64(), "account", "campaignId"),
    _f("campaign_name", pa.string(), "account", "campaignName"),
    _f("revenue_id", pa.string(), "commission", "revenueId"),
    _f("commission_id", pa.string(), "commission", "commissionId"),
    _f("commission_date", pa.date32(), "commission", "commissionDate"),
    _f("update_date", pa.date32(), "commission", "updateDate"),
    _f("order_value", pa.float64(), "commission", "orderValue"),
    _f(
        "publisher_net_revenue",
        pa.float64(),
        "commission",
        "publisherNetRevenue",
        "publisherRevenue",
    ),
    _f("program_type", pa.string(), "commission", "programType"),
    _f("click_id", pa.string(), "click", "clickId"),
    _f("click_date", pa.date32(), "click", "clickDate"),
    _f("cuid", pa.string(), "click", "cuid"),
    *_utm_fields("link", "linkUtmInfo"),
    *_utm_fields("page", "pageUtmInfo"),
    _f("page_url", pa.string(), "click", "pageUrl"),
    _f("link_url", pa.string(), "click", "linkUrl", "destinationUrl"),
    _f("partner_product", pa.string(), "click", "partnerProduct", "affProduct"),
    _f("partner_product_sub_type", pa.string(), "click", "affProductSubType"),
    _f("country", pa.string(), "click", "country"),
    _f("device", pa.string(), "click", "device", "deviceType"),
    _f("merchant_group_id", pa.int64(), "merchant", "merchantGroupId"),
    _f("merchant_group_name", pa.string(), "merchant", "merchantGroupName"),
    _f("network", pa.string(), "merchant", "network", "networkName"),
    _Field("products", PRODUCT_TYPE, ("product",), (("product",), ("merchandise",))),
)

if [f.column for f in _FIELDS] + ["extra"] != TRANSACTION_SCHEMA.names:
    raise ImportError("parse._FIELDS no longer covers contract.TRANSACTION_SCHEMA in order")

# ---------------------------------------------------------------- the fast path (DuckDB) ----

_SQL_TYPES = {
    pa.int64(): "BIGINT",
    pa.float64(): "DOUBLE",
    pa.string(): "VARCHAR",
    pa.date32(): "VARCHAR",
}  # dates are read as text: empty strings are legal ("no click")
_PRODUCTS_SQL = "STRUCT(productId VARCHAR, productName VARCHAR, price DOUBLE, quantity DOUBLE)[]"
_UTM_SQL = "STRUCT(" + ", ".join(f"{k} VARCHAR" for k in _UTM_KEYS) + ")"
_ALSO_IN_CLICK = {"deviceType": "VARCHAR"}  # reference pages place it in the click group too


def _read_columns(shape: str) -> dict[str, str]:
    """DuckDB `columns=` for one shape's keys (a body mixing shapes fails the census)."""
    groups: dict[str, dict[str, str]] = {}
    top: dict[str, str] = {}
    for field in _FIELDS:
        sql = _PRODUCTS_SQL if field.type == PRODUCT_TYPE else _SQL_TYPES[field.type]
        if len(field.nested) == 3:  # click.<info>.<utm key>
            groups.setdefault("click", {})[field.nested[1]] = _UTM_SQL
        elif len(field.nested) == 2:
            groups.setdefault(field.nested[0], {})[field.nested[1]] = sql
        for path in field.flat:
            top[path[0]] = _UTM_SQL if len(path) == 2 else sql
    if shape == "flat":
        return top
    groups["click"].update(_ALSO_IN_CLICK)
    columns = {
        name: "STRUCT(" + ", ".join(f"{k} {t}" for k, t in keys.items()) + ")"
        for name, keys in groups.items()
    }
    columns["product"] = _PRODUCTS_SQL
    return columns


def _ref(path: tuple[str, ...]) -> str:
    return ".".join(f'"{p}"' for p in path)


def _select_list(shape: str) -> str:
    """Typed columns of TRANSACTION_SCHEMA, plus `_keys`: how many keys each row carried."""
    exprs = []
    for field in _FIELDS:
        candidates = [_ref(p) for p in field.flat] if shape == "flat" else [_ref(field.nested)]
        if field.column == "device":
            if shape == "nested":
                candidates.append(_ref(("click", "deviceType")))
            value = f"coalesce({', '.join(candidates)})"
            codes = " ".join(f"WHEN '{c}' THEN {repr(w) if w else 'NULL'}" for c, w in _DEVICE_CODES.items())
            exprs.append(f"CASE {value} {codes} ELSE nullif({value}, '') END AS device")
            continue
        value = f"coalesce({', '.join(candidates)})" if len(candidates) > 1 else candidates[0]
        if field.type in (pa.string(), pa.date32()):
            value = f"nullif({value}, '')"  # an empty string means "not known", as a missing key does
        if field.type == pa.date32():
            value = f"CAST({value} AS DATE)"
        elif field.type == PRODUCT_TYPE:
            value = (
                f"list_transform({value}, lambda p: {{'product_id': p.productId, "
                "'product_name': p.productName, 'price': p.price, 'quantity': p.quantity})"
            )
        exprs.append(f"{value} AS {field.column}")
    keys = " + ".join(
        term
        for name, sql_type in _read_columns(shape).items()
        for term in _present_sql(f'"{name}"', sql_type)
    )
    return f"{', '.join(exprs)}, NULL::VARCHAR AS extra, {keys} AS _keys"


_COLUMNS_SQL = {
    shape: "{" + ", ".join(f"'{k}': '{v}'" for k, v in _read_columns(shape).items()) + "}"
    for shape in ("nested", "flat")
}
_NESTED_GROUPS = (b'"account"', b'"commission"', b'"click"', b'"merchant"', b'"product"')
_local = threading.local()
_SCRATCH_DIR = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None


def _connection() -> duckdb.DuckDBPyConnection:
    if getattr(_local, "con", None) is None:
        _local.con = duckdb.connect(config={"threads": 2})
    con: duckdb.DuckDBPyConnection = _local.con
    return con


def _array_of(body: bytes) -> memoryview | None:
    """The array of a body that is exactly `{"transactions": [...]}`; None for anything else."""
    head = body[:64].lstrip()
    if not head.startswith(b"{") or not head[1:].lstrip().startswith(b'"transactions"'):
        return None
    colon = body.find(b":", body.find(b'"transactions"') + len(b'"transactions"'))
    start = body.find(b"[", colon)
    if colon < 0 or start < 0 or body[colon + 1 : start].strip():
        return None
    end = len(body) - 1
    while end > start and body[end] in b" \t\r\n":
        end -= 1
    if body[end] != ord("}"):
        return None
    end -= 1
    while end > start and body[end] in b" \t\r\n":
        end -= 1
    if body[end] != ord("]"):
        return None
    return memoryview(body)[start : end + 1]


def _present_sql(ref: str, sql_type: str) -> list[str]:
    """SQL terms counting, for one row, the keys under `ref` that the body gave a value."""
    terms = [f"({ref} IS NOT NULL)::INT"]
    if sql_type.endswith("[]"):
        item_terms = " + ".join(_present_sql("item", sql_type[:-2])[1:])
        terms.append(f"coalesce(list_sum(list_transform({ref}, lambda item: {item_terms})), 0)")
    elif sql_type.startswith("STRUCT("):
        for key, inner in _struct_members(sql_type):
            terms += _present_sql(f"struct_extract({ref}, '{key}')", inner)
    return terms


def _struct_members(sql_type: str) -> list[tuple[str, str]]:
    members, depth, current = [], 0, ""
    for char in sql_type[len("STRUCT(") : -1] + ",":
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            key, _, inner = current.strip().partition(" ")
            members.append((key, inner))
            current = ""
        else:
            current += char
    return members


def _shape_of(array: memoryview) -> str:
    """Nested when the first element starts with one of the contract's groups, else flat."""
    first_key = bytes(array[1:200]).lstrip().lstrip(b"{").lstrip()
    return "nested" if first_key.startswith(_NESTED_GROUPS) else "flat"


def _count_keys(body: bytes, into: list[int]) -> None:
    into.append(body.count(b'":') - 1)  # every key once, minus the wrapper's own
    into.append(body.count(b'":null') + body.count(b'": null'))


_SELECT_LISTS = {shape: _select_list(shape) for shape in ("nested", "flat")}


def _fast_transactions(body: bytes) -> pa.Table | None:
    array = _array_of(body)
    if array is None:
        return None
    shape = _shape_of(array)
    counts: list[int] = []
    census = threading.Thread(target=_count_keys, args=(body, counts))
    try:
        with tempfile.NamedTemporaryFile(suffix=".json", dir=_SCRATCH_DIR) as scratch:
            scratch.write(array)
            scratch.flush()
            source = f"read_json('{scratch.name}', format='array', columns={_COLUMNS_SQL[shape]})"
            relation = _connection().sql(f"SELECT {_SELECT_LISTS[shape]} FROM {source}")
            # Binding needs the GIL, executing does not: the census counts beside the read.
            census.start()
            table = relation.to_arrow_table()
    except duckdb.Error:
        return None
    finally:
        if census.is_alive():
            census.join()
    keys_in_body, null_keys = counts
    if keys_in_body != (pc.sum(table["_keys"]).as_py() or 0) + null_keys:
        return None  # the body holds keys the typed columns do not: keep them the slow way
    return table.drop_columns(["_keys"]).cast(TRANSACTION_SCHEMA)


# ---------------------------------------------------------------- the tolerant path ----


def _load_json(body: bytes, what: str) -> Any:
    gc.disable()  # orjson builds many small objects: the collector only slows it down
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError as error:
        raise MalformedResponseError(
            f"{what} body is not valid JSON ({error}); it may have been cut short",
        ) from None
    finally:
        gc.enable()


def _to_date(value: Any) -> date | None:
    if isinstance(value, str) and value:
        try:
            return date.fromisoformat(value[:10])
        except ValueError:
            return None
    return None


def _to_float(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str) and value.strip():
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _to_int(value: Any) -> int | None:
    number = _to_float(value)
    return int(number) if number is not None and number.is_integer() else None


def _to_str(value: Any) -> str | None:
    if value is None or value == "" or isinstance(value, dict | list):
        return None
    return value if isinstance(value, str) else str(value)


def _to_products(value: Any) -> list[dict[str, Any]] | None:
    if not isinstance(value, list):
        return None
    return [
        {
            "product_id": _to_str(item.get("productId")),
            "product_name": _to_str(item.get("productName")),
            "price": _to_float(item.get("price")),
            "quantity": _to_float(item.get("quantity")),
        }
        for item in value
        if isinstance(item, dict)
    ]


_CONVERTERS: dict[pa.DataType, Callable[[Any], Any]] = {
    pa.int64(): _to_int,
    pa.float64(): _to_float,
    pa.string(): _to_str,
    pa.date32(): _to_date,
    PRODUCT_TYPE: _to_products,
}


def _take(row: dict[str, Any], path: tuple[str, ...]) -> tuple[bool, Any]:
    """Pop `path` out of `row` (so what is left is unknown); (found, value)."""
    node: Any = row
    for key in path[:-1]:
        node = node.get(key) if isinstance(node, dict) else None
    if isinstance(node, dict) and path[-1] in node:
        return True, node.pop(path[-1])
    return False, None


def _leftovers(row: dict[str, Any]) -> dict[str, Any]:
    """What remains of a row once known keys are taken: empty groups and products are dropped."""
    left: dict[str, Any] = {}
    for key, value in row.items():
        if isinstance(value, dict):
            value = _leftovers(value)
            if value:
                left[key] = value
        elif key in ("product", "merchandise") and isinstance(value, list):
            unknown = [
                {k: v for k, v in p.items() if k not in _PRODUCT_KEYS} for p in value if isinstance(p, dict)
            ]
            if any(unknown):
                left[key] = unknown
        else:
            left[key] = value
    return left


def _tolerant_transactions(body: bytes) -> pa.Table:
    payload = _load_json(body, "transactions")
    if not isinstance(payload, dict) or not isinstance(payload.get("transactions"), list):
        raise MalformedResponseError(
            "transactions body has no 'transactions' array "
            f"(top-level keys: {sorted(payload) if isinstance(payload, dict) else type(payload).__name__})"
        )
    envelope = {k: v for k, v in payload.items() if k != "transactions"}
    columns: dict[str, list[Any]] = {f.column: [] for f in _FIELDS}
    extras: list[str | None] = []
    for row in payload["transactions"]:
        if not isinstance(row, dict):
            raise MalformedResponseError(f"a transaction is a {type(row).__name__}, not an object")
        for field in _FIELDS:
            value: Any = None
            kept_raw: Any = None
            for path in (
                field.nested,
                *field.flat,
                *((("click", "deviceType"),) if field.column == "device" else ()),
            ):
                found, candidate = _take(row, path)
                if found and value is None and candidate != "":
                    value, kept_raw = candidate, candidate
            if field.column == "device" and value in _DEVICE_CODES:
                value = _DEVICE_CODES[value]
            converted = _CONVERTERS[field.type](value)
            if converted is None and kept_raw not in (None, ""):
                row.setdefault("_unparsed", {})[field.column] = kept_raw  # keep what we could not type
            if field.type == PRODUCT_TYPE and isinstance(kept_raw, list):
                row["product"] = kept_raw  # products' unknown keys are judged by _leftovers
            columns[field.column].append(converted)
        left = _leftovers(row)
        if envelope:
            left["_envelope"] = envelope
        extras.append(orjson.dumps(left).decode() if left else None)
    arrays = [pa.array(columns[f.column], type=f.type) for f in _FIELDS]
    return pa.Table.from_arrays([*arrays, pa.array(extras, pa.string())], schema=TRANSACTION_SCHEMA)


def parse_transactions(body: bytes) -> pa.Table:
    """A transactions response body (nested or flat shape) -> a table of TRANSACTION_SCHEMA."""
    if not body.strip():
        raise MalformedResponseError("transactions body is empty")
    fast = _fast_transactions(body)
    return fast if fast is not None else _tolerant_transactions(body)


# ---------------------------------------------------------------- aggregates ----

_AGGREGATE_FIELDS: dict[str, dict[str, tuple[str, pa.DataType]]] = {
    "networks": {
        "networkName": ("network_name", pa.string()),
        "revenue": ("revenue", pa.float64()),
        "clicks": ("clicks", pa.float64()),
        "sales": ("sales", pa.float64()),
        "actions": ("actions", pa.float64()),
        "conversionRate": ("conversion_rate", pa.float64()),
        "epc": ("epc", pa.float64()),
    },
    "merchandise": {
        "productName": ("product_name", pa.string()),
        "merchantGroupName": ("merchant_group_name", pa.string()),
        "merchantGroupId": ("merchant_group_id", pa.int64()),
        "revenue": ("revenue", pa.float64()),
        "sales": ("sales", pa.float64()),
        "actions": ("actions", pa.float64()),
    },
}
_FILTER_FIELDS = [f for f in AGGREGATE_SCHEMAS["networks"] if f.name in Filters().as_columns()]


def parse_aggregate(
    endpoint: str, body: bytes | None, start: date, end: date, filters: Filters | None = None
) -> pa.Table:
    """A networks or merchandise body -> a typed table, stamped with its window and filters.

    `body=None` stands for a 404 (the service's way of saying the window has no rows).
    The service's `totals` object is kept in the schema metadata under `totals`.
    """
    if endpoint not in _AGGREGATE_FIELDS:
        raise ValidationError("endpoint", f"{endpoint!r} is not an aggregate", "use networks or merchandise")
    known = _AGGREGATE_FIELDS[endpoint]
    schema = AGGREGATE_SCHEMAS[endpoint]
    rows: list[Any] = []
    totals: Mapping[str, Any] = {}
    if body is not None:
        payload = _load_json(body, endpoint)
        if not isinstance(payload, dict) or not isinstance(payload.get("data"), list):
            raise MalformedResponseError(f"{endpoint} body has no 'data' array")
        rows = payload["data"]
        totals = payload.get("totals") or {}
    columns: dict[str, list[Any]] = {column: [] for column, _ in known.values()}
    extras: list[str | None] = []
    for row in rows:
        if not isinstance(row, dict):
            raise MalformedResponseError(f"a {endpoint} row is a {type(row).__name__}, not an object")
        for key, (column, type_) in known.items():
            columns[column].append(_CONVERTERS[type_](row.get(key)))
        unknown = {k: v for k, v in row.items() if k not in known}
        extras.append(orjson.dumps(unknown).decode() if unknown else None)
    stamp = (filters or Filters()).as_columns()
    n = len(rows)
    arrays = [pa.array(columns[column], type=type_) for column, type_ in known.values()]
    arrays += [
        pa.array(extras, pa.string()),
        pa.array([start] * n, pa.date32()),
        pa.array([end] * n, pa.date32()),
        *(pa.array([stamp[f.name]] * n, pa.string()) for f in _FILTER_FIELDS),
    ]
    metadata = {b"totals": orjson.dumps(totals)} if totals else None
    return pa.Table.from_arrays(arrays, schema=schema.with_metadata(metadata))
