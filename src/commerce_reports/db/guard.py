"""What a query over the views may be: one statement that only reads, checked before it runs.

DuckDB's own parser splits the text into statements and types each one (`duckdb.extract_statements`),
so comments, quoting and odd spacing cannot hide a second statement or a writing one. Only a single
SELECT-type statement passes (SELECT, WITH, FROM-first, VALUES, DESCRIBE, SHOW, SUMMARIZE): `COPY ... TO`,
`EXPORT DATABASE`, `ATTACH`, `INSTALL`/`LOAD`, `SET`/`RESET`/`PRAGMA`/`CALL`, `CREATE` and every
other kind are refused whatever path they name, inside the lake too. A SELECT cannot write: DuckDB's
`query()` table function runs only a SELECT. `EXPLAIN` and `EXPLAIN ANALYZE` (which runs its
statement) pass when what follows the keywords is itself such a SELECT, checked the same way.
"""

from __future__ import annotations

import re

import duckdb

from ..errors import ValidationError

__all__ = ["read_only_statement"]

_ADVICE = (
    "queries over the views only read: one SELECT (or WITH, FROM, DESCRIBE, SHOW, SUMMARIZE) at a time; "
    "`connect(read_only=False)` in Python gives DuckDB's full engine"
)


# The keywords in front of the statement an EXPLAIN shows; anything else (options, comments) in
# between leaves the rest unparsable as a SELECT, so it is refused.
_EXPLAIN = re.compile(r"\s*EXPLAIN\s+(?:ANALY[SZ]E\s+)?(?P<query>.*)", re.IGNORECASE | re.DOTALL)


def read_only_statement(sql: str, *, transactions: bool = False) -> str:
    """The one statement of `sql`, as DuckDB's parser cut it, when it only reads; else a
    ValidationError naming what it would do, before anything runs. `transactions`: BEGIN, COMMIT
    and ROLLBACK pass too (a connection reads several statements over one state of the lake in
    an explicit transaction)."""
    if not isinstance(sql, str) or not sql.strip():
        raise ValidationError("sql", f"{sql!r} is not a query", "give a SELECT over the views")
    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error as error:  # its first line: DuckDB's next ones draw a caret under the query
        problem = f"does not parse: {str(error).splitlines()[0]}"
        raise ValidationError("sql", problem, "give a SELECT over the views") from None
    if not statements:
        raise ValidationError("sql", f"{sql!r} holds no statement", "give a SELECT over the views")
    if len(statements) > 1:
        raise ValidationError("sql", f"holds {len(statements)} statements", _ADVICE)
    statement = statements[0]
    try:
        kind = statement.type
    except ValueError:  # a kind the Python enum does not name (e.g. UPDATE EXTENSIONS): not a query
        raise ValidationError("sql", "is not a query", _ADVICE) from None
    if transactions and kind == duckdb.StatementType.TRANSACTION:
        return str(statement.query).strip().rstrip(";").rstrip()
    explained = _EXPLAIN.match(str(statement.query)) if kind == duckdb.StatementType.EXPLAIN else None
    if explained is not None:  # the plan of a read (ANALYZE runs it): what it explains is checked
        read_only_statement(explained.group("query"))
        return str(statement.query).strip().rstrip(";").rstrip()
    if kind != duckdb.StatementType.SELECT:
        what = kind.name.replace("_", " ")
        article = "an" if what[:1].upper() in "AEIOU" else "a"
        raise ValidationError(
            "sql", f"is {article} {what} statement, which may write or change settings", _ADVICE
        )
    return str(statement.query).strip().rstrip(";").rstrip()
