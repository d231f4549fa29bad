"""Options several commands share, each checked before a command does any work: `--data-dir` (one
help text, the README's rule), `--site` (an unknown name is a usage error with the nearest known
one), dates (`YYYY-MM-DD`, said in every help that takes one), the data folder of a command that
only reads or maintains a lake (one that does not exist is refused, never created), a file to
write (its folder must exist) and a folder to write into (made, but only inside one that exists).
A `UsageError` prints as one `error:` line and exits 2 (`commerce_reports.cli.main`). Plain Python
only: nothing here loads the data stack."""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Iterable
from datetime import date
from pathlib import Path

from ..errors import ValidationError
from .parser import CommandParser

__all__ = [
    "DATA_DIR_HELP",
    "DATE_FORMAT",
    "UsageError",
    "add_data_dir",
    "add_sites",
    "count",
    "day",
    "existing_lake",
    "known_sites",
    "output_folder",
    "writable_file",
]

DATE_FORMAT = "YYYY-MM-DD"
DATA_DIR_HELP = (
    "the lake's folder (default: $COMMERCE_REPORTS_DATA_DIR, else the data_dir of the nearest "
    "commerce-reports.toml at or above the working folder, else the user data folder; "
    "`commerce-reports status` says which and why)"
)


class UsageError(ValidationError):
    """A site, folder or value named on the command line that cannot be used: nothing ran (exit 2)."""

    @classmethod
    def of(cls, error: ValidationError, option: str | None = None) -> UsageError:
        """The library's refusal `error`, said of the command line's `option` (default: the
        parameter it names)."""
        return cls(option or error.parameter, error.problem, error.allowed)


def day(text: str) -> date:
    """An argparse type: a calendar day written YYYY-MM-DD."""
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text.strip()):
        try:
            return date.fromisoformat(text.strip())
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a real calendar day") from None
    raise argparse.ArgumentTypeError(f"expected a date {DATE_FORMAT}, e.g. 2026-11-01 (got {text!r})")


def count(least: int, most: int | None = None) -> type[int]:
    """An argparse type: a whole number from `least` (to `most`)."""

    def whole(text: str) -> int:
        value = int(text) if text.strip().isdigit() else None
        if value is None or value < least or (most is not None and value > most):
            span = f"from {least} to {most}" if most is not None else f"of {least} or more"
            raise argparse.ArgumentTypeError(f"expected a whole number {span} (got {text!r})")
        return value

    whole.__name__ = "number"  # argparse names the type in its messages
    return whole  # type: ignore[return-value]


def add_data_dir(parser: CommandParser, help: str = DATA_DIR_HELP) -> None:
    """`--data-dir`, with the help text every command shares."""
    parser.add_argument("--data-dir", type=Path, metavar="FOLDER", help=help)


def add_sites(parser: CommandParser, help: str = "only this site (repeatable; default: all)") -> None:
    """`--site NAME`, repeatable, into `args.sites`."""
    parser.add_argument("--site", action="append", dest="sites", metavar="NAME", help=help)


def _folder(data_dir: Path | None) -> Path:
    from ..config import current_settings

    settings = current_settings()  # a setting that cannot be used is said now, before any work
    return settings.data_dir if data_dir is None else data_dir.expanduser().absolute()


def folder_path(text: str) -> Path:
    """An argparse type: a folder's path, not an empty word (which would name the working folder)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty folder name: give e.g. my-reports (or . for this folder)")
    return Path(text)


def existing_lake(command: str, data_dir: Path | None) -> Path:
    """The data folder of a command that must not create one: a folder that does not exist (a
    typo in --data-dir, say) is a usage error rather than a new, empty lake."""
    folder = _folder(data_dir)
    if folder.is_dir():
        return folder
    problem = (
        f"{folder} is a file, not a data folder"
        if folder.exists()
        else f"there is no data folder at {folder} ({command} creates none)"
    )
    if data_dir is not None:
        raise UsageError("--data-dir", problem, "check the path; `commerce-reports sync` creates one")
    from ..config import current_settings

    raise UsageError(  # no option given: the configured lake, and why it is that one
        "the lake",
        f"{problem}; it is {current_settings().lake.reason}",
        "`commerce-reports sync` creates it, `commerce-reports init <folder>` makes a project, "
        "--data-dir names another",
    )


def writable_file(option: str, path: Path) -> Path:
    """A file a command will write: its folder must exist (a typo is refused, never created) and
    it must not be a folder."""
    target = path.expanduser().absolute()
    if target.is_dir():
        raise UsageError(option, f"{target} is a folder", "give a file name, e.g. report.xlsx")
    if not target.parent.is_dir():
        problem = "is a file" if target.parent.exists() else "does not exist"
        raise UsageError(option, f"the folder {target.parent} {problem}", "create it first, or give another")
    return target


def output_folder(option: str, path: Path, *, parents: bool = False) -> Path:
    """A folder a command writes into, never a file: made when it is missing, but only inside a
    folder that exists (a typo is refused, never made into a tree of new folders); `parents`: a
    folder the command chose itself, made with its parents (the reports beside a new lake)."""
    target = path.expanduser().absolute()
    if target.exists() and not target.is_dir():
        raise UsageError(option, f"{target}: it exists and is not a folder", "give a folder")
    if not parents and not target.parent.is_dir():
        problem = "is a file" if target.parent.exists() else "does not exist"
        raise UsageError(option, f"the folder {target.parent} {problem}", "create it first, or give another")
    existing = next(folder for folder in (target, *target.parents) if folder.exists())
    if not os.access(existing, os.W_OK | os.X_OK):  # (a read-only file system: said before any work)
        raise UsageError(option, f"the folder {existing} cannot be written", "give a folder you can write to")
    return target


def known_sites(
    command: str, sites: Iterable[str] | None, data_dir: Path | None, *, stored: bool, option: str = "--site"
) -> None:
    """Refuse (exit 2) a site name that is not configured, nor with `stored` held by the lake,
    naming the nearest known one and the `option` that gave it (`--param site` for an export)."""
    if not sites:
        return
    from ..config import current_settings
    from ..contract import lake_sites
    from ..embedded import available_sites

    known = set(available_sites(current_settings(), start=False))
    if stored:
        known |= set(lake_sites(_folder(data_dir)))
    unknown = [name for name in sites if name not in known]
    if unknown:
        import difflib

        close = difflib.get_close_matches(unknown[0], sorted(known), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise UsageError(
            option,
            f"unknown site {unknown[0]!r} ({command} ran nothing){hint}",
            f"known sites: {', '.join(sorted(known)) or 'none'}",
        )
