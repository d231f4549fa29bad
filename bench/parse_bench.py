"""Parse a 100,000-transaction body: the toolkit's path against the naive one, side by side.

    .venv/bin/python bench/parse_bench.py [--rows 100000] [--repeat 5]

Targets (issue 2): >= 150,000 rows/s, and >= 8x `json.loads` + `pandas.json_normalize`.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from typing import Any

import orjson

from commerce_reports.parse import parse_transactions

UTM = ("utmSource", "utmMedium", "utmCampaign", "utmTerm", "utmContent")
WORDS = ["", "newsletter", "google", "spring-sale", "gift-guide", "facebook", "cpc", "reviews"]
DEVICES = ["Mobile", "Desktop", "Tablet", None]
COUNTRIES = ["us", "gb", "de", "fr", "ca", "au", "nl", "es", "it", "se"]


def transaction(rng: random.Random, n: int) -> dict[str, Any]:
    """A realistic nested transaction of about 870-950 bytes."""
    click: dict[str, Any] = {
        "clickId": f"{rng.getrandbits(60):x}",
        "clickDate": f"2026-11-{rng.randint(1, 20):02d}",
        "cuid": rng.choice(["", f"reader-{rng.randint(1, 9999)}"]),
        "linkUtmInfo": {k: rng.choice(WORDS) for k in UTM},
        "pageUtmInfo": {k: rng.choice(WORDS) for k in UTM},
        "pageUrl": f"https://www.example-publisher.com/guides/{rng.choice(WORDS)}-{rng.randint(1, 3000)}",
        "linkUrl": f"https://www.merchant-{rng.randint(1, 300)}.com/p/{rng.randint(1, 99999)}?ref=aff",
        "partnerProduct": rng.choice(["Link", "JavaScript", "Link API"]),
        "country": rng.choice(COUNTRIES),
    }
    device = rng.choice(DEVICES)
    if device:
        click["device"] = device
    products = [
        {
            "productId": f"p{rng.randint(1, 99999)}",
            "productName": f"Blender Pro {rng.randint(1, 99)}",
            "price": round(rng.uniform(5, 400), 2),
            "quantity": rng.randint(1, 3),
        }
        for _ in range(rng.choice([0, 0, 1, 2]))
    ]
    return {
        "account": {
            "accountId": 12345,
            "campaignId": rng.randint(1, 50),
            "campaignName": f"Campaign {rng.randint(1, 50)}",
        },
        "commission": {
            "revenueId": f"rev-{n:010d}",
            "commissionId": f"com-{n:010d}",
            "commissionDate": "2026-11-20",
            "updateDate": "2026-11-20",
            "orderValue": round(rng.uniform(5, 500), 2),
            "publisherNetRevenue": round(rng.uniform(0.1, 40), 2),
            "programType": rng.choice(["cpa", "cpc"]),
        },
        "click": click,
        "merchant": {
            "merchantGroupId": rng.randint(1, 400),
            "merchantGroupName": f"Merchant {rng.randint(1, 400)}",
            "network": f"Network {rng.randint(1, 20)}",
        },
        "product": products,
    }


def naive(body: bytes) -> Any:
    import pandas as pd

    return pd.json_normalize(json.loads(body)["transactions"])


def measure(name: str, fn: Any, body: bytes, rows: int, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn(body)
        times.append(time.perf_counter() - start)
    best, median = min(times), statistics.median(times)
    print(f"{name:<34} median {median:6.3f} s  best {best:6.3f} s  {rows / median:>10,.0f} rows/s")
    return rows / median


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rng = random.Random(7)
    body = orjson.dumps({"transactions": [transaction(rng, n) for n in range(args.rows)]})
    print(
        f"body: {args.rows:,} transactions, {len(body) / 1e6:.1f} MB ({len(body) / args.rows:.0f} bytes each)"
    )
    ours = measure("commerce_reports.parse_transactions", parse_transactions, body, args.rows, args.repeat)
    baseline = measure("json.loads + pandas.json_normalize", naive, body, args.rows, max(1, args.repeat // 2))
    ratio = ours / baseline
    print(f"speed-up {ratio:.1f}x (target >= 8x); rows/s {ours:,.0f} (target >= 150,000)")
    print("PASS" if ours >= 150_000 and ratio >= 8 else "BELOW TARGET")


if __name__ == "__main__":
    main()
