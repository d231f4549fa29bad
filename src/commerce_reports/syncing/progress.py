"""Progress of a sync: a bar per lane in terminals and notebooks, plain log lines otherwise."""

from __future__ import annotations

import logging
import sys
import threading
from typing import Any

from .plan import PlannedRequest, SyncPlan

__all__ = ["Progress"]

log = logging.getLogger(__name__)


class Progress:
    """A bar per lane when interactive (or `enabled=True`); log lines for scheduled runs."""

    def __init__(self, plan: SyncPlan, enabled: bool | None) -> None:
        interactive = sys.stderr.isatty() or "ipykernel" in sys.modules
        self.bars: dict[tuple[str, str], Any] = {}
        self.done: dict[tuple[str, str], int] = {}
        self.plan = plan
        if enabled if enabled is not None else interactive:
            from tqdm.auto import tqdm

            for position, (lane, requests) in enumerate(sorted(plan.lanes.items())):
                self.bars[lane] = tqdm(
                    total=len(requests),
                    desc=f"{lane[0]} {lane[1]}",
                    position=position,
                    unit="req",
                    leave=True,
                    dynamic_ncols=True,
                )
        self.lock = threading.Lock()

    def advance(self, request: PlannedRequest, rows: int) -> None:
        lane = (request.site, request.key.endpoint)
        with self.lock:
            self.done[lane] = self.done.get(lane, 0) + 1
            if lane in self.bars:
                self.bars[lane].update(1)
            else:
                log.info(
                    "%s %s: %d rows (%d/%d)",
                    request.site,
                    request.key.describe(),
                    rows,
                    self.done[lane],
                    len(self.plan.lanes[lane]),
                )

    def close(self) -> None:
        for bar in self.bars.values():
            bar.close()
