"""Nothing slow without a word: a step that may take more than a couple of seconds says what it is
doing before it starts, and how long it took when it ends.

    with Step("running report.ipynb (a kernel)"):
        ...

In a terminal or a notebook (tqdm chooses a status line or a widget) it shows the step with its
seconds counting; elsewhere (cron, a log) it writes a line when the step starts and one when it
ends. A public function with a slow part takes `progress` and runs that part in `said(what,
progress)`, so it speaks in a notebook as on the command line, and stays quiet (`progress=False`)
inside a caller that says what it does itself. Plain Python: importing it loads nothing; tqdm only
when a step is shown interactively.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from .errors import ValidationError, is_ctrl_c
from .waits import Signal, start_thread

__all__ = [
    "TICK",
    "Late",
    "Step",
    "checked_progress",
    "interactive",
    "said",
    "to_reader",
    "to_stderr",
    "to_stdout",
    "while_read",
]

TICK = 1.0  # seconds between two updates of a step's counter


def interactive() -> bool:
    """True in a terminal (standard error is one) or in a Jupyter kernel."""
    return sys.stderr.isatty() or "ipykernel" in sys.modules


class Step:
    """A step that says what it does: a counting status line or widget when `interactive()`
    (or `shown=True`), else a line to `say` (default: standard error) at its start and its end."""

    def __init__(
        self,
        what: str,
        *,
        shown: bool | None = None,
        say: Callable[[str], None] | None = None,
        unit: str = "",
        since: float | None = None,
    ) -> None:
        self.what = what
        self.shown = interactive() if shown is None else shown
        self.say = say or to_stderr
        self.unit = unit  # what `advance` counts ("rows"), shown beside the seconds; "": nothing
        self.count = 0
        self.since = since  # when the step began (time.monotonic()), if before it is shown: a `Late` one
        self.started = 0.0
        self._bar: Any = None
        self._stop = Signal()  # waits a faked clock cannot stretch (waits.py)
        self._ticker: Signal | None = None  # set when the ticker thread ends

    def __enter__(self) -> Step:
        now = time.monotonic()
        self.started = now if self.since is None else self.since
        if not self.shown:
            self.say(f"{self.what} ...")
            return self
        from tqdm.auto import tqdm

        counted = f": {{n:,}} {self.unit}" if self.unit else ""
        form = f"{{desc}}{counted} ... {{elapsed}}"
        # a terminal that says no size (a pty no one sized) gets 80 x 24: tqdm would draw nothing
        unsized = sys.stderr.isatty() and not _columns_of(sys.stderr)  # (a notebook sizes its own)
        size = {"ncols": 80, "nrows": 24} if unsized else {}
        self._bar = tqdm(desc=self.what, total=None, bar_format=form, leave=False, **size)
        self._bar.start_t -= now - self.started  # its counter counts from the step's beginning
        self._ticker = start_thread(self._tick, "step-ticker")
        return self

    def advance(self, count: int) -> None:
        """`count` more of what the step counts (`unit`) are done: shown at the next tick."""
        self.count += count
        if self._bar is not None:
            self._bar.n = self.count

    def _tick(self) -> None:
        while not self._stop.wait(TICK):
            self._bar.refresh()

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, *_: object) -> None:
        """Say how the step ended. A Ctrl-C that DuckDB took (is_ctrl_c) leaves it as the
        KeyboardInterrupt it was, so the caller stops as for any other Ctrl-C."""
        self._stop.set()
        if self._ticker is not None:
            self._ticker.wait(2 * TICK)
        if self._bar is not None:
            self._bar.close()
        seconds = time.monotonic() - self.started
        stopped = error is not None and is_ctrl_c(error)
        outcome = "done" if kind is None else "stopped" if stopped else "failed"
        unit = self.unit.removesuffix("s") if self.count == 1 else self.unit
        counted = f" ({self.count:,} {unit})" if self.unit else ""
        self.say(f"{self.what}: {outcome} in {seconds:.1f} s{counted}")
        if stopped and not isinstance(error, KeyboardInterrupt):
            raise KeyboardInterrupt from error


class Late:
    """A step said only once it has run `after` seconds: a wait of unknown length (a service's
    answer) says nothing when it is quick, and what it waits on, with its seconds counting from
    its start, once it is long (the house rule: a wait over 2 s is said)."""

    def __init__(
        self,
        what: str,
        after: float,
        *,
        shown: bool | None = None,
        say: Callable[[str], None] | None = None,
    ) -> None:
        self.what = what
        self.after = after
        self._shown = shown
        self._say = say
        self._step: Step | None = None
        self._guard = threading.Lock()
        self._ended = False
        self._done = Signal()  # waits a faked clock cannot stretch (waits.py)

    def __enter__(self) -> Late:
        started = time.monotonic()
        start_thread(lambda: self._watch(started), "late-step")
        return self

    def _watch(self, started: float) -> None:
        if self._done.wait(self.after):
            return
        with self._guard:  # the body may end meanwhile: then nothing is said
            if not self._ended:
                self._step = Step(self.what, shown=self._shown, say=self._say, since=started)
                self._step.__enter__()

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, *_: object) -> None:
        """Say how the step ended, if it was said at all."""
        with self._guard:
            self._ended = True
        self._done.set()
        if self._step is not None:
            self._step.__exit__(kind, error, None)


def _columns_of(stream: Any) -> int:
    """The width of the terminal `stream` writes to (0: none said, or no terminal)."""
    try:
        return os.get_terminal_size(stream.fileno()).columns
    except (OSError, ValueError, AttributeError):
        return 0


def to_stderr(line: str) -> None:
    """Say `line` on standard error, at once (where a step says itself outside a terminal)."""
    _said_on(sys.stderr, line)


def to_stdout(line: str) -> None:
    """Say `line` on standard output, at once and whole (a command's own account of its work)."""
    _said_on(sys.stdout, line)


def to_reader(line: str) -> None:
    """Say `line` where its reader sees it as an account, not a fault: a Jupyter kernel's cell
    output (its standard error shows as an error), else standard error (standard output stays the
    command's or script's own)."""
    _said_on(sys.stdout if "ipykernel" in sys.modules else sys.stderr, line)


def _said_on(stream: Any, line: str) -> None:
    """`line` and its end in one write, then flushed: `print` writes them apart, and a Ctrl-C
    landing between the two (a signal's handler runs between any two) left the line unended, the
    command's `interrupted` glued to it."""
    stream.write(f"{line}\n")
    stream.flush()


def while_read(say: Callable[[str], None]) -> Callable[[str], None]:
    """`say`, silent from the first line its reader was no longer there for (a pipe closed by
    `| head`, from whichever thread says it): what the work says ends there, not the work (a sync
    still stores what it fetched), and the caller's own next write to that pipe stops the command
    (`commerce-reports` exits 141, as a shell says it)."""
    gone = False

    def heard(line: str) -> None:
        nonlocal gone
        if gone:
            return
        try:
            say(line)
        except BrokenPipeError:
            gone = True

    return heard


def checked_progress(progress: object) -> bool | None:
    """A public function's `progress` argument (True, False or None), else a ValidationError."""
    if progress is None or isinstance(progress, bool):
        return progress
    raise ValidationError("progress", f"{progress!r} is not a yes or no", "give True, False or None")


def said(what: str, progress: bool | None = None) -> contextlib.AbstractContextManager[object]:
    """The step of a public function's slow part, as its `progress` argument asks: None, a `Step`
    shown as `interactive()` decides; True, a `Step` shown; False, nothing (the caller says what
    it does itself, as the report's export does around every section)."""
    return contextlib.nullcontext() if progress is False else Step(what, shown=progress)
