"""What a reports sandbox serves: its sites and keys, seed, clock, pace, dialect, shape and faults."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, date, datetime

from ..endpoints import DIALECTS, Dialect
from ..errors import ValidationError
from .faults import FaultConfig
from .incidents import Incident
from .sites import DEMO_SITES, FAST_PACE, Site

__all__ = [
    "DATE_STYLES",
    "DEMO_SITES",
    "DIALECTS",
    "FAST_PACE",
    "SHAPES",
    "Incident",
    "SandboxConfig",
    "Site",
]

SHAPES = ("nested", "flat")
# How the published dialect writes transaction dates (see shapes.py); "iso" is yyyy-mm-dd.
DATE_STYLES = ("iso", "datetime", "slashes", "us", "epoch-ms", "mixed")


def _one_of(name: str, value: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ValidationError(name, f"unknown value {value!r}", f"expected one of {', '.join(allowed)}")


@dataclass(frozen=True)
class SandboxConfig:
    """Settings of a `ReportsSandbox`.

    `now` freezes the clock at that moment (a naive value is read as UTC); None follows real UTC
    time. `first_day` defaults to 400 days before the clock's date. `pace` is the minimum interval
    in seconds between two requests of one key to one endpoint (0 = no limit). `dialect` names the
    wire: parameter names and response shapes; both dialects serve the same world. `shape` (nested
    or flat transactions) belongs to the contract dialect, `date_style` (how transaction dates are
    written, for parser tests) to the published one. `incidents` change the world from a day on
    (see `sandbox.incidents`: a network's EPC halved, a device's conversion lost, ...); every
    endpoint serves the changed world.
    """

    sites: tuple[Site, ...] = DEMO_SITES
    seed: int = 0
    now: datetime | None = None
    first_day: date | None = None
    pace: float = 60.0
    shape: str = "nested"
    faults: FaultConfig = field(default_factory=FaultConfig)
    transactions_per_day: int = 400
    dialect: Dialect = "contract"
    date_style: str = "iso"
    incidents: tuple[Incident, ...] = ()

    def __post_init__(self) -> None:
        if not self.sites:
            raise ValidationError("sites", "a sandbox needs at least one site")
        names = [s.name for s in self.sites]
        keys = [s.secret_key for s in self.sites]
        if len(set(names)) != len(names) or len(set(keys)) != len(keys):
            raise ValidationError("sites", "site names and secret keys must be unique")
        if self.now is not None and self.now.tzinfo is None:
            object.__setattr__(self, "now", self.now.replace(tzinfo=UTC))
        if self.pace < 0:
            raise ValidationError("pace", f"got {self.pace}", "expected seconds >= 0")
        if self.transactions_per_day < 1:
            raise ValidationError("transactions_per_day", f"got {self.transactions_per_day}", "expected >= 1")
        _one_of("shape", self.shape, SHAPES)
        _one_of("dialect", self.dialect, DIALECTS)
        _one_of("date_style", self.date_style, DATE_STYLES)
        if self.dialect == "published" and self.shape != "nested":
            raise ValidationError(
                "shape", "the published dialect has one shape, its own", "leave shape unset"
            )
        if self.dialect == "contract" and self.date_style != "iso":
            raise ValidationError(
                "date_style", "the contract dialect writes yyyy-mm-dd only", "use dialect='published'"
            )
        object.__setattr__(self, "incidents", tuple(self.incidents))
        self._check_incidents(names)

    def _check_incidents(self, names: list[str]) -> None:
        """Each incident is one, of a site served, in the world of the seed."""
        from .catalog import NETWORKS  # the world's names: loaded when a sandbox is configured

        for incident in self.incidents:
            if not isinstance(incident, Incident):
                raise ValidationError(
                    "incidents", f"{incident!r} is not an Incident", "give Incident.parse(...)"
                )
            if incident.site is not None and incident.site not in names:
                raise ValidationError(
                    "incident", f"site {incident.site!r} is not served", f"use {', '.join(names)}"
                )
            if incident.network is not None and incident.network not in NETWORKS:
                raise ValidationError(
                    "incident",
                    f"network {incident.network!r} is not in the sandbox",
                    f"use one of {', '.join(NETWORKS)}",
                )
            _check_in_world(incident, self.seed, names)


def _check_in_world(incident: Incident, seed: int, sites: list[str]) -> None:
    """An incident's merchant and link are in the world of `seed` (a link on one of its `sites`)."""
    from .catalog import build_catalog, busiest

    if incident.merchant is None and incident.link is None:
        return
    catalogs = [build_catalog(seed, site) for site in sites if incident.site in (None, site)]
    frame = catalogs[0].link_frame
    if incident.merchant is not None and incident.merchant not in {
        *frame["merchant_group_name"],
        *map(str, frame["merchant_group_id"]),
    }:
        raise ValidationError(
            "incident",
            f"merchant {incident.merchant!r} is not in the sandbox (seed {seed})",
            f"give a merchant's name or group id, e.g. {busiest(catalogs[0], 'merchant_group_name')[0]!r}",
        )
    if incident.link is not None and not any(incident.link in c.link_frame["link_url"] for c in catalogs):
        raise ValidationError(
            "incident",
            f"link {incident.link!r} is not a link of {' or '.join(c.site for c in catalogs)} (seed {seed})",
            f"give a link's URL, e.g. {busiest(catalogs[0], 'link_url')[0]!r}",
        )
