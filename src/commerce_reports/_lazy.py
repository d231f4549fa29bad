"""Package faces whose names load on first use (PEP 562), written once for every package.

    __getattr__, __dir__ = lazy_names(__name__, {"sync": "api", ...}, __all__)

Importing one module of a package then stays cheap: `commerce_reports.charts.offline` does not
load Altair, DuckDB and polars, nor `import commerce_reports` the whole toolkit. Imports nothing
of the package, so any floor may use it.
"""

from __future__ import annotations

import importlib
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without loading typing: `--help` starts at once
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from typing import Any

__all__ = ["LazyLogger", "defer_logging", "lazy_names"]


def lazy_names(
    package: str, homes: Mapping[str, str], exported: Iterable[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A module `__getattr__` loading each name of `homes` from its module (relative to `package`)
    the first time it is asked for, then keeping it as a plain attribute; and a `__dir__` listing
    `exported`."""
    namespace = vars(sys.modules[package])
    listed = sorted(exported)

    def load(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f".{home}", package), name)
        namespace[name] = value  # the next look-up is a plain attribute
        return value

    def names() -> list[str]:
        return list(listed)

    return load, names


_configure: list[Callable[[], None]] = []  # how the command line wants logging set up, until it loads


class LazyLogger:
    """`logging.getLogger(name)`, loaded on first use: a module that may log loads `logging` (with
    traceback, string and threading) only when it does, so `status` starts without it. A command
    that defers its logging set-up (`defer_logging`) has it done here, before the first line."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attribute: str) -> Any:
        import logging

        while _configure:
            _configure.pop()()
        return getattr(logging.getLogger(self._name), attribute)


def defer_logging(configure: Callable[[], None]) -> None:
    """Run `configure` (the command line's logging set-up) before a LazyLogger's first line, not now.
    Only for a command that loads no library that logs on its own."""
    _configure[:] = [configure]
