"""Local checks and models, in process: boundaries, order, warnings, unknown fields kept."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from commerce_reports.deals import (
    Deal,
    check_create,
    check_targeting_values,
    check_update,
)
from commerce_reports.deals.errors import (
    DealRuleKind,
    DealValidationError,
)
from commerce_reports.deals.messages import split_validation_message

from .conftest import TODAY, valid_deal

K = DealRuleKind


def kinds(deal: Mapping[str, object], *, update: bool = False) -> list[DealRuleKind | None]:
    check = check_update if update else check_create
    return [f.kind for f in check(Deal.from_dict(deal), TODAY).failures]


@pytest.mark.parametrize("rate", [0, 0.85, 0.5])
def test_take_rate_bounds_are_inclusive(rate: float) -> None:
    assert kinds(valid_deal(commercial={"takeRate": rate})) == []


@pytest.mark.parametrize("rate", [-0.01, 0.8500001, "0.2", True])
def test_take_rate_outside_or_not_a_number(rate: object) -> None:
    assert kinds(valid_deal(commercial={"takeRate": rate})) == [K.TAKE_RATE]


def test_start_date_today_passes_yesterday_fails() -> None:
    assert kinds(valid_deal(schedule={"startDate": TODAY.isoformat()})) == []
    assert kinds(valid_deal(schedule={"startDate": "2031-03-09"})) == [K.START_DATE]


def test_twenty_five_groups_pass_twenty_six_fail() -> None:
    group = {"device.language": ["en"]}
    assert kinds(valid_deal(targeting=[group] * 25)) == []
    assert kinds(valid_deal(targeting=[group] * 26)) == [K.TOO_MANY_TARGETING_GROUPS]


@pytest.mark.parametrize("good", [1, 2147483647, 12.0])
def test_publisher_id_whole_numbers_in_range(good: object) -> None:
    assert kinds(valid_deal(targeting=[{"publisher.id": [good]}])) == []


@pytest.mark.parametrize("bad", [0, -3, 2147483648, 1.5, "12", True])
def test_publisher_id_refused(bad: object) -> None:
    assert kinds(valid_deal(targeting=[{"publisher.id": [bad]}])) == [K.PUBLISHER_ID_INVALID]


def test_status_must_be_one_of_the_four() -> None:
    for status in ("active", "paused", "archived", "scheduled"):
        assert kinds({"status": status}, update=True) == []
    assert kinds({"status": "Active"}, update=True) == [K.INVALID_STATUS]


def test_open_deal_create_carries_no_seats() -> None:
    assert kinds(valid_deal(type="open", buyers=[{"dsp": "alphadsp"}])) == []
    assert kinds(valid_deal(type="open")) == [K.OPEN_DEAL_SEATS]


def test_update_seat_rule_comes_before_the_open_deal_rule() -> None:
    changes = {"type": "open", "buyers": [{"dsp": "a"}, {"dsp": "b", "seatIds": ["s"]}]}
    assert kinds(changes, update=True) == [K.SEATS_REQUIRED]
    assert kinds({"buyers": [{"dsp": "a", "seatIds": []}]}, update=True) == [K.SEATS_REQUIRED]
    assert kinds({"type": "open", "buyers": [{"dsp": "a", "seatIds": ["s"]}]}, update=True) == [
        K.OPEN_DEAL_SEATS
    ]


def test_malformed_ad_size_is_a_warning_not_a_failure() -> None:
    deal = valid_deal(targeting=[{"adUnit.size": ["300x250", "300X250", "300 x 250"]}])
    report = check_create(Deal.from_dict(deal), TODAY)
    assert report.failures == []
    assert len(report.warnings) == 2 and "'300X250'" in report.warnings[0]
    assert "never match traffic" in report.warnings[0]


def test_values_accept_two_letter_countries_and_name_the_rest() -> None:
    deal = Deal.from_dict(valid_deal(targeting=[{"device.geo.country": ["us", "USA", "FRA", "XYZ"]}]))
    failures = check_targeting_values(deal, lambda attribute: ("USA", "FRA"))
    assert [(f.kind, f.values) for f in failures] == [(K.COUNTRY_NOT_AVAILABLE, ("XYZ",))]


def test_values_are_judged_as_the_service_judges_them() -> None:
    """`--check-values` passed `ZZ` (no country: the service refuses it, there is nothing to
    convert) and `EN` for the language `en` (the service matches its list letter for letter); a
    country stands for its 3-letter code in either case, as the deal sandbox takes it."""
    lists = {"device.geo.country": ("USA", "GBR"), "device.language": ("en", "fr")}
    deal = Deal.from_dict(
        valid_deal(
            targeting=[
                {"device.geo.country": ["ZZ", "gb", "usa", "FR"]},
                {"device.language": ["EN", "en", "fr "]},
            ]
        )
    )
    failures = check_targeting_values(deal, lambda attribute: lists[attribute])
    assert [(f.kind, f.values) for f in failures] == [
        (K.COUNTRY_NOT_AVAILABLE, ("ZZ", "FR")),
        (K.TARGETING_VALUE_NOT_AVAILABLE, ("EN", "fr")),
    ]


def test_validation_error_says_what_where_and_what_to_do() -> None:
    report = check_create(Deal.from_dict(valid_deal(commercial={"takeRate": 2})), TODAY)
    error = DealValidationError("create deal request", report.failures)
    assert isinstance(error, ValueError) and not error.retriable
    assert error.parameter == "body/commercial/takeRate"
    assert "0 ≤ x ≤ 0.85" in str(error) and "was not sent" in str(error)


def test_comma_joined_message_splits_only_before_a_path() -> None:
    message = (
        "body/targeting/0/audience.segmentids unknown audience segment id(s): 7, 8, "
        "body/commercial/takeRate takeRate is a decimal fraction; expected 0 ≤ x ≤ 0.85, "
        "params/id Invalid deal request ID"
    )
    failures = split_validation_message(message)
    assert [(f.path, f.kind, f.values) for f in failures] == [
        ("body/targeting/0/audience.segmentids", K.UNKNOWN_SEGMENTS, ("7", "8")),
        ("body/commercial/takeRate", K.TAKE_RATE, ()),
        ("params/id", K.INVALID_DEAL_ID, ()),
    ]
    assert split_validation_message("body/x something new")[0].kind is None
    legacy = split_validation_message("body/targeting/0/publisher.id the service id(s) not valid: 0")
    assert legacy[0].kind is K.PUBLISHER_ID_INVALID


def test_models_keep_unknown_fields_as_they_came() -> None:
    data = {
        "id": 12,
        "type": "private",
        "statusSettable": False,
        "buyers": [{"dsp": "alphadsp", "seatIds": ["s"], "weight": 3}],
        "commercial": {"takeRate": 0.1, "currency": "EUR"},
        "schedule": {"startDate": "2031-03-10", "endDate": "2031-04-01", "tz": "UTC"},
        "targeting": [{"device.geo.country": ["USA"], "custom.thing": ["x"]}],
        "name": "n",
        "labels": {"a": 1},
    }
    deal = Deal.from_dict(data)
    assert deal.id == "12" and deal.status_settable is False and deal.buyers
    assert deal.buyers[0].extra == {"weight": 3} and deal.schedule and deal.schedule.end
    assert deal.to_dict() == data | {"id": "12"}
    assert Deal.from_dict({"status": "paused"}).to_dict() == {"status": "paused"}


def test_model_refuses_a_part_that_is_not_an_object() -> None:
    with pytest.raises(DealValidationError, match="body/commercial"):
        Deal.from_dict(valid_deal(commercial=0.2))


def test_a_refusal_names_each_path_once() -> None:
    # `error: body/commercial/takeRate: body/commercial/takeRate takeRate is...` said the path twice
    report = check_create(Deal.from_dict(valid_deal(commercial={"takeRate": 2})), TODAY)
    one = DealValidationError("create deal request", report.failures)
    assert str(one).count("body/commercial/takeRate") == 1
    assert str(one).startswith("body/commercial/takeRate: takeRate is a decimal fraction")
    report = check_create(Deal.from_dict(valid_deal(commercial={"takeRate": 2}, status="x")), TODAY)
    two = DealValidationError("create deal request", report.failures)
    assert str(two).count("body/commercial/takeRate") == 1 and str(two).count("body/status") == 1
    assert two.parameter == "body/status, body/commercial/takeRate"


def test_local_checks_say_what_the_service_says() -> None:
    # an update with "seatIds": [] said "expected array, received undefined"; the service says
    # "Too small"; an ISO week date passed locally, the service refuses it as no "date"
    empty = check_update(Deal.from_dict({"buyers": [{"dsp": "alphadsp", "seatIds": []}]}), TODAY)
    assert [str(f) for f in empty.failures] == [
        "body/buyers/0/seatIds Too small: expected array to have >=1 items"
    ]
    week = check_create(Deal.from_dict(valid_deal(schedule={"startDate": "2031-W05-1"})), TODAY)
    assert [str(f) for f in week.failures] == ['body/schedule/startDate must match format "date"']
