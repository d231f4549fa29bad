"""The vendor's published OpenAPI file as a test oracle for requests and responses.

`tests/fixtures/reports-openapi.json` is a copy of `../shared/published/reports-openapi.json`, so the
suite stands alone. Its schemas are OpenAPI 3.0 schema objects that use only keywords JSON Schema
2020-12 reads the same way (`_SCHEMA_KEYWORDS`; loading fails on any other, say `nullable`), so
`jsonschema` (the reference JSON Schema validator) checks them directly, with the document's
`#/components/...` references inlined. The formats the file declares are asserted.

Two readings of the file:
- plain: the schemas as published (properties optional, undeclared keys allowed, an integral float
  passes as an integer, as JSON Schema says);
- strict: every object schema closed (`additionalProperties: false`, every property required, an
  `allOf` of objects merged into one object first) and integers written as JSON integers.

`validate_request(url_or_path, params)` checks what a client sends: a published path under the
server's base path (`/v1`), every query parameter declared for it, none given twice, the required
ones present, each value valid against its schema (enums such as `sovrnProduct`, patterns, dates).
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterable, Mapping
from datetime import date
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.protocols import Validator
from jsonschema.validators import extend

__all__ = [
    "FIXTURE",
    "ContractViolation",
    "openapi",
    "request_problems",
    "response_problems",
    "strict_copy",
    "validate_request",
    "validate_response",
]

FIXTURE = Path(__file__).parent / "fixtures" / "reports-openapi.json"
_SCHEMA_KEYWORDS = frozenset(
    {"type", "properties", "items", "enum", "pattern", "format", "allOf", "$ref", "example", "description"}
)
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_INT64 = (-(2**63), 2**63 - 1)
_MAX_LISTED = 20  # problems listed in one failure; the count says how many more


class ContractViolation(AssertionError):
    """A request or response that the published file does not allow; `problems` lists each."""

    def __init__(self, what: str, problems: list[str]) -> None:
        self.problems = problems
        listed = "\n  ".join(problems[:_MAX_LISTED])
        more = f"\n  ... and {len(problems) - _MAX_LISTED} more" if len(problems) > _MAX_LISTED else ""
        super().__init__(f"{what}: {len(problems)} problem(s) against the published API\n  {listed}{more}")


def _schemas(node: Any, inside_schema: bool = False) -> Iterable[dict[str, Any]]:
    """Every schema object of the document: the values of `schema`, `schemas`, `properties`,
    `items` and `allOf`, and what they nest that way."""
    if isinstance(node, list):
        for item in node:
            yield from _schemas(item, inside_schema)
    elif isinstance(node, dict):
        if inside_schema:
            yield node
        for key, value in node.items():
            if key in ("schema", "items", "allOf"):
                yield from _schemas(value, True)
            elif key in ("schemas", "properties"):
                for member in value.values():
                    yield from _schemas(member, True)
            elif not inside_schema:
                yield from _schemas(value)


@cache
def openapi() -> dict[str, Any]:
    """The published document, after checking that its schemas mean the same in JSON Schema 2020-12."""
    document: dict[str, Any] = json.loads(FIXTURE.read_text(encoding="utf-8"))
    used = {keyword for schema in _schemas(document) for keyword in schema}
    unsupported = used - _SCHEMA_KEYWORDS
    if unsupported:
        raise RuntimeError(
            f"{FIXTURE.name} uses schema keywords {sorted(unsupported)} that JSON Schema 2020-12 reads"
            " differently from OpenAPI 3.0: translate them in tests/published_schema.py first"
        )
    places = {
        p["in"] for item in document["paths"].values() for op in item.values() for p in op["parameters"]
    }
    if places != {"query"}:
        raise RuntimeError(
            f"{FIXTURE.name} declares parameters in {sorted(places)}: only query ones are checked"
        )
    return document


def _resolve(document: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        target: Any = document
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part.replace("~1", "/").replace("~0", "~")]
        node = target
    return node


def strict_copy(document: dict[str, Any]) -> dict[str, Any]:
    """`document` with every object schema closed and complete (see the module docstring)."""

    def merged(node: dict[str, Any]) -> dict[str, Any]:
        properties: dict[str, Any] = {}
        for member in (_resolve(document, m) for m in node["allOf"]):
            if (
                set(member) - {"type", "properties", "description"}
                or member.get("type", "object") != "object"
            ):
                raise RuntimeError(f"strict_copy merges allOf of plain object schemas only (got {member})")
            properties.update(member.get("properties", {}))
        rest = {key: value for key, value in node.items() if key != "allOf"}
        return {**rest, "type": "object", "properties": properties}

    def walk(node: Any, inside_schema: bool) -> Any:
        if isinstance(node, list):
            return [walk(item, inside_schema) for item in node]
        if not isinstance(node, dict):
            return node
        if inside_schema and "allOf" in node:
            node = merged(node)
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in ("schema", "items", "allOf"):
                out[key] = walk(value, True)
            elif key in ("schemas", "properties"):
                out[key] = {name: walk(member, True) for name, member in value.items()}
            else:
                out[key] = walk(value, False)
        if inside_schema and "properties" in out:
            out.update(type="object", required=list(out["properties"]), additionalProperties=False)
        return out

    return dict(walk(copy.deepcopy(document), False))


def _checker(strict: bool) -> FormatChecker:
    """The file's formats: `date` (yyyy-mm-dd, a calendar day), `integer`, `int64`, `float`."""
    checker = FormatChecker(formats=())

    def integral(value: object) -> bool:
        """Non-numbers pass (the type keyword judges them); strict wants a JSON integer literal."""
        if isinstance(value, bool) or not isinstance(value, int | float):
            return True
        return isinstance(value, int) or (not strict and value.is_integer())

    @checker.checks("date")
    def is_date(value: object) -> bool:
        if not isinstance(value, str):
            return True
        try:
            return bool(_DATE.fullmatch(value)) and bool(date.fromisoformat(value))
        except ValueError:
            return False

    @checker.checks("integer")
    def is_integer(value: object) -> bool:
        return integral(value)

    @checker.checks("int64")
    def is_int64(value: object) -> bool:
        in_range = not isinstance(value, int | float) or _INT64[0] <= value <= _INT64[1]
        return integral(value) and in_range

    @checker.checks("float")
    def is_float(value: object) -> bool:
        return True  # any JSON number; the type keyword already says number

    return checker


# Strict: an integer is a JSON integer literal (json.loads gives an int), never 3.0.
_StrictValidator = extend(
    Draft202012Validator,
    type_checker=Draft202012Validator.TYPE_CHECKER.redefine(
        "integer", lambda _checker, value: isinstance(value, int) and not isinstance(value, bool)
    ),
)


@cache
def _document(strict: bool) -> dict[str, Any]:
    return strict_copy(openapi()) if strict else openapi()


def _inlined(document: dict[str, Any], node: Any, seen: tuple[str, ...] = ()) -> Any:
    """`node` with every `$ref` replaced by its target: jsonschema validates that ~1.7x faster."""
    if isinstance(node, list):
        return [_inlined(document, item, seen) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        if node["$ref"] in seen:
            raise RuntimeError(f"{FIXTURE.name}: recursive schema {node['$ref']} cannot be inlined")
        return _inlined(document, _resolve(document, node), (*seen, node["$ref"]))
    return {key: _inlined(document, value, seen) for key, value in node.items()}


@cache
def _validator(where: tuple[str | int, ...], strict: bool) -> Validator:
    """A validator of the schema at `where` (keys from the document's root), references inlined."""
    document = _document(strict)
    node: Any = document
    for key in where:
        node = node[key]
    cls = _StrictValidator if strict else Draft202012Validator
    return cls(_inlined(document, node), format_checker=_checker(strict))


def _operation(url_or_path: str, method: str) -> tuple[str, dict[str, Any]] | str:
    """(published path, operation) for a URL or path under the server's base path, or a problem."""
    base = urlsplit(openapi()["servers"][0]["url"]).path.rstrip("/")
    path = urlsplit(url_or_path).path
    if not path.startswith(f"{base}/"):
        return f"path {path!r} is not under the server's base path {base!r}"
    relative = path.removeprefix(base)
    operation = openapi()["paths"].get(relative, {}).get(method.lower())
    if operation is None:
        return f"{method} {path}: not a published operation (paths: {', '.join(openapi()['paths'])})"
    return relative, operation


def response_problems(url_or_path: str, status: int, body: object, *, strict: bool = False) -> list[str]:
    """What is wrong with answering `status` and `body` (parsed JSON) to a GET of `url_or_path`.

    The status must be one the file declares for the path (exactly, or as `5XX`); a response the
    file gives a JSON schema must match it. Empty when all is well.
    """
    found = _operation(url_or_path, "GET")
    if isinstance(found, str):
        return [found]
    relative, operation = found
    responses = operation["responses"]
    declared = next((key for key in (str(status), f"{str(status)[0]}XX") if key in responses), None)
    if declared is None:
        return [f"status {status} is not declared for {relative} (declared: {', '.join(responses)})"]
    if "application/json" not in responses[declared].get("content", {}):
        return []
    where = ("paths", relative, "get", "responses", declared, "content", "application/json", "schema")
    errors = sorted(_validator(where, strict).iter_errors(body), key=lambda e: list(e.absolute_path))
    return [f"{'/' + '/'.join(map(str, error.absolute_path))}: {error.message}" for error in errors]


def validate_response(url_or_path: str, status: int, body: object, *, strict: bool = False) -> None:
    """Raise `ContractViolation` unless `response_problems` finds nothing."""
    problems = response_problems(url_or_path, status, body, strict=strict)
    if problems:
        reading = "strict" if strict else "plain"
        raise ContractViolation(f"{status} answer to {url_or_path} ({reading} schemas)", problems)


def _pairs(
    url_or_path: str, params: Mapping[str, str] | Iterable[tuple[str, str]] | None
) -> list[tuple[str, str]]:
    pairs = parse_qsl(urlsplit(url_or_path).query, keep_blank_values=True)
    if params is not None:
        pairs += list(params.items()) if isinstance(params, Mapping) else list(params)
    return pairs


def request_problems(
    url_or_path: str,
    params: Mapping[str, str] | Iterable[tuple[str, str]] | None = None,
    *,
    method: str = "GET",
) -> list[str]:
    """What is wrong with a request: its URL or path (with or without a query) and `params`.

    `params` adds to the URL's own query: a mapping, or (name, value) pairs so that a repeat shows.
    Empty when the published file allows the request.
    """
    found = _operation(url_or_path, method)
    if isinstance(found, str):
        return [found]
    relative, operation = found
    declared = {parameter["name"]: (n, parameter) for n, parameter in enumerate(operation["parameters"])}
    pairs = _pairs(url_or_path, params)
    names = [name for name, _ in pairs]
    problems = [
        f"{name}: not a parameter of {relative} (declared: {', '.join(declared)})"
        for name in dict.fromkeys(names)
        if name not in declared
    ]
    problems += [
        f"{name}: given {names.count(name)} times" for name in dict.fromkeys(names) if names.count(name) > 1
    ]
    problems += [
        f"{name}: required by {relative} and missing"
        for name, (_, parameter) in declared.items()
        if parameter.get("required") and name not in names
    ]
    for name, value in pairs:
        if name in declared:
            where = ("paths", relative, method.lower(), "parameters", declared[name][0], "schema")
            problems += [
                f"{name}={value!r}: {error.message}" for error in _validator(where, True).iter_errors(value)
            ]
    return problems


def validate_request(
    url_or_path: str,
    params: Mapping[str, str] | Iterable[tuple[str, str]] | None = None,
    *,
    method: str = "GET",
) -> None:
    """Raise `ContractViolation` unless `request_problems` finds nothing.

    Use with what a client sent: `validate_request(str(httpx_request.url))`, or a sandbox record:
    `validate_request(f"/v1/reports/{record.endpoint}", record.params)`.
    """
    problems = request_problems(url_or_path, params, method=method)
    if problems:
        raise ContractViolation(f"{method} {url_or_path}", problems)
