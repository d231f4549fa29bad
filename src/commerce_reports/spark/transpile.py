"""One definition of every view: the DuckDB SQL of `db/views.py`, translated to Spark SQL by sqlglot.

The views read each other through a schema (`{src}` in DuckDB); Spark's temporary views have none,
so the translation renders with a placeholder schema and then drops it from every table name. The
lake sources become the temporary views of `sources.py`.

Two DuckDB meanings sqlglot does not carry over, added here:
- `list_sum` has no Spark form in sqlglot: it becomes an AGGREGATE that, as in DuckDB, skips NULL
  items and gives NULL for an empty or all-NULL list (the views sum lists of DOUBLE).
- A cast of a fractional number to an integer rounds in DuckDB (ties to even) but truncates in
  Spark: the value is rounded first with BROUND, Spark's ties-to-even rounding.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..db.coverage import SiteCoverage, with_status
from ..db.views import View, render
from .sources import SOURCE_VIEWS

__all__ = ["spark_sql"]

_PLACEHOLDER = "commerce_reports_src"
_SPARK_FORMS = {  # DuckDB function -> its Spark form, `items` standing for the argument
    "list_sum": "AGGREGATE(items, CAST(NULL AS DOUBLE), "
    "(acc, v) -> CASE WHEN v IS NULL THEN acc ELSE COALESCE(acc, 0D) + v END)",
}


def _duckdb_meaning(node: Any) -> Any:
    """`node`, or the Spark expression that means what it means in DuckDB."""
    import sqlglot
    from sqlglot import exp

    if isinstance(node, exp.Cast) and node.to.is_type(*exp.DataType.INTEGER_TYPES):
        rounded = node.copy()
        rounded.set("this", exp.func("BROUND", node.this.copy(), exp.Literal.number(0)))
        return rounded
    if not isinstance(node, exp.Anonymous) or node.name.lower() not in _SPARK_FORMS:
        return node
    (argument,) = node.expressions
    form = sqlglot.parse_one(_SPARK_FORMS[node.name.lower()], read="spark")
    return form.transform(lambda n: argument.copy() if isinstance(n, exp.Column) and n.name == "items" else n)


def spark_sql(view: View, coverage: Iterable[SiteCoverage] = ()) -> str:
    """The Spark SQL SELECT of `view`, reading other views and the lake's sources by bare name,
    with its `complete` and `final` columns from `coverage` (see `db/coverage.py`).

    Anything sqlglot cannot express in Spark raises instead of being dropped silently.
    """
    import sqlglot
    from sqlglot import exp
    from sqlglot.errors import ErrorLevel

    sources = {dataset: f"SELECT * FROM {name}" for dataset, name in SOURCE_VIEWS.items()}
    sql = with_status(view.period, render(view, _PLACEHOLDER, sources), coverage)
    tree = sqlglot.parse_one(sql, read="duckdb")
    for table in tree.find_all(exp.Table):
        if table.db == _PLACEHOLDER:
            table.set("db", None)
    translated: str = tree.transform(_duckdb_meaning).sql(dialect="spark", unsupported_level=ErrorLevel.RAISE)
    return translated
