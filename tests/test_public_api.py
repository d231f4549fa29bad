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
            "NotAPartition",
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


def test_no_public_name_is_also_a_submodule_of_its_package() -> None:
    """Importing a submodule sets it as its package's attribute: a function of the same name, served
    lazily, then becomes the module for every later caller (`cr.configuration` and
    `charts.compare` once did). `cr.export` is the one module made callable on purpose."""
    import importlib
    import pkgutil

    clashes = []
    for found in pkgutil.walk_packages(commerce_reports.__path__, "commerce_reports."):
        if not found.ispkg or found.name.startswith("commerce_reports.serve"):
            continue  # the served dashboard needs its extra
        package = importlib.import_module(found.name)
        modules = {m.name for m in pkgutil.iter_modules(package.__path__)}
        clashes += [f"{found.name}.{name}" for name in set(getattr(package, "__all__", ())) & modules]
    root = {m.name for m in pkgutil.iter_modules(commerce_reports.__path__)}
    clashes += [f"commerce_reports.{n}" for n in set(commerce_reports.__all__) & root if n != "export"]
    assert clashes == []
    assert callable(commerce_reports.export)
