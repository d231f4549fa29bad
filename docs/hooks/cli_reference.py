"""mkdocs hook: the command-line reference, written from the argparse parser the command runs.

A page holding the marker below gets, in its place, the table of exit codes (from each command's
declared codes) and a section per subcommand (nested ones too): its one-line summary and its
`--help`, examples included. Adding an option, a command or an exit code changes the page on the
next build.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from commerce_reports.cli import build_parser
from commerce_reports.cli.parser import COMMON_EXITS, every_command

MARKER = "<!-- commerce-reports cli reference -->"


def on_page_markdown(markdown: str, **_: Any) -> str:
    """mkdocs event: replace the marker with the reference."""
    return markdown.replace(MARKER, cli_reference()) if MARKER in markdown else markdown


def cli_reference() -> str:
    """The exit codes, then a markdown section per subcommand of `commerce-reports`, in the
    parser's order."""
    os.environ["COLUMNS"] = "100"  # argparse wraps --help to the terminal's width: make it fixed
    return "\n".join([exit_codes_table(), *_sections(build_parser(), "commerce-reports")])


def exit_codes_table() -> str:
    """Every exit code with what it means and which commands give it that meaning."""
    meanings: dict[tuple[int, str], list[str]] = {}
    for words, command in every_command(build_parser()):
        for code, meaning in command.exits.items():
            if COMMON_EXITS.get(code) != meaning:
                meanings.setdefault((code, meaning), []).append(words)
    rows = [f"| {code} | {meaning} | every command |" for code, meaning in COMMON_EXITS.items()]
    for (code, meaning), commands in sorted(meanings.items()):
        named = ", ".join(
            f"`{words}`"
            for words in dict.fromkeys(c.split()[0] if c.startswith("deals") else c for c in commands)
        )
        rows.append(f"| {code} | {meaning} | {named} |")
    head = "## Exit codes\n\n| code | meaning | commands |\n|---|---|---|"
    return "\n".join([head, *sorted(rows, key=lambda row: int(row.split("|")[1]))]) + "\n"


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
