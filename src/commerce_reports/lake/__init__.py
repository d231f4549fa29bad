"""The lake, storage only: Parquet partitions, the manifest, the locks, and repairs of damage.

    from commerce_reports.lake import verify
    print(verify("data").summary())       # hashes and readability of every partition

Planning and running a sync (which turns partitions into requests) lives in `commerce_reports.syncing`.
The store (and pyarrow) loads on first use of its names (PEP 562): reading manifests stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names
from .horizon import Touched, WindowState, revisable_until
from .locks import site_lock, writing_sites
from .manifest import Entry, Manifest, store_partition
from .repair import Finality, Repair, VerifyReport, load_or_rebuild, quarantine, rebuild, reconcile, verify

if TYPE_CHECKING:
    from .failures import FailureRecord, load_failures, record_failures
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
    "store_partition",
    "verify",
    "write_partition",
    "writing_sites",
]


_STORE = {"WrittenPartition": "store", "write_partition": "store"}
_FAILURES = {"FailureRecord": "failures", "load_failures": "failures", "record_failures": "failures"}
__getattr__, __dir__ = lazy_names(__name__, {**_STORE, **_FAILURES}, __all__)
