"""The built-in sandbox's sites, removed from a lake that a service's sites are synced into.

With no key configured, every command runs against the built-in sandbox: `demo`, or a first
`sync`, fills the project's lake with its synthetic sites (`alpha`, `beta`). Once a key is set, the
sites of the service are synced into the same lake, and every view, total, alert, report and the
DuckDB catalog would add the sandbox's invented figures to the real ones. So the end of a sync that
stored a service's site removes the sandbox's from the lake (their partitions, rollups and
records), saying so: each site's manifest records where its partitions came from. `demo` makes
them again, in a folder of its own once sites are configured.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path

from ..contract import lake_sites
from ..errors import LakeError
from ..files import remove_folder
from ..lake.locks import writing_sites
from ..lake.manifest import Manifest
from .state import site_places

__all__ = ["drop_sandbox_sites"]

log = logging.getLogger(__name__)


def drop_sandbox_sites(data_dir: Path, synced: Iterable[str]) -> list[str]:
    """Remove from the lake in `data_dir` the built-in sandbox's sites, when one of the `synced`
    sites came from a service at an address; return the sites removed (sorted)."""
    manifests = {}
    for site in lake_sites(data_dir):
        try:
            manifests[site] = Manifest.load(data_dir, site)
        except LakeError:  # a damaged manifest: where that site came from is not known; kept
            continue
    if not any(manifests[site].from_a_service for site in synced if site in manifests):
        return []
    sandbox = sorted(site for site, manifest in manifests.items() if manifest.from_embedded_sandbox)
    if not sandbox:
        return []
    with writing_sites(data_dir, sandbox):  # (no sync of theirs is running meanwhile)
        for site in sandbox:
            places = site_places(data_dir, site)
            if places.folder.exists():  # its rollups first: a lake site never lacks its records
                remove_folder(places.folder)
            remove_folder(places.lake)
    log.warning(
        "removed the built-in sandbox's site%s %s from the lake in %s: synthetic figures (from "
        "`demo`, or a sync with no key set) that every view would have added to your sites' "
        "(`commerce-reports demo` makes them again, in a folder of their own)",
        "s" if len(sandbox) > 1 else "",
        ", ".join(sandbox),
        data_dir,
    )
    return sandbox
