"""Faults a request to the deals sandbox meets on demand: every 5xx part 7.2 warns about, and an
answer that never comes.

Some fail before the downstream deal system applied anything; others apply the write first and
then fail, which is the case a client must not turn into a duplicate deal (rules 2 to 5 of 7.2).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from enum import StrEnum

from ...errors import ConfigurationError
from ...sandbox.http import Response
from .replies import json_reply, text_reply
from .world import UPSTREAM

__all__ = ["Fault", "Faults"]

_METHODS = ("POST", "PATCH", "GET")
_GATEWAY_TIMEOUT_PAGE = (
    "<html><head><title>504 Gateway Time-out</title></head>"
    "<body><center><h1>504 Gateway Time-out</h1></center></body></html>"
)


class Fault(StrEnum):
    """What happens to the next request that reaches downstream (`DealsSandbox.arm_fault`)."""

    UNREACHABLE = "unreachable"  # 500 text/plain, nothing applied
    TIMEOUT = "timeout"  # 500 text/plain after `timeout_delay`, nothing applied
    REJECT = "reject"  # 502 with upstream, nothing applied
    UNAVAILABLE = "unavailable"  # 503 text/plain from the gateway, nothing applied
    APPLY_THEN_FAIL = "apply_then_fail"  # applied downstream, then 502: no deal request recorded
    GATEWAY_TIMEOUT = "gateway_timeout"  # applied downstream, then the gateway's 504 HTML page
    DROP = "drop"  # applied downstream, then the connection closes without an answer
    HANG = "hang"  # applied downstream, then silence for `timeout_delay` and a closed connection

    @property
    def applies(self) -> bool:
        """Whether the write lands downstream before the failure is answered."""
        return self in (Fault.APPLY_THEN_FAIL, Fault.GATEWAY_TIMEOUT, Fault.DROP, Fault.HANG)


@dataclass
class _Armed:
    fault: Fault
    method: str | None
    times: int


class Faults:
    """The faults armed for the next writes (or reads, when armed for GET); the app calls it under
    its own lock."""

    def __init__(self, timeout_delay: float = 0.05) -> None:
        self.timeout_delay = timeout_delay
        self._armed: deque[_Armed] = deque()

    def arm(self, fault: Fault | str, times: int = 1, method: str | None = None) -> None:
        """Make the next `times` writes (only `method` ones when given; "GET" for reads) meet `fault`."""
        try:
            chosen = Fault(fault)
        except ValueError:
            choices = ", ".join(f.value for f in Fault)
            raise ConfigurationError(f"unknown deals sandbox fault {fault!r}: use one of {choices}") from None
        if isinstance(times, bool) or not isinstance(times, int) or times < 1:
            raise ConfigurationError(f"times must be a whole number >= 1, got {times!r}")
        if method is not None and (not isinstance(method, str) or method.upper() not in _METHODS):
            raise ConfigurationError(
                f"method must be 'POST', 'PATCH', 'GET' or None (any write), got {method!r}"
            )
        self._armed.append(_Armed(chosen, method and method.upper(), times))

    def take(self, method: str) -> Fault | None:
        """The fault the current `method` request meets, if one is armed for it."""
        for armed in self._armed:
            if armed.method == method or (armed.method is None and method != "GET"):
                armed.times -= 1
                if armed.times <= 0:
                    self._armed.remove(armed)
                return armed.fault
        return None

    def answer(self, fault: Fault) -> Response:
        """What the client receives (status 0: nothing, the connection is closed)."""
        if fault is Fault.UNREACHABLE:
            return text_reply(500, "Internal Server Error")
        if fault is Fault.TIMEOUT:
            return text_reply(500, "Internal Server Error", delay=self.timeout_delay)
        if fault is Fault.UNAVAILABLE:
            return text_reply(503, "Service Unavailable")
        if fault is Fault.GATEWAY_TIMEOUT:
            return Response(504, _GATEWAY_TIMEOUT_PAGE.encode(), "text/html")
        if fault in (Fault.DROP, Fault.HANG):
            return Response(0, drop=True, delay=self.timeout_delay if fault is Fault.HANG else 0.0)
        message = {
            Fault.REJECT: f"{UPSTREAM} rejected the request",
            Fault.APPLY_THEN_FAIL: f"{UPSTREAM} returned an unusable result",
        }[fault]
        return json_reply(502, {"message": message, "upstream": UPSTREAM})
