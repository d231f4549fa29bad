"""A site's manifest as readers and the writer load it: a damaged one, or a missing one while
partition files exist, is rebuilt from the files at once (no refetch of a whole lake).

The rebuild (`repair.py`, with the checks by content and the store) loads only when a manifest
must be rebuilt: reading a lake as it should be (`status`, `sync --plan`) stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import LazyLogger
from ..errors import LakeError
from .manifest import ForeignManifest, Manifest, part_files

if TYPE_CHECKING:
    from pathlib import Path

    from .repair import Finality, Repair

__all__ = ["load_or_rebuild"]

log = LazyLogger(f"{__package__}.repair")  # a damaged manifest is a repair's line, named as before


def load_or_rebuild(
    data_dir: Path, site: str, policy: Finality | None = None
) -> tuple[Manifest, list[Repair]]:
    """A site's manifest; a damaged one, or a missing one while partition files exist, is rebuilt
    from the files at once (and the returned repairs say so). Another site's manifest (a folder
    renamed) is no damage to mend here: its ForeignManifest goes to the caller."""
    try:
        manifest = Manifest.load(data_dir, site)
    except ForeignManifest:
        raise
    except LakeError as error:
        log.warning("%s", error)
        why = "was damaged"
    else:
        if manifest.exists() or not part_files(data_dir, site):
            return manifest, []
        why = "was missing"
    from .repair import rebuild

    return rebuild(data_dir, site, policy, why)
