"""The sandbox's HTTP server: a client that hangs up, or an interrupt, is no traceback; a bug is
still said."""

from __future__ import annotations

import logging
import socket
import struct
import threading
from collections.abc import Callable

import httpx
import pytest

from commerce_reports.sandbox.http import Request, Response, serve
from tests.waiting import wait_for


def _reset(connection: socket.socket) -> None:
    """Close `connection` as a killed client does: a reset (RST), not a goodbye (FIN)."""
    connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    connection.close()


def _answering() -> Callable[[], bool]:
    """Whether the connections made from now on are all answered (their server threads ended:
    they are named after socketserver's `process_request_thread`; another test's server may keep
    its own for a kept-alive connection)."""
    before = set(threading.enumerate())

    def answered() -> bool:
        return not any("process_request_thread" in t.name for t in set(threading.enumerate()) - before)

    return answered


@pytest.fixture
def thread_errors(monkeypatch: pytest.MonkeyPatch) -> list[BaseException | None]:
    """What left a thread as an exception (Python would print its traceback)."""
    errors: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda hooked: errors.append(hooked.exc_value))
    return errors


def test_a_client_that_hangs_up_is_a_debug_line_not_a_traceback(
    capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    """Reset before asking (a probe, a killed client), and while its answer is being made (a sync
    or a kernel interrupted)."""
    asked, gone = threading.Event(), threading.Event()

    def app(request: Request) -> Response:
        asked.set()
        gone.wait(60)
        return Response(200, b"{}" * 100_000)

    caplog.set_level(logging.DEBUG, "commerce_reports.sandbox.http")
    answered = _answering()
    with serve(app) as handle:
        _reset(socket.create_connection((handle.host, handle.port)))
        client = socket.create_connection((handle.host, handle.port))
        client.sendall(b"GET /v1/networks HTTP/1.1\r\nHost: sandbox\r\n\r\n")
        asked.wait(60)
        _reset(client)
        gone.set()
        wait_for(answered, "the server's answer to both clients")
    assert "Traceback" not in capfd.readouterr().err
    hung_up = [r for r in caplog.records if "hung up" in r.getMessage()]
    assert len(hung_up) == 2 and {r.levelno for r in caplog.records} == {logging.DEBUG}


def test_an_interrupt_in_a_serving_thread_ends_that_answer_quietly(
    thread_errors: list[BaseException | None], capfd: pytest.CaptureFixture[str]
) -> None:
    def app(request: Request) -> Response:
        raise KeyboardInterrupt  # as a kernel's interrupt landing in this thread

    answered = _answering()
    with serve(app) as handle, pytest.raises(httpx.RemoteProtocolError):
        httpx.get(f"{handle.base_url}/v1/networks")
    wait_for(answered, "the server's answer")
    assert thread_errors == [] and capfd.readouterr().err == ""


def test_a_bug_answering_is_still_said_in_a_line_its_traceback_at_debug(
    capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    def broken(request: Request) -> Response:
        return Response(200, "text, not bytes")  # type: ignore[arg-type]  # a bug of the app's

    caplog.set_level(logging.DEBUG, "commerce_reports.sandbox.http")
    answered = _answering()
    with serve(broken) as handle, pytest.raises(httpx.RemoteProtocolError):
        httpx.get(f"{handle.base_url}/v1/networks", headers={"Accept-Encoding": "identity"})
    wait_for(answered, "the server's answer")
    assert "Traceback" not in capfd.readouterr().err
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1 and "TypeError" in errors[0].getMessage(), caplog.text
    assert any(r.levelno == logging.DEBUG and r.exc_info for r in caplog.records)


def test_the_command_line_s_log_line_leaves_a_record_whole_for_every_other_handler(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A command says a logged exception on one line; a filter doing it cleared the record's
    exception for every handler after it (this test's, a log file's), which then lost the traceback
    (the test above failed after a command ran in its worker)."""
    import io

    from commerce_reports.cli.log_lines import log_to_stderr

    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    logging.getLogger().addHandler(handler)
    try:
        log_to_stderr(0)
        try:
            raise ValueError("boom\nsecond line")
        except ValueError:
            logging.getLogger("a.library").error("it failed answering %s", "GET /", exc_info=True)
    finally:
        logging.getLogger().removeHandler(handler)
    (line,) = stream.getvalue().splitlines()
    assert line.endswith(" ERROR a.library: it failed answering GET /: ValueError: boom second line")
    assert caplog.records[-1].exc_info is not None  # (whole for the others)
