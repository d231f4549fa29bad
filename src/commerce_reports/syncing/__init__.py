"""Syncs: which partitions a lake lacks or must refresh (plan), and fetching them (run).

Above the lake (storage) and the client (requests): the one place partitions become requests.
Planning is plain Python over manifests and dates; running a plan (the client, pyarrow) loads on
first use of its names (PEP 562), so `status` and `sync --plan` start at once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names
from .costs import CostBook, Expected, service_of
from .plan import (
    DEFAULT_MERCHANDISE_SLICES,
    DEFAULT_NETWORK_SLICES,
    PlannedRequest,
    SettlePolicy,
    SyncPlan,
    aggregate_keys,
    plan_partitions,
    read_manifests,
    transaction_keys,
)

if TYPE_CHECKING:
    from .result import Failure, SyncResult
    from .run import Interrupted, OpenSites, StoppableClock, fetch_partition, open_sites, run_plan

_RUN = {"Interrupted", "OpenSites", "StoppableClock", "fetch_partition", "open_sites", "run_plan"}

__all__ = [
    "DEFAULT_MERCHANDISE_SLICES",
    "DEFAULT_NETWORK_SLICES",
    "CostBook",
    "Expected",
    "Failure",
    "Interrupted",
    "OpenSites",
    "PlannedRequest",
    "SettlePolicy",
    "StoppableClock",
    "SyncPlan",
    "SyncResult",
    "aggregate_keys",
    "fetch_partition",
    "open_sites",
    "plan_partitions",
    "read_manifests",
    "run_plan",
    "service_of",
    "transaction_keys",
]


# a sync's result (and the failures it keeps) load with the sync: `status` and `sync --plan` never need them
_RESULT = {"Failure": "result", "SyncResult": "result"}
__getattr__, __dir__ = lazy_names(__name__, {**{name: "run" for name in _RUN}, **_RESULT}, __all__)
