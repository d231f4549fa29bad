"""The public API is pinned: removing or renaming a name here is a breaking change."""

import commerce_reports


def test_the_package_root_exports_exactly_the_public_api() -> None:
    assert sorted(commerce_reports.__all__) == sorted(
        [
            "DeviceType",
            "Filters",
            "PartnerProduct",
            "ProgramType",
            "ReportsClient",
            "RetryPolicy",
            "SyncOptions",
            "__version__",
            "connect",
            "invalidate",
            "load_merchandise",
            "load_networks",
            "load_transactions",
            "plan_sync",
            "status",
            "sync",
            "write_catalog",
        ]
    )
    for name in commerce_reports.__all__:
        assert getattr(commerce_reports, name) is not None


def test_every_public_function_has_a_docstring() -> None:
    for name in commerce_reports.__all__:
        obj = getattr(commerce_reports, name)
        if callable(obj):
            assert (obj.__doc__ or "").strip(), name
