"""The command line's parser: a command is declared once (its summary, description, examples and
exit codes, and a function that adds its arguments) and everything a user meets follows from it.

- A mistake is one line on standard error and exit 2, with a "did you mean" when a command, a
  choice or an option is close to what was typed (`commerce-reports snyc` -> `sync`).
- Every `--help` ends with the command's examples and its exit codes.
- A command's arguments are added the first time it is parsed or its help is shown: `--help`
  and `status` never import what the other commands' arguments need (the sandbox's fault kinds,
  the deal errors' exit codes).

Imports nothing heavy: `commerce-reports --help` loads argparse and the command modules only.
"""

from __future__ import annotations

import argparse
import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without loading typing: `--help` starts at once
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping, Sequence
    from typing import Any, NoReturn

__all__ = [
    "COMMON_EXITS",
    "USAGE",
    "Command",
    "CommandParser",
    "Formatter",
    "add_command",
    "every_command",
    "exit_table",
]

USAGE = 2  # the user's words were wrong: nothing ran (argparse's and click's code)

# What every command's exit status means, beside what a command declares of its own.
COMMON_EXITS: Mapping[int, str] = {
    0: "done",
    1: "a failure while running (said in one `error:` line)",
    USAGE: "a usage error: an unknown command, option, site or value, a setting that cannot be "
    "used, a missing folder; nothing ran",
    130: "interrupted (Ctrl-C, or a SIGTERM or SIGHUP: the same clean stop)",
    141: "the output's reader stopped reading (`| head`): said by the code alone, as a shell says it",
}


class Formatter(argparse.HelpFormatter):
    """argparse's help, except that an indented line (an example, a table row) is kept as written
    while prose paragraphs are filled to the terminal's width."""

    def __init__(
        self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None
    ) -> None:
        # argparse makes a formatter for every argument it adds, and its own default width loads
        # shutil (with bz2 and lzma) at every start: the width is found as shutil finds it instead.
        super().__init__(prog, indent_increment, max_help_position, _columns() if width is None else width)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        paragraphs = []
        for paragraph in text.split("\n\n"):
            if paragraph.startswith(" ") or "\n " in paragraph:
                paragraphs.append("\n".join(indent + line for line in paragraph.splitlines()))
            else:
                paragraphs.append(super()._fill_text(paragraph, width, indent))
        return "\n\n".join(paragraphs)


def _columns() -> int:
    """The terminal's width as `shutil.get_terminal_size()` gives it: COLUMNS, else the width of
    standard output's terminal, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


def _closest(word: str, candidates: Sequence[str]) -> str:
    """'; did you mean X?' when one candidate is close to `word`, else ''."""
    import difflib

    found = difflib.get_close_matches(word, candidates, n=1, cutoff=0.6)
    return f"; did you mean {found[0]!r}?" if found else ""


class CommandParser(argparse.ArgumentParser):
    """An ArgumentParser whose mistakes are one line with a hint, and whose arguments may be added
    on first use (`define`)."""

    def __init__(
        self,
        *args: Any,
        define: Callable[[CommandParser], None] | None = None,
        examples: Sequence[str] = (),
        exits: Mapping[int, str] | None = None,
        **kwargs: Any,
    ) -> None:
        kwargs.setdefault("formatter_class", Formatter)
        # a command's -h is added with its other arguments, on first use: a parser is made for every
        # command at every start, and an argument added makes a formatter
        add_help = kwargs.get("add_help", True)
        self._help = add_help and define is not None
        kwargs["add_help"] = add_help and define is None
        super().__init__(*args, **kwargs)
        self._define = define
        self.examples = tuple(examples)
        self.exits: dict[int, str] = {**COMMON_EXITS, **(exits or {})}

    def defined(self) -> CommandParser:
        """This parser with its arguments added (they are added once, on first use)."""
        define, self._define = self._define, None
        if self._help:
            self._help = False
            self.add_argument(
                "-h",
                "--help",
                action="help",
                default=argparse.SUPPRESS,
                help="show this help message and exit",
            )
        if define is not None:
            define(self)
        return self

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        return super(CommandParser, self.defined()).parse_known_args(args, namespace)

    def parse_args(self, args: Any = None, namespace: Any = None) -> Any:
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            owner = getattr(parsed, "command_parser", self)
            options = [o for o in owner._option_string_actions if o.startswith("--")]
            first = next((e for e in extras if e.startswith("-")), extras[0])
            hint = _closest(first.split("=", 1)[0], options) if first.startswith("-") else ""
            owner.error(f"unrecognized arguments: {' '.join(extras)}{hint}")
        return parsed

    def format_help(self) -> str:
        self.defined()
        if self.examples:  # written now: defining the arguments may have declared more exit codes
            examples = "\n".join(f"  {line}" for line in self.examples)
            self.epilog = f"examples:\n{examples}\n\n{exit_table(self.exits)}"
        return super().format_help()

    def format_usage(self) -> str:
        return super(CommandParser, self.defined()).format_usage()

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        choices = action.choices
        if choices is None or value in choices:
            return
        names = [str(choice) for choice in choices]
        if isinstance(action, argparse._SubParsersAction):
            problem = f"unknown command {value!r}{_closest(str(value), names)} (commands: {', '.join(names)})"
        else:
            problem = (
                f"invalid choice: {value!r}{_closest(str(value), names)} (choose from {', '.join(names)})"
            )
        raise argparse.ArgumentError(action, problem)

    def error(self, message: str) -> NoReturn:
        """One line and exit 2: what is wrong, and where the help is."""
        text = " ".join(message.split())
        self.exit(USAGE, f"{self.prog}: error: {text} (`{self.prog} --help` lists what it takes)\n")


Command = CommandParser  # what `add_command` gives a command module to add arguments to


def exit_table(exits: Mapping[int, str], width: int = 96) -> str:
    """The exit codes of a command, a code a line (wrapped), for the end of its `--help`."""
    import textwrap

    rows = (
        textwrap.fill(meaning, width, initial_indent=f"  {code:<4}", subsequent_indent=" " * 6)
        for code, meaning in sorted(exits.items())
    )
    return "exit status:\n" + "\n".join(rows)


def add_command(
    subparsers: Any,
    name: str,
    *,
    help: str,
    description: str,
    examples: Sequence[str],
    define: Callable[[CommandParser], None],
    exits: Mapping[int, str] | None = None,
    handler: Callable[[argparse.Namespace], int] | None = None,
) -> CommandParser:
    """Declare the command `name`: its one-line `help` (in `commerce-reports --help`), its
    `description`, at least one example (shown at the end of its `--help`), its own exit codes
    beside the common ones, the function that adds its arguments (called on first use) and the
    `handler(args) -> int` that runs it."""
    if not examples:
        raise ValueError(f"the command {name!r} declares no example: give at least one")
    parser: CommandParser = subparsers.add_parser(
        name, help=help, description=description, define=define, examples=examples, exits=exits
    )
    parser.set_defaults(command_parser=parser)
    if handler is not None:
        parser.set_defaults(handler=handler)
    return parser


def every_command(parser: argparse.ArgumentParser, prog: str = "") -> Iterator[tuple[str, CommandParser]]:
    """Each command of `parser` (nested ones too: `deals create`), with its arguments added, as
    (its words after the program's name, its parser), in the parser's order."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, command in action.choices.items():
                words = f"{prog} {name}".strip()
                if isinstance(command, CommandParser):
                    command.defined()
                yield words, command
                yield from every_command(command, words)
