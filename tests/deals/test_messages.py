"""One test per matchable 400 message of 7.2, end to end over loopback with the local checks off
(the service judges), asserting the class, the path, the kind, the values and a single request;
and the same cases with the local checks on: the same kind, and nothing sent."""

from __future__ import annotations

from typing import Any

import pytest

from commerce_reports.deals import DealsClient
from commerce_reports.deals.errors import (
    DealBadRequestError,
    DealRuleError,
    DealRuleKind,
    DealSchemaError,
    DealValidationError,
)
from commerce_reports.deals.sandbox import RunningDealsSandbox

from .conftest import valid_deal

K = DealRuleKind
CASES: list[tuple[str, Any, type[DealBadRequestError], str, DealRuleKind, tuple[str, ...]]] = [
    # (deal id or "create", body, class, path, kind, values)
    ("create", valid_deal(commercial={"takeRate": 0.851}), DealSchemaError,
     "body/commercial/takeRate", K.TAKE_RATE, ()),
    ("create", valid_deal(schedule={"startDate": "2031-03-09"}), DealSchemaError,
     "body/schedule/startDate", K.START_DATE, ()),
    ("create", valid_deal(runOfNetwork=True), DealSchemaError,
     "body", K.RUN_OF_NETWORK_AND_TARGETING, ()),
    ("create", valid_deal(targeting=[{"device.language": ["en"]}] * 26), DealSchemaError,
     "body/targeting", K.TOO_MANY_TARGETING_GROUPS, ()),
    ("create", valid_deal(targeting=[{"audience.segmentids": ["1001", "77", "78"]}]),
     DealSchemaError, "body/targeting/0/audience.segmentids", K.UNKNOWN_SEGMENTS, ("77", "78")),
    ("create", valid_deal(targeting=[{"device.geo.country": ["US", "XX", "ZZZ"]}]),
     DealSchemaError, "body/targeting/0/device.geo.country", K.COUNTRY_NOT_AVAILABLE,
     ("XX", "ZZZ")),
    ("create", valid_deal(targeting=[{"device.deviceType": ["mobile", "fridge"]}]),
     DealSchemaError, "body/targeting/0/device.deviceType", K.DEVICE_TYPE_NOT_AVAILABLE,
     ("fridge",)),
    ("create", valid_deal(targeting=[{"publisher.id": [7, 0, 2147483648]}]), DealSchemaError,
     "body/targeting/0/publisher.id", K.PUBLISHER_ID_INVALID, ("0", "2147483648")),
    ("create", valid_deal(buyers=[{"dsp": "betadsp", "seatIds": ["b-1"]}]), DealSchemaError,
     "body/schedule/endDate", K.END_DATE_REQUIRED, ()),
    ("create", valid_deal(type="open"), DealSchemaError,
     "body/buyers/0/seatIds", K.OPEN_DEAL_SEATS, ()),
    ("1003", {"buyers": [{"dsp": "alphadsp", "seatIds": ["s-1"]}]}, DealRuleError,
     "", K.OPEN_DEAL_BUYERS, ()),
    ("1001", {"status": "deleted"}, DealSchemaError, "body/status", K.INVALID_STATUS, ()),
    # rule 5 on the deal an update would make: 1001 holds targeting
    ("1001", {"runOfNetwork": True}, DealSchemaError, "body", K.RUN_OF_NETWORK_AND_TARGETING, ()),
    # seats are checked before the open-deal rule: an open deal's seatless buyer gets this
    ("1003", {"buyers": [{"dsp": "alphadsp"}]}, DealSchemaError,
     "body/buyers/0/seatIds", K.SEATS_REQUIRED, ()),
]  # fmt: skip
IDS = [case[4].value for case in CASES]
VALUE_KINDS = (K.UNKNOWN_SEGMENTS, K.COUNTRY_NOT_AVAILABLE, K.DEVICE_TYPE_NOT_AVAILABLE)
# Only the service knows the stored deal (open or not) and which DSPs need an end date.
LOCAL_CASES = [
    case
    for case in CASES
    if case[4] not in (K.OPEN_DEAL_BUYERS, K.END_DATE_REQUIRED)
    and not (case[0] != "create" and case[4] is K.RUN_OF_NETWORK_AND_TARGETING)
]


def _send(client: DealsClient, target: str, body: Any, **options: Any) -> None:
    if target == "create":
        client.create(body, **options)
    else:
        client.update(target, body, **options)


@pytest.mark.parametrize(("target", "body", "cls", "path", "kind", "values"), CASES, ids=IDS)
def test_service_message_becomes_a_typed_failure(
    client: DealsClient,
    deals_sandbox: RunningDealsSandbox,
    target: str,
    body: Any,
    cls: type[DealBadRequestError],
    path: str,
    kind: DealRuleKind,
    values: tuple[str, ...],
) -> None:
    with pytest.raises(cls) as caught:
        _send(client, target, body, local_checks=False)
    error = caught.value
    assert type(error) is cls and error.status == 400
    assert [(f.path, f.kind, f.values) for f in error.failures] == [(path, kind, values)]
    assert len(deals_sandbox.sandbox.calls()) == 1  # a 400 is never retried


@pytest.mark.parametrize(
    ("target", "body", "cls", "path", "kind", "values"), LOCAL_CASES, ids=[c[4].value for c in LOCAL_CASES]
)
def test_local_checks_refuse_the_same_without_sending(
    client: DealsClient,
    deals_sandbox: RunningDealsSandbox,
    target: str,
    body: Any,
    cls: type[DealBadRequestError],
    path: str,
    kind: DealRuleKind,
    values: tuple[str, ...],
) -> None:
    with pytest.raises(DealValidationError) as caught:
        _send(client, target, body, check_values=kind in VALUE_KINDS)
    assert [(f.path, f.kind, f.values) for f in caught.value.failures] == [(path, kind, values)]
    assert "was not sent" in str(caught.value)
    writes = [r for r in deals_sandbox.sandbox.calls() if r.method != "GET"]
    assert writes == []  # value lists may be fetched (GET), the deal is never sent


def test_status_not_settable_names_the_blocking_dsp(
    client: DealsClient, deals_sandbox: RunningDealsSandbox
) -> None:
    with pytest.raises(DealRuleError) as caught:
        client.update("1004", {"status": "paused"})
    assert caught.value.kind is K.STATUS_NOT_SETTABLE
    assert caught.value.failures[0].detail == "gammadsp"
    assert len(deals_sandbox.sandbox.calls("PATCH")) == 1
