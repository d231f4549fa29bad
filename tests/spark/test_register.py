"""`register_views` refuses what it cannot use with toolkit errors, before Spark is started."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from commerce_reports.errors import ConfigurationError, LakeError, ValidationError
from commerce_reports.spark import register_views


def test_without_pyspark_it_says_how_to_install_the_extra(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "pyspark", None)
    monkeypatch.setitem(sys.modules, "pyspark.sql", None)
    with pytest.raises(ConfigurationError) as caught:
        register_views(object(), tmp_path)
    assert "pip install 'commerce-reports[spark]'" in str(caught.value)
    assert "Java" in str(caught.value)


def test_the_data_folder_must_hold_a_lake(tmp_path: Path) -> None:
    with pytest.raises(LakeError, match="does not exist"):
        register_views(object(), tmp_path / "missing")
    with pytest.raises(LakeError, match="holds no lake"):
        register_views(object(), tmp_path)
    with pytest.raises(ValidationError, match="data_dir"):
        register_views(object(), 42)  # type: ignore[arg-type]


def test_spark_must_be_a_spark_session(tmp_path: Path) -> None:
    (tmp_path / "lake").mkdir()
    with pytest.raises(ValidationError, match="is not a SparkSession"):
        register_views("local[2]", tmp_path)


def test_the_spark_package_exports_exactly_its_api() -> None:
    import commerce_reports.spark

    assert commerce_reports.spark.__all__ == ["INSTALL_HINT", "register_views"]
