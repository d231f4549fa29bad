"""Every setting of the toolkit, declared once: its name, variable, kind and check, default, whether
it is a secret, what it means, and where it can be set.

`config.Settings` resolves them (the environment over `.env` over `commerce-reports.toml` over the
default), `sites.toml` reads the per-site ones, `commerce-reports config list/get/set` shows and
writes them, and the docs' settings page and the README's table are written from `SETTINGS`
(`settings_table`), so none of them can drift from the others.

    Setting("base_url", "an http(s) URL", "the service's address, with or without `/v1`",
            check_base_url, example="https://api.example.com/v1", per_site=True)

A secret (a key, a password) is read from the environment or a git-ignored `.env` only: never from
`commerce-reports.toml`, which is meant to be committed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

from .endpoints import DIALECTS, PACE_KEYS, Dialect
from .errors import ConfigurationError, ValidationError
from .money import Currency
from .secret import Secret

__all__ = [
    "ADDRESS",
    "DEFAULT_PACE",
    "DEFAULT_REVISION_DAYS",
    "DOTENV",
    "ENVIRONMENT",
    "PLACES",
    "PREFIX",
    "PROJECT",
    "SETTING",
    "SETTINGS",
    "SITES",
    "Place",
    "Setting",
    "check_base_url",
    "check_dialect",
    "check_revision_days",
    "check_smtp_url",
    "check_switch",
    "normalise_base_url",
    "parse_pace",
    "recipients",
    "setting_named",
    "settings_table",
    "toml_value",
]

PREFIX = "COMMERCE_REPORTS_"
Place = Literal["environment", ".env", "commerce-reports.toml", "sites.toml"]
ENVIRONMENT: Place = "environment"
DOTENV: Place = ".env"
PROJECT: Place = "commerce-reports.toml"
SITES: Place = "sites.toml"
PLACES: tuple[Place, ...] = (ENVIRONMENT, DOTENV, PROJECT, SITES)

DEFAULT_PACE = 60.0  # seconds between requests per endpoint: the contract's documented limit

# Days after an aggregate window ends during which the service may still revise it. The contract
# gives no bound (a return arrives on a later updateDate day, rule 2.1.4); the sandbox models a
# commission up to 10 days after its click and a return up to 30 days after the commission, so
# a click on a window's last day is revised at most 40 days after the window ends. 45 keeps five
# days of margin for a network that posts an adjustment a few days late.
DEFAULT_REVISION_DAYS = 45
_MAX_REVISION_DAYS = 3660
_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")

Check = Callable[[Any, str], Any]


@dataclass(frozen=True)
class Setting:
    """One setting. `name` is its key in `commerce-reports.toml` (and in `sites.toml` when
    `per_site`) and the name `commerce-reports config` takes; `variable` the environment variable
    (None: a file's key only). `check(value, where)` turns a text (from the environment) or a TOML
    value into what the toolkit uses, or raises a ConfigurationError naming `where`. A `family`
    is one variable per name (`COMMERCE_REPORTS_SECRET_KEY_<NAME>`)."""

    name: str
    kind: str
    meaning: str
    check: Check
    default: str = ""
    example: str = ""
    secret: bool = False
    variable: str | None = ""
    project: bool = True
    per_site: bool = False
    family: bool = False

    def __post_init__(self) -> None:
        if self.variable == "":
            object.__setattr__(self, "variable", PREFIX + self.name.upper())
        if self.secret and self.project:
            raise ValueError(f"setting {self.name}: a secret is never read from commerce-reports.toml")

    @property
    def places(self) -> tuple[Place, ...]:
        """Where this setting can be set, in the order one wins over the next."""
        return tuple(
            place
            for place, allowed in (
                (ENVIRONMENT, self.variable is not None),
                (DOTENV, self.variable is not None),
                (PROJECT, self.project),
                (SITES, self.per_site),
            )
            if allowed
        )


# -- checks -------------------------------------------------------------------------------------


def parse_pace(text: str | float | Mapping[str, float] | None, where: str = "pace") -> dict[str, float]:
    """Read a pace: one number for every endpoint, or `transactions=60,networks=10,merchandise=60`
    (a TOML table works too). Endpoints not named keep the documented 60 seconds."""
    pace = dict.fromkeys(PACE_KEYS, DEFAULT_PACE)
    if text is None:
        return pace
    blank = isinstance(text, str) and not text.strip()  # (a blank variable is unset: never here)
    if blank or isinstance(text, bool) or not isinstance(text, str | int | float | Mapping):
        raise ConfigurationError(
            f"{where}: {text!r:.60} is not a pace; give seconds (60) or e.g. transactions=60,networks=10"
        )
    if isinstance(text, int | float):
        return dict.fromkeys(PACE_KEYS, _seconds(where, str(text)))
    if isinstance(text, Mapping):
        items = [(str(k), str(v)) for k, v in text.items()]
    elif "=" not in text:
        return dict.fromkeys(PACE_KEYS, _seconds(where, text))
    else:
        items = []
        for part in text.split(","):
            name, sep, value = part.partition("=")
            if not sep:
                raise ConfigurationError(
                    f"{where}: {part!r} is not endpoint=seconds; "
                    "write one number or e.g. transactions=60,networks=10,merchandise=60"
                )
            items.append((name.strip(), value))
    for name, value in items:
        if name not in PACE_KEYS:
            raise ConfigurationError(
                f"{where}: unknown endpoint {name!r}; expected one of {', '.join(PACE_KEYS)}"
            )
        pace[name] = _seconds(f"{where} for {name}", value)
    return pace


def _seconds(what: str, value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        raise ConfigurationError(f"{what}: {value!r} is not a number of seconds") from None
    if not seconds >= 0 or seconds == float("inf"):
        raise ConfigurationError(f"{what}: {value!r} must be zero or a positive number of seconds")
    return seconds


def _positive(value: object, where: str) -> float:
    """A positive, finite number (text or TOML number)."""
    try:
        number = (
            float(value) if isinstance(value, str | int | float) and not isinstance(value, bool) else None
        )
    except ValueError:
        number = None
    if number is None or not 0 < number < float("inf"):
        raise ConfigurationError(f"{where}: {value!r} is not a positive number")
    return number


def check_switch(value: object, where: str) -> bool:
    """Yes or no: a TOML boolean, or 1/0, true/false, yes/no, on/off."""
    if isinstance(value, bool):
        return value
    text = value.strip().lower() if isinstance(value, str) else None
    if text is None or text not in _TRUE + _FALSE:
        raise ConfigurationError(f"{where}: {value!r} is not a yes or no; write 1 or 0 (true or false)")
    return text in _TRUE


def check_dialect(value: object, where: str = PREFIX + "DIALECT") -> Dialect:
    """A dialect name, or a ConfigurationError listing the two."""
    text = value.strip().lower() if isinstance(value, str) else ""
    for dialect in DIALECTS:
        if text == dialect:
            return dialect
    raise ConfigurationError(
        f"{where}: {value!r} is not a dialect; use 'contract' (the service contract's names and "
        "nested shape) or 'published' (the vendor's OpenAPI description)"
    )


def check_revision_days(value: object, where: str = PREFIX + "REVISION_DAYS") -> int:
    """A revision horizon: whole days, 0 to 3660, or a ConfigurationError saying what is wanted."""
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= _MAX_REVISION_DAYS:
        raise ConfigurationError(
            f"{where}: {value!r} is not a number of days; give whole days from 0 to {_MAX_REVISION_DAYS}, "
            f"e.g. {DEFAULT_REVISION_DAYS} (the default: how long the service may revise a window)"
        )
    return value


def check_base_url(url: object, where: str = PREFIX + "BASE_URL") -> str:
    """An http(s) URL of a host (its port, if given, 1 to 65535), without a query or fragment
    (every path is appended to it: `?x=1` sent every request to `/`), without its trailing
    slash; else a ConfigurationError with an example."""
    text = url.strip() if isinstance(url, str) else ""
    parts = urlsplit(text)
    example = "e.g. https://api.example.com"
    if parts.scheme not in ("http", "https") or not parts.hostname or " " in text:
        raise ConfigurationError(f"{where}: {url!r} is not an http(s) URL, {example}")
    try:
        port = parts.port
    except ValueError:
        port = 0
    if port == 0:
        raise ConfigurationError(
            f"{where}: {url!r}: its port must be a number from 1 to 65535, {example}:8443"
        )
    if parts.query or parts.fragment or text.endswith(("?", "#")):
        raise ConfigurationError(
            f"{where}: {url!r} has a query or fragment; give the address alone (the request paths "
            f"are appended to it), {example}"
        )
    if "@" in parts.netloc:  # it would be kept in manifests and shown in messages as written
        from .redaction import redact

        raise ConfigurationError(
            f"{where}: {redact(text)!r} holds a secret (a user or a password before the host); the "
            f"service is reached with its key, {PREFIX}SECRET_KEY: give the address alone, {example}"
        )
    return text.rstrip("/")


def normalise_base_url(url: str) -> str:
    """The service's address as a client asks it and a manifest keeps it: without a trailing slash
    or `/v1` (the paths carry the version)."""
    text = check_base_url(url)
    return text[: -len("/v1")] if text.endswith("/v1") else text


def check_smtp_url(url: object, where: str = PREFIX + "SMTP_URL") -> str:
    """`smtp://[user@]host[:port]` or `smtps://...`, without a password (a URL gets printed)."""
    text = url.strip() if isinstance(url, str) else ""
    parts = urlsplit(text)
    if parts.scheme not in ("smtp", "smtps") or not parts.hostname:
        from .redaction import redact

        raise ConfigurationError(
            f"{where}: {redact(str(url))!r} is not smtp://[user@]host[:port] or smtps://[user@]host[:port]"
        )
    if parts.password is not None:
        raise ConfigurationError(
            f"{where} holds a password: put it in {PREFIX}SMTP_PASSWORD instead (a URL gets printed)"
        )
    return text


# An address, as a pattern `re` compiles on first use (and keeps): only what mails checks one.
ADDRESS = r"[^@\s<>,;\"]+@[^@\s<>,;\"]+\.[^@\s<>,;\"]+|[^@\s<>,;\"]+@localhost"


def recipients(text: str | Iterable[str]) -> list[str]:
    """Addresses from `a@x.org,b@y.org` (or a list), each checked, or a ValidationError."""
    items = text.split(",") if isinstance(text, str) else list(text)
    found = [item.strip() for item in items if isinstance(item, str) and item.strip()]
    wrong = [item for item in found if not re.fullmatch(ADDRESS, item)]
    if not found or wrong:
        raise ValidationError(
            "email",
            f"{wrong[0] if wrong else text!r} is not an address",
            "give addresses separated by commas: a@x.org,b@y.org",
        )
    return list(dict.fromkeys(found))


def _sender(value: object, where: str) -> str:
    """A sender: an address, with a name or not (`Reports <reports@example.org>`)."""
    from email.utils import parseaddr  # the email package (and socket) only when a sender is set

    text = _text(value, where)
    if not re.search(ADDRESS, parseaddr(text)[1] or ""):
        raise ConfigurationError(f"{where}: {value!r} is not an address, e.g. Reports <reports@example.org>")
    return text


def _secret(value: object, where: str) -> Secret:
    if not isinstance(value, str) or not value.strip():
        raise ConfigurationError(f"{where}: a key must be a non-empty string")
    return Secret(value)


def _text(value: object, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ConfigurationError(f"{where}: {value!r} is not a text; give a non-empty string")
    if any(ord(c) < 32 or ord(c) == 127 for c in value.strip()):  # a line break would split a crontab line
        raise ConfigurationError(f"{where}: {value!r} holds a line break or another control character")
    return value.strip()


SITE_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")  # a site's name, and its lake folder's: site=<name>


def _site(value: object, where: str) -> str:
    text = _text(value, where)
    if not SITE_NAME.fullmatch(text):
        raise ConfigurationError(
            f"{where}: {value!r} is not a usable site name; use lower-case letters, digits, '-' or '_', "
            "e.g. recipes"
        )
    return text


def _variable(value: object, where: str) -> str:
    text = _text(value, where)
    if not text.replace("_", "").isalnum():
        raise ConfigurationError(f"{where}: {value!r} is not a variable name, e.g. RECIPES_SECRET_KEY")
    return text


def _currency(value: object, where: str) -> Currency:
    if not isinstance(value, str):
        raise ConfigurationError(
            f"{where}: {value!r} is not a currency; give an ISO 4217 code, e.g. USD or EUR"
        )
    return Currency.of(value, where)


def _port(value: object, where: str) -> int:
    text = str(value).strip()
    if isinstance(value, bool) or not text.isdigit() or not 0 <= int(text) <= 65535:
        raise ConfigurationError(f"{where}: {value!r} is not a TCP port; give 0 (any free port) to 65535")
    return int(text)


def _table(value: object, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ConfigurationError(f"{where} must be a table, e.g. [alerts] with z = 4.0 under it")
    return value


# -- the declaration ----------------------------------------------------------------------------

SETTINGS: tuple[Setting, ...] = (
    Setting(
        "secret_key",
        "a key",
        "the site's secret key, sent as `Authorization: secret <key>`; unset: the built-in sandbox",
        _secret,
        secret=True,
        project=False,
    ),
    Setting(
        "secret_key_<name>",
        "a key",
        "a site named `<name>`, with its own key (one variable per site; refused beside "
        "`COMMERCE_REPORTS_SECRET_KEY`, whose site would drop out)",
        _secret,
        secret=True,
        project=False,
        family=True,
        variable=PREFIX + "SECRET_KEY_<NAME>",
    ),
    Setting(
        "secret_key_env",
        "a variable name",
        "in `sites.toml`, per site: the variable holding the site's key (the key stays in the "
        "environment or `.env`)",
        _variable,
        example="RECIPES_SECRET_KEY",
        variable=None,
        project=False,
        per_site=True,
    ),
    Setting(
        "site",
        "a site name",
        "the name of the single site of `COMMERCE_REPORTS_SECRET_KEY`",
        _site,
        default="default",
        example="recipes",
    ),
    Setting(
        "base_url",
        "an http(s) URL",
        "the service's address, with or without `/v1`",
        check_base_url,
        example="https://api.example.com/v1",
        per_site=True,
    ),
    Setting(
        "dialect",
        "contract or published",
        "the wire: `contract` (the service contract's names, nested transactions) or `published` "
        "(the vendor's OpenAPI file: flat `TransactionModel`, `sovrnProduct`)",
        check_dialect,
        default="contract",
        example="published",
        per_site=True,
    ),
    Setting(
        "data_dir",
        "a folder",
        "the lake's folder; in `commerce-reports.toml` or `.env`, relative to the file "
        '(see "Where the lake is")',
        _text,
        default="data beside commerce-reports.toml, else the user data folder",
        example="data",
    ),
    Setting(
        "pace",
        "seconds, or endpoint=seconds,...",
        "seconds between requests per endpoint",
        parse_pace,
        default="60",
        example="transactions=60,networks=10,merchandise=60",
    ),
    Setting(
        "max_body_mb",
        "megabytes",
        "the largest answer accepted, once inflated; a larger one is an error and nothing is stored",
        _positive,
        default="512",
        example="256",
        per_site=True,
    ),
    Setting(
        "request_deadline",
        "seconds",
        "how long one attempt may take in all (the name lookup, connecting, the response headers and "
        "the body), however slowly the server sends",
        _positive,
        default="300",
        example="120",
        per_site=True,
    ),
    Setting(
        "max_retry_wait",
        "seconds",
        "the longest wait the service may ask for (`Retry-After`) before the request fails instead",
        _positive,
        default="900",
        example="600",
        per_site=True,
    ),
    Setting(
        "share_group",
        "yes or no",
        "let your group read what the toolkit creates (folders 0750, files 0640); no: its owner only "
        "(0700, 0600)",
        check_switch,
        default="no",
        example="true",
    ),
    Setting(
        "revision_days",
        "whole days, 0 to 3660",
        'how many days after an aggregate window ends the service may still revise it (see "Revisions")',
        check_revision_days,
        default=str(DEFAULT_REVISION_DAYS),
        example="60",
        per_site=True,
    ),
    Setting(
        "currency",
        "an ISO 4217 code",
        "the currency the service reports in: charts title money `Revenue (EUR)` and use its minor "
        "units, the report and the dashboard write `€1,234.50`",
        _currency,
        default="USD",
        example="EUR",
    ),
    Setting(
        "smtp_url",
        "smtp:// or smtps:// URL",
        "where `export --email` sends reports: `smtp://user@host:587` (STARTTLS when the server "
        "offers it; a password is only sent in clear to a loopback relay) or `smtps://user@host:465`",
        check_smtp_url,
        example="smtp://reports@example.org@mail.example.org:587",
    ),
    Setting(
        "smtp_password",
        "a password",
        "the SMTP login's password (never in the URL)",
        _secret,
        secret=True,
        project=False,
    ),
    Setting(
        "mail_from",
        "an address",
        "the sender of mailed reports",
        _sender,
        default="the SMTP user, when it is an address",
        example="Reports <reports@example.org>",
    ),
    Setting(
        "deals_api_key",
        "a key",
        "the deal-request interface's API key (sent as `x-api-key`)",
        _secret,
        secret=True,
        project=False,
    ),
    Setting(
        "deals_base_url",
        "an http(s) URL",
        "the deal-request interface's address",
        check_base_url,
        example="https://deals.example.com",
    ),
    Setting(
        "serve_token",
        "a token of 16 or more characters",
        "the access token of `commerce-reports serve` (unset: a new one is made and printed at each start)",
        _secret,
        secret=True,
        project=False,
    ),
    Setting(
        "serve_host",
        "a host name or address",
        "where `commerce-reports serve` listens; anything but loopback is said loudly at start",
        _text,
        default="127.0.0.1",
        example="0.0.0.0",
    ),
    Setting(
        "serve_port",
        "a TCP port, 0 to 65535",
        "the port of `commerce-reports serve` (0: any free port)",
        _port,
        default="8866",
        example="8080",
    ),
    Setting(
        "alerts",
        "a table",
        'the alerts\' thresholds, one key each (see "Alerts"): `commerce-reports config set alerts.z 5`',
        _table,
        default="the defaults of the alerts page",
        variable=None,
    ),
)

SETTING: dict[str, Setting] = {setting.name: setting for setting in SETTINGS}


def setting_named(name: str) -> tuple[Setting, str]:
    """The setting `name` names, and its key: a setting's name (`base_url`), its variable
    (`COMMERCE_REPORTS_BASE_URL`), a family's member (`secret_key_recipes`) or a key of the alerts'
    table (`alerts.z`). An unknown name is a ValidationError with the nearest names."""
    text = name.strip() if isinstance(name, str) else ""
    key = text.lower().removeprefix(PREFIX.lower())
    if key in SETTING and not SETTING[key].family:
        return SETTING[key], key
    family = SETTING["secret_key_<name>"]
    if key.startswith("secret_key_") and key != "secret_key_env" and len(key) > len("secret_key_"):
        return family, key
    head, dot, rest = key.partition(".")
    if dot and rest and SETTING.get(head) is not None and SETTING[head].check is _table:
        return SETTING[head], key
    import difflib

    names = [s.name for s in SETTINGS]
    near = difflib.get_close_matches(key, names, n=3, cutoff=0.6)
    raise ValidationError(
        "setting",
        f"{name!r} is not a setting" + (f" (did you mean {' or '.join(near)}?)" if near else ""),
        f"`commerce-reports config list` shows them all: {', '.join(names)}",
    )


def toml_value(setting: Setting, text: str) -> Any:
    """What `config set` writes into a TOML file for `text`: checked first, then a boolean, a
    number or a string as the setting's kind reads best (`pace = 10`, `share_group = true`)."""
    checked = setting.check(text, setting.name)
    if isinstance(checked, bool):
        return checked
    if setting.check in (_positive, check_revision_days):
        return int(checked) if float(checked).is_integer() else float(checked)
    if setting.check is parse_pace and "=" not in text:
        number = float(text)
        return int(number) if number.is_integer() else number
    return text.strip()


def settings_table() -> str:
    """The settings as a markdown table (the README's and the docs' settings page)."""
    lines = [
        "| setting | variable | kind | default | where | meaning |",
        "|---|---|---|---|---|---|",
    ]
    for setting in SETTINGS:
        variable = f"`{setting.variable}`" if setting.variable else "–"
        default = setting.default or "–"
        where = ", ".join(place for place in setting.places)
        secret = " **Secret**: environment or `.env` only, masked everywhere." if setting.secret else ""
        example = f" E.g. `{setting.example}`." if setting.example else ""
        lines.append(
            f"| `{setting.name}` | {variable} | {setting.kind} | {default} | {where} | "
            f"{setting.meaning}.{example}{secret} |"
        )
    return "\n".join(lines) + "\n"
