"""Every exception the toolkit raises, in one tree.

    CommerceReportsError                      base of everything below
    ├── ConfigurationError        [fatal]     bad environment, .env or sites file
    ├── ValidationError           [fatal]     bad input, caught before any request (also a ValueError)
    ├── ServiceError                          the service failed or refused a request
    │   ├── TransportError        [retriable] timeout, refused or dropped connection
    │   │   └── UnreachableError  [fatal]     the address cannot be reached (refused, DNS, TLS before any
    │   │                                     answer, or several requests in a row without one): stop asking
    │   ├── MalformedResponseError[retriable] truncated or unparseable body on a 2xx
    │   ├── ResponseTooLargeError [fatal]     a body over the size ceiling (COMMERCE_REPORTS_MAX_BODY_MB)
    │   └── StatusError                       a non-2xx answer (status, endpoint, params, body excerpt)
    │       ├── BadRequestError       [fatal]     400
    │       ├── AuthenticationError   [fatal]     401
    │       ├── ForbiddenError        [fatal]     403
    │       ├── NotFoundError         [fatal]     404 (an aggregate's 404 is an empty result instead)
    │       ├── RateLimitedError      [retriable] 429, with the wait when the service gave one
    │       └── ServerError           [retriable] 5xx
    ├── LakeError                 [fatal]     the local lake is unusable or locked
    ├── ExportError               [fatal]     a report notebook failed, or its output would leak a secret
    │   └── DeliveryError         [fatal]     the report was written but could not be mailed
    └── DealError                             the deal-request interface: its own tree in deals/errors.py

Retry decisions are made from the kind (`Retriable` / `Fatal` mixins, or `error.retriable`),
never from the class name. No message ever carries a secret key: `redact` masks them. IPython and
Jupyter show one of these as its one line (`_render_traceback_`): a user's mistake, not a bug.

`TROUBLESHOOTING` says, for every class of the tree, what its messages say, why, and what to do:
the docs' troubleshooting page is written from it, and a test refuses a class without an entry.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from .redaction import excerpt, redact

__all__ = [
    "AuthenticationError",
    "BadRequestError",
    "CommerceReportsError",
    "ConfigurationError",
    "DeliveryError",
    "ExportError",
    "Fatal",
    "ForbiddenError",
    "LakeError",
    "MalformedResponseError",
    "NotAPartition",
    "NotFoundError",
    "RateLimitedError",
    "ResponseTooLargeError",
    "Retriable",
    "ServerError",
    "ServiceError",
    "StatusError",
    "TransportError",
    "UnreachableError",
    "ValidationError",
]


def is_ctrl_c(error: BaseException) -> bool:
    """Whether `error` is the user's Ctrl-C: Python's KeyboardInterrupt, or DuckDB's word for it.
    A SIGINT that lands while DuckDB runs a query is taken by DuckDB, which ends the query with a
    plain RuntimeError "Query interrupted" (duckdb 2), the same stop as a KeyboardInterrupt; a query
    that a command's Ctrl-C watcher interrupted (`interrupts.py`) ends with DuckDB's
    InterruptException (named, not imported: this module loads before DuckDB, if ever)."""
    if isinstance(error, KeyboardInterrupt):
        return True
    kind = type(error)
    if kind.__name__ == "InterruptException" and kind.__module__.lstrip("_") == "duckdb":
        return True
    return kind is RuntimeError and str(error) == "Query interrupted"


class Retriable:
    """Mixin: trying the same request again later may succeed."""

    retriable = True


class Fatal:
    """Mixin: trying the same request again cannot succeed; change something first."""

    retriable = False


class CommerceReportsError(Exception):
    """Base of every error raised by commerce_reports."""

    retriable: bool = False

    def __init__(self, message: str) -> None:
        super().__init__(redact(message))

    @property
    def message(self) -> str:
        return str(self)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its (masked) message and attributes, and loaded without calling `__init__`,
        whose arguments (a status, a body) the message no longer holds: an error crosses a
        process boundary whole."""
        return (_restored, (type(self), self.args, vars(self)))

    def _render_traceback_(self) -> list[str]:
        """What IPython and Jupyter show of it: one line, `ValidationError: <message>`, not the
        toolkit's frames (the message says what to change, and a bug is no error of this tree).
        The traceback stays on the exception (`__traceback__`, `sys.last_traceback`, `%debug`)."""
        return [f"{type(self).__name__}: {self}"]


def _restored(kind: type[CommerceReportsError], args: tuple[Any, ...], state: dict[str, Any]) -> Any:
    """An error loaded from a pickle: its class, message and attributes as they were."""
    error = kind.__new__(kind)
    error.args = args
    error.__dict__.update(state)
    return error


class ConfigurationError(Fatal, CommerceReportsError):
    """The environment, `.env` or sites file holds something unusable."""


class ValidationError(Fatal, CommerceReportsError, ValueError):
    """A parameter is wrong; raised before anything is sent. Names the parameter and what is allowed."""

    def __init__(self, parameter: str, problem: str, allowed: str = "") -> None:
        self.parameter = parameter
        self.problem = problem
        self.allowed = allowed
        message = f"{parameter}: {problem}"
        if allowed:
            message += f"; {allowed}"
        super().__init__(message)


class ExportError(Fatal, CommerceReportsError):
    """A scheduled export failed: a cell raised, or a secret would have been written out."""


class DeliveryError(ExportError):
    """A report was written but its mail was not sent (the SMTP server refused it or was out of reach)."""


class LakeError(Fatal, CommerceReportsError):
    """The local lake cannot be read or written as asked."""


class NotAPartition(LakeError):
    """A partition's file that is not one of its dataset: `reason` says how, in a few words (a
    quarantine's line), the message names the file and what was found."""

    def __init__(self, path: object, reason: str, found: str) -> None:
        super().__init__(f"{path} is {reason} ({found})")
        self.reason = reason


class ServiceError(CommerceReportsError):
    """A request to the service failed."""

    def __init__(
        self,
        message: str,
        *,
        endpoint: str = "",
        params: Mapping[str, Any] | None = None,
        attempts: int = 1,
    ) -> None:
        self.endpoint = endpoint
        self.params = dict(params or {})
        self.attempts = attempts
        self.reason = redact(message)  # what happened, without the request it happened to
        super().__init__(self._said())

    def _said(self) -> str:
        where = f" [{self.endpoint} {_format_params(self.params)}]" if self.endpoint else ""
        tries = f" after {self.attempts} attempts" if self.attempts > 1 else ""
        return f"{self.reason}{where}{tries}"

    def naming(self, params: Mapping[str, Any]) -> ServiceError:
        """This error, naming the request's parameters (a lower layer raised it without them)."""
        self.params = dict(params)
        self.args = (redact(self._said()),)  # (as `__init__` masks it: the parameters too)
        return self


class TransportError(Retriable, ServiceError):
    """The request never got a complete answer: timeout, refused or dropped connection.

    `sent` is False only when the request provably never left (no connection was made): a write
    that was sent may have had effect even without an answer."""

    def __init__(self, message: str, *, sent: bool = True, **kwargs: Any) -> None:
        self.sent = sent
        super().__init__(message, **kwargs)


class UnreachableError(Fatal, TransportError):
    """The service's address cannot be reached: a connection refused, a name that does not resolve
    or a failed TLS handshake before it ever answered, or several requests in a row without an
    answer. Nothing more is asked of it by this client; `asked` is False for the requests that
    were refused for that reason without being sent."""

    def __init__(self, message: str, *, base_url: str, asked: bool = True, **kwargs: Any) -> None:
        self.base_url = base_url
        self.asked = asked
        super().__init__(message, sent=False, **kwargs)


class MalformedResponseError(Retriable, ServiceError):
    """A 2xx answer whose body is truncated or is not the JSON the contract describes."""


class ResponseTooLargeError(Fatal, ServiceError):
    """The answer is larger than the configured ceiling once inflated; nothing of it was kept."""


class StatusError(ServiceError):
    """The service answered with a non-2xx status."""

    def __init__(
        self,
        status: int,
        meaning: str,
        *,
        body: bytes | str = b"",
        content_type: str = "",
        endpoint: str = "",
        params: Mapping[str, Any] | None = None,
        attempts: int = 1,
        hint: str = "",
    ) -> None:
        self.status = status
        self.body_excerpt = excerpt(body, content_type)
        self.content_type = content_type
        message = f"HTTP {status} {meaning}"
        if self.body_excerpt:
            message += f": {self.body_excerpt}"
        if hint:
            message += f". {hint}"
        super().__init__(message, endpoint=endpoint, params=params, attempts=attempts)


class BadRequestError(Fatal, StatusError):
    """400: the service rejected the parameters."""


class AuthenticationError(Fatal, StatusError):
    """401: the secret key is missing, unknown or revoked."""


class ForbiddenError(Fatal, StatusError):
    """403: the key may not do this."""


class NotFoundError(Fatal, StatusError):
    """404: no data (for aggregates the client returns an empty result instead)."""


class RateLimitedError(Retriable, StatusError):
    """429: too many requests; `retry_after` is the wait in seconds when the service said."""

    def __init__(self, *args: Any, retry_after: float | None = None, **kwargs: Any) -> None:
        self.retry_after = retry_after
        super().__init__(*args, **kwargs)


class ServerError(Retriable, StatusError):
    """5xx: the service failed; the same request may succeed later."""


def _format_params(params: Mapping[str, Any]) -> str:
    return " ".join(f"{k}={v}" for k, v in params.items())


class Trouble(NamedTuple):
    """One kind of message of an error class: what it says (its start, as printed after
    `error:`), its cause, and the fix."""

    says: str
    cause: str
    fix: str


TROUBLESHOOTING: dict[type[CommerceReportsError], tuple[Trouble, ...]] = {
    ConfigurationError: (
        Trouble(
            "COMMERCE_REPORTS_PACE: 'fast' is not a number of seconds",
            "a setting holds a value its check refuses (each message names the variable, or the file "
            "and key)",
            "`commerce-reports config list` shows every setting, its source and the problem; fix it there "
            "(`config set NAME VALUE`) or in the environment",
        ),
        Trouble(
            "<file>: secret_key is a secret and this file is meant to be committed",
            "a key was written into `commerce-reports.toml`",
            "remove it from the file and `commerce-reports config set secret_key` (it goes into the "
            "git-ignored `.env`)",
        ),
        Trouble(
            "<file>: not readable as UTF-8 (byte 0xe9 on line 3); save it as UTF-8",
            "`.env`, `commerce-reports.toml` or `sites.toml` was saved in another encoding (Latin-1's `é`)",
            "save it as UTF-8 from your editor, or `iconv -f latin1 -t utf-8 FILE > FILE.new`, then "
            "move `FILE.new` over `FILE`",
        ),
        Trouble(
            "COMMERCE_REPORTS_SECRET_KEY is set but COMMERCE_REPORTS_BASE_URL is not",
            "a real key without the service's address",
            "`commerce-reports config set base_url https://api.example.com/v1`",
        ),
        Trouble(
            "<sites.toml>: [sites.<name>] reads its key from $VAR, which is not set",
            "a site of `sites.toml` names a variable that holds nothing",
            "set the variable in the environment or `.env` (`config list` shows which are set)",
        ),
        Trouble(
            "the data folder <path> ... is a file, not a folder",
            "`--data-dir`, COMMERCE_REPORTS_DATA_DIR or `data_dir` names a file",
            "name a folder; `commerce-reports status` says which rule chose the lake",
        ),
        Trouble(
            "the data folder <path> is below a folder named 'site=shop': DuckDB would read it as the "
            "site of every file of the lake",
            "DuckDB reads the first `key=value` folder of a path as that column: below `site=shop/` every "
            "site would read as `shop` (the same for `by=`, `day=`, `slice=`, `grain=`, `start=`)",
            "move the data folder, or rename that folder, so that no folder of its path is named so",
        ),
        Trouble(
            "<path> is not git-ignored: a secret written there could be committed",
            "`config set` of a secret in a project whose `.env` git would commit",
            "add `.env` to the project's `.gitignore` (`commerce-reports init <folder>` does), then "
            "set it again",
        ),
    ),
    ValidationError: (
        Trouble(
            "<parameter>: <what is wrong>; <what is allowed>",
            "an argument of a function or a command is refused before anything is sent",
            "the message names the parameter and what it accepts (dates are YYYY-MM-DD); usage errors exit 2",
        ),
        Trouble(
            "--site: unknown site 'x' (sync ran nothing)",
            "a site name that is not configured",
            "`commerce-reports config list` and `check` show the configured sites",
        ),
        Trouble(
            "a range of more than 5 years of days needs allow_large=True",
            "a sync over thousands of requests",
            "narrow `--start`/`--end`, or confirm with `sync --yes` (`allow_large=True`)",
        ),
    ),
    ServiceError: (
        Trouble(
            "<what happened> [<endpoint> <parameters>] after N attempts",
            "a request failed; the subclasses below say how",
            "see the subclass; `commerce-reports check` asks each site one request and says what is wrong",
        ),
    ),
    TransportError: (
        Trouble(
            "the request's deadline passed ...",
            "the service (or a proxy) answered too slowly, within COMMERCE_REPORTS_REQUEST_DEADLINE",
            "retried on its own; raise `request_deadline` if the service is slow by nature",
        ),
    ),
    UnreachableError: (
        Trouble(
            "<address> could not be reached: connection refused / name not resolved / TLS failed",
            "the address is wrong, or the network or the service is down; nothing more is asked of it",
            "check `base_url` (`config get base_url`) and the network; `sync` exits 3 and the next "
            "sync resumes",
        ),
    ),
    MalformedResponseError: (
        Trouble(
            "a 2xx answer ... is not the JSON the contract describes",
            "a truncated body, or a proxy's page instead of the service's answer",
            "retried on its own; if it keeps failing, `commerce-reports check` names the address "
            "that answers",
        ),
    ),
    ResponseTooLargeError: (
        Trouble(
            "the answer is larger than ... (COMMERCE_REPORTS_MAX_BODY_MB)",
            "one day or window holds more than the ceiling once inflated; nothing of it was kept",
            "raise `max_body_mb` (for one site: in `sites.toml`)",
        ),
    ),
    StatusError: (
        Trouble(
            "HTTP <status> <meaning>: <body excerpt>",
            "a status the subclasses do not name",
            "read the excerpt",
        ),
    ),
    BadRequestError: (
        Trouble(
            "HTTP 400 ...",
            "the service refused the parameters: often a dialect that does not match the service",
            "`commerce-reports check` says which dialect a site's answers show; set `dialect` to it",
        ),
    ),
    AuthenticationError: (
        Trouble(
            "HTTP 401 ...",
            "the key is missing, unknown or revoked",
            "set the right key (`commerce-reports config set secret_key`); `check` says which site's "
            "key is refused",
        ),
    ),
    ForbiddenError: (
        Trouble(
            "HTTP 403 ...",
            "the key may not read this report",
            "ask the service for the access, or use another key",
        ),
    ),
    NotFoundError: (
        Trouble(
            "HTTP 404 ... / the address does not answer as the reporting API",
            "the base URL points somewhere else (an aggregate's 404 is an empty result, not this)",
            "fix `base_url` (with or without `/v1`); `commerce-reports check` verifies it",
        ),
    ),
    RateLimitedError: (
        Trouble(
            "HTTP 429 ... (the service asked to wait N s)",
            "requests came faster than the key allows, or the wait asked for is over "
            "COMMERCE_REPORTS_MAX_RETRY_WAIT",
            "keep `pace` at the documented 60 s; a sync waits as asked up to `max_retry_wait`",
        ),
    ),
    ServerError: (
        Trouble(
            "HTTP 5xx ...", "the service failed", "retried on its own; the next sync fetches what is missing"
        ),
    ),
    LakeError: (
        Trouble(
            "<path>: permission denied / the file system is read-only / the disk is full",
            "the data folder cannot be written",
            "free space or fix the folder's permissions; nothing half-written is ever read",
        ),
        Trouble(
            "another sync of <site> is running",
            "two syncs of one site at once (a scheduled one and yours)",
            "wait for it (the wait is said); one sync writes a site at a time",
        ),
    ),
    NotAPartition: (
        Trouble(
            "<path> is not readable Parquet (...) / is Parquet but not a transactions partition (...)",
            "a partition's file was damaged (a disk, a copy cut short) or replaced by another file; "
            "readers leave it out and `verify` moves it to the quarantine folder",
            "`commerce-reports verify`, then `sync`: the next sync fetches the partition again",
        ),
    ),
    ExportError: (
        Trouble(
            "the notebook failed at cell N: ...",
            "a cell of the report raised; the executed notebook is kept beside the report",
            "open the kept .ipynb to see the cell's traceback",
        ),
        Trouble(
            "an output would contain the value of <VARIABLE>",
            "a cell printed a secret; nothing was written",
            "remove the print; secrets reach a notebook only through the environment",
        ),
    ),
    DeliveryError: (
        Trouble(
            "the report could not be mailed through <server>: ...; the report stays at <path>",
            "the SMTP server refused the login or the message, could not be reached, or offered no TLS "
            "away from loopback (a password is never sent in clear)",
            "check `smtp_url`, `smtp_password` and `mail_from` (`config list`); the report file is kept",
        ),
    ),
}
