"""How long a request takes to fail against a server that drips its response headers, or behind
a name the resolver answers late.

A raw loopback server sends the status line, then one header line every `--gap` seconds, forever
(or `--lines` of them and then a complete answer). Both clients (reports and deals) stand on one
`http.Session`; each is timed at the deadline of COMMERCE_REPORTS_REQUEST_DEADLINE (`--deadline`).
With `--resolver N` the server is reached by a name that the system resolver (replaced in this
process) answers only after N seconds, and it answers at once: what is timed is the name lookup.

    .venv/bin/python bench/drip_bench.py --deadline 10           # headers that never end
    .venv/bin/python bench/drip_bench.py --deadline 10 --lines 60  # 60 s of headers, then an answer
    .venv/bin/python bench/drip_bench.py --deadline 10 --resolver 25  # a resolver 25 s late
"""

from __future__ import annotations

import argparse
import contextlib
import socket
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from commerce_reports.client import ReportsClient
from commerce_reports.config import Limits
from commerce_reports.deals import DealsClient
from commerce_reports.errors import CommerceReportsError
from commerce_reports.http import RetryPolicy


def serve(lines: int | None, gap: float) -> str:
    """Start the dripping server on a free loopback port; its URL."""
    listener = socket.create_server(("127.0.0.1", 0))

    def answer(conn: socket.socket) -> None:
        with conn, contextlib.suppress(OSError):
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n")
            sent = 0
            while lines is None or sent < lines:
                time.sleep(gap)
                conn.sendall(f"X-Drip-{sent}: {'x' * 20}\r\n".encode())
                sent += 1
            conn.sendall(b'Content-Length: 20\r\n\r\n{"transactions": []}')

    def accept() -> None:
        while True:
            conn, _ = listener.accept()
            threading.Thread(target=answer, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    return f"http://127.0.0.1:{listener.getsockname()[1]}"


def slow_name(seconds: float) -> str:
    """A name for loopback that this process's resolver answers only after `seconds`."""
    name, real = "slow-resolver.bench.test", socket.getaddrinfo

    def getaddrinfo(host: object, *args: object, **kwargs: object) -> object:
        if host == name:
            time.sleep(seconds)
            return real("127.0.0.1", *args, **kwargs)  # type: ignore[arg-type]
        return real(host, *args, **kwargs)  # type: ignore[arg-type]

    socket.getaddrinfo = getaddrinfo  # type: ignore[assignment]
    return name


def timed(request: Callable[[], object]) -> tuple[float, str]:
    began = time.monotonic()
    try:
        request()
        outcome = "answered"
    except CommerceReportsError as error:
        outcome = f"{type(error).__name__}: {error}"
    return time.monotonic() - began, outcome


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--deadline", type=float, default=10.0, help="seconds per attempt (default 10)")
    parser.add_argument("--gap", type=float, default=1.0, help="seconds between header lines (default 1)")
    parser.add_argument("--lines", type=int, help="header lines before a complete answer (default: never)")
    parser.add_argument(
        "--resolver", type=float, help="seconds the resolver takes to answer the server's name"
    )
    args = parser.parse_args()
    url = serve(0 if args.resolver is not None else args.lines, args.gap)
    if args.resolver is not None:
        url = url.replace("127.0.0.1", slow_name(args.resolver))
    limits = Limits(request_deadline=args.deadline)
    once = RetryPolicy(max_attempts=1)
    with tempfile.TemporaryDirectory() as pace:
        reports = ReportsClient(
            "drip-bench-key-0123", url, pace=0, limits=limits, retry=once, pace_dir=Path(pace)
        )
        deals = DealsClient("drip-bench-key-0123", url, limits=limits, retry=once)
        with reports, deals:
            for name, request in (
                ("reports", lambda: reports.transactions(update_date="2026-11-05")),
                ("deals", lambda: deals.targeting_values("device.language")),
            ):
                seconds, outcome = timed(request)
                print(f"{name:8} deadline {args.deadline:g} s: ended after {seconds:.2f} s ({outcome})")


if __name__ == "__main__":
    main()
