"""The offline Vega bundle is made once per vl-convert version and kept in the user's cache: a
kernel's first chart and an export read it (bundling takes a second), and a kept file that is not
whole is never used."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
import vl_convert

from commerce_reports.charts import offline


@pytest.fixture
def fresh() -> Iterator[None]:
    offline._bundle.cache_clear()  # as in a new process
    yield
    offline._bundle.cache_clear()


def _kept() -> list[Path]:
    return list((Path(os.environ["XDG_CACHE_HOME"]) / "commerce-reports" / "vega").glob("bundle-*.js"))


def test_the_bundle_is_made_once_then_read_from_the_users_cache(
    fresh: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = offline.vega_bundle_html()
    assert "vegaEmbed" in made and offline.READY_EVENT in made
    [kept] = _kept()
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    offline._bundle.cache_clear()

    def bundle_again(*_: object) -> str:
        raise AssertionError("bundled again, though the cache held it")

    monkeypatch.setattr(vl_convert, "javascript_bundle", bundle_again)
    assert offline.vega_bundle_html() == made


def test_a_kept_bundle_cut_short_is_made_again(fresh: None) -> None:
    made = offline.vega_bundle_html()
    [kept] = _kept()
    kept.write_text(kept.read_text()[:1000])  # as if copied in part
    offline._bundle.cache_clear()
    assert offline.vega_bundle_html() == made
    assert kept.read_text().startswith(made[len('<script type="text/javascript">') :][:1000])
    assert len(kept.read_text()) > 100_000


def test_a_cache_that_cannot_be_written_still_gives_the_bundle(
    fresh: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the cache folder would be")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    assert "vegaEmbed" in offline.vega_bundle_html()
