"""What the toolkit creates holds a business's revenue: the data folder, the lake, the rollups, the
catalog and the state beside the pace are readable by their owner only (0700 folders, 0600 files),
or by the owner's group too when the user shares with it (0750/0640), whatever the umask."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from commerce_reports.api import sync
from commerce_reports.errors import ConfigurationError
from commerce_reports.files import GROUP, PRIVATE, modes, save_atomic
from commerce_reports.sandbox.runner import RunningSandbox
from tests.lake.conftest import options_for, profiles


@pytest.fixture
def umask() -> Iterator[None]:
    """A permissive umask, so that only the toolkit's own modes can keep files private."""
    before = os.umask(0)
    yield
    os.umask(before)


def _modes_below(*roots: Path) -> tuple[set[int], set[int]]:
    """The permission bits of every folder (the roots included) and every file below the roots."""
    folders: set[int] = set()
    found: set[int] = set()
    for root in roots:
        for path in [root, *root.rglob("*")]:
            bits = stat.S_IMODE(path.stat().st_mode)
            (folders if path.is_dir() else found).add(bits)
    return folders, found


def _synced(running: RunningSandbox, tmp_path: Path) -> tuple[Path, Path]:
    data = tmp_path / "data"
    start = running.sandbox.now.date() - timedelta(days=2)
    result = sync(start, sites=profiles(running)[:1], data_dir=data, options=options_for(running))
    assert result.ok and (data / "commerce.duckdb").is_file() and (data / "rollups").is_dir()
    cache = Path(os.environ["XDG_CACHE_HOME"])
    assert list(cache.glob("commerce-reports/pace/*.json")) and list(cache.glob("commerce-reports/costs/*"))
    return data, cache


def test_the_lake_rollups_catalog_and_state_are_their_owners_alone(
    running: RunningSandbox, tmp_path: Path, umask: None
) -> None:
    data, cache = _synced(running, tmp_path)
    assert modes() == PRIVATE
    assert _modes_below(data, cache) == ({0o700}, {0o600})


@pytest.mark.parametrize("how", ["environment", "project marker"])
def test_sharing_with_the_group_makes_everything_group_readable(
    running: RunningSandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    if how == "environment":
        monkeypatch.setenv("COMMERCE_REPORTS_SHARE_GROUP", "1")
    else:
        (tmp_path / "commerce-reports.toml").write_text('data_dir = "data"\nshare_group = true\n')
    before = os.umask(0o077)  # a strict umask does not undo an explicit choice
    try:
        data, cache = _synced(running, tmp_path)
    finally:
        os.umask(before)
    assert modes() == GROUP
    assert _modes_below(data, cache) == ({0o750}, {0o640})


def test_an_existing_folder_keeps_its_mode(tmp_path: Path, umask: None) -> None:
    (tmp_path / "mine").mkdir(mode=0o755)
    save_atomic(tmp_path / "mine" / "new" / "state.json", "{}")
    assert [stat.S_IMODE(p.stat().st_mode) for p in (tmp_path / "mine", tmp_path / "mine" / "new")] == [
        0o755,
        0o700,
    ]
    assert stat.S_IMODE((tmp_path / "mine" / "new" / "state.json").stat().st_mode) == 0o600


def test_a_file_is_private_while_it_is_written_and_a_link_is_written_through(
    tmp_path: Path, umask: None
) -> None:
    seen: list[int] = []

    def write(temp: Path) -> None:  # as a format's writer does: make the file, write, close
        temp.write_text("rows")  # (with the umask's mode: 0o666 here)
        seen.append(stat.S_IMODE(temp.parent.stat().st_mode))  # what others can reach it through

    shared = tmp_path / "shared" / "sites.csv"
    shared.parent.mkdir()
    shared.write_text("last week")
    (tmp_path / "sites.csv").symlink_to(shared)
    assert save_atomic(tmp_path / "sites.csv", write) == tmp_path / "sites.csv"
    assert seen == [0o700]  # (it was written in the target's folder, readable by all until done)
    assert (tmp_path / "sites.csv").is_symlink() and shared.read_text() == "rows"  # (the link was replaced)
    os.mkfifo(tmp_path / "pipe.csv")
    with pytest.raises(OSError, match="a pipe, socket or device, not a file: nothing written"):
        save_atomic(tmp_path / "pipe.csv", "rows")
    assert stat.S_ISFIFO((tmp_path / "pipe.csv").stat().st_mode)


@pytest.mark.parametrize("value", ["maybe", "2"])
def test_a_sharing_setting_that_is_not_yes_or_no_is_refused(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("COMMERCE_REPORTS_SHARE_GROUP", value)
    with pytest.raises(ConfigurationError, match="COMMERCE_REPORTS_SHARE_GROUP"):
        modes()


def test_a_folder_standing_where_a_file_is_saved_is_named_not_the_temporary_file(tmp_path: Path) -> None:
    """A manifest.json made a folder: every sync failed naming `.manifest.json.<host>-<pid>.tmp/...`,
    a file gone by the time anyone looked, and said nothing of what to do."""
    target = tmp_path / "manifest.json"
    target.mkdir()
    with pytest.raises(IsADirectoryError) as raised:
        save_atomic(target, b"{}")
    assert raised.value.filename == str(target) and "move it aside" in str(raised.value)
    assert [p.name for p in tmp_path.iterdir()] == ["manifest.json"]  # and no temporary file left
