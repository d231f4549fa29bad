"""The lake, storage only: Parquet partitions, the manifest, the locks, and repairs of damage.

    from commerce_reports.lake import verify
    print(verify("data").summary())       # hashes and readability of every partition

Planning and running a sync (which turns partitions into requests) lives in `commerce_reports.syncing`.
The store (and pyarrow), the repairs and the checks by content load on first use of their names
(PEP 562): reading manifests (`load_or_rebuild`) stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names
from .horizon import Touched, WindowState, revisable_until
from .loading import load_or_rebuild
from .locks import site_lock, writing_sites
from .manifest import Entry, Manifest, store_partition

if TYPE_CHECKING:
    from .checks import VerifyReport, VerifyUnfinished, verify
    from .failures import FailureRecord, load_failures, record_failures
    from .repair import Finality, Repair, quarantine, rebuild, reconcile
    from .store import WrittenPartition, write_partition

__all__ = [
    "Entry",
    "FailureRecord",
    "Finality",
    "Manifest",
    "Repair",
    "Touched",
    "VerifyReport",
    "VerifyUnfinished",
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
_REPAIR = {name: "repair" for name in ("Finality", "Repair", "quarantine", "rebuild", "reconcile")}
_CHECKS = {"VerifyReport": "checks", "VerifyUnfinished": "checks", "verify": "checks"}
__getattr__, __dir__ = lazy_names(__name__, {**_STORE, **_FAILURES, **_REPAIR, **_CHECKS}, __all__)
