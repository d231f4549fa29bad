"""The kernel that runs report notebooks: encrypted, and shut down without an interrupt.

Two things made every export noisy, and both are settled here rather than filtered from stderr:

- ipykernel warns that it "is running over TCP without encryption" unless the kernel manager hands
  it CurveZMQ keys. jupyter_client does so when `transport_encryption` is "auto" and the kernelspec
  declares support (ipykernel's does); it stays "disabled" by default.
- papermill warns "Passed unknown parameter" for every parameter annotated `date | None`: its
  inspector reads no `|` in an annotation. `export_notebook` has already checked every parameter
  against the notebook (`parameters.py` reads those annotations), so that one warning is dropped
  while a notebook runs; papermill's other messages pass.
- jupyter_client interrupts a kernel (SIGINT) before asking it to shut down. ipykernel ignores
  SIGINT when idle, but one that lands while it handles a message prints "KeyboardInterrupt caught
  in kernel". When a notebook has finished there is nothing to interrupt; a cell that overruns its
  timeout is still interrupted (nbclient does it explicitly, before any shutdown).
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import papermill
from jupyter_client.manager import AsyncKernelManager
from traitlets import Dict, Unicode, default
from traitlets.config import Config

from ..errors import ValidationError

__all__ = ["ReportKernelManager", "checked_environment", "run_notebook"]


class ReportKernelManager(AsyncKernelManager):
    """An ipykernel manager with CurveZMQ transport encryption when the kernel supports it, no
    interrupt during shutdown, and `environment` added to the kernel's environment."""

    environment = Dict(key_trait=Unicode(), value_trait=Unicode(), config=True)

    async def _async_pre_start_kernel(self, **kw: Any) -> Any:
        if self.environment:
            kw["env"] = {**kw.get("env", os.environ), **self.environment}
        return await super()._async_pre_start_kernel(**kw)

    @default("transport_encryption")
    def _transport_encryption_default(self) -> str:
        return "auto"

    async def _async_interrupt_kernel(self) -> None:
        if self.shutting_down:  # the notebook is done: a SIGINT could only land in a message handler
            return
        await super()._async_interrupt_kernel()


def checked_environment(environment: Mapping[str, str] | None) -> dict[str, str]:
    """`environment` as a dict of variable names to text, or a ValidationError."""
    if environment is None:
        return {}
    if not isinstance(environment, Mapping) or not all(
        isinstance(k, str) and k.strip() and "=" not in k and isinstance(v, str)
        for k, v in environment.items()
    ):
        raise ValidationError(
            "environment", "is not a mapping of variable names to text", "give {'NAME': 'value'}"
        )
    return dict(environment)


def _checked_elsewhere(record: logging.LogRecord) -> bool:
    return not record.getMessage().startswith("Passed unknown parameter")


@contextmanager
def _parameters_checked() -> Iterator[None]:
    """Drop papermill's unknown-parameter warning: the parameters were checked before."""
    papermill_log = logging.getLogger("papermill")
    papermill_log.addFilter(_checked_elsewhere)
    try:
        yield
    finally:
        papermill_log.removeFilter(_checked_elsewhere)


def run_notebook(
    source: Path,
    target: Path,
    params: dict[str, Any],
    *,
    cwd: Path,
    environment: Mapping[str, str] | None = None,
    kernel_name: str = "python3",
    timeout: int = 600,
) -> None:
    """Execute `source` with `params` into `target` in a kernel started in `cwd`, with
    `environment` added to its environment (papermill's errors propagate: a failed cell is
    `papermill.PapermillExecutionError`). The caller has checked `params` against the notebook."""
    extra = checked_environment(environment)
    with _parameters_checked():
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
            config=Config({"ReportKernelManager": {"environment": extra}}),
        )
