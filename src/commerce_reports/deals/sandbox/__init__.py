"""The deal-request interface on loopback (`commerce-reports sandbox --deals`).

Keys with write and read-only scope and one of an account not enabled for the API; stored deals
(active 1001, archived 1002, open 1003, status managed by its DSP 1004, another account's 9001);
targeting value lists; a rate limit; downstream faults on demand (every 5xx of part 7.2, and a
dropped connection). Written from the contract alone: it shares no code with the deal client.

    app.py      `DealsSandbox`: routing, keys, rate limit, the order of checks, stored deals
    rules.py    what a body is refused for, in the contract's words
    faults.py   `Fault`: the failures a write meets on demand, before or after it applied
    replies.py  answers in the shapes of part 7.2
    world.py    seed data: accounts, demand platforms, targeting values, stored deals
    server.py   `run_deals_sandbox` (background) and `serve_deals_forever` (foreground)
"""

from __future__ import annotations

from .app import (
    DEFAULT_DISABLED_KEY,
    DEFAULT_READ_KEY,
    DEFAULT_WRITE_KEY,
    DealsSandbox,
    DownstreamWrite,
    RecordedRequest,
)
from .faults import Fault
from .server import RunningDealsSandbox, run_deals_sandbox, serve_deals_forever
from .world import SEEDED

__all__ = [
    "DEFAULT_DISABLED_KEY",
    "DEFAULT_READ_KEY",
    "DEFAULT_WRITE_KEY",
    "SEEDED",
    "DealsSandbox",
    "DownstreamWrite",
    "Fault",
    "RecordedRequest",
    "RunningDealsSandbox",
    "run_deals_sandbox",
    "serve_deals_forever",
]
