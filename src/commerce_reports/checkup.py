"""`check` (`cr.check()`, `commerce-reports check`): is everything set up right? For each configured
site, in seconds: whether its address answers as the reporting API, whether its key is accepted,
which dialect it speaks, where the lake is and why, and what the pace is.

    report = cr.check()              # the embedded sandbox's sites when no key is configured
    print(report.describe())
    report.ok                        # False when something is wrong (what, on each site's `problems`)

It asks each site one transactions request at most (yesterday's `updateDate` day), in its turn of
the pace shared with every process using the key, and says so; when that turn is further away than
`max_wait` (another sync is running, or the service asked to slow down) it asks nothing and says
why. The dialect is read from the transactions the service sends: the contract's nested groups,
the notes' flat shape, or the vendor's published `TransactionModel` (`clickSid`,
`affProductSubType`); a day without transactions shows none.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from .activity import checked_progress, said
from .client import ReportsClient
from .config import Dialect, current_settings
from .embedded import chosen_sites
from .errors import ServiceError, UnreachableError, ValidationError
from .http import Answer, RetryPolicy
from .locate import LakeLocation, where
from .redaction import excerpt, redact
from .sites import SiteProfile, SiteSelection

__all__ = ["DEFAULT_MAX_WAIT", "CheckReport", "SiteCheck", "check", "dialect_of"]

DEFAULT_MAX_WAIT = 10.0  # seconds: a pace turn further away than this is not waited for
_PUBLISHED_ONLY = ("clickSid", "affProductSubType")  # TransactionModel names no contract shape has
_NESTED_GROUPS = ("account", "commission", "click", "merchant")


@dataclass(frozen=True)
class SiteCheck:
    """What `check` found for one site. `answers`/`key_accepted` are None when nothing was asked;
    `dialect_seen` is None when no transaction showed it; `problems` say what is wrong and what to do."""

    site: str
    address: str
    dialect: Dialect
    pace: dict[str, float]
    answers: bool | None = None
    key_accepted: bool | None = None
    dialect_seen: str | None = None
    status: int | None = None
    seconds: float | None = None
    asked: int = 0
    problems: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.problems

    def lines(self) -> list[str]:
        """The site's lines as `commerce-reports check` prints them."""
        took = f" in {self.seconds:.2f} s" if self.seconds is not None else ""
        if self.answers:
            address = f"answers as the reporting API (HTTP {self.status}{took})"
        elif self.answers is None:
            address = "not asked"
        else:
            address = f"does not answer as the reporting API{took}"
        key = {True: "accepted", False: "refused", None: "not known"}[self.key_accepted]
        if self.dialect_seen is None:
            dialect = f"{self.dialect} as configured (not seen: no transactions in the answer)"
        elif self.dialect_seen.startswith(self.dialect):
            dialect = f"{self.dialect_seen}, as configured"
        else:
            dialect = f"{self.dialect_seen}, but the site is configured for {self.dialect}"
        pace = ", ".join(f"{endpoint} {seconds:g} s" for endpoint, seconds in self.pace.items())
        asked = f"this check asked {self.asked} transactions request" + ("" if self.asked == 1 else "s")
        lines = [
            f"site {self.site}: {self.address}",
            f"  address  {address}",
            f"  key      {key}",
            f"  dialect  {dialect}",
            f"  pace     {pace} between requests, kept with every process using this key; {asked}",
        ]
        lines += [f"  PROBLEM  {problem}" for problem in self.problems]
        return [redact(line) for line in lines]  # an address may hold a key (a path, a query, a login)


@dataclass(frozen=True)
class CheckReport:
    """Every site's check and where the lake is (and why)."""

    lake: LakeLocation
    sites: tuple[SiteCheck, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        return all(site.ok for site in self.sites)

    def describe(self) -> str:
        """What `commerce-reports check` prints: the lake, a block per site, a verdict."""
        lines = [
            f"lake: {self.lake}",
            "settings: `commerce-reports config list` shows each, its value and where it came from",
        ]
        for site in self.sites:
            lines += site.lines()
        problems = sum(len(site.problems) for site in self.sites)
        lines.append(
            f"all good: {len(self.sites)} site(s) answer and accept their keys"
            if self.ok
            else f"{problems} problem(s): see PROBLEM above"
        )
        return "\n".join(lines)


def check(
    sites: SiteSelection = None,
    *,
    data_dir: str | Path | None = None,
    max_wait: float | None = DEFAULT_MAX_WAIT,
    pace_dir: Path | None = None,
    progress: bool | None = None,
) -> CheckReport:
    """Check every selected site (default: all configured, else the embedded sandbox's) with one
    transactions request each at most, in its pace turn; `max_wait=None` waits for the turn however
    long it is (the wait is said). Never raises for what it finds: that is in the report. A site's
    check can take seconds (the pace's turn, a slow answer): `progress` says which site is asked
    while it runs (default: a counter in a terminal or a notebook, a line at its start and end
    elsewhere; False: nothing)."""
    if max_wait is not None and (
        isinstance(max_wait, bool) or not isinstance(max_wait, int | float) or max_wait < 0
    ):
        raise ValidationError(
            "max_wait", f"{max_wait!r} is not a number of seconds", "give seconds >= 0, or None"
        )
    checked_progress(progress)
    settings = current_settings()
    lake = where(data_dir) if data_dir is not None else settings.lake
    found = []
    for profile in chosen_sites(sites, settings, start=True).values():
        with said(f"asking site {profile.name} one transactions request", progress):
            found.append(_check_site(profile, max_wait, pace_dir))
    return CheckReport(lake, tuple(found))


def _check_site(profile: SiteProfile, max_wait: float | None, pace_dir: Path | None) -> SiteCheck:
    address = (
        f"the embedded sandbox at {profile.base_url} (no key is configured)"
        if profile.sandbox
        else profile.base_url
    )
    with ReportsClient(
        profile.secret_key,
        profile.base_url,
        dialect=profile.dialect,
        limits=profile.limits,
        pace=profile.pace,
        retry=RetryPolicy(max_attempts=1),
        pace_dir=pace_dir,
    ) as client:
        found = SiteCheck(profile.name, address, client.dialect, client.pace)
        turn = client.seconds_to_turn("transactions")
        if max_wait is not None and turn > max_wait:
            return replace(
                found,
                problems=(
                    f"not asked: this key's next transactions request may start in {turn:.0f} s (the pace "
                    "shared with other processes: a sync running, or the service asked to slow down); "
                    "run check again then, or with --wait",
                ),
            )
        began = time.monotonic()
        try:
            answer = client.probe()
        except UnreachableError as error:
            return replace(found, answers=False, asked=1, problems=(error.reason,))
        except ServiceError as error:
            problem = f"{profile.base_url} gave no answer: {error.reason}"
            return replace(found, answers=False, asked=1, problems=(problem,))
        return _judged(
            replace(found, seconds=time.monotonic() - began, status=answer.status, asked=1), answer
        )


def _judged(found: SiteCheck, answer: Answer) -> SiteCheck:
    """What one transactions answer says of the address, the key and the dialect."""
    status, dialect = answer.status, found.dialect
    if status == 404 or answer.is_html:
        what = "an HTML page" if answer.is_html else "HTTP 404"
        problem = (
            f"{answer.url} answered {what}: the address is not the reporting API; give the address whose "
            "/v1/reports/... paths answer (COMMERCE_REPORTS_BASE_URL, or base_url in sites.toml)"
        )
        return replace(found, answers=False, problems=(problem,))
    found = replace(found, answers=True)
    if status == 401:
        problem = (
            "the key is refused (HTTP 401): check the site's key (COMMERCE_REPORTS_SECRET_KEY, "
            "COMMERCE_REPORTS_SECRET_KEY_<NAME>, or the variable its secret_key_env names)"
        )
        return replace(found, key_accepted=False, problems=(problem,))
    if status == 403:
        problem = "the key is known but may not read transactions (HTTP 403)"
        return replace(found, key_accepted=False, problems=(problem,))
    if not answer.is_success:
        said = excerpt(answer.body, answer.content_type)
        problem = f"the service answered HTTP {status} to a plain transactions request: {said}"
        return replace(found, problems=(problem,))
    seen = dialect_of(answer.body)
    found = replace(found, key_accepted=True, dialect_seen=seen)
    if seen is not None and not seen.startswith(dialect):
        name = seen.split()[0]
        problem = (
            f"the service speaks the {name} dialect, the site is configured for {dialect}: set "
            f'COMMERCE_REPORTS_DIALECT={name} (or dialect = "{name}" in sites.toml)'
        )
        return replace(found, problems=(problem,))
    return found


def dialect_of(body: bytes) -> str | None:
    """The dialect a transactions body shows: "contract (nested transactions)", "contract (the flat
    shape)", "published (TransactionModel)", or None when it holds no transaction to tell by."""
    try:
        data = json.loads(body)
    except ValueError:
        return None
    rows = data.get("transactions") if isinstance(data, Mapping) else None
    first = rows[0] if isinstance(rows, list) and rows else None
    if not isinstance(first, Mapping):
        return None
    if any(isinstance(first.get(group), Mapping) for group in _NESTED_GROUPS):
        return "contract (nested transactions)"
    if any(name in first for name in _PUBLISHED_ONLY):
        return "published (TransactionModel)"
    return "contract (the flat shape)"
