"""The census: proof that a typed table holds every value of the body it was read from.

The fast path reads only the keys it knows, and a reader that ignores the rest would drop data
silently. So the body's keys are counted by what follows them (a string, a number, an object, an
array, anything else), straight from the bytes, and compared with the values the typed columns
hold. Every key is a closing quote followed by a colon, so no key escapes the count; a `\\":` inside
a string can only add to it. Equal counts therefore mean no unknown key, and every value landed in
a column of its own kind (no text read as a number, no number as text). A null carries nothing and
is the same as a missing key, on both paths.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from .fields import PRODUCT_ITEM, IdClass, Kind, Node

__all__ = ["Census", "count_body", "count_table"]

_DIGITS = [ord(c) for c in "-0123456789"]
_BLOCK = 1 << 20  # bytes compared at a time: the masks stay in the CPU cache


@dataclass(frozen=True)
class Census:
    """How many keys of a body hold a value of each kind (nulls are not counted)."""

    strings: int = 0
    numbers: int = 0
    objects: int = 0
    arrays: int = 0
    others: int = 0  # booleans, and whatever no key of the shapes holds

    def __add__(self, other: Census) -> Census:
        return Census(
            self.strings + other.strings,
            self.numbers + other.numbers,
            self.objects + other.objects,
            self.arrays + other.arrays,
            self.others + other.others,
        )

    def differences(self, other: Census) -> str:
        """What `self` (the body) holds that `other` (the table) does not, in words; "" when equal."""
        return ", ".join(
            f"{name}: {mine} in the body, {theirs} in the columns"
            for name in ("strings", "numbers", "objects", "arrays", "others")
            if (mine := getattr(self, name)) != (theirs := getattr(other, name))
        )


def _census(after: np.ndarray) -> Census:
    """A census from the first byte after each key's colon (histogram of 256 counts)."""
    strings, objects, arrays, nulls = (int(after[ord(c)]) for c in '"{[n')
    numbers = int(after[_DIGITS].sum())
    return Census(
        strings, numbers, objects, arrays, int(after.sum()) - strings - numbers - objects - arrays - nulls
    )


def _skip_whitespace(data: np.ndarray, positions: np.ndarray, step: int) -> np.ndarray:
    """Move each position past whitespace in direction `step`."""
    limit = len(data) - 1
    for _ in range(64):
        inside = data[positions] <= ord(" ")
        if not inside.any():
            break
        positions = np.where(inside, np.clip(positions + step, 0, limit), positions)
    return positions


def _count_spaced(data: np.ndarray) -> Census:
    """The census of a body with whitespace around its colons (pretty-printed): position by position."""
    colons = np.flatnonzero(data == ord(":"))
    colons = colons[(colons > 0) & (colons < len(data) - 1)]
    keys = colons[data[_skip_whitespace(data, colons - 1, -1)] == ord('"')]
    return _census(np.bincount(data[_skip_whitespace(data, keys + 1, 1)], minlength=256))


def count_body(body: bytes) -> Census:
    """Count the body's keys by the kind of value that follows each, block by block (in cache)."""
    data = np.frombuffer(body, np.uint8)
    after = np.zeros(256, np.int64)
    for first in range(1, len(data) - 1, _BLOCK):
        colons = np.flatnonzero(data[first : min(first + _BLOCK, len(data) - 1)] == ord(":")) + first
        before = data[colons - 1]
        if (before <= ord(" ")).any():
            return _count_spaced(data)
        after += np.bincount(data[colons[before == ord('"')] + 1], minlength=256)
    if after[: ord(" ") + 1].any():
        return _count_spaced(data)
    return _census(after)


def _valid(array: pa.Array) -> int:
    return len(array) - int(array.null_count)


def _count_items(items: pa.StructArray, id_class: IdClass) -> Census:
    """The keys inside bought items (the items themselves sit in an array, behind no key)."""
    total = Census()
    for (_, kind), child in zip(PRODUCT_ITEM.values(), items.flatten(), strict=True):
        total += _count_leaf(child, kind, id_class)
    return total


def _count_leaf(array: pa.Array, kind: Kind, id_class: IdClass) -> Census:
    valid = _valid(array)
    if kind is Kind.PRODUCTS:
        return Census(arrays=valid) + _count_items(array.flatten(), id_class)
    numeric = kind in (Kind.NUMBER, Kind.INTEGER) or (kind is Kind.ID and id_class == "number")
    return Census(numbers=valid) if numeric else Census(strings=valid)


def _count(array: pa.Array, node: Node, id_class: IdClass) -> Census:
    if isinstance(node, Kind):
        return _count_leaf(array, node, id_class)
    total = Census(objects=_valid(array))
    for (_, child_node), child in zip(node.items(), array.flatten(), strict=True):
        total += _count(child, child_node, id_class)
    return total


def count_table(table: pa.Table, tree: dict[str, Node], id_class: IdClass) -> Census:
    """The values a table read with `tree` holds, by kind; `id_class` is how revenueId was sent."""
    total = Census()
    for name, node in tree.items():
        for chunk in table.column(name).chunks:
            total += _count(chunk, node, id_class)
    return total
