"""The command line's log lines: on standard error, one line per record whichever library wrote
it (a logged exception by its kind and message; `-vv` keeps its traceback, to debug), every key
masked in it."""

from __future__ import annotations

import logging
from typing import Any

from ..redaction import mask_record

__all__ = ["log_to_stderr", "one_line"]


def log_to_stderr(verbose: int) -> None:
    """Log lines on standard error: warnings, and with -v information, with -vv debug lines too;
    every key masked in each line, whichever library wrote it."""
    level = {0: logging.WARNING, 1: logging.INFO}.get(verbose, logging.DEBUG)
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    for handler in logging.getLogger().handlers:
        if verbose < 2 and one_line not in handler.filters:  # (-vv: the traceback, to debug)
            handler.filters.insert(0, one_line)
        if mask_record not in handler.filters:
            handler.addFilter(mask_record)


def one_line(record: Any) -> bool:
    """A logging filter saying a library's logged exception on one line, its kind and message after
    the record's own words, never its traceback (a served dashboard's log got Bokeh's for a request
    with an empty session id). Duck-typed on `logging.LogRecord`."""
    if record.exc_info:
        error = record.exc_info[1]
        said = " ".join(record.getMessage().split())
        record.msg = f"{said}: {type(error).__name__}: {error}" if error is not None else said
        record.args = ()
        record.exc_info = record.exc_text = record.stack_info = None
    return True
