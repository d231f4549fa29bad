"""A server's words never drive the terminal they are shown on: control characters in a message
or a body reach standard error written out (`\\x1b`), not as themselves."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from commerce_reports.cli import main
from commerce_reports.sandbox.http import Request, Response, serve

from .conftest import valid_deal

HOSTILE = "line1\nline2\x1b[31mRED\x1b[0m\rover\x07\x9b"


@pytest.mark.parametrize(
    ("status", "body", "kind"),
    [
        (400, orjson.dumps({"message": HOSTILE}), "application/json"),
        (502, orjson.dumps({"message": HOSTILE, "upstream": HOSTILE}), "application/json"),
        (500, HOSTILE.encode(), "text/plain"),
        (401, HOSTILE.encode(), "text/plain"),
    ],
)
def test_control_characters_from_the_server_are_written_out(
    status: int,
    body: bytes,
    kind: str,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    def app(request: Request) -> Response:
        return Response(status, body, content_type=kind)

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COMMERCE_REPORTS_DEALS_API_KEY", "sbx-deals-write-0000000000000001")
    deal = valid_deal(schedule={"startDate": "2099-01-01"})
    (tmp_path / "d.json").write_bytes(orjson.dumps(deal))
    with serve(app) as server:  # (a create is never re-sent: no waits)
        assert main(["deals", "--base-url", server.base_url, "create", "d.json"]) != 0
    err = capsys.readouterr().err
    assert not any((ord(c) < 32 and c != "\n") or 127 <= ord(c) < 160 for c in err), repr(err)
    assert err.count("\n") == 1 and "\\x1b[31mRED\\x1b[0m" in err, err
