"""The static side of the synthetic world: networks, merchants, products, campaigns and links.

Merchants and networks are shared by every site of a seed (as on the real service, one merchant
group has one id everywhere); campaigns, pages and links belong to one site. Everything is drawn
from `random.Random` seeded by `derive_seed`, so a catalog is the same on every machine and Python.
"""

from __future__ import annotations

import hashlib
import itertools
import random
from dataclasses import dataclass

import polars as pl

__all__ = [
    "COUNTRIES",
    "DEVICES",
    "DEVICE_CODES",
    "NETWORKS",
    "PARTNER_PRODUCTS",
    "PRODUCT_SUBTYPES",
    "RETURN_RATE",
    "Campaign",
    "Catalog",
    "Link",
    "Merchant",
    "Product",
    "build_catalog",
    "busiest",
    "derive_seed",
]


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


# Word form served in transactions -> filter code of contract 2.5, with the share of links using it.
PARTNER_PRODUCTS: dict[str, tuple[str, float]] = {
    "Link": ("WRA", 50.0),
    "JavaScript": ("ORG", 22.0),
    "Click API": ("RAC", 5.0),
    "Link API": ("RAL", 4.0),
    "Coupon API": ("CUP", 3.0),
    "Product API": ("TPA", 3.0),
    "Price Comparison": ("PCR", 2.0),
    "In-text": ("TXT", 4.0),
    "Shopping Galleries": ("SHG", 3.0),
    "Product Feed": ("PRF", 2.0),
    "Insert": ("INS", 1.0),
    "Unknown": ("UNK", 1.0),
}

# Filter code -> sub types a link of that product may have (the published `affProductSubType`);
# products not listed have none (""). Drawn per link from a hash, so the world's draws are unchanged.
PRODUCT_SUBTYPES: dict[str, tuple[str, ...]] = {
    "WRA": ("text", "image", "button"),
    "ORG": ("auto-link", "auto-optimize"),
    "TPA": ("search", "lookup"),
    "SHG": ("carousel", "grid"),
}

# Device index -> served name (None: undeterminable, the field is left out) and filter code.
DEVICES: tuple[str | None, ...] = ("Mobile", "Desktop", "Tablet", None)
DEVICE_CODES: tuple[str, ...] = ("MBL", "DSK", "TBL", "UKN")
DEVICE_WEIGHTS = (56.0, 34.0, 7.0, 3.0)

# Sixty countries, skewed the way English-language commerce traffic is.
_COUNTRY_TEXT = """
us:30 gb:12 de:7 fr:5 ca:5 au:4 nl:2.5 es:2.5 it:2.5 se:1.5 ie:1.2 in:1.2 br:1 mx:1 jp:1 nz:1
be:.9 ch:.9 at:.8 dk:.8 no:.8 fi:.6 pl:.6 pt:.5 sg:.5 za:.5 ae:.5 hk:.4 kr:.4 il:.4 cz:.3 gr:.3
ro:.3 hu:.3 tr:.3 ar:.3 cl:.3 co:.3 ph:.3 my:.3 th:.2 id:.2 vn:.2 sa:.2 eg:.2 ng:.2 ke:.2 pe:.2
ua:.2 sk:.2 bg:.2 hr:.2 si:.1 lt:.1 lv:.1 ee:.1 is:.1 lu:.1 cy:.1 mt:.1
"""
_COUNTRY_PAIRS = [item.split(":") for item in _COUNTRY_TEXT.split()]
COUNTRIES: tuple[str, ...] = tuple(code for code, _ in _COUNTRY_PAIRS)
COUNTRY_CUM: tuple[float, ...] = tuple(itertools.accumulate(float(w) for _, w in _COUNTRY_PAIRS))

RETURN_RATE = 0.04  # CPA transactions later returned (an incident's `returns=` multiplies it)

# Network name -> how it reports a customer return (2.1 rule 4: "depending on the network").
NETWORKS: dict[str, str] = {
    f"{name} {kind}": ("adjust" if i % 3 else "separate")
    for i, (name, kind) in enumerate(
        zip(
            _words(
                "Northwind Bluebird Cobalt Driftwood Evergreen Foxglove Granite Harbor Ironbark"
                " Juniper Kestrel Lighthouse Maple Nimbus Orchard Pinecrest Quarry Riverbend"
                " Summit Tidewater"
            ),
            _words("Affiliates Network Partners Commerce") * 5,
            strict=True,
        )
    )
}

_BRANDS = _words(
    "Acorn Amber Apex Arbor Aster Atlas Aurora Beacon Birch Bloom Bolt Breeze Brook Canyon Cedar"
    " Cinder Clover Comet Coral Crest Dawn Delta Ember Fable Fern Flint Gale Glade Grove Haven"
    " Hazel Indigo Ivy Jasper Kite Lark Lumen Meadow Mosaic Nova Oak Opal Pebble Quill Raven Sage"
    " Solace Sparrow Terra Thistle Umber Vale Willow Zephyr"
)
_TRADES = _words("Home Outdoors Beauty Tech Kids Pets Books Wear Kitchen Sports Travel Garden Audio")
_ADJECTIVES = _words("Classic Compact Deluxe Eco Essential Lite Pro Smart Soft Ultra Vintage Wireless")
_NOUNS = _words(
    "Backpack Blender Candle Chair Headphones Jacket Jeans Kettle Lamp Mug Notebook Pillow Serum"
    " Sneakers Speaker Tent Throw Watch Yoga-Mat Skillet"
)
_SECTIONS = ("deals", "reviews", "guides", "news", "gifts", "best")
_CAMPAIGN_KINDS = ("Main", "Newsletter", "Social", "Coupons", "Gift Guides", "Mobile App", "Video")

_MERCHANTS = 300
_LINKS = 3000
_PAGES = 320


@dataclass(frozen=True)
class Product:
    product_id: str
    name: str
    price_cents: int


@dataclass(frozen=True)
class Merchant:
    group_id: int
    name: str
    domain: str
    network: str
    program: str  # "cpa" | "cpc"
    rate: float  # share of the order value paid as commission (cpa)
    cpc_cents: int  # paid per earning click (cpc)
    avg_order_cents: int
    products: tuple[Product, ...]  # empty when the merchant supplies no product detail


@dataclass(frozen=True)
class Campaign:
    campaign_id: int
    name: str


@dataclass(frozen=True)
class Link:
    url: str
    page_url: str
    merchant: int  # index into Catalog.merchants
    campaign: int  # index into Catalog.campaigns
    partner_product: str  # word form
    cuid: str
    link_utm: tuple[str, str, str, str, str]  # source, medium, campaign, term, content
    page_utm: tuple[str, str, str, str, str]


@dataclass(frozen=True)
class Catalog:
    site: str
    account_id: int
    campaigns: tuple[Campaign, ...]
    merchants: tuple[Merchant, ...]
    links: tuple[Link, ...]
    link_cum: tuple[float, ...]  # cumulative popularity weights of the links
    link_frame: pl.DataFrame  # one row per link with every attribute a filter or a report needs


def derive_seed(*parts: object) -> int:
    """A stable 64-bit seed from any parts (Python's `hash` is salted per process)."""
    text = "|".join(str(p) for p in parts).encode()
    return int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "big")


def _merchants(seed: int) -> tuple[Merchant, ...]:
    rng = random.Random(derive_seed(seed, "merchants"))
    names = rng.sample([f"{b} {t}" for b in _BRANDS for t in _TRADES], _MERCHANTS)
    ids = rng.sample(range(10_000, 99_999), _MERCHANTS)
    networks = list(NETWORKS)
    merchants = []
    for name, group_id in zip(names, ids, strict=True):
        cpc = rng.random() < 0.15
        avg_order = round(rng.lognormvariate(4.2, 0.6) * 100)
        products: tuple[Product, ...] = ()
        if not cpc and rng.random() < 0.6:
            picks = rng.sample([f"{a} {n}" for a in _ADJECTIVES for n in _NOUNS], rng.randint(6, 24))
            products = tuple(
                Product(f"{group_id}-{k:04d}", pick, max(199, round(avg_order * rng.uniform(0.2, 1.2))))
                for k, pick in enumerate(picks)
            )
        merchants.append(
            Merchant(
                group_id=group_id,
                name=name,
                domain=name.lower().replace(" ", "") + ".com",
                network=rng.choices(networks, weights=[1 / (i + 1) for i in range(20)])[0],
                program="cpc" if cpc else "cpa",
                rate=round(rng.uniform(0.02, 0.12), 3),
                cpc_cents=rng.randint(5, 120),
                avg_order_cents=avg_order,
                products=products,
            )
        )
    return tuple(merchants)


def _utm(rng: random.Random, options: tuple[tuple[str, ...], ...]) -> tuple[str, str, str, str, str]:
    a, b, c, d, e = (rng.choice(values) for values in options)
    return a, b, c, d, e


def _links(rng: random.Random, site: str, merchants: tuple[Merchant, ...], campaigns: int) -> list[Link]:
    merchant_cum = list(itertools.accumulate(1 / (i + 1) ** 1.1 for i in range(len(merchants))))
    partner_words = list(PARTNER_PRODUCTS)
    partner_weights = [w for _, w in PARTNER_PRODUCTS.values()]
    pages = [
        ""
        if rng.random() < 0.02
        else f"https://{site}.example/{rng.choice(_SECTIONS)}/{rng.choice(_NOUNS).lower()}-{n}"
        for n in range(_PAGES)
    ]
    link_utm_options = (
        ("", site, f"{site}-affiliate"),
        ("", "affiliate", "referral"),
        ("", "", "evergreen", "spring-sale", "black-friday", "newsletter"),
        ("", "", "", "best-price", "gift"),
        ("", "", "button", "text-link", "image"),
    )
    page_utm_options = (
        ("", "", "google", "newsletter", "facebook", "pinterest"),
        ("", "", "organic", "email", "social", "cpc"),
        ("", "", "", "weekly", "holiday"),
        ("", "", "", "", "deals"),
        ("", "", "", "", "hero", "sidebar"),
    )
    links = []
    for n in range(_LINKS):
        merchant = rng.choices(range(len(merchants)), cum_weights=merchant_cum)[0]
        page = rng.choice(pages)
        products = merchants[merchant].products
        path = f"p/{rng.choice(products).product_id}" if products else rng.choice(("", "sale", "new"))
        links.append(
            Link(
                url=f"https://www.{merchants[merchant].domain}/{path}",
                page_url=page,
                merchant=merchant,
                campaign=rng.randrange(campaigns),
                partner_product=rng.choices(partner_words, weights=partner_weights)[0],
                cuid="" if rng.random() < 0.35 else f"{page.rsplit('/', 1)[-1][:3] or 'x'}-{n}",
                link_utm=_utm(rng, link_utm_options),
                page_utm=_utm(rng, page_utm_options),
            )
        )
    return links


def _subtype(number: int, link: Link) -> str:
    choices = PRODUCT_SUBTYPES.get(PARTNER_PRODUCTS[link.partner_product][0], ("",))
    return choices[derive_seed(number, link.url) % len(choices)]


def _link_frame(
    links: list[Link], merchants: tuple[Merchant, ...], campaigns: tuple[Campaign, ...]
) -> pl.DataFrame:
    utm_keys = ("source", "medium", "campaign", "term", "content")
    columns: dict[str, list[object]] = {
        "link": list(range(len(links))),
        "link_url": [link.url for link in links],
        "page_url": [link.page_url for link in links],
        "cuid": [link.cuid for link in links],
        "partner_product": [link.partner_product for link in links],
        "partner_code": [PARTNER_PRODUCTS[link.partner_product][0] for link in links],
        "partner_subtype": [_subtype(n, link) for n, link in enumerate(links)],
        "campaign_id": [campaigns[link.campaign].campaign_id for link in links],
        "campaign_name": [campaigns[link.campaign].name for link in links],
        "merchant_group_id": [merchants[link.merchant].group_id for link in links],
        "merchant_group_name": [merchants[link.merchant].name for link in links],
        "network": [merchants[link.merchant].network for link in links],
        "program_type": [merchants[link.merchant].program for link in links],
        "program_code": [merchants[link.merchant].program.upper() for link in links],
    }
    for i, key in enumerate(utm_keys):
        columns[f"link_utm_{key}"] = [link.link_utm[i] for link in links]
        columns[f"page_utm_{key}"] = [link.page_utm[i] for link in links]
    return pl.DataFrame(columns).with_columns(pl.col("link").cast(pl.Int32))


def build_catalog(seed: int, site: str) -> Catalog:
    """The catalog of one site under one seed."""
    merchants = _merchants(seed)
    rng = random.Random(derive_seed(seed, site, "catalog"))
    kinds = rng.sample(_CAMPAIGN_KINDS, rng.randint(4, len(_CAMPAIGN_KINDS)))
    ids = rng.sample(range(100_000, 999_999), len(kinds))
    campaigns = tuple(
        Campaign(cid, f"{site.capitalize()} {kind}") for cid, kind in zip(ids, kinds, strict=True)
    )
    links = _links(rng, site, merchants, len(campaigns))
    popularity = [1 / (rank + 1) ** 0.9 for rank in range(len(links))]
    rng.shuffle(popularity)
    return Catalog(
        site=site,
        account_id=rng.randint(1_000_000, 9_999_999),
        campaigns=campaigns,
        merchants=merchants,
        links=tuple(links),
        link_cum=tuple(itertools.accumulate(popularity)),
        link_frame=_link_frame(links, merchants, campaigns),
    )


def busiest(catalog: Catalog, column: str, top: int = 5) -> list[object]:
    """The `top` values of a link attribute (`network`, `merchant_group_name`, `link_url`, ...) whose
    links draw the most clicks: what an incident is staged on to be seen (tests, benchmarks)."""
    weights = [b - a for a, b in zip((0.0, *catalog.link_cum), catalog.link_cum, strict=False)]
    shares = (
        catalog.link_frame.with_columns(weight=pl.Series(weights))
        .group_by(column)
        .agg(pl.col("weight").sum())
    )
    return shares.sort(["weight", column], descending=[True, False])[column].head(top).to_list()
