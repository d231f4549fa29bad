"""A hostile service echoing the key: it never shows in what an error or a result says, holds or
pickles (README: secrets are "masked wherever text is shown")."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import traceback
from collections.abc import Callable
from pathlib import Path

import httpx
import orjson
import pytest

from commerce_reports.cli import main
from commerce_reports.deals import DealsClient
from commerce_reports.deals.errors import DealError
from commerce_reports.http import RetryPolicy
from commerce_reports.sandbox.http import Request, Response, serve
from commerce_reports.secret import Secret

from .conftest import valid_deal

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


def test_a_2xx_answer_echoing_the_key_is_masked_in_the_deal_and_the_values() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.method == "GET":
            return httpx.Response(200, json=["de", KEY])
        return httpx.Response(201, json={"id": "2001", "note": f"your key {KEY}", "buyers": [{"dsp": KEY}]})

    with client_of(handler) as c:
        deal = c.create(valid_deal(), local_checks=False)
        values = c.targeting_values("device.language")
    assert deal.id == "2001" and values[0] == "de"
    shown = [repr(deal), repr(deal.to_dict()), repr(values)]
    assert not any(holds_key(text) for text in shown), shown


def test_the_cli_never_prints_a_key_a_2xx_answer_echoes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def app(request: Request) -> Response:
        if request.method == "GET":
            return Response(200, orjson.dumps([KEY]))
        return Response(201, orjson.dumps({"id": "2001", "note": f"your key {KEY}"}))

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COMMERCE_REPORTS_DEALS_API_KEY", KEY)
    deal = valid_deal(schedule={"startDate": "2099-01-01"})
    (tmp_path / "deal.json").write_bytes(orjson.dumps(deal))
    with serve(app) as server:
        monkeypatch.setenv("COMMERCE_REPORTS_DEALS_BASE_URL", server.base_url)
        assert main(["deals", "create", "deal.json"]) == 0
        assert main(["deals", "values", "device.language"]) == 0
    out, err = capsys.readouterr()
    assert "your key ***" in out and not holds_key(out + err)


def test_debug_logs_mask_a_key_the_answers_headers_echo(tmp_path: Path) -> None:
    """-vv showed httpcore's `receive_response_headers` line with the echoed header raw: the
    command line's handler masks every record, not only the toolkit's."""
    headers = {"X-Echo": KEY, "Set-Cookie": f"k={KEY}; Path=/"}

    def app(request: Request) -> Response:
        return Response(200, orjson.dumps({"id": "1001", "status": "paused"}), headers=headers)

    (tmp_path / "p.json").write_text('{"status": "paused"}')
    with serve(app) as server:
        env = os.environ | {
            "COMMERCE_REPORTS_DEALS_API_KEY": KEY,
            "COMMERCE_REPORTS_DEALS_BASE_URL": server.base_url,
        }
        argv = [sys.executable, "-m", "commerce_reports", "-vv", "deals", "update", "1001", "p.json"]
        done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "receive_response_headers.complete" in done.stderr  # the line that showed it
    assert not holds_key(done.stderr + done.stdout), done.stderr


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (400, {"statusCode": 400, "code": "FST_ERR_VALIDATION", "message": f"body/name bad {KEY}"}),
        (400, {"message": f"rule refused {KEY}"}),
        (401, f"invalid api key {KEY}"),
        (403, {"message": f"Insufficient scope for {KEY}"}),
        (404, {"message": f"Deal request not found for {KEY}"}),
        (429, {"message": f"Rate limit exceeded for {KEY}, retry in 900 seconds"}),
        (502, {"message": f"rejected {KEY}", "upstream": f"dsp-{KEY}"}),
    ],
)
def test_an_error_holds_no_echoed_key_in_its_attributes_or_pickle(status: int, body: object) -> None:
    content = body.encode() if isinstance(body, str) else orjson.dumps(body)
    kind = "text/plain" if isinstance(body, str) else "application/json"
    answer = httpx.Response(status, content=content, headers={"content-type": kind})
    with client_of(lambda r: answer) as c, pytest.raises(DealError) as caught:
        c.update("1001", {"status": "paused"})
    error = caught.value
    held = [repr(vars(error)), repr(error), str(error)]
    assert not any(holds_key(text) for text in held), held
    assert KEY[:12].encode() not in pickle.dumps(error)
    assert type(pickle.loads(pickle.dumps(error))) is type(error)


def test_a_pickled_key_is_masked_in_the_process_that_loads_it() -> None:
    """A Secret pickles as its key (a channel its sender chose), and unpickling registers it for
    masking there too: without __init__ the other process would show it."""
    code = (
        "import pickle, sys; from commerce_reports.redaction import redact; "
        "secret = pickle.loads(sys.stdin.buffer.read()); print(redact('echo ' + secret.reveal()))"
    )
    pickled = pickle.dumps(Secret("pickled-key-0000000000000001"))
    done = subprocess.run([sys.executable, "-c", code], input=pickled, capture_output=True, timeout=60)
    assert done.stdout.decode().strip() == "echo ***", done.stderr
