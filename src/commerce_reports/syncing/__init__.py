"""Syncs: which partitions a lake lacks or must refresh (plan), and fetching them (run).

Above the lake (storage) and the client (requests): the one place partitions become requests.
"""

from .plan import (
    DEFAULT_MERCHANDISE_SLICES,
    DEFAULT_NETWORK_SLICES,
    PlannedRequest,
    SettlePolicy,
    SyncPlan,
    aggregate_keys,
    plan_partitions,
    transaction_keys,
)
from .result import Failure, SyncResult
from .run import Interrupted, OpenSites, StoppableClock, fetch_partition, open_sites, read_manifests, run_plan

__all__ = [
    "DEFAULT_MERCHANDISE_SLICES",
    "DEFAULT_NETWORK_SLICES",
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
    "transaction_keys",
]
