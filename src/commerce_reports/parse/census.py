"""The census: proof that a typed table holds every value of the body it was read from.

The fast path reads only the keys it knows, and a reader that ignores the rest would drop data
silently. So the body's keys are counted by what follows them (a string, a number, an object, an
array, anything else), straight from the bytes, and compared with the values the typed columns
hold. Every key is a closing quote followed by a colon, so no key escapes the count; a `\\":` inside
a string can only add to it. Equal counts therefore mean no unknown key, and every value landed in
a column of its own kind (no text read as a number, no number as text). A null carries nothing and
is the same as a missing key, on both paths.

The census also vouches for money. DuckDB reads it from the text straight into DECIMAL(18,4)
(fast.py): exactly, except that it rounds a digit past the fourth decimal place without a word (and
refuses a value too large, which declines the body). So the money values of the body are walked too
(those under a key ending as a money key ends, found from the same colons), and any that is not a
plain decimal of at most 22 characters with nothing but zeros past its fourth place (an exponent,
a fifth place that is not 0, a longer text) is counted as `inexact`: the fast path then declines the
body, and the tolerant path reads each value from its text.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from .fields import MONEY_KEYS, PRODUCT_ITEM, IdClass, Kind, Node

__all__ = ["Census", "count_body", "count_table"]

_BLOCK = 1 << 20  # bytes compared at a time: the masks stay in the CPU cache
_LONGEST = 22  # characters of a money text walked; a longer one is left to the tolerant path
_PLACES = 4  # decimal places DECIMAL(18,4) holds: a digit past them other than 0 is rounded


def _bytes(characters: str) -> np.ndarray:
    table = np.zeros(256, bool)
    table[[ord(c) for c in characters]] = True
    return table


_NUMBER_START = _bytes("-0123456789")
_NUMBER_CHAR = _bytes("-+.0123456789eE")
_EXPONENT = _bytes("eE")
_NONZERO_DIGIT = _bytes("123456789")
_MONEY_KEY_END = _bytes("".join(key[-1] for key in MONEY_KEYS))


@dataclass(frozen=True)
class Census:
    """How many keys of a body hold a value of each kind (nulls are not counted)."""

    strings: int = 0
    numbers: int = 0
    objects: int = 0
    arrays: int = 0
    others: int = 0  # booleans, and whatever no key of the shapes holds
    inexact: int = 0  # money texts DuckDB's decimal read may round (a body's; not a kind of value)

    def __add__(self, other: Census) -> Census:
        return Census(
            self.strings + other.strings,
            self.numbers + other.numbers,
            self.objects + other.objects,
            self.arrays + other.arrays,
            self.others + other.others,
            self.inexact + other.inexact,
        )

    def differences(self, other: Census) -> str:
        """What `self` (the body) holds that `other` (the table) does not, in words; "" when equal."""
        return ", ".join(
            f"{name}: {mine} in the body, {theirs} in the columns"
            for name in ("strings", "numbers", "objects", "arrays", "others")
            if (mine := getattr(self, name)) != (theirs := getattr(other, name))
        )


def _census(after: np.ndarray, inexact: int) -> Census:
    """A census from the first byte after each key's colon (histogram of 256 counts)."""
    strings, objects, arrays, nulls = (int(after[ord(c)]) for c in '"{[n')
    numbers = int(after[_NUMBER_START].sum())
    others = int(after.sum()) - strings - numbers - objects - arrays - nulls
    return Census(strings, numbers, objects, arrays, others, inexact)


def _inexact(data: np.ndarray, starts: np.ndarray) -> int:
    """How many of the number texts beginning at `starts` hold an exponent, a digit other than 0
    past the fourth decimal place, or run past _LONGEST characters: walked a character at a time,
    all at once, dropping each text where it ends or is found."""
    last = len(data) - 1
    alive, point, found = starts, np.zeros(len(starts), np.int64), 0  # point: where its "." is (0: none yet)
    clip = bool(len(starts)) and int(starts.max()) + _LONGEST > last  # a text at the body's very end
    for step in range(1, _LONGEST + 1):
        following = data[np.minimum(alive + step, last) if clip else alive + step]
        inside = _NUMBER_CHAR[following]
        point = np.where(following == ord("."), step, point)
        rounded = _NONZERO_DIGIT[following] & (point > 0) & (step - point > _PLACES)
        flagged = (_EXPONENT[following] & inside) | rounded
        found += int(flagged.sum())
        kept = inside & ~flagged
        alive, point = alive[kept], point[kept]
        if not len(alive):
            return found
    return found + len(alive)


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
    quotes = _skip_whitespace(data, colons - 1, -1)
    is_key = data[quotes] == ord('"')
    values = _skip_whitespace(data, colons[is_key] + 1, 1)
    first = data[values]
    money = values[_NUMBER_START[first] & _MONEY_KEY_END[data[quotes[is_key] - 1]]]
    return _census(np.bincount(first, minlength=256), _inexact(data, money))


def count_body(body: bytes) -> Census:
    """Count the body's keys by the kind of value that follows each, block by block (in cache)."""
    data = np.frombuffer(body, np.uint8)
    after = np.zeros(256, np.int64)
    money: list[np.ndarray] = []
    for first in range(1, len(data) - 1, _BLOCK):
        colons = np.flatnonzero(data[first : min(first + _BLOCK, len(data) - 1)] == ord(":")) + first
        before = data[colons - 1]
        if (before <= ord(" ")).any():
            return _count_spaced(data)
        keys = colons[before == ord('"')]
        following = data[keys + 1]
        after += np.bincount(following, minlength=256)
        numbers = keys[_NUMBER_START[following]]
        money.append(numbers[_MONEY_KEY_END[data[numbers - 2]]] + 1)
    if after[: ord(" ") + 1].any():
        return _count_spaced(data)
    return _census(after, _inexact(data, np.concatenate(money)) if money else 0)


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
    numeric = kind in (Kind.NUMBER, Kind.MONEY, Kind.INTEGER) or (kind is Kind.ID and id_class == "number")
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
