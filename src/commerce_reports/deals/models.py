"""Typed deal-request models for the fields the contract shows (part 2.4).

Everything else the caller or the service sends is kept in `extra`, as it came, and written back
by `to_dict`, so a round trip never loses a field this code does not know about. The same `Deal`
serves as a full deal and as the partial `changes` of an update: absent fields stay `None`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from .errors import DealFailure, DealValidationError

__all__ = ["STATUSES", "Buyer", "Commercial", "Deal", "Schedule", "TargetingGroup"]

STATUSES = ("active", "paused", "archived", "scheduled")


def _object(value: Any, path: str, operation: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        failure = DealFailure(path, f"must be object, got {type(value).__name__}")
        raise DealValidationError(operation, [failure])
    return value


def _rest(data: Mapping[str, Any], known: tuple[str, ...]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k not in known}


def _put(out: dict[str, Any], name: str, value: Any) -> None:
    if value is not None:
        out[name] = value


@dataclass
class Buyer:
    """A buyer: its demand platform (`dsp`) and, except on open deals, its `seatIds`."""

    dsp: str | None = None
    seat_ids: list[str] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    _KNOWN = ("dsp", "seatIds")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], path: str = "body/buyers/0") -> Buyer:
        data = _object(data, path, "deal")
        seats = data.get("seatIds")
        return cls(
            dsp=data.get("dsp"),
            seat_ids=list(seats) if isinstance(seats, list) else seats,
            extra=_rest(data, cls._KNOWN),
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        _put(out, "dsp", self.dsp)
        _put(out, "seatIds", self.seat_ids)
        return out | self.extra


@dataclass
class Commercial:
    """Commercial terms; `take_rate` is a decimal fraction (0 to 0.85)."""

    take_rate: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Commercial:
        data = _object(data, "body/commercial", "deal")
        return cls(take_rate=data.get("takeRate"), extra=_rest(data, ("takeRate",)))

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        _put(out, "takeRate", self.take_rate)
        return out | self.extra


@dataclass
class Schedule:
    """Start and end dates as sent (`yyyy-mm-dd` strings); `start`/`end` parse them."""

    start_date: str | None = None
    end_date: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Schedule:
        data = _object(data, "body/schedule", "deal")
        return cls(
            start_date=data.get("startDate"),
            end_date=data.get("endDate"),
            extra=_rest(data, ("startDate", "endDate")),
        )

    @property
    def start(self) -> date | None:
        return _date(self.start_date)

    @property
    def end(self) -> date | None:
        return _date(self.end_date)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        _put(out, "startDate", self.start_date)
        _put(out, "endDate", self.end_date)
        return out | self.extra


_DAY = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")  # yyyy-mm-dd only: "2031-W05-1" is no "date"


def _date(text: Any) -> date | None:
    try:
        return date.fromisoformat(text) if isinstance(text, str) and _DAY.match(text) else None
    except ValueError:
        return None


@dataclass
class TargetingGroup:
    """One targeting group: attribute name (e.g. `device.geo.country`) to its list of values."""

    criteria: dict[str, list[Any]] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], path: str = "body/targeting/0") -> TargetingGroup:
        data = _object(data, path, "deal")
        return cls({k: v if isinstance(v, list) else [v] for k, v in data.items()})

    def to_dict(self) -> dict[str, Any]:
        return {k: list(v) for k, v in self.criteria.items()}


@dataclass
class Deal:
    """A deal request, or the changes of an update (fields left `None` are not sent)."""

    id: str | None = None
    type: str | None = None
    status: str | None = None
    status_settable: bool | None = None
    buyers: list[Buyer] | None = None
    commercial: Commercial | None = None
    schedule: Schedule | None = None
    run_of_network: bool | None = None
    targeting: list[TargetingGroup] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    _KNOWN = (
        "id",
        "type",
        "status",
        "statusSettable",
        "buyers",
        "commercial",
        "schedule",
        "runOfNetwork",
        "targeting",
    )

    @property
    def is_open(self) -> bool:
        return self.type == "open"

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Deal:
        """Read a deal from JSON-shaped data; DealValidationError when a part is not an object."""
        data = _object(data, "body", "deal")
        buyers = data.get("buyers")
        targeting = data.get("targeting")
        commercial = data.get("commercial")
        schedule = data.get("schedule")
        return cls(
            id=_id(data.get("id")),
            type=data.get("type"),
            status=data.get("status"),
            status_settable=data.get("statusSettable"),
            buyers=None
            if buyers is None
            else [Buyer.from_dict(b, f"body/buyers/{i}") for i, b in enumerate(_list(buyers))],
            commercial=None if commercial is None else Commercial.from_dict(commercial),
            schedule=None if schedule is None else Schedule.from_dict(schedule),
            run_of_network=data.get("runOfNetwork"),
            targeting=None
            if targeting is None
            else [
                TargetingGroup.from_dict(g, f"body/targeting/{i}")
                for i, g in enumerate(_list(targeting, "body/targeting"))
            ],
            extra=_rest(data, cls._KNOWN),
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON body: known fields first (only those set), then every unknown one as it came."""
        out: dict[str, Any] = {}
        _put(out, "id", self.id)
        _put(out, "type", self.type)
        _put(out, "status", self.status)
        _put(out, "statusSettable", self.status_settable)
        if self.buyers is not None:
            out["buyers"] = [b.to_dict() for b in self.buyers]
        if self.commercial is not None:
            out["commercial"] = self.commercial.to_dict()
        if self.schedule is not None:
            out["schedule"] = self.schedule.to_dict()
        _put(out, "runOfNetwork", self.run_of_network)
        if self.targeting is not None:
            out["targeting"] = [g.to_dict() for g in self.targeting]
        return out | self.extra


def _id(value: Any) -> str | None:
    """A deal id as text: a string or a whole number (`{"x": 1}` is no id, nor `true`)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    failure = DealFailure("body/id", f"must be a string or a whole number, got {type(value).__name__}")
    raise DealValidationError("deal", [failure])


def _list(value: Any, path: str = "body/buyers") -> list[Any]:
    if not isinstance(value, list):
        raise DealValidationError("deal", [DealFailure(path, "must be array")])
    return value
