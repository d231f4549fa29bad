"""A hostile service echoing the key: it never shows in what an error or a result says, holds or
pickles (README: secrets are "masked wherever text is shown")."""

from __future__ import annotations

import traceback
from collections.abc import Callable

import httpx
import pytest

from commerce_reports.deals import DealsClient
from commerce_reports.deals.errors import DealError
from commerce_reports.http import RetryPolicy

KEY = "sbx-deals-write-0000000000000001"
Handler = Callable[[httpx.Request], httpx.Response]


def client_of(handler: Handler) -> DealsClient:
    """A client of `handler` that tries once and never sleeps."""
    return DealsClient(
        KEY,
        "http://deals.test",
        transport=httpx.MockTransport(handler),
        retry=RetryPolicy(1, 0.0, 0.0),
        sleep=lambda _: None,
    )


def holds_key(text: str) -> bool:
    """Whether `text` shows the key, or its first 12 characters (a key cut short)."""
    return KEY[:12] in text


def test_a_500_body_with_the_key_across_the_excerpts_cut_never_shows_it() -> None:
    body = ("x" * 269 + KEY).encode()
    with client_of(lambda r: httpx.Response(500, content=body, headers={"content-type": "text/plain"})) as c:
        with pytest.raises(DealError) as caught:
            c.update("1001", {"status": "paused"})
    error = caught.value
    shown = [str(error), repr(error), repr(error.args), "".join(traceback.format_exception(error))]
    assert not any(holds_key(text) for text in shown), shown
