"""The published OpenAPI description's transaction schema, as-is and in a strict copy."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import jsonschema
import orjson
import pytest

OPENAPI = Path(__file__).parents[1] / "fixtures" / "reports-openapi.json"


def _inline(node: Any, schemas: dict[str, Any]) -> Any:
    """The schema with every `#/components/schemas/...` reference replaced by its target."""
    if isinstance(node, dict):
        if "$ref" in node:
            return _inline(schemas[node["$ref"].rsplit("/", 1)[-1]], schemas)
        return {key: _inline(value, schemas) for key, value in node.items()}
    if isinstance(node, list):
        return [_inline(item, schemas) for item in node]
    return node


def _strict(node: Any) -> Any:
    """Every object closed (`additionalProperties: false`) with every property required."""
    node = copy.deepcopy(node)
    if isinstance(node, dict):
        node = {key: _strict(value) for key, value in node.items()}
        if "properties" in node:
            node["additionalProperties"] = False
            node["required"] = sorted(node["properties"])
    elif isinstance(node, list):
        node = [_strict(item) for item in node]
    return node


@pytest.fixture(scope="session")
def transactions_validator() -> jsonschema.Draft202012Validator:
    """Validates a transactions body against the published schema made strict."""
    schemas = orjson.loads(OPENAPI.read_bytes())["components"]["schemas"]
    schema = _strict(_inline(schemas["TransactionsResponseModel"], schemas))
    return jsonschema.Draft202012Validator(schema)
