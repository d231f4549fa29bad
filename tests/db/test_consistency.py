"""One statement sees one state of the lake, whatever a sync in another process does meanwhile."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb

from commerce_reports.api import SyncOptions, sync
from commerce_reports.db import connect
from commerce_reports.embedded import sandbox_sites
from commerce_reports.sandbox import DEMO_SITES, SandboxConfig, run_sandbox

# Three ways the same state is counted in one statement: the transactions rollup, the ledger's
# distinct ids, and the daily rollup's sums (each reads other files, written at other moments).
CHECK = """
SELECT (SELECT count(*) FROM transactions),
       (SELECT count(DISTINCT (site, commission_id)) FROM transaction_versions
        WHERE commission_id IS NOT NULL),
       (SELECT coalesce(sum(transactions), 0) FROM daily_performance),
       (SELECT coalesce(sum(transactions), 0) FROM site_performance)
"""


def test_statements_during_a_sync_never_contradict_themselves(tmp_path: Path) -> None:
    now = datetime.now(UTC)
    config = SandboxConfig(
        now=now, first_day=now.date() - timedelta(days=90), pace=0.0, transactions_per_day=20
    )
    data_dir = tmp_path / "data"
    with run_sandbox(config) as running:
        options = SyncOptions(now=lambda: running.sandbox.now, pace=0, progress=False, say=lambda _: None)
        start = now.date() - timedelta(days=4)
        assert sync(start, sites=sandbox_sites(running), data_dir=data_dir, options=options).ok
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("COMMERCE_REPORTS_")},
            "COMMERCE_REPORTS_BASE_URL": running.base_url,
            "COMMERCE_REPORTS_PACE": "0",
            **{f"COMMERCE_REPORTS_SECRET_KEY_{s.name.upper()}": s.secret_key for s in DEMO_SITES},
        }
        earlier = (now.date() - timedelta(days=20)).isoformat()
        command = [sys.executable, "-m", "commerce_reports", "sync", "--start", earlier, "--no-progress"]
        with connect(data_dir) as con:
            before = _counts(con)
            writer = subprocess.Popen(
                [*command, "--data-dir", str(data_dir)],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            seen = []
            while writer.poll() is None:
                seen.append(_counts(con))
            out, err = writer.communicate()
            assert writer.returncode == 0, out + err
            after = _counts(con)
    contradicting = [counts for counts in seen if len(set(counts)) != 1]
    assert not contradicting, f"{len(contradicting)} of {len(seen)} statements contradicted themselves"
    assert len(set(before)) == len(set(after)) == 1 and after[0] > before[0]
    assert len(seen) >= 10  # the readers really ran beside the sync
    print(f"{len(seen)} statements during the sync, none contradicting itself")


def _counts(con: duckdb.DuckDBPyConnection) -> tuple[int, ...]:
    row = con.execute(CHECK).fetchone()
    assert row is not None
    return tuple(int(n) for n in row)
