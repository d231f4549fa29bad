"""Every parameter rule is checked before sending, with a message that says what is allowed."""

from __future__ import annotations

import itertools
from datetime import date

import pycountry
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from commerce_reports.endpoints import ENDPOINTS, FILTERS, Filter
from commerce_reports.errors import ValidationError
from commerce_reports.params import (
    DeviceType,
    Filters,
    PartnerProduct,
    ProgramType,
    aggregate_windows,
    check_window,
    day_range,
    transaction_params,
)
from tests.declared import example, example_on_the_wire


def test_transaction_params_are_the_contract_names() -> None:
    params = transaction_params(
        update_date=date(2026, 11, 20), campaign_ids=[5, 3, 5], merchant_group_ids="9", program_type="cpa"
    )
    assert params == {
        "updateDate": "2026-11-20",
        "campaignIds": "3,5",
        "merchantGroupIds": "9",
        "programType": "CPA",
    }


@pytest.mark.parametrize(
    "kwargs, parameter, words",
    [
        ({}, "date", "at least one of"),
        ({"update_date": "2026-02-30"}, "update_date", "not a real calendar date"),
        ({"update_date": "20/11/2026"}, "update_date", "YYYY-MM-DD"),
        ({"update_date": 20261120}, "update_date", "not a date"),
        ({"update_date": "2026-11-20", "campaign_ids": [0]}, "campaign_ids", "not greater than 0"),
        ({"update_date": "2026-11-20", "campaign_ids": [-4]}, "campaign_ids", "not greater than 0"),
        ({"update_date": "2026-11-20", "campaign_ids": "1,,2"}, "campaign_ids", "not an id"),
        ({"update_date": "2026-11-20", "merchant_group_ids": ["x"]}, "merchant_group_ids", "not an id"),
        ({"update_date": "2026-11-20", "merchant_group_ids": [True]}, "merchant_group_ids", "not an id"),
        ({"update_date": "2026-11-20", "program_type": "CPM"}, "program_type", "CPA, CPC"),
    ],
)
def test_bad_transaction_parameters_name_the_parameter_and_what_is_allowed(kwargs, parameter, words) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValidationError) as caught:
        transaction_params(**kwargs)
    assert caught.value.parameter == parameter
    assert words in str(caught.value)
    assert isinstance(caught.value, ValueError)


def test_a_code_is_found_by_its_word_form_and_a_wrong_one_lists_the_codes() -> None:
    # As a filter takes them: DeviceType("Mobile") was Python's bare "not a valid DeviceType".
    assert (DeviceType("Mobile"), PartnerProduct(" in-text "), ProgramType("cpa")) == (
        DeviceType.MBL,
        PartnerProduct.TXT,
        ProgramType.CPA,
    )
    with pytest.raises(ValidationError, match=r"DeviceType: 'Phone' is not a known code; .*MBL \(Mobile\)"):
        DeviceType("Phone")
    assert DeviceType.MBL.find("B") == 1  # still a str: its own methods are str's


def test_filters_normalise_friendly_input() -> None:
    filters = Filters(
        country="gb",
        device_type="Mobile",
        partner_product="Link",
        program_type="cpc",
        cuids=["b", "a", "b"],
        campaign_ids=(2, 1),
    )
    assert filters.country == "GB" and filters.device_type is DeviceType.MBL
    assert filters.partner_product is PartnerProduct.WRA and filters.program_type is ProgramType.CPC
    assert filters.cuids == ("a", "b") and filters.campaign_ids == (1, 2)
    assert filters.to_params() == {
        "campaignIds": "1,2",
        "programType": "CPC",
        "partnerProduct": "WRA",
        "deviceType": "MBL",
        "country": "GB",
        "cuids": "a,b",
    }


@pytest.mark.parametrize("spec", FILTERS, ids=lambda spec: spec.name)
def test_every_declared_filter_reaches_the_query_under_its_name(spec: Filter) -> None:
    alone = Filters.of(**{spec.name: example(spec)})
    assert alone.to_params() == {spec.param: example_on_the_wire(spec)}
    assert alone.as_columns()[spec.name] == example_on_the_wire(spec)
    assert Filters.from_canonical(alone.canonical) == alone == Filters.from_params(alone.to_params())


def test_all_declared_filters_at_once_keep_the_declared_order() -> None:
    filters = Filters.of(**{spec.name: example(spec) for spec in FILTERS})
    assert filters.to_params() == {spec.param: example_on_the_wire(spec) for spec in FILTERS}
    assert list(filters.as_columns()) == [spec.name for spec in FILTERS]


@pytest.mark.parametrize(
    "kwargs, parameter",
    [
        ({"country": "USA"}, "country"),
        ({"country": "u1"}, "country"),
        ({"device_type": "Phone"}, "device_type"),
        ({"partner_product": "XYZ"}, "partner_product"),
        ({"cuids": ["a,b"]}, "cuids"),
        ({"link_utm_source": [""]}, "link_utm_source"),
        ({"merchant_group_ids": [0]}, "merchant_group_ids"),
    ],
)
def test_bad_filters_are_refused(kwargs, parameter) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValidationError) as caught:
        Filters(**kwargs)
    assert caught.value.parameter == parameter


def test_unknown_filter_names_are_refused_with_the_list_of_filters() -> None:
    with pytest.raises(ValidationError, match="filters are campaign_ids"):
        Filters.of(colour="red")


def test_canonical_names_round_trip_and_are_order_free() -> None:
    one = Filters(country="US", device_type="DSK")
    two = Filters.of(device_type=DeviceType.DSK, country="us")
    assert one == two and one.canonical == two.canonical == "country=US&deviceType=DSK"
    assert Filters.from_canonical(one.canonical) == one
    assert Filters().canonical == "all" and Filters.from_canonical("all") == Filters()


def test_windows_end_is_excluded_and_at_most_31_days() -> None:
    assert check_window("2026-01-01", "2026-02-01") == (date(2026, 1, 1), date(2026, 2, 1))
    with pytest.raises(ValidationError, match="spans 40 days"):
        check_window(date(2026, 1, 1), date(2026, 2, 10))
    with pytest.raises(ValidationError, match="not after start"):
        check_window(date(2026, 1, 1), date(2026, 1, 1))
    with pytest.raises(ValidationError, match="not after start"):
        check_window(date(2026, 1, 2), date(2026, 1, 1))


def test_ranges_split_into_days_months_and_widest_windows() -> None:
    assert len(day_range("2026-01-30", "2026-02-02")) == 4
    assert aggregate_windows("2026-01-15", "2026-03-02", "month") == [
        (date(2026, 1, 15), date(2026, 2, 1)),
        (date(2026, 2, 1), date(2026, 3, 1)),
        (date(2026, 3, 1), date(2026, 3, 3)),
    ]
    widest = aggregate_windows("2026-01-01", "2026-12-31")
    assert all((end - start).days <= 31 for start, end in widest)
    assert widest[0][0] == date(2026, 1, 1) and widest[-1][1] == date(2027, 1, 1)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(widest))
    assert len(aggregate_windows("2026-01-01", "2026-01-03", "day")) == 3
    with pytest.raises(ValidationError, match="end >= start"):
        day_range("2026-01-02", "2026-01-01")


def test_values_with_separators_no_longer_collide() -> None:
    odd = Filters.of(page_utm_medium=["email&pageUtmSource=google"])
    pair = Filters.of(page_utm_source=["google"], page_utm_medium=["email"])
    assert odd.canonical != pair.canonical
    assert Filters.from_canonical(odd.canonical) == odd and Filters.from_canonical(pair.canonical) == pair
    assert Filters.from_canonical(odd.canonical).to_params() == {
        "pageUtmMedium": "email&pageUtmSource=google"
    }


_VALUE = st.text(min_size=1, max_size=40).filter(lambda v: "," not in v and v.strip() != "")
_LISTS = {spec.name: st.lists(_VALUE, max_size=3) for spec in FILTERS if spec.kind == "strings"}


@given(
    lists=st.fixed_dictionaries({}, optional=_LISTS),
    ids=st.lists(st.integers(1, 2**31 - 1), max_size=3),
    device=st.none() | st.sampled_from(list(DeviceType)),
    country=st.none() | st.sampled_from(sorted(c.alpha_2 for c in pycountry.countries)).map(str.lower),
)
@settings(max_examples=300, deadline=None)
def test_any_filter_set_round_trips_through_its_canonical_name(
    lists: dict[str, list[str]], ids: list[int], device: DeviceType | None, country: str | None
) -> None:
    filters = Filters.of(campaign_ids=ids, device_type=device, country=country, **lists)
    assert Filters.from_canonical(filters.canonical) == filters
    assert Filters.from_params(filters.to_params()) == filters


@pytest.mark.parametrize(
    "kwargs, parameter",
    [
        ({"merchant_group_ids": 1.5}, "merchant_group_ids"),
        ({"campaign_ids": object()}, "campaign_ids"),
        ({"campaign_ids": b"12"}, "campaign_ids"),
        ({"campaign_ids": {"1": 1}}, "campaign_ids"),
        ({"campaign_ids": [2.0]}, "campaign_ids"),
        ({"cuids": 7}, "cuids"),
        ({"cuids": [None]}, "cuids"),
        ({"sub_ids": "\ud800"}, "sub_ids"),
        ({"country": 44}, "country"),
        ({"program_type": ["CPA"]}, "program_type"),
    ],
)
def test_values_of_the_wrong_type_are_validation_errors(kwargs: dict[str, object], parameter: str) -> None:
    with pytest.raises(ValidationError) as caught:
        Filters.of(**kwargs)
    assert caught.value.parameter == parameter
    with pytest.raises(ValidationError):
        transaction_params(update_date="2026-11-20", merchant_group_ids=1.5)


@pytest.mark.parametrize("code", ["XX", "UK", "QQ"])
def test_a_country_that_iso_3166_does_not_assign_is_refused(code: str) -> None:
    with pytest.raises(ValidationError, match="not an ISO 3166 country"):
        Filters(country=code)
    assert Filters(country="gb").country == "GB"


@pytest.mark.parametrize("spec", FILTERS, ids=lambda spec: spec.name)
def test_a_transactions_request_takes_only_the_declared_transactions_filters(spec: Filter) -> None:
    kwargs = {spec.name: example(spec)}
    if spec in ENDPOINTS["transactions"].filters:
        assert transaction_params(update_date="2026-11-20", **kwargs) == {
            "updateDate": "2026-11-20",
            spec.param: example_on_the_wire(spec),
        }
    else:
        with pytest.raises(ValidationError, match=f"{spec.name}: is not a filter of transactions"):
            transaction_params(update_date="2026-11-20", **kwargs)


def test_a_datetime_with_a_time_zone_is_its_day_in_utc_the_service_s() -> None:
    """The same instant as the toolkit's today is today, whatever zone names it."""
    from datetime import UTC, date, datetime
    from zoneinfo import ZoneInfo

    from commerce_reports.params import as_date

    instant = datetime(2026, 11, 29, 12, tzinfo=UTC)
    assert as_date(instant.astimezone(ZoneInfo("Pacific/Kiritimati"))) == date(2026, 11, 29)  # 02:00 the 30th
    assert as_date(datetime(2026, 11, 20, 21, tzinfo=ZoneInfo("America/New_York"))) == date(2026, 11, 21)
    assert as_date(datetime(2026, 11, 20, 21)) == date(2026, 11, 20)  # naive: the day it names


def test_a_datetime_that_holds_no_day_and_a_clock_that_gives_no_datetime_are_refused() -> None:
    pd = pytest.importorskip("pandas")

    import commerce_reports as cr
    from commerce_reports.params import as_date

    with pytest.raises(cr.ValidationError, match="start: NaT is no day"):
        as_date(pd.NaT, "start")  # a datetime to isinstance: it failed later, comparing with a date
    with pytest.raises(cr.ValidationError, match="now: returned '2026-11-01', not a datetime"):
        cr.plan_sync(options=cr.SyncOptions(now=lambda: "2026-11-01"))  # type: ignore[arg-type,return-value]
