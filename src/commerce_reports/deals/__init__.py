"""Deal requests: typed models, local checks with the contract's messages, and `DealsClient`.

    import commerce_reports as cr
    with cr.open_deals_client() as deals:  # key and URL from COMMERCE_REPORTS_DEALS_* settings
        deal = deals.create({"buyers": [...], "commercial": {"takeRate": 0.2}, ...})
        deals.update(deal.id, {"status": "paused"})

Every failure of a request is a `DealError` (tree in `deals/errors.py`); missing settings are a
`ConfigurationError`. The wing stands on its own: it shares with the reports side only the HTTP
layer (`commerce_reports.http`) and secret handling (`commerce_reports.secret`,
`commerce_reports.redaction`). Its offline twin of the service is `commerce_reports.deals.sandbox`,
imported on its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names

if TYPE_CHECKING:
    from .checks import (
        ENUMERATED_ATTRIBUTES,
        AdUnitSizeWarning,
        CheckReport,
        check_create,
        check_targeting_values,
        check_update,
    )
    from .client import DealsClient
    from .models import STATUSES, Buyer, Commercial, Deal, Schedule, TargetingGroup
    from .responses import error_from_response

__all__ = [
    "ENUMERATED_ATTRIBUTES",
    "STATUSES",
    "AdUnitSizeWarning",
    "Buyer",
    "CheckReport",
    "Commercial",
    "Deal",
    "DealsClient",
    "Schedule",
    "TargetingGroup",
    "check_create",
    "check_targeting_values",
    "check_update",
    "error_from_response",
]

# Names load on first use, so `commerce_reports.deals.errors` (the CLI's exit codes) costs no HTTP stack.
_HOMES = {
    **dict.fromkeys(
        (
            "ENUMERATED_ATTRIBUTES",
            "AdUnitSizeWarning",
            "CheckReport",
            "check_create",
            "check_targeting_values",
            "check_update",
        ),
        "checks",
    ),
    "DealsClient": "client",
    **dict.fromkeys(("STATUSES", "Buyer", "Commercial", "Deal", "Schedule", "TargetingGroup"), "models"),
    "error_from_response": "responses",
}


__getattr__, __dir__ = lazy_names(__name__, _HOMES, __all__)
