"""The command line's log lines: on standard error, one line per record whichever library wrote
it (a logged exception by its kind and message; `-vv` keeps its traceback, to debug), every key
masked in it."""

from __future__ import annotations

import logging

from ..redaction import mask_record, redact

__all__ = ["OneLine", "log_to_stderr"]

_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def log_to_stderr(verbose: int) -> None:
    """Log lines on standard error: warnings, and with -v information, with -vv debug lines too
    (and the traceback of a logged exception); every key masked in each line, whichever library
    wrote it."""
    level = {0: logging.WARNING, 1: logging.INFO}.get(verbose, logging.DEBUG)
    logging.basicConfig(level=level, format=_FORMAT)
    for handler in logging.getLogger().handlers:
        if verbose < 2 and not isinstance(handler.formatter, OneLine):
            handler.setFormatter(OneLine(_FORMAT))
        if mask_record not in handler.filters:
            handler.addFilter(mask_record)


class OneLine(logging.Formatter):
    """A record on one line: a logged exception by its kind and message after the record's own
    words, never its traceback (a served dashboard's log got Bokeh's for a request with an empty
    session id). The record is left as it is, for any other handler (a test's, a log file's)."""

    def format(self, record: logging.LogRecord) -> str:
        error = record.exc_info[1] if record.exc_info else None
        kept = record.exc_info, record.exc_text, record.stack_info
        record.exc_info = record.exc_text = record.stack_info = None
        try:
            line = super().format(record)
        finally:
            record.exc_info, record.exc_text, record.stack_info = kept
        said = f"{line}: {type(error).__name__}: {error}" if error is not None else line
        return redact(" ".join(said.split()))
