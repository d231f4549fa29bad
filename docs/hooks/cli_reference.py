"""mkdocs hook: the command-line reference, written from the argparse parser the command runs.

A page holding the marker below gets, in its place, a section per subcommand (nested ones too):
its one-line summary and its `--help`. Adding an option or a command changes the page on the next build.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from commerce_reports.cli import build_parser

MARKER = "<!-- commerce-reports cli reference -->"


def on_page_markdown(markdown: str, **_: Any) -> str:
    """mkdocs event: replace the marker with the reference."""
    return markdown.replace(MARKER, cli_reference()) if MARKER in markdown else markdown


def cli_reference() -> str:
    """A markdown section per subcommand of `commerce-reports`, in the parser's order."""
    os.environ["COLUMNS"] = "100"  # argparse wraps --help to the terminal's width: make it fixed
    return "\n".join(_sections(build_parser(), "commerce-reports"))


def _sections(parser: argparse.ArgumentParser, prog: str) -> list[str]:
    commands = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    parts: list[str] = []
    for action in commands:
        helps = {choice.dest: choice.help for choice in action._choices_actions}
        for name, command in action.choices.items():
            title = f"{prog} {name}"
            about = helps.get(name) or ""  # the one-line summary; --help below says the rest
            parts.append(f"## `{title}`\n\n{about}\n\n```text\n{command.format_help()}```\n")
            parts += _sections(command, title)
    return parts
