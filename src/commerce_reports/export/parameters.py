"""A report notebook's parameters, read from its `parameters` cell, and values checked against them.

A typo (`strat=2026-11-01`) or a value of the wrong type must stop an export before it runs, not
produce a report of the default period that looks right. Each assignment of the cell declares a
parameter: its type is the annotation (`start: date | None = None`) or, without one, the type of
its default (`days = 30` is an int); `date` means an ISO 'YYYY-MM-DD' string. A value given as
text (the command line's `--param name=value`) is read as the declared type.
"""

from __future__ import annotations

import ast
import io
import json
import tokenize
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from ..errors import ValidationError

__all__ = ["Parameter", "check_parameters", "notebook_parameters"]


@dataclass(frozen=True)
class Parameter:
    """One assignment of the parameters cell: name, accepted kinds (empty: anything), default, help."""

    name: str
    kinds: tuple[str, ...]
    default: str
    help: str = ""

    def describe(self) -> str:
        kinds = " or ".join(self.kinds) or "any"
        text = f"{self.name} ({kinds}, default {self.default})"
        return f"{text}: {self.help}" if self.help else text


def _annotation_kinds(node: ast.expr) -> tuple[str, ...]:
    """The kinds an annotation names (`date | None`, `Optional[str]`, `list[str]`); () if unknown."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        left, right = _annotation_kinds(node.left), _annotation_kinds(node.right)
        return left + right if left and right else ()
    if isinstance(node, ast.Constant) and node.value is None:
        return ("None",)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):  # a quoted annotation
        return _annotation_kinds(ast.parse(node.value, mode="eval").body)
    if isinstance(node, ast.Subscript):
        outer = _annotation_kinds(node.value)
        if outer == ("Optional",):
            inner = _annotation_kinds(node.slice)
            return (*inner, "None") if inner else ()
        return outer
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    if name == "Optional":
        return ("Optional",)
    return (name,) if name in _READERS else ()  # the kinds a value can be read as


def _default_kind(node: ast.expr) -> tuple[str, ...]:
    try:
        value = ast.literal_eval(node)
    except ValueError:
        return ()
    return () if value is None else (type(value).__name__,)


def _comments(source: str) -> dict[int, str]:
    """The trailing comment of each line of `source`, by line number."""
    found: dict[int, str] = {}
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.COMMENT:
                found[token.start[0]] = token.string.lstrip("#").strip()
    except (tokenize.TokenError, SyntaxError):
        pass
    return found


def _parameters_cell(path: Path) -> str | None:
    """The source of the notebook's cell tagged `parameters` (None: no such cell), read as plain
    JSON: checking parameters must not wait for nbformat's schema validator to load."""
    try:
        node = json.loads(path.read_text(encoding="utf-8"))
        cells = node["cells"]
        cell = next((c for c in cells if "parameters" in c.get("metadata", {}).get("tags", [])), None)
    except (OSError, ValueError) as error:
        raise ValidationError("notebook", f"{path} cannot be read ({error})", "give an .ipynb file") from None
    except (AttributeError, TypeError, KeyError):  # JSON, but not a notebook (a list, odd cells)
        raise ValidationError("notebook", f"{path} is not a notebook", "give an .ipynb file") from None
    if cell is None:
        return None
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def notebook_parameters(notebook: Path | str) -> dict[str, Parameter]:
    """The parameters a notebook declares in its cell tagged `parameters` (none: no such cell)."""
    path = Path(notebook)
    source = _parameters_cell(path)
    if source is None:
        return {}
    try:
        tree = ast.parse(source)
    except SyntaxError as error:
        raise ValidationError(
            "notebook", f"the parameters cell of {path.name} is not Python ({error.msg})", "fix the cell"
        ) from None
    comments = _comments(source)
    found: dict[str, Parameter] = {}
    for statement in tree.body:
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            if statement.value is None:
                continue
            name, value, kinds = statement.target.id, statement.value, _annotation_kinds(statement.annotation)
        elif (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
        ):
            name, value, kinds = statement.targets[0].id, statement.value, _default_kind(statement.value)
        else:
            continue
        found[name] = Parameter(name, kinds, ast.unparse(value), comments.get(statement.lineno, ""))
    return found


def _guess(text: str) -> Any:
    """A value of undeclared type from text: none, true/false, a number, JSON, else the text."""
    lowered = text.strip().lower()
    if lowered in ("none", "null"):
        return None
    if lowered in ("true", "false"):
        return lowered == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    if text.strip()[:1] in ("[", "{"):
        try:
            return json.loads(text)
        except ValueError:
            pass
    return text


_Reading = tuple[bool, Any]  # (whether the value is of the kind, the value as that kind)
_NO: _Reading = (False, None)


def _as_none(value: Any, text: str | None) -> _Reading:
    return (True, None) if value is None or (text or "").lower() in ("none", "null") else _NO


def _as_str(value: Any, text: str | None) -> _Reading:
    return (True, value) if isinstance(value, str) else _NO


def _as_bool(value: Any, text: str | None) -> _Reading:
    if isinstance(value, bool):
        return True, value
    return (True, text.lower() == "true") if text and text.lower() in ("true", "false") else _NO


def _as_number(kind: type[int] | type[float]) -> Callable[[Any, str | None], _Reading]:
    def read(value: Any, text: str | None) -> _Reading:
        if isinstance(value, bool):
            return _NO
        if isinstance(value, int) or (kind is float and isinstance(value, float)):
            return True, kind(value)
        try:
            return (True, kind(text)) if text else _NO
        except ValueError:
            return _NO

    return read


def _as_date(value: Any, text: str | None) -> _Reading:
    if isinstance(value, date):
        return True, value.isoformat()
    try:
        return (True, date.fromisoformat(text).isoformat()) if text and len(text) == 10 else _NO
    except ValueError:
        return _NO


def _as_json(kind: type[list[Any]] | type[dict[str, Any]]) -> Callable[[Any, str | None], _Reading]:
    def read(value: Any, text: str | None) -> _Reading:
        if isinstance(value, kind):
            return True, value
        if text is None:
            return _NO
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = [item.strip() for item in text.split(",")] if kind is list else None
        return (True, parsed) if isinstance(parsed, kind) else _NO

    return read


# How a value (or its text, from the command line) is read as each kind a parameter may declare.
_READERS: dict[str, Callable[[Any, str | None], _Reading]] = {
    "None": _as_none,
    "str": _as_str,
    "bool": _as_bool,
    "int": _as_number(int),
    "float": _as_number(float),
    "date": _as_date,
    "list": _as_json(list),
    "dict": _as_json(dict),
}


def _as_kind(kind: str, value: Any) -> _Reading:
    """(True, the value as `kind`) if it is one or its text reads as one, else (False, None)."""
    return _READERS[kind](value, value.strip() if isinstance(value, str) else None)


def check_parameters(notebook: Path | str, params: dict[str, Any]) -> dict[str, Any]:
    """`params` as the notebook declares them (text read as the declared type), or a ValidationError
    naming the unknown or mistyped parameter and listing the known ones."""
    if not isinstance(params, dict):
        raise ValidationError("params", f"{params!r} is not a mapping", "give {name: value}")
    declared = notebook_parameters(notebook)
    listed = "".join(f"\n  {p.describe()}" for p in declared.values())
    known = listed or " none (no cell tagged 'parameters')"
    checked: dict[str, Any] = {}
    for name, value in params.items():
        parameter = declared.get(name)
        if parameter is None:
            raise ValidationError(
                "param", f"{name!r} is not a parameter of {Path(notebook).name}", f"known parameters:{known}"
            )
        if not parameter.kinds:
            checked[name] = _guess(value) if isinstance(value, str) else value
            continue
        for kind in parameter.kinds:
            ok, converted = _as_kind(kind, value)
            if ok:
                checked[name] = converted
                break
        else:
            raise ValidationError(
                "param",
                f"{name}={value!r} is not {' or '.join(parameter.kinds)}"
                + (" (dates are 'YYYY-MM-DD')" if "date" in parameter.kinds else ""),
                f"known parameters:{known}",
            )
    return checked
