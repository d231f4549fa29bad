"""`verify`: every partition of the lake checked by content, what was wrong repaired.

Each file's sha256 against its manifest entry's, and that it decodes as Parquet (`fast=True`
trusts a file whose stamp is unchanged since it was last hashed); a missing or damaged manifest is
rebuilt first. What fails is quarantined and its entry dropped (`repair.check_site`): the next
sync fetches it again.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..contract import check_site_name, lake_sites
from ..errors import LakeError, ValidationError
from .loading import load_or_rebuild
from .locks import writing_sites
from .repair import Repair, check_site

__all__ = ["VerifyReport", "VerifyUnfinished", "verify"]


@dataclass
class VerifyReport:
    """What `verify` checked and repaired: partitions (`checked`; `read` of them read in full,
    `read_bytes` in all: every one unless `fast`), (`rollups`) the sites whose rollup files
    differ from what their refresh wrote, rebuilt, and (`published`) what made the published lake
    the views read no longer what was checked, published again."""

    checked: int = 0
    repairs: list[Repair] = field(default_factory=list)
    rollups: list[str] = field(default_factory=list)
    published: list[str] = field(default_factory=list)
    read: int = 0
    read_bytes: int = 0
    fast: bool = False

    @property
    def quarantined(self) -> list[Repair]:
        return [r for r in self.repairs if r.action == "quarantined"]

    @property
    def ok(self) -> bool:
        """True when everything was intact (nothing had to be repaired)."""
        return not self.repairs and not self.rollups and not self.published

    def summary(self) -> str:
        how = (
            f"by content: {self.read} read ({self.read_bytes / 1e6:.1f} MB), "
            f"{self.checked - self.read} unchanged since they were last checked"
            if self.fast
            else f"by content ({self.read_bytes / 1e6:.1f} MB read)"
        )
        text = f"verified {self.checked} partitions {how}"
        if self.ok:
            return text + ": all intact"
        found = [
            f"{len(self.quarantined)} quarantined, the next sync fetches them again"
            if self.quarantined
            else "",
            f"{len(self.repairs) - len(self.quarantined)} repaired (below)"
            if len(self.repairs) > len(self.quarantined)
            else "",
            f"the rollups of {len(self.rollups)} sites rebuilt" if self.rollups else "",
            "the published lake published again" if self.published else "",
        ]
        lines = [f"{text}: {', '.join(f for f in found if f)}"]
        lines += [f"  {r}" for r in self.repairs]
        lines += [f"  rollups of {line}" for line in self.rollups]
        lines += [f"  published lake: {line}" for line in self.published]
        return "\n".join(lines)


class VerifyUnfinished(LakeError):
    """The partitions were verified (`report`), but what follows could not be done: the rollups
    brought up to date, on a full disk say. The verdict stands; the message says what was not done."""

    def __init__(self, message: str, report: VerifyReport) -> None:
        super().__init__(message)
        self.report = report


def verify(data_dir: str | Path, sites: Iterable[str] | None = None, *, fast: bool = False) -> VerifyReport:
    """Check every partition of the lake (or of `sites`) by content: its sha256 against the
    manifest's, and that it reads as Parquet (page checksums included). A partition that fails is
    quarantined and its entry dropped, so the next sync fetches it again. `fast=True` trusts a
    file whose stamp is unchanged since it was last hashed and reads only the others. Waits for a
    running sync."""
    if not isinstance(fast, bool):
        raise ValidationError("fast", f"{fast!r} is not a bool", "give True or False")
    folder = Path(data_dir)
    names = lake_sites(folder) if sites is None else [check_site_name(s) for s in _listed(sites)]
    report = VerifyReport(fast=fast)
    for site in names:
        with writing_sites(folder, [site]):
            _, repairs = load_or_rebuild(folder, site)
            report.repairs += repairs
            checked = check_site(folder, site, None, read_all=not fast)
            report.checked += checked.checked
            report.read += checked.read
            report.read_bytes += checked.read_bytes
            report.repairs += checked.repairs
    return report


def _listed(sites: Iterable[str]) -> list[str]:
    if isinstance(sites, str):
        return [sites]
    if not isinstance(sites, Iterable):
        raise ValidationError("sites", f"{sites!r} is not a list of site names", "give names like ['alpha']")
    return list(sites)
