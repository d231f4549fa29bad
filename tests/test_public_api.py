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
            "alerts",
            "check",
            "compare",
            "configuration",
            "connect",
            "explain",
            "export",
            "invalidate",
            "lake_location",
            "load_merchandise",
            "load_networks",
            "load_transactions",
            "open_client",
            "open_deals_client",
            "plan_sync",
            "site_names",
            "status",
            "sync",
            "write_catalog",
            # the error tree, as httpx re-exports its own
            "AuthenticationError",
            "BadRequestError",
            "CommerceReportsError",
            "ConfigurationError",
            "DeliveryError",
            "ExportError",
            "Fatal",
            "ForbiddenError",
            "LakeError",
            "MalformedResponseError",
            "NotFoundError",
            "RateLimitedError",
            "ResponseTooLargeError",
            "Retriable",
            "ServerError",
            "ServiceError",
            "StatusError",
            "TransportError",
            "UnreachableError",
            "ValidationError",
        ]
    )
    for name in commerce_reports.__all__:
        assert getattr(commerce_reports, name) is not None


def test_every_public_function_has_a_docstring() -> None:
    for name in commerce_reports.__all__:
        obj = getattr(commerce_reports, name)
        if callable(obj):
            assert (obj.__doc__ or "").strip(), name


def test_the_flat_functions_are_functions_after_every_module_loaded() -> None:
    """A submodule named like a flat function would shadow it once imported (`cr.sync` the package)."""
    import importlib
    import pkgutil
    import sys

    import commerce_reports as cr

    for module in pkgutil.walk_packages(cr.__path__, "commerce_reports."):
        if ".spark" not in module.name and not module.name.endswith("__main__"):
            importlib.import_module(module.name)
    for name in cr.__all__:
        value = getattr(cr, name)
        assert callable(value) or not isinstance(value, type(cr)), f"cr.{name} is a module"
    assert cr.export is sys.modules["commerce_reports.export"]  # the package, callable: cr.export(data, path)


def test_the_error_tree_is_at_the_root() -> None:
    import commerce_reports as cr
    from commerce_reports import errors

    assert set(errors.__all__) <= set(cr.__all__)
    for name in errors.__all__:
        assert getattr(cr, name) is getattr(errors, name)
    assert issubclass(cr.ValidationError, cr.CommerceReportsError)
