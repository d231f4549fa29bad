"""Where each report partition lives: a hive layout, site first.

    <data_dir>/lake/site=<site>/manifest.json
    <data_dir>/lake/site=<site>/transactions/by=<updateDate|commissionDate|clickDate>/day=YYYY-MM-DD/part.parquet
    <data_dir>/lake/site=<site>/networks/slice=<filters>/grain=<day|month>/start=YYYY-MM-DD/part.parquet
    <data_dir>/lake/site=<site>/merchandise/slice=<filters>/grain=<day|month>/start=YYYY-MM-DD/part.parquet

`<filters>` is the canonical filter set (`all`, or e.g. `country=US&deviceType=MBL`) percent-encoded;
DuckDB and polars decode it back. A month partition always holds a whole calendar month.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Literal
from urllib.parse import quote, unquote

from ..errors import LakeError, ValidationError
from ..params import DATE_FIELDS, DateField, Filters, Grain

__all__ = [
    "AGGREGATES",
    "DATASETS",
    "PART_FILE",
    "PartitionKey",
    "check_site_name",
    "lake_root",
    "site_root",
]

Dataset = Literal["transactions", "networks", "merchandise"]
DATASETS: tuple[Dataset, ...] = ("transactions", "networks", "merchandise")
AGGREGATES: tuple[Dataset, ...] = ("networks", "merchandise")
PART_FILE = "part.parquet"
_SITE_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")


def check_site_name(name: str) -> str:
    if not isinstance(name, str) or not _SITE_NAME.fullmatch(name):
        raise ValidationError(
            "site", f"{name!r} is not a usable site name", "use lower-case letters, digits, '-' or '_'"
        )
    return name


def lake_root(data_dir: Path) -> Path:
    return Path(data_dir) / "lake"


def site_root(data_dir: Path, site: str) -> Path:
    return lake_root(data_dir) / f"site={check_site_name(site)}"


def _next_month(day: date) -> date:
    return (day.replace(day=28) + timedelta(days=4)).replace(day=1)


@dataclass(frozen=True, order=True)
class PartitionKey:
    """One stored request: a transactions day (by one date field) or an aggregate window of a slice."""

    dataset: Dataset
    start: date
    by: DateField | None = None  # transactions only
    slice: str | None = None  # aggregates only: Filters.canonical
    grain: Grain | None = None  # aggregates only

    def __post_init__(self) -> None:
        if self.dataset == "transactions":
            if self.by not in DATE_FIELDS or self.slice is not None or self.grain is not None:
                raise ValidationError("by", f"{self.by!r} is not a date field", f"use one of {DATE_FIELDS}")
        elif self.dataset in AGGREGATES:
            if self.by is not None or self.slice is None or self.grain not in ("day", "month"):
                raise ValidationError("grain", f"{self.grain!r} is not a grain", "use 'day' or 'month'")
            if self.grain == "month" and self.start.day != 1:
                raise ValidationError("start", f"{self.start} is not the first of a month", "month windows")
        else:
            raise ValidationError("dataset", f"{self.dataset!r} is not a dataset", f"use one of {DATASETS}")

    @classmethod
    def transactions(cls, day: date, by: DateField = "updateDate") -> PartitionKey:
        return cls("transactions", day, by=by)

    @classmethod
    def aggregate(cls, dataset: Dataset, start: date, filters: Filters, grain: Grain) -> PartitionKey:
        return cls(dataset, start, slice=filters.canonical, grain=grain)

    @property
    def end(self) -> date:
        """The day after the partition's last day (windows exclude their end)."""
        if self.grain == "month":
            return _next_month(self.start)
        return self.start + timedelta(days=1)

    @property
    def endpoint(self) -> str:
        return self.dataset

    @property
    def filters(self) -> Filters:
        return Filters.from_canonical(self.slice) if self.slice else Filters()

    @property
    def relpath(self) -> str:
        """Folder of the partition below its site folder."""
        if self.dataset == "transactions":
            return f"transactions/by={self.by}/day={self.start.isoformat()}"
        encoded = quote(self.slice or "all", safe="")
        return f"{self.dataset}/slice={encoded}/grain={self.grain}/start={self.start.isoformat()}"

    @classmethod
    def from_relpath(cls, relpath: str) -> PartitionKey:
        parts = relpath.strip("/").split("/")
        try:
            values = dict(part.split("=", 1) for part in parts[1:])
            if parts[0] == "transactions":
                by = values["by"]
                if by not in DATE_FIELDS:
                    raise KeyError(by)
                return cls.transactions(date.fromisoformat(values["day"]), by)
            if parts[0] in AGGREGATES:
                grain = values["grain"]
                if grain not in ("day", "month"):
                    raise KeyError(grain)
                return cls(
                    parts[0],
                    date.fromisoformat(values["start"]),
                    slice=unquote(values["slice"]),
                    grain=grain,  # type: ignore[arg-type]
                )
        except (KeyError, ValueError):
            pass
        raise LakeError(f"{relpath!r} is not a partition path of this lake")

    def params(self) -> dict[str, str]:
        """The service query parameters that fetch this partition."""
        if self.dataset == "transactions":
            return {str(self.by): self.start.isoformat()}
        return {
            "clickDateStart": self.start.isoformat(),
            "clickDateEnd": self.end.isoformat(),
            **self.filters.to_params(),
        }

    def describe(self) -> str:
        if self.dataset == "transactions":
            return f"transactions {self.by}={self.start}"
        return f"{self.dataset} [{self.slice}] {self.start}..{self.end - timedelta(days=1)}"
