"""The lake, storage only: Parquet partitions, the manifest, the locks, and repairs of damage.

    from commerce_reports.lake import verify
    print(verify("data").summary())       # hashes and readability of every partition

Planning and running a sync (which turns partitions into requests) lives in `commerce_reports.syncing`.
"""

from .locks import site_lock, writing_sites
from .manifest import Entry, Manifest
from .repair import Repair, VerifyReport, load_or_rebuild, quarantine, rebuild, reconcile, verify
from .store import WrittenPartition, write_partition

__all__ = [
    "Entry",
    "Manifest",
    "Repair",
    "VerifyReport",
    "WrittenPartition",
    "load_or_rebuild",
    "quarantine",
    "rebuild",
    "reconcile",
    "site_lock",
    "verify",
    "write_partition",
    "writing_sites",
]
