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

__all__ = ["lazy_names"]


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
