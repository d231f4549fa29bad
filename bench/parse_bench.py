"""Parse a 100,000-transaction body of either shape: the toolkit against pyarrow.json, polars and a
naive path, per wall second and per CPU second.

    .venv/bin/python bench/parse_bench.py [--shape contract|published] [--rows 100000] [--repeat 5]
                                          [--dates iso|mixed] [--no-naive]

`contract` is the nested shape of contract 2.1; `published` the flat `TransactionModel` of the
vendor's OpenAPI file (revenueId a number, product and device codes, `merchandise`), carrying the
same transactions. `--dates mixed` writes the dates in the five formats the parser reads.
The toolkit reads money as DECIMAL(18,4) from the text and proves every value landed in a column;
the baselines read money as binary floats and prove nothing. pyarrow.json is timed on the body as
sent (one object: one block) and on the same transactions as NDJSON, the form it reads natively.
Targets: >= 150,000 rows/s and >= 3x `polars.read_json` (issue 11); ahead of pyarrow.json per CPU
second (issue 31). The toolkit must read the body on its fast path (`strict=True`), or the bench stops.
"""

from __future__ import annotations

import argparse
import io
import json
import random
import statistics
import time
from collections.abc import Callable
from datetime import UTC, date, datetime
from typing import Any

import orjson
import polars as pl
import pyarrow.json as pa_json

from commerce_reports.params import DeviceType, PartnerProduct
from commerce_reports.parse import parse_transactions

UTM = ("utmSource", "utmMedium", "utmCampaign", "utmTerm", "utmContent")
WORDS = ["", "newsletter", "google", "spring-sale", "gift-guide", "facebook", "cpc", "reviews"]
DEVICES = ["Mobile", "Desktop", "Tablet", None]
COUNTRIES = ["us", "gb", "de", "fr", "ca", "au", "nl", "es", "it", "se"]
PRODUCT_CODES = {code.label: code.value for code in PartnerProduct}
DEVICE_CODES = {code.label: code.value for code in DeviceType}
SUB_TYPES = ["", "", "carousel", "grid", "inline"]


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


def published(row: dict[str, Any], n: int) -> dict[str, Any]:
    """The same transaction in the published `TransactionModel`: every property, nothing else."""
    account, commission, click, merchant = (row[g] for g in ("account", "commission", "click", "merchant"))
    return {
        "revenueId": 10_000_000 + n,
        "clickSid": click["clickId"],
        "accountId": account["accountId"],
        "commissionId": commission["commissionId"],
        "merchantGroupId": merchant["merchantGroupId"],
        "merchantGroupName": merchant["merchantGroupName"],
        "campaignId": account["campaignId"],
        "campaignName": account["campaignName"],
        "clickDate": click["clickDate"],
        "commissionDate": commission["commissionDate"],
        "updateDate": commission["updateDate"],
        "publisherRevenue": commission["publisherNetRevenue"],
        "orderValue": commission["orderValue"],
        "cuid": click["cuid"],
        "linkUtmInfo": click["linkUtmInfo"],
        "pageUtmInfo": click["pageUtmInfo"],
        "destinationUrl": click["linkUrl"],
        "pageUrl": click["pageUrl"],
        "affProduct": PRODUCT_CODES[click["partnerProduct"]],
        "affProductSubType": SUB_TYPES[n % len(SUB_TYPES)],
        "programType": commission["programType"],
        "networkName": merchant["network"],
        "country": click["country"],
        "deviceType": DEVICE_CODES.get(click.get("device", "Unknown"), "UKN"),
        "merchandise": row["product"],
    }


def mixed_date(text: str, n: int) -> str:
    """An ISO date rewritten in one of the five formats the parser reads, in turn."""
    day = date.fromisoformat(text)
    style = n % 5
    if style == 4:
        return str(int(datetime(day.year, day.month, day.day, 13, 45, tzinfo=UTC).timestamp() * 1000))
    return day.strftime(("%Y-%m-%d", "%Y-%m-%dT13:45:00Z", "%Y/%m/%d", "%m/%d/%Y")[style])


def make_body(shape: str, rows: int, dates: str) -> bytes:
    rng = random.Random(7)
    elements = []
    for n in range(rows):
        row = transaction(rng, n)
        if dates == "mixed":
            for group, key in (
                ("click", "clickDate"),
                ("commission", "commissionDate"),
                ("commission", "updateDate"),
            ):
                row[group][key] = mixed_date(row[group][key], n + len(key))
        elements.append(published(row, n) if shape == "published" else row)
    return orjson.dumps({"transactions": elements})


def naive_path(body: bytes) -> Any:
    import pandas as pd

    return pd.json_normalize(json.loads(body)["transactions"])


def timed(fn: Callable[[bytes], Any], body: bytes) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the whole process, every thread included) of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn(body)
    return time.perf_counter() - wall, time.process_time() - cpu


def report(name: str, runs: list[tuple[float, float]], rows: int) -> tuple[float, float]:
    """Print one reader's median wall and CPU seconds; its rows per wall second and per CPU second."""
    wall = statistics.median(run[0] for run in runs)
    cpu = statistics.median(run[1] for run in runs)
    print(
        f"{name:<40} {rows / wall:>10,.0f} rows/s  {wall:6.3f} s   {rows / cpu:>10,.0f} rows/CPU-s  "
        f"{cpu:6.3f} CPU-s  (median of {len(runs)})"
    )
    return rows / wall, rows / cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--shape", choices=("contract", "published"), default="contract")
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--dates", choices=("iso", "mixed"), default="iso")
    parser.add_argument("--no-naive", action="store_true", help="skip json.loads + pandas.json_normalize")
    args = parser.parse_args()
    body = make_body(args.shape, args.rows, args.dates)
    lines = b"\n".join(orjson.dumps(row) for row in orjson.loads(body)["transactions"]) + b"\n"
    print(
        f"body: {args.shape} shape, {args.dates} dates, {args.rows:,} transactions, "
        f"{len(body) / 1e6:.1f} MB ({len(body) / args.rows:.0f} bytes each)"
    )
    table = parse_transactions(body, strict=True)  # stops here unless the fast path reads it
    if table.num_rows != args.rows or table["extra"].null_count != args.rows:
        raise SystemExit("the parse lost rows or left values in extra")
    readers: dict[str, Callable[[bytes], Any]] = {
        "commerce_reports.parse_transactions": lambda b: parse_transactions(b, strict=True),
        "pyarrow.json, the body as sent": lambda b: pa_json.read_json(
            io.BytesIO(b), read_options=pa_json.ReadOptions(block_size=len(b) + 1)
        ),
        "pyarrow.json, the rows as NDJSON": lambda _: pa_json.read_json(io.BytesIO(lines)),
        "polars.read_json": pl.read_json,
    }
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in readers}
    for read in readers.values():
        read(body)  # warm: first calls load libraries
    for _ in range(args.repeat):  # interleaved, so that a busy machine weighs on all alike
        for name, read in readers.items():
            runs[name].append(timed(read, body))
    rates = {name: report(name, found, args.rows) for name, found in runs.items()}
    ours_wall, ours_cpu = rates["commerce_reports.parse_transactions"]
    print(f"speed-up over polars.read_json {ours_wall / rates['polars.read_json'][0]:.2f}x (target >= 3x)")
    ahead = [ours_cpu / rates[name][1] for name in readers if name.startswith("pyarrow")]
    print(
        f"per CPU second against pyarrow.json: {ahead[0]:.2f}x (the body as sent), "
        f"{ahead[1]:.2f}x (NDJSON) (target > 1x)"
    )
    if not args.no_naive:
        naive = [timed(naive_path, body) for _ in range(max(1, args.repeat // 2))]
        naive_rate, _ = report("json.loads + pandas.json_normalize", naive, args.rows)
        print(f"speed-up over the naive path {ours_wall / naive_rate:.1f}x")
    met = ours_wall >= 150_000 and ours_wall / rates["polars.read_json"][0] >= 3 and min(ahead) > 1
    print("PASS" if met else "BELOW TARGET")


if __name__ == "__main__":
    main()
