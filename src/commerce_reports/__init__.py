"""commerce-reports: affiliate commerce reports, local, current, correct and fast to look at.

    import commerce_reports as cr
    cr.sync()                                   # the lake up to date (sandbox when no key is set)
    con = cr.connect()                          # DuckDB with the views
    con.sql("SELECT * FROM network_performance").pl()
    cr.compare(con, site="alpha", start="2026-11-16", end="2026-11-22", by="network")  # and the week before
    cr.export(con.sql("SELECT * FROM site_performance"), "sites.xlsx")  # .xlsx .csv .json .jsonl .parquet
    print(cr.alerts().describe())               # what changed that matters, why, and the lake's health
    cr.explain(con, site="alpha", start="2026-11-16", end="2026-11-22")   # what moved revenue

Every exception the toolkit raises is here too (`cr.CommerceReportsError`, `cr.ValidationError`,
...): the tree is drawn in `commerce_reports.errors`.

Names load on first use (PEP 562), so `import commerce_reports` costs almost nothing: polars,
DuckDB and the HTTP stack are imported by the function that needs them.
"""

from __future__ import annotations

from ._lazy import lazy_names
from ._version import __version__

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without loading typing: `--help` starts at once
if TYPE_CHECKING:
    from typing import Any

    from .alerting import alerts, explain
    from .api import (
        SyncOptions,
        invalidate,
        lake_location,
        load_merchandise,
        load_networks,
        load_transactions,
        open_client,
        open_deals_client,
        plan_sync,
        site_names,
        status,
        sync,
    )
    from .charts.comparison import compare
    from .checkup import check
    from .client import ReportsClient
    from .config_list import configuration
    from .db import connect, write_catalog
    from .errors import (
        AuthenticationError,
        BadRequestError,
        CommerceReportsError,
        ConfigurationError,
        DeliveryError,
        ExportError,
        Fatal,
        ForbiddenError,
        LakeError,
        MalformedResponseError,
        NotAPartition,
        NotFoundError,
        RateLimitedError,
        ResponseTooLargeError,
        Retriable,
        ServerError,
        ServiceError,
        StatusError,
        TransportError,
        UnreachableError,
        ValidationError,
    )
    from .export.formats import export_table as export
    from .http import RetryPolicy
    from .params import DeviceType, Filters, PartnerProduct, ProgramType

__all__ = [
    "AuthenticationError",
    "BadRequestError",
    "CommerceReportsError",
    "ConfigurationError",
    "DeliveryError",
    "DeviceType",
    "ExportError",
    "Fatal",
    "Filters",
    "ForbiddenError",
    "LakeError",
    "MalformedResponseError",
    "NotAPartition",
    "NotFoundError",
    "PartnerProduct",
    "ProgramType",
    "RateLimitedError",
    "ReportsClient",
    "ResponseTooLargeError",
    "Retriable",
    "RetryPolicy",
    "ServerError",
    "ServiceError",
    "StatusError",
    "SyncOptions",
    "TransportError",
    "UnreachableError",
    "ValidationError",
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
]

_HOMES = {
    "alerts": "alerting",
    "explain": "alerting",
    "compare": "charts.comparison",
    "configuration": "config_list",
    "SyncOptions": "api",
    "open_client": "api",
    "open_deals_client": "api",
    "invalidate": "api",
    "lake_location": "api",
    "load_merchandise": "api",
    "load_networks": "api",
    "load_transactions": "api",
    "plan_sync": "api",
    "site_names": "api",
    "status": "api",
    "sync": "api",
    "ReportsClient": "client",
    "check": "checkup",
    "RetryPolicy": "http",
    "connect": "db",
    "write_catalog": "db",
    "DeviceType": "params",
    "Filters": "params",
    "PartnerProduct": "params",
    "ProgramType": "params",
    "AuthenticationError": "errors",
    "BadRequestError": "errors",
    "CommerceReportsError": "errors",
    "ConfigurationError": "errors",
    "DeliveryError": "errors",
    "ExportError": "errors",
    "Fatal": "errors",
    "ForbiddenError": "errors",
    "LakeError": "errors",
    "MalformedResponseError": "errors",
    "NotAPartition": "errors",
    "NotFoundError": "errors",
    "RateLimitedError": "errors",
    "ResponseTooLargeError": "errors",
    "Retriable": "errors",
    "ServerError": "errors",
    "ServiceError": "errors",
    "StatusError": "errors",
    "TransportError": "errors",
    "UnreachableError": "errors",
    "ValidationError": "errors",
}


_load, __dir__ = lazy_names(__name__, _HOMES, __all__)


def __getattr__(name: str) -> Any:
    """A public name, loaded on first use. `export` is the `commerce_reports.export` package,
    which is callable: `cr.export(data, path)` writes a table (csv, json, jsonl, parquet, xlsx)."""
    if name == "export":
        import importlib

        return importlib.import_module(".export", __name__)
    return _load(name)
