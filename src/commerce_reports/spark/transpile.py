"""One definition of every view: the DuckDB SQL of `db/views.py`, translated to Spark SQL by sqlglot.

The views read each other through a schema (`{src}` in DuckDB); Spark's temporary views have none,
so the translation renders with a placeholder schema and then drops it from every table name. The
lake sources become the temporary views of `sources.py`.

DuckDB meanings sqlglot does not carry over, added here:
- `list_sum` has no Spark form in sqlglot: it becomes an AGGREGATE that, as in DuckDB, skips NULL
  items and gives NULL for an empty or all-NULL list (the views sum lists of DOUBLE).
- A cast to an integer type means what DuckDB does with what it casts, which Spark does not:
  a binary float (DOUBLE, FLOAT) is rounded half to even (Spark truncates): BROUND first; a DECIMAL
  is rounded half away from zero: ROUND first; text is read as a number and rounded half away from
  zero: read as DECIMAL(38, 18) (by the same CAST or TRY_CAST, so a failure fails or gives NULL
  alike; 20 integer digits hold any BIGINT exactly, where a DOUBLE would not) and ROUND first; an
  integer or a boolean is cast as it is. What each cast casts is typed by sqlglot from the lake's
  columns (`contract.py`) and the views read before it; a cast of something it cannot type raises.

`tests/snapshots/spark/<view>.sql` holds what this gives for every view, beside the DuckDB SQL
(`tests/snapshots/duckdb/`): a change of the translation is a reviewable diff.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any

from ..contract import DATASETS, HIVE_KEYS, dataset_schema, sql_type
from ..db.coverage import SiteCoverage, ledger_select, with_status
from ..db.views import LEDGER, VIEW_LIST, View, contract_problems, render
from ..errors import ValidationError
from .sources import SOURCE_VIEWS

__all__ = ["spark_sql"]

_PLACEHOLDER = "commerce_reports_src"
_SPARK_FORMS = {  # DuckDB function -> its Spark form, `items` standing for the argument
    "list_sum": "AGGREGATE(items, CAST(NULL AS DOUBLE), "
    "(acc, v) -> CASE WHEN v IS NULL THEN acc ELSE COALESCE(acc, 0D) + v END)",
}
_TEXT_AS_NUMBER = "DECIMAL(38, 18)"


def _parsed(view: View, coverage: Iterable[SiteCoverage]) -> Any:
    """The view's DuckDB SELECT as a sqlglot tree, reading the other views and the sources by name."""
    import sqlglot
    from sqlglot import exp

    coverage = tuple(coverage)
    sources = {dataset: f"SELECT * FROM {name}" for dataset, name in SOURCE_VIEWS.items()}
    sources[LEDGER] = ledger_select(coverage)
    tree = sqlglot.parse_one(
        with_status(view.period, render(view, _PLACEHOLDER, sources), coverage), "duckdb"
    )
    for table in tree.find_all(exp.Table):
        if table.db == _PLACEHOLDER:
            table.set("db", None)
    return tree


def _typed(tree: Any, schema: dict[str, dict[str, str]]) -> Any:
    """A copy of `tree` with its columns qualified and every expression typed by sqlglot. Aliases
    are left as they are (not expanded where they are used), so the copy holds the same casts in
    the same order as `tree`."""
    from sqlglot.optimizer.annotate_types import annotate_types
    from sqlglot.optimizer.qualify import qualify
    from sqlglot.schema import MappingSchema

    tables = MappingSchema(dict[str, object](schema), dialect="duckdb")
    qualified = qualify(
        tree.copy(), schema=tables, dialect="duckdb", expand_alias_refs=False, validate_qualify_columns=False
    )
    return annotate_types(qualified, schema=tables, dialect="duckdb")


@functools.cache
def _schema() -> dict[str, dict[str, str]]:
    """Column -> DuckDB type of every table a view reads: the lake's sources, then each view (typed
    in the order they are created, so a view reads only views typed before it)."""
    schema: dict[str, dict[str, str]] = {}
    for dataset in DATASETS:
        stored = {f.name: sql_type(f.type) for f in dataset_schema(dataset)}
        schema[SOURCE_VIEWS[dataset]] = {**HIVE_KEYS[dataset], **stored}
    for view in VIEW_LIST:
        typed = _contract_first(view, functools.partial(_typed, _parsed(view, ()), schema))
        schema[view.name] = {s.alias_or_name: s.type.sql("duckdb") for s in typed.selects}
    return schema


def _contract_first(view: View, typing: Callable[[], Any]) -> Any:
    """What `typing` gives; if sqlglot cannot type `view`, the rules of the views' contract the
    view breaks (`db.views.contract_problems`) in their own words, when it breaks one: the
    optimiser's error names neither the view nor the rule."""
    from sqlglot.errors import SqlglotError

    try:
        return typing()
    except SqlglotError:
        views = VIEW_LIST if view in VIEW_LIST else (*VIEW_LIST, view)
        broken = [p for p in contract_problems(views) if p.startswith(f"view {view.name}:")]
        if not broken:
            raise
        raise ValidationError(
            f"view {view.name}", "it breaks the views' contract", "\n".join(broken)
        ) from None


def _cast_to_integer(node: Any, operand: Any) -> Any:
    """The cast `node` to an integer type, its value first rounded as DuckDB rounds `operand`'s type."""
    from sqlglot import exp

    if operand.is_type(*exp.DataType.INTEGER_TYPES, exp.DataType.Type.BOOLEAN):
        return node
    if operand.is_type(*exp.DataType.FLOAT_TYPES):
        rounded = exp.func("BROUND", node.this.copy(), exp.Literal.number(0))
    elif operand.is_type(*exp.DataType.REAL_TYPES):
        rounded = exp.func("ROUND", node.this.copy(), exp.Literal.number(0))
    elif operand.is_type(*exp.DataType.TEXT_TYPES):
        number = node.copy()  # the same CAST or TRY_CAST
        number.set("to", exp.DataType.build(_TEXT_AS_NUMBER))
        rounded = exp.func("ROUND", number, exp.Literal.number(0))
    else:
        raise ValidationError(
            "view",
            f"cannot tell how Spark should read {node.sql('duckdb')}: it casts a {operand.sql('duckdb')}",
            "cast a typed column or give the operand a type (e.g. CAST(x AS DOUBLE))",
        )
    cast = node.copy()
    cast.set("this", rounded)
    return cast


def _duckdb_meaning(node: Any, operands: dict[int, Any]) -> Any:
    """`node`, or the Spark expression that means what it means in DuckDB."""
    import sqlglot
    from sqlglot import exp

    if isinstance(node, exp.Cast) and node.to.is_type(*exp.DataType.INTEGER_TYPES):
        return _cast_to_integer(node, operands[id(node)])
    if not isinstance(node, exp.Anonymous) or node.name.lower() not in _SPARK_FORMS:
        return node
    (argument,) = node.expressions
    form = sqlglot.parse_one(_SPARK_FORMS[node.name.lower()], read="spark")
    return form.transform(lambda n: argument.copy() if isinstance(n, exp.Column) and n.name == "items" else n)


def spark_sql(view: View, coverage: Iterable[SiteCoverage] = ()) -> str:
    """The Spark SQL SELECT of `view`, reading other views and the lake's sources by bare name,
    with its `complete` and `final` columns from `coverage` (see `db/coverage.py`). Laid out one
    clause a line, as the snapshot files keep it.

    Anything sqlglot cannot express in Spark raises instead of being dropped silently.
    """
    from sqlglot import exp
    from sqlglot.errors import ErrorLevel

    coverage = tuple(coverage)
    tree = _parsed(view, coverage)
    typed_tree = _contract_first(view, lambda: _typed(tree, _schema()))
    casts, typed = list(tree.find_all(exp.Cast)), list(typed_tree.find_all(exp.Cast))
    if [c.to.sql() for c in casts] != [c.to.sql() for c in typed]:
        raise ValidationError("view", f"{view.name}: its casts could not be typed one by one")
    operands = {
        id(cast): twin.this.type or exp.DataType.build("UNKNOWN")
        for cast, twin in zip(casts, typed, strict=True)
    }
    spark = tree.transform(lambda node: _duckdb_meaning(node, operands), copy=False)
    translated: str = spark.sql(dialect="spark", pretty=True, unsupported_level=ErrorLevel.RAISE)
    return translated
