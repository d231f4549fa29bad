"""The toolkit's errors as a notebook shows them: a user's mistake in one line, a bug in full."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import commerce_reports as cr

_IN_IPYTHON = """
import json
import traceback

from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config

config = Config()
config.HistoryManager.enabled = False
shell = InteractiveShell.instance(config=config)
said = {}
cells = {"mistake": "import commerce_reports as cr\\ncr.sync(countries=['USA'])", "bug": "1 / 0"}
for name, cell in cells.items():
    shown = []
    shell._showtraceback = lambda etype, evalue, stb: shown.extend(stb)
    result = shell.run_cell(cell)
    error = result.error_in_exec
    said[name] = {"shown": shown, "frames": len(traceback.extract_tb(error.__traceback__))}
print(json.dumps(said))
"""


def test_a_toolkit_error_renders_as_the_one_line_of_its_message() -> None:
    """IPython showed a bad argument as 12 to 85 lines of the toolkit's frames; its message alone
    says what is wrong and what to give. The traceback stays on the exception."""
    with pytest.raises(cr.ValidationError) as caught:
        cr.sync(countries=["USA"])
    assert caught.value._render_traceback_() == [
        "ValidationError: country: 'USA' is not a country code; give a two-letter ISO code like 'US'"
    ]
    assert caught.value.__traceback__ is not None
    assert cr.ExportError("cell 3 failed")._render_traceback_() == ["ExportError: cell 3 failed"]
    assert not hasattr(ValueError("a bug"), "_render_traceback_")  # only the toolkit's own errors


def test_ipython_shows_a_toolkit_error_in_one_line_and_a_bug_with_its_traceback(tmp_path: Path) -> None:
    """In a real IPython shell (a process of its own: a shell installs hooks process-wide)."""
    done = subprocess.run(
        [sys.executable, "-c", _IN_IPYTHON],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "IPYTHONDIR": str(tmp_path / "ipython")},
        check=True,
    )
    said = json.loads(done.stdout.splitlines()[-1])
    assert said["mistake"]["shown"] == [
        "ValidationError: country: 'USA' is not a country code; give a two-letter ISO code like 'US'"
    ]
    assert said["mistake"]["frames"] > 2  # still on the exception, for %debug or traceback.print_exception
    assert len(said["bug"]["shown"]) > 1 and "ZeroDivisionError" in said["bug"]["shown"][-1]


def test_an_error_naming_its_request_still_masks_what_the_server_said() -> None:
    """A lower layer raises without the request's parameters and the client names them after:
    `naming` rebuilt the message from the unmasked words, and a key a hostile server put in a
    malformed header line was in the error's text, its repr and its pickle (and in `cr.sync`'s
    retry warnings)."""
    import pickle

    from commerce_reports.errors import TransportError
    from commerce_reports.secret import Secret

    key = "sk_live_0123456789abcdef"
    Secret(key)  # known to the process, as a sync's key is
    error = TransportError(f"illegal header line: bytearray(b'X-Debug-{key}')", endpoint="transactions")
    named = error.naming({"updateDate": "2026-11-20"})
    for shown in (str(named), repr(named), pickle.dumps(named), pickle.loads(pickle.dumps(named)).args[0]):
        assert (key.encode() if isinstance(shown, bytes) else key) not in shown
    assert "2026-11-20" in str(named) and "***" in str(named)
