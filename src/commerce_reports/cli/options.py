"""Options several commands share: `--data-dir` (one help text, the README's rule), `--site`
(an unknown name is a usage error, exit 2, before anything is created), and the data folder of a
command that only reads or maintains a lake (one that does not exist is refused, never created).
A `UsageError` prints as one `error:` line and exits 2 (`commerce_reports.cli.main`)."""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from pathlib import Path

from ..contract import lake_root
from ..errors import ValidationError

__all__ = ["DATA_DIR_HELP", "UsageError", "add_data_dir", "existing_lake", "known_sites"]

DATA_DIR_HELP = (
    "the lake's folder (default: $COMMERCE_REPORTS_DATA_DIR, else the data_dir of the nearest "
    "commerce-reports.toml at or above the working folder, else the user data folder; "
    "`commerce-reports status` says which and why)"
)


def add_data_dir(parser: argparse.ArgumentParser) -> None:
    """`--data-dir`, with the help text every command shares."""
    parser.add_argument("--data-dir", type=Path, help=DATA_DIR_HELP)


class UsageError(ValidationError):
    """A site or folder named on the command line that cannot be used: nothing ran (exit 2)."""


def _folder(data_dir: Path | None) -> Path:
    from ..config import current_settings

    return current_settings().data_dir if data_dir is None else data_dir.expanduser().absolute()


def existing_lake(command: str, data_dir: Path | None) -> Path:
    """The data folder of a command that must not create one: a folder that does not exist (a
    typo in --data-dir, say) is a usage error rather than a new, empty lake."""
    folder = _folder(data_dir)
    if not folder.is_dir():
        raise UsageError(
            "--data-dir",
            f"{folder} is a file, not a data folder"
            if folder.exists()
            else f"there is no data folder at {folder} ({command} creates none)",
            "check the path (`commerce-reports status` says which lake is used and why); "
            "`commerce-reports sync` creates one",
        )
    return folder


def known_sites(command: str, sites: Iterable[str] | None, data_dir: Path | None, *, stored: bool) -> None:
    """Refuse (exit 2) a site name that is not configured, nor with `stored` held by the lake."""
    if not sites:
        return
    from ..config import current_settings
    from ..embedded import available_sites

    known = set(available_sites(current_settings(), start=False))
    if stored:
        root = lake_root(_folder(data_dir))
        known |= {p.name.removeprefix("site=") for p in root.glob("site=*")} if root.is_dir() else set()
    unknown = [name for name in sites if name not in known]
    if unknown:
        raise UsageError(
            "--site",
            f"unknown site {unknown[0]!r} ({command} ran nothing)",
            f"known sites: {', '.join(sorted(known)) or 'none'}",
        )
