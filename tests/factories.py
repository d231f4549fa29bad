"""Response bodies for unit tests: the contract's nested shape, the notes' flat shape, the published shape."""

from __future__ import annotations

from typing import Any

import orjson

UTM_KEYS = ("utmSource", "utmMedium", "utmCampaign", "utmTerm", "utmContent")


def utm(prefix: str) -> dict[str, str]:
    return {key: f"{prefix}-{key}" for key in UTM_KEYS}


def nested(n: int = 0, **groups: dict[str, Any]) -> dict[str, Any]:
    """One transaction in the contract's nested shape; `groups` override keys per group."""
    row: dict[str, Any] = {
        "account": {"accountId": 7, "campaignId": 11, "campaignName": "Spring"},
        "commission": {
            "revenueId": f"r{n}",
            "commissionId": f"c{n}",
            "commissionDate": "2026-11-02",
            "updateDate": "2026-11-03",
            "orderValue": 120.5,
            "publisherNetRevenue": 6.25,
            "programType": "cpa",
        },
        "click": {
            "clickId": f"k{n}",
            "clickDate": "2026-11-01",
            "cuid": "reader-1",
            "linkUtmInfo": utm("link"),
            "pageUtmInfo": utm("page"),
            "pageUrl": "https://site.example/best-kettles",
            "linkUrl": "https://shop.example/kettle",
            "partnerProduct": "Link",
            "country": "us",
            "device": "Mobile",
        },
        "merchant": {"merchantGroupId": 42, "merchantGroupName": "Kettle Co", "network": "Net A"},
        "product": [{"productId": "p1", "productName": "Kettle", "price": 60.25, "quantity": 2}],
    }
    for group, values in groups.items():
        if isinstance(row.get(group), dict):
            row[group].update(values)
        else:
            row[group] = values
    return row


def flat(n: int = 0) -> dict[str, Any]:
    """The same transaction as `nested(n)` in the flat shape of the service notes."""
    return {
        "accountId": 7,
        "campaignId": 11,
        "campaignName": "Spring",
        "revenueId": f"r{n}",
        "commissionId": f"c{n}",
        "commissionDate": "2026-11-02",
        "updateDate": "2026-11-03",
        "orderValue": 120.5,
        "publisherRevenue": 6.25,
        "programType": "cpa",
        "clickId": f"k{n}",
        "clickDate": "2026-11-01",
        "cuid": "reader-1",
        "linkUtmInfo": utm("link"),
        "pageUtmInfo": utm("page"),
        "pageUrl": "https://site.example/best-kettles",
        "destinationUrl": "https://shop.example/kettle",
        "affProduct": "Link",
        "country": "us",
        "deviceType": "MBL",
        "merchantGroupId": 42,
        "merchantGroupName": "Kettle Co",
        "networkName": "Net A",
        "merchandise": [{"productId": "p1", "productName": "Kettle", "price": 60.25, "quantity": 2}],
    }


def published(n: int = 0, **fields: Any) -> dict[str, Any]:
    """The transaction of `nested(n)` in the published OpenAPI shape (`TransactionModel`).

    Every property of the model with its declared type and nothing else: `revenueId` is the number
    1000 + n (`nested(n, commission={"revenueId": str(1000 + n)})` is the same row), the product
    and device are codes, and `affProductSubType` is empty (no sub type). `fields` override keys.
    """
    row: dict[str, Any] = {
        "revenueId": 1000 + n,
        "clickSid": f"k{n}",
        "accountId": 7,
        "commissionId": f"c{n}",
        "merchantGroupId": 42,
        "merchantGroupName": "Kettle Co",
        "campaignId": 11,
        "campaignName": "Spring",
        "clickDate": "2026-11-01",
        "commissionDate": "2026-11-02",
        "updateDate": "2026-11-03",
        "publisherRevenue": 6.25,
        "orderValue": 120.5,
        "cuid": "reader-1",
        "linkUtmInfo": utm("link"),
        "pageUtmInfo": utm("page"),
        "destinationUrl": "https://shop.example/kettle",
        "pageUrl": "https://site.example/best-kettles",
        "affProduct": "WRA",
        "affProductSubType": "",
        "programType": "cpa",
        "networkName": "Net A",
        "country": "us",
        "deviceType": "MBL",
        "merchandise": [{"productId": "p1", "productName": "Kettle", "price": 60.25, "quantity": 2}],
    }
    row.update(fields)
    return row


def body(rows: list[dict[str, Any]], **envelope: Any) -> bytes:
    return orjson.dumps({"transactions": rows, **envelope})


def networks_body(rows: list[dict[str, Any]] | None = None) -> bytes:
    rows = (
        rows
        if rows is not None
        else [
            {
                "networkName": "Net A",
                "revenue": 10.5,
                "clicks": 100,
                "sales": 210.0,
                "actions": 2,
                "conversionRate": 0.02,
                "epc": 0.105,
            },
        ]
    )
    return orjson.dumps({"data": rows, "totals": {"revenueTotal": sum(r.get("revenue", 0) for r in rows)}})
