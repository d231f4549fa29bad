"""commerce-reports: affiliate commerce reports, local, current, correct and fast to look at.

import commerce_reports as cr
cr.sync()                                   # the lake up to date (sandbox when no key is set)
con = cr.connect()                          # DuckDB with the views
con.sql("SELECT * FROM network_performance").pl()
"""

__version__ = "0.1.0"

from .api import (
    SyncOptions,
    invalidate,
    load_merchandise,
    load_networks,
    load_transactions,
    plan_sync,
    status,
    sync,
)
from .client import ReportsClient, RetryPolicy
from .db import connect, write_catalog
from .params import DeviceType, Filters, PartnerProduct, ProgramType

__all__ = [
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
