"""One request to the deal interface, sent and re-sent exactly as part 7.2 allows.

Sending goes through the toolkit's HTTP layer (`http.Session`: bounded body, overall deadline,
the key by `KeyAuth`); waits come from its `RetryPolicy` (backoff, the cap on a wait the service
asks for) and `retry_after`. What this module adds is 7.2's judgement of each outcome:

- 429: wait what the service asked (past the cap: give up at once, loudly), then re-send.
- Any 5xx, or no complete answer after the request may have reached the service (a dropped
  connection, a timeout, a garbled body): the write may have had effect (rule 2).
  - A create is never re-sent: `DealMayExistError`, confirm first (rule 3).
  - An update, a dry run or a read is re-sent identically, within the attempts (rule 4).
  - An archive answered 502 is confirmed by a read showing `archived` (rule 5).
- A connection that never opened proves nothing was sent: any request is re-sent.
- Every other status is final; nothing else is retried.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import overload

from ..activity import Late
from ..errors import MalformedResponseError, ResponseTooLargeError, TransportError
from ..http import Answer, RetryPolicy, Session
from .errors import (
    ArchiveUnconfirmedError,
    DealMayExistError,
    DealRateLimitedError,
    DealResponseTooLargeError,
    DealServerError,
    DealTransportError,
    DealUpstreamError,
)
from .models import Deal
from .responses import error_from_response

__all__ = ["Call", "Exchange"]

log = logging.getLogger(__name__)

_LONG_WAIT = 2.0  # seconds: a longer wait is said (a warning) before it starts, with its reason

Confirm = Callable[[], Deal | str]
_MAY_EXIST = (
    "it may have reached the service, and the deal may exist; confirm whether it exists before "
    "creating it again"
)


@dataclass(frozen=True)
class Call:
    """One request as it is sent every time: `resend=False` for a create, which must never be
    sent twice once it may have reached the service."""

    method: str
    path: str
    body: bytes | None = None
    params: dict[str, str] | None = None
    resend: bool = True

    def __str__(self) -> str:
        return f"{self.method} {self.path}"

    @property
    def writes(self) -> bool:
        """Whether sending it may change anything (a read or a dry run changes nothing)."""
        return self.method != "GET" and (self.params or {}).get("dryRun") != "true"


class Exchange:
    """Sends `Call`s over a `Session` and judges each outcome by 7.2 (see the module docstring)."""

    def __init__(self, session: Session, retry: RetryPolicy, sleep: Callable[[float], None]) -> None:
        self.session = session
        self.retry = retry
        self._sleep = sleep

    @overload
    def send(self, call: Call) -> Answer: ...

    @overload
    def send(self, call: Call, confirm: Confirm | None) -> Answer | Deal: ...

    def send(self, call: Call, confirm: Confirm | None = None) -> Answer | Deal:
        """The 2xx answer, or the deal `confirm` read after a 502; else the deal error that ends it."""
        for attempt in range(1, self.retry.max_attempts + 1):
            last = attempt == self.retry.max_attempts
            try:
                answer = self.once(call)
            except KeyboardInterrupt:
                if not call.resend:  # stopped as it waits for the answer, as exit 52 says after a lost one
                    log.warning("%s was interrupted: %s", call, _MAY_EXIST)
                raise
            except (TransportError, MalformedResponseError) as failure:
                self._wait(call, attempt, _lost(call, failure, attempt, last))
                continue
            except ResponseTooLargeError as failure:
                if not call.resend:
                    raise DealMayExistError(_said(failure), method=call.method, path=call.path) from failure
                raise DealResponseTooLargeError(
                    _said(failure), method=call.method, path=call.path, attempts=attempt
                ) from failure
            if answer.is_success:
                return answer
            again = self._refused(call, answer, attempt, last, confirm)
            if isinstance(again, Deal):
                return again
            self._wait(call, attempt, *again)
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _refused(
        self, call: Call, answer: Answer, attempt: int, last: bool, confirm: Confirm | None
    ) -> Deal | tuple[str, float | None]:
        """After a non-2xx `answer`: why to try again (and the wait the service asked for), or the
        deal `confirm` read after a 502; else raises the deal error that ends the call."""
        error = error_from_response(
            answer.status,
            answer.body,
            answer.content_type,
            answer.headers,
            method=call.method,
            path=call.path,
            attempts=attempt,
            writes=call.writes,
        )
        if isinstance(error, DealRateLimitedError):
            if self.retry.too_long(error.retry_after):
                raise self._capped(error, answer) from None
            if last:
                raise error
            return "HTTP 429", error.retry_after
        if not isinstance(error, DealServerError):
            raise error
        upstream = error.upstream if isinstance(error, DealUpstreamError) else ""
        if not call.resend:
            said = f"HTTP {error.status} {error.service_message or error.body_excerpt}".strip()
            raise DealMayExistError(said, upstream=upstream, method=call.method, path=call.path) from error
        reason = ""
        if confirm is not None and isinstance(error, DealUpstreamError):
            landed = confirm()
            if isinstance(landed, Deal):
                log.warning("%s kept getting 502; a read shows it archived", call)
                return landed
            reason = landed
        if not last:
            return f"HTTP {error.status}", None
        if reason:
            raise ArchiveUnconfirmedError(
                error.status,
                error.service_message,
                upstream=upstream,
                method=call.method,
                path=call.path,
                body=answer.body,
                content_type=answer.content_type,
                attempts=attempt,
                hint=f"{reason}; {ArchiveUnconfirmedError.hint}",
            ) from error
        raise error

    def once(self, call: Call) -> Answer:
        """One send of `call`, any status; the http layer's errors as they come. An answer slower
        than 2 s is said as it is awaited (a stalled service held `deals create` silent 31 s)."""
        headers = {"content-type": "application/json"} if call.body is not None else None
        with Late(f"waiting for the deal interface's answer to {call}", _LONG_WAIT):
            return self.session.send(
                call.method,
                call.path,
                params=call.params,
                content=call.body,
                headers=headers,
                where=str(call),
            )

    def _wait(self, call: Call, attempt: int, why: str, asked: float | None = None) -> None:
        delay = self.retry.delay(attempt, asked)
        level = logging.WARNING if delay > _LONG_WAIT else logging.INFO
        slow = f": the service asked to wait {asked:g} s" if asked else ""
        log.log(level, "%s: %s; waiting %.1f s before attempt %d%s", call, why, delay, attempt + 1, slow)
        self._sleep(delay)

    def _capped(self, error: DealRateLimitedError, answer: Answer) -> DealRateLimitedError:
        asked = error.retry_after or 0.0
        return DealRateLimitedError(
            error.status,
            error.service_message,
            method=error.method,
            path=error.path,
            body=answer.body,
            content_type=answer.content_type,
            attempts=error.attempts,
            retry_after=asked,
            hint=f"the service asked to wait {asked:g} s, more than the {self.retry.max_wait:g} s "
            "allowed (COMMERCE_REPORTS_MAX_RETRY_WAIT); nothing more was sent: try again later",
        )


def _lost(call: Call, failure: TransportError | MalformedResponseError, attempt: int, last: bool) -> str:
    """Why to try `call` again after no complete answer; raises when it may have landed (sent and
    not safe to resend) or when this was the `last` attempt."""
    lost = f"no complete answer ({_said(failure)})"
    reached = getattr(failure, "sent", True)  # a garbled answer was sent too
    if reached and not call.resend:
        raise DealMayExistError(lost, method=call.method, path=call.path) from failure
    if last:
        raise DealTransportError(
            f"{lost}; check the URL and that the service is running",
            method=call.method,
            path=call.path,
            attempts=attempt,
        ) from failure
    return lost


def _said(error: TransportError | MalformedResponseError | ResponseTooLargeError) -> str:
    """The http layer's message without the ` [endpoint ]` it appends (the deal error names it)."""
    return str(error).removesuffix(f" [{error.endpoint} ]")
