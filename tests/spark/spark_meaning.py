"""Spark SQL run on DuckDB with Spark's meaning of each function: a view's translation checked for
meaning without a JVM.

sqlglot reads a view's Spark SQL (`spark.transpile.spark_sql`) and writes it for DuckDB. Where
DuckDB's function of that name means something else, `MEANINGS` says what Spark's means, as a
DuckDB expression, from Spark's documentation (non-ANSI mode, Spark's default): `DAYOFWEEK` counts
from 1 on Sunday where DuckDB's counts from 0, `UNIX_TIMESTAMP` drops the fraction of a second,
`SIZE(NULL)` is -1, `BROUND` rounds half to even, a cast to an integer truncates. Functions whose
meaning sqlglot's reading keeps are listed in `SAME`. Any other function fails the check, naming
it: its meaning on Spark is written down here before a view may use it. `tests/spark/
test_equal_answers.py` (with a JVM) keeps this table honest.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

import duckdb
import sqlglot
from sqlglot import exp

__all__ = ["MEANINGS", "SAME", "duckdb_form", "rows"]


def _integer_cast(node: exp.Cast) -> exp.Expression:
    """Spark casts a fractional number to an integer by truncating toward zero (DuckDB rounds);
    sqlglot reads Spark's cast as TRY_CAST (a failure is NULL on both)."""
    if isinstance(node.this, exp.Predicate | exp.Boolean | exp.Not | exp.Connector):
        return node
    truncated = node.copy()
    truncated.set("this", exp.func("trunc", node.this.copy()))
    return truncated


MEANINGS: dict[str, Callable[[Any], exp.Expression]] = {
    "DayOfWeek": lambda n: sqlglot.parse_one(f"(dayofweek({n.this.sql('duckdb')}) + 1)", read="duckdb"),
    "StrToUnix": lambda n: sqlglot.parse_one(
        f"CAST(floor(epoch({n.this.sql('duckdb')})) AS BIGINT)", read="duckdb"
    ),
    "ArraySize": lambda n: sqlglot.parse_one(
        f"coalesce(array_length({n.this.sql('duckdb')}), -1)", read="duckdb"
    ),
    "BROUND": lambda n: exp.func("round_even", *(a.copy() for a in n.expressions)),
}

SAME = frozenset(
    {
        "And", "Or", "Not", "Case", "If", "Coalesce", "Nullif", "Greatest", "Least", "Upper", "Lower",
        "Count", "Sum", "Min", "Max", "Avg", "LogicalOr", "LogicalAnd", "Round", "RowNumber", "LastValue",
        "FirstValue", "TsOrDsToDate", "DateDiff", "TimestampTrunc", "Explode", "Transform", "Reduce",
        "Cast", "TryCast", "Abs", "Concat", "Floor", "Ceil",
    }
)  # fmt: skip


def _name(node: exp.Func) -> str:
    return node.name.upper() if isinstance(node, exp.Anonymous) else type(node).__name__


def duckdb_form(spark_sql: str) -> str:
    """`spark_sql` as DuckDB SQL that means on DuckDB what it means on Spark; ValueError naming a
    function whose Spark meaning is not written down here."""
    tree = sqlglot.parse_one(spark_sql, read="spark")
    unknown = sorted(
        {_name(n) for n in tree.find_all(exp.Func) if _name(n) not in SAME and _name(n) not in MEANINGS}
    )
    if unknown:
        raise ValueError(
            f"no Spark meaning written down for {', '.join(unknown)}: add it to tests/spark/spark_meaning.py"
        )

    for node in reversed(list(tree.walk(bfs=False))):  # the innermost first: a meaning reads its operands'
        if isinstance(node, exp.Cast) and node.to.is_type(*exp.DataType.INTEGER_TYPES):
            node.replace(_integer_cast(node))
        elif isinstance(node, exp.Func) and _name(node) in MEANINGS:
            node.replace(MEANINGS[_name(node)](node))
    return tree.sql(dialect="duckdb")


def comparable(value: Any) -> Any:
    """One cell, comparable across engines: money (DECIMAL) exactly, ratios (DOUBLE) to 1e-9,
    structs and lists as tuples, timestamps as UTC instants (Spark hands back naive local time)."""
    if isinstance(value, float):
        return round(value, 9)
    if hasattr(value, "asDict"):  # a Spark Row (a struct)
        value = value.asDict()
    if isinstance(value, dict):
        return tuple((key, comparable(item)) for key, item in value.items())
    if isinstance(value, list):
        return tuple(comparable(item) for item in value)
    if isinstance(value, datetime):
        return value.astimezone(UTC)
    return value


def comparable_rows(found: Iterable[Sequence[Any]]) -> Counter[tuple[Any, ...]]:
    """Rows of either engine as a multiset of comparable tuples (see `comparable`)."""
    return Counter(tuple(comparable(v) for v in row) for row in found)


def rows(con: duckdb.DuckDBPyConnection, sql: str) -> Counter[tuple[Any, ...]]:
    """The rows of `sql` on DuckDB, comparable across engines."""
    return comparable_rows(con.execute(sql).fetchall())


def differences(expected: Counter[tuple[Any, ...]], found: Counter[tuple[Any, ...]]) -> Iterable[str]:
    """What tells `found` from `expected`, in a few words (nothing: equal)."""
    if expected == found:
        return []
    only_duck, only_spark = sorted(map(repr, expected - found)), sorted(map(repr, found - expected))
    return [
        f"{sum(expected.values())} rows on DuckDB, {sum(found.values())} with Spark's meaning; "
        f"{len(only_duck)} only on DuckDB, e.g. {only_duck[:2]}; {len(only_spark)} only with Spark's "
        f"meaning, e.g. {only_spark[:2]}"
    ]
