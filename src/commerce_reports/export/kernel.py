"""The kernel that runs report notebooks: encrypted, and shut down without an interrupt.

Two things made every export noisy, and both are settled here rather than filtered from stderr:

- ipykernel warns that it "is running over TCP without encryption" unless the kernel manager hands
  it CurveZMQ keys. jupyter_client does so when `transport_encryption` is "auto" and the kernelspec
  declares support (ipykernel's does); it stays "disabled" by default.
- jupyter_client interrupts a kernel (SIGINT) before asking it to shut down. ipykernel ignores
  SIGINT when idle, but one that lands while it handles a message prints "KeyboardInterrupt caught
  in kernel". When a notebook has finished there is nothing to interrupt; a cell that overruns its
  timeout is still interrupted (nbclient does it explicitly, before any shutdown).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import papermill
from jupyter_client.manager import AsyncKernelManager
from traitlets import default

__all__ = ["ReportKernelManager", "run_notebook"]


class ReportKernelManager(AsyncKernelManager):
    """An ipykernel manager with CurveZMQ transport encryption when the kernel supports it, and
    no interrupt during shutdown."""

    @default("transport_encryption")
    def _transport_encryption_default(self) -> str:
        return "auto"

    async def _async_interrupt_kernel(self) -> None:
        if self.shutting_down:  # the notebook is done: a SIGINT could only land in a message handler
            return
        await super()._async_interrupt_kernel()


def run_notebook(
    source: Path,
    target: Path,
    params: dict[str, Any],
    *,
    cwd: Path,
    kernel_name: str = "python3",
    timeout: int = 600,
) -> None:
    """Execute `source` with `params` into `target` in a kernel started in `cwd` (papermill's
    errors propagate: a failed cell is `papermill.PapermillExecutionError`)."""
    papermill.execute_notebook(
        str(source),
        str(target),
        parameters=params,
        kernel_name=kernel_name,
        kernel_manager_class=ReportKernelManager,
        progress_bar=sys.stderr.isatty(),
        log_output=False,
        execution_timeout=timeout,
        cwd=str(cwd),
    )
