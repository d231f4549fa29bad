"""The embedded default: with no secret key configured, the toolkit runs against a sandbox.

One sandbox per process, started on first use on a free loopback port in a background thread,
at the demo-friendly pace, so a new user sees everything work without any set-up.
"""

from __future__ import annotations

import atexit
import threading
from contextlib import ExitStack
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .sandbox import RunningSandbox

__all__ = ["embedded_sandbox"]

_lock = threading.Lock()
_running: RunningSandbox | None = None
_stack = ExitStack()
# Stop the server while threads still run: left to interpreter finalization, `shutdown` would wait
# forever for a server thread that is already frozen, and the process would never exit.
atexit.register(_stack.close)


def embedded_sandbox() -> RunningSandbox:
    """The process's sandbox, started on first use (its sites are the demo sites)."""
    global _running
    from .sandbox import FAST_PACE, SandboxConfig, run_sandbox

    with _lock:
        if _running is None:
            _running = _stack.enter_context(run_sandbox(SandboxConfig(pace=FAST_PACE)))
        return _running
