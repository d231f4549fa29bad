"""The main job: the demo runs the whole tour against the sandbox and says what it did."""

from __future__ import annotations

from pathlib import Path

from commerce_reports.demo import run_demo


def test_the_demo_syncs_two_sites_then_needs_nothing_and_shows_the_views(tmp_path: Path) -> None:
    lines: list[str] = []
    result = run_demo(days=5, data_dir=tmp_path, reports=tmp_path / "reports", say=lines.append)
    text = "\n".join(lines)
    assert result["failed"] == 0 and result["stored"] > 0 and result["rows"] > 0
    assert result["second_sync_requests"] == 0
    assert "sites alpha, beta" in text and "network_performance" in text and "country_performance" in text
    assert (tmp_path / "lake" / "site=alpha" / "manifest.json").is_file()
    assert (tmp_path / "lake" / "site=beta" / "manifest.json").is_file()
    assert "sandbox-alpha-key" not in text
    assert (tmp_path / "commerce.duckdb").is_file()
    assert result["report"] is not None and result["report"].is_file()
    assert result["report"].read_text().count('id="commerce-chart-') >= 5
