"""A dialect names the wire: what the service calls each parameter. The Python side has one vocabulary.

`contract` is the service contract's (the default); `published` is the vendor's OpenAPI description,
which calls the product filter `sovrnProduct`. Response shapes need no table here: the parser reads
either shape into the same columns. A parameter the service does not know is silently ignored by
it, so a filtered slice would store unfiltered numbers: the renames below must be exact.
"""

from __future__ import annotations

from collections.abc import Mapping

from .config import DIALECTS, Dialect, check_dialect

__all__ = ["DIALECTS", "WIRE_NAMES", "wire_params"]

# contract name -> this dialect's name, for the parameters whose names differ.
WIRE_NAMES: dict[Dialect, dict[str, str]] = {
    "contract": {},
    "published": {"partnerProduct": "sovrnProduct"},
}


def wire_params(dialect: Dialect, params: Mapping[str, str]) -> dict[str, str]:
    """Query parameters named as `dialect` names them (the input uses the contract's names)."""
    renames = WIRE_NAMES[check_dialect(dialect, "dialect")]
    return {renames.get(name, name): value for name, value in params.items()}
