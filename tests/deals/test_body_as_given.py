"""A body is sent as given or refused, never changed unsaid: nulls, whole numbers past 64 bits,
and values JSON has not (a set, a Decimal, a key that is not a string) are refused before anything
is sent, naming their path."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest

from commerce_reports.cli import main
from commerce_reports.deals import DealsClient
from commerce_reports.deals.errors import DealValidationError

from .conftest import valid_deal

KEY = "sbx-deals-write-0000000000000001"


def _refused(body: dict[str, Any], *, update: bool = False) -> str:
    sent: list[httpx.Request] = []
    transport = httpx.MockTransport(lambda r: sent.append(r) or httpx.Response(200, json={"id": "1"}))
    with DealsClient(KEY, "http://deals.test", transport=transport) as c:
        with pytest.raises(DealValidationError) as caught:
            c.update("1", body) if update else c.create(body, local_checks=False)
    assert sent == []
    return str(caught.value)


@pytest.mark.parametrize(
    ("body", "path", "said"),
    [
        ({"status": None}, "body/status", "is null"),  # was sent as {}
        ({"schedule": {"endDate": None}}, "body/schedule/endDate", "is null"),  # as {"schedule": {}}
        ({"x": [12345678901234567890123]}, "body/x/0", "past 64 bits"),
        ({"commercial": {"takeRate": Decimal("0.2")}}, "body/commercial/takeRate", "is a Decimal"),
        ({"x": {1, 2}}, "body/x", "is a set"),  # a raw TypeError
        ({"x": {1: "a"}}, "body/x", "keys are strings"),  # a raw TypeError
    ],
)
def test_what_json_cannot_carry_as_given_is_refused_naming_its_path(
    body: dict[str, Any], path: str, said: str
) -> None:
    for update in (False, True):
        message = _refused(body, update=update)
        assert message.startswith(f"{path}: ") and said in message


def test_the_command_line_keeps_a_long_id_exact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # "seatIds": [12345678901234567890123] was read as a float and sent as 1.2345678901234568e+22
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COMMERCE_REPORTS_DEALS_API_KEY", KEY)
    monkeypatch.setenv("COMMERCE_REPORTS_DEALS_BASE_URL", "http://127.0.0.1:9")  # never reached
    deal = valid_deal(schedule={"startDate": "2099-01-01"})
    text = str(deal).replace("'", '"').replace('["seat-1"]', "[12345678901234567890123]")
    (tmp_path / "d.json").write_text(text)
    assert main(["deals", "create", str(tmp_path / "d.json")]) == 5
    err = capsys.readouterr().err
    assert "body/buyers/0/seatIds/0: 12345678901234567890123 is past 64 bits" in err
