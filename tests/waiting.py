"""Wait for an event, never for a fixed time: poll a condition until it holds or a generous bound passes."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from commerce_reports.lake.manifest import Manifest


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 120.0) -> None:
    """Return as soon as `condition()` holds; fail naming `what` if it never does within `timeout`."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what} after {timeout:.0f} s")
        time.sleep(0.02)


def stored_partitions(data_dir: Path, site: str) -> int:
    """How many partitions a site's manifest records (0 while it does not exist or is being replaced)."""
    try:
        return len(Manifest.load(data_dir, site))
    except Exception:  # a manifest read while another process writes it: try again at the next poll
        return 0
