"""The deals sandbox's answers in the shapes part 7.2 gives them: JSON carrying `message`, plain
text for the 401s and the 500, and the Fastify validation shape of a 400."""

from __future__ import annotations

from typing import Any

import orjson

from ...sandbox.http import Response

__all__ = [
    "invalid_json",
    "json_reply",
    "not_enabled",
    "not_found",
    "text_reply",
    "unsupported_media_type",
    "validation",
]


def json_reply(status: int, payload: dict[str, Any]) -> Response:
    return Response(status, orjson.dumps(payload), "application/json; charset=utf-8")


def text_reply(status: int, text: str, delay: float = 0.0) -> Response:
    return Response(status, text.encode(), "text/plain; charset=utf-8", delay=delay)


def validation(message: str) -> Response:
    """400 FST_ERR_VALIDATION: `message` holds every failure, comma-joined, each after its path."""
    return _fastify(400, "FST_ERR_VALIDATION", "Bad Request", message)


def invalid_json() -> Response:
    message = "Body is not valid JSON but content-type is set to 'application/json'"
    return _fastify(400, "FST_ERR_CTP_INVALID_JSON_BODY", "Bad Request", message)


def unsupported_media_type() -> Response:
    return _fastify(415, "FST_ERR_CTP_INVALID_MEDIA_TYPE", "Unsupported Media Type", "Unsupported Media Type")


def not_enabled() -> Response:
    return json_reply(403, {"message": "Partner not authorized for this API"})


def not_found() -> Response:
    return json_reply(404, {"message": "Deal request not found"})


def _fastify(status: int, code: str, error: str, message: str) -> Response:
    return json_reply(status, {"statusCode": status, "code": code, "error": error, "message": message})
