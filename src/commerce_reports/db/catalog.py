"""`commerce.duckdb`: a small DuckDB file holding the views, for the DuckDB CLI or any client.

It holds no data, only the view definitions (absolute paths to the lake and rollup files), so it is
written in a moment and stays small. It is written beside, then renamed over the old one: a reader
that has it open keeps the old file; readers open it read-only (`duckdb -readonly`).
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from ..files import save_atomic
from .connection import install_views, resolve_data_dir

__all__ = ["CATALOG_FILE", "write_catalog"]

CATALOG_FILE = "commerce.duckdb"


def write_catalog(data_dir: Path | str | None = None) -> Path:
    """Write `<data_dir>/commerce.duckdb` with the views of `connect()`, atomically; return its path.

    Sites whose rollups are fresh at this moment read them; call it after `refresh_rollups`.
    """
    folder = resolve_data_dir(data_dir)
    folder.mkdir(parents=True, exist_ok=True)

    def write(temp: Path) -> None:
        with duckdb.connect(str(temp)) as con:
            install_views(con, folder)
            con.execute("CHECKPOINT")

    return save_atomic(folder / CATALOG_FILE, write)
