"""The lake, storage only: Parquet partitions, the manifest, the locks, and repairs of damage.

    from commerce_reports.lake import verify
    print(verify("data").summary())       # hashes and readability of every partition

Planning and running a sync (which turns partitions into requests) lives in `commerce_reports.syncing`.
The store (and pyarrow) loads on first use of its names (PEP 562): reading manifests stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .failures import FailureRecord, load_failures, record_failures
from .horizon import Touched, WindowState, revisable_until
from .locks import site_lock, writing_sites
from .manifest import Entry, Manifest
from .repair import Finality, Repair, VerifyReport, load_or_rebuild, quarantine, rebuild, reconcile, verify

if TYPE_CHECKING:
    from .store import WrittenPartition, write_partition

__all__ = [
    "Entry",
    "FailureRecord",
    "Finality",
    "Manifest",
    "Repair",
    "Touched",
    "VerifyReport",
    "WindowState",
    "WrittenPartition",
    "load_failures",
    "load_or_rebuild",
    "quarantine",
    "rebuild",
    "reconcile",
    "record_failures",
    "revisable_until",
    "site_lock",
    "verify",
    "write_partition",
    "writing_sites",
]


def __getattr__(name: str) -> Any:
    if name in ("WrittenPartition", "write_partition"):
        from . import store

        return getattr(store, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
