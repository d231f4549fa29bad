"""Where each stored transaction column comes from on the wire, in every shape the service speaks.

Three shapes carry the same element of `transactions`:
- nested: the contract's groups (part 2.1), `account{} commission{} click{} merchant{} product[]`;
- flat: the service notes' shape, every field at the top level;
- published: the vendor's OpenAPI `TransactionModel`, flat too, with its own names
  (`clickSid`, `destinationUrl`, `publisherRevenue`, `networkName`, `merchandise`), `revenueId` as
  a number, and `affProduct` / `deviceType` as codes (`WRA`, `MBL`).

The flat and published shapes are read by one list of candidate keys per column (a key of either
names the same column): the nested key's name unless a flat shape renames it, then the renamed
keys. The columns themselves (names, types, order) belong to `contract.py`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Literal, TypeAlias

from ..contract import DEVICE_WORDS, TRANSACTION_SCHEMA
from ..params import PartnerProduct

__all__ = [
    "CODE_WORDS",
    "FIELDS",
    "GROUPS",
    "MONEY_KEYS",
    "PRODUCT_ITEM",
    "READ_TREES",
    "Field",
    "IdClass",
    "Kind",
    "Node",
    "Path",
    "Shape",
]

Shape = Literal["nested", "flat"]
Path = tuple[str, ...]
IdClass = Literal["string", "number"]  # how a body sends revenueId: the contract's string, or a number


class Kind(Enum):
    """How a wire value becomes a stored value (the rules live in `values.py` and `dates.py`)."""

    TEXT = "text"  # a string; a number is kept as its text
    ID = "id"  # text as well, sent as a string (contract) or as a number (published)
    NUMBER = "number"
    MONEY = "money"  # a number read exactly, as DECIMAL(18,4)
    INTEGER = "integer"
    DATE = "date"  # see dates.py for the formats read
    PRODUCT = "partner product"  # a word (Link) or a code (WRA) that becomes the word
    DEVICE = "device"  # a word (Mobile) or a code (MBL) that becomes the word; UKN becomes null
    PRODUCTS = "products"  # the bought items: a list of PRODUCT_ITEM objects


@dataclass(frozen=True)
class Field:
    """One stored column and the keys that carry it; in each shape the first present key wins."""

    column: str
    kind: Kind
    nested: tuple[Path, ...]
    flat: tuple[Path, ...]

    def paths(self, shape: Shape) -> tuple[Path, ...]:
        return self.nested if shape == "nested" else self.flat


def _field(column: str, kind: Kind, group: str, key: str, *flat_names: str) -> Field:
    """A field under `group.key` when nested; at the top level under `flat_names` (default `key`)."""
    return Field(column, kind, ((group, key),), tuple((name,) for name in flat_names or (key,)))


def _utm(side: str) -> list[Field]:
    info = f"{side}UtmInfo"
    return [
        Field(
            f"{side}_utm_{part.lower()}", Kind.TEXT, (("click", info, f"utm{part}"),), ((info, f"utm{part}"),)
        )
        for part in ("Source", "Medium", "Campaign", "Term", "Content")
    ]


GROUPS = ("account", "commission", "click", "merchant", "product")

# Wire key of a bought item -> (stored struct field, kind).
PRODUCT_ITEM: dict[str, tuple[str, Kind]] = {
    "productId": ("product_id", Kind.TEXT),
    "productName": ("product_name", Kind.TEXT),
    "price": ("price", Kind.MONEY),
    "quantity": ("quantity", Kind.NUMBER),
}

FIELDS: tuple[Field, ...] = (
    _field("account_id", Kind.INTEGER, "account", "accountId"),
    _field("campaign_id", Kind.INTEGER, "account", "campaignId"),
    _field("campaign_name", Kind.TEXT, "account", "campaignName"),
    _field("revenue_id", Kind.ID, "commission", "revenueId"),
    _field("commission_id", Kind.TEXT, "commission", "commissionId"),
    _field("commission_date", Kind.DATE, "commission", "commissionDate"),
    _field("update_date", Kind.DATE, "commission", "updateDate"),
    _field("order_value", Kind.MONEY, "commission", "orderValue"),
    _field("publisher_net_revenue", Kind.MONEY, "commission", "publisherNetRevenue", "publisherRevenue"),
    _field("program_type", Kind.TEXT, "commission", "programType"),
    _field("click_id", Kind.TEXT, "click", "clickId", "clickId", "clickSid"),
    _field("click_date", Kind.DATE, "click", "clickDate"),
    _field("cuid", Kind.TEXT, "click", "cuid"),
    *_utm("link"),
    *_utm("page"),
    _field("page_url", Kind.TEXT, "click", "pageUrl"),
    _field("link_url", Kind.TEXT, "click", "linkUrl", "destinationUrl"),
    _field("partner_product", Kind.PRODUCT, "click", "partnerProduct", "affProduct"),
    _field("partner_product_sub_type", Kind.TEXT, "click", "affProductSubType"),
    _field("country", Kind.TEXT, "click", "country"),
    # Reference pages also place `deviceType` (a code) in the click group.
    Field("device", Kind.DEVICE, (("click", "device"), ("click", "deviceType")), (("deviceType",),)),
    _field("merchant_group_id", Kind.INTEGER, "merchant", "merchantGroupId"),
    _field("merchant_group_name", Kind.TEXT, "merchant", "merchantGroupName"),
    _field("network", Kind.TEXT, "merchant", "network", "networkName"),
    Field("products", Kind.PRODUCTS, (("product",),), (("merchandise",),)),
)

if [f.column for f in FIELDS] + ["extra"] != TRANSACTION_SCHEMA.names:
    raise ImportError("parse.fields.FIELDS no longer covers contract.TRANSACTION_SCHEMA in order")

# Every wire key that carries money, in any shape (the fast path checks their text: see census.py).
MONEY_KEYS = frozenset(
    {path[-1] for f in FIELDS if f.kind is Kind.MONEY for path in (*f.nested, *f.flat)}
    | {key for key, (_, kind) in PRODUCT_ITEM.items() if kind is Kind.MONEY}
)

# Code -> stored word of the coded kinds (WRA -> Link, MBL -> Mobile, UKN -> None); a word stays.
CODE_WORDS: dict[Kind, dict[str, str | None]] = {
    Kind.PRODUCT: {code.value: code.label for code in PartnerProduct},
    Kind.DEVICE: dict(DEVICE_WORDS),
}

Node: TypeAlias = "Kind | dict[str, Node]"


def _read_tree(shape: Shape) -> dict[str, Node]:
    """Every key a row of `shape` may carry, as nested objects ending in the kind of the value."""
    tree: dict[str, Node] = {}
    for field in FIELDS:
        for path in field.paths(shape):
            node = tree
            for key in path[:-1]:
                child = node.setdefault(key, {})
                assert isinstance(child, dict)
                node = child
            node[path[-1]] = field.kind
    return tree


READ_TREES: dict[Shape, dict[str, Node]] = {shape: _read_tree(shape) for shape in ("nested", "flat")}
