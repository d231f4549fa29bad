"""Redaction in one place: masking every known key in text, and safe excerpts of answer bodies.

Redaction masks *values*, never words: every key the process has seen (each `secret.Secret`
registers itself), plus tokens in the shapes keys travel in (`Authorization: secret <key>`,
`x-api-key: <key>`, `key=`/`token=` query values, the password in `scheme://user:password@host`).
The toolkit's own hints ("the site's secret key") stay readable.
A known key is also found echoed in disguise, as a hostile server may send it back: in hex (either
case), reversed, spaced out (up to 3 separators between its characters, as in `k e y` or JSON's
`"k","e","y"`) and in base64 (`echo_pattern`). A file about to be written or sent is searched for
a key as its format writes it too: with HTML's or JSON's escapes (`holds_secret`).

This module is the bottom of the house: it imports nothing of the toolkit.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import Any

__all__ = [
    "MASK",
    "echo_pattern",
    "excerpt",
    "holds_secret",
    "is_html",
    "known_secrets",
    "mask_record",
    "redact",
    "register_secret",
    "screen_pattern",
    "scrub",
    "visible",
    "written_forms",
]

MASK = "***"
_MIN_SECRET = 4  # shorter values would mask ordinary text
_MIN_DISGUISED = 8  # a disguise of a shorter key (its letters spaced out) could be ordinary text
_SEPARATORS = "[^0-9A-Za-z]{0,3}"
_BODY_EXCERPT_CHARS = 300
_secrets: set[str] = set()
# C0 and C1 control characters and DEL, each written as its escape (`\x1b`, `\r`)
_ESCAPED = {c: chr(c).encode("unicode_escape").decode() for c in (*range(32), *range(127, 160))}

# A token as keys look: long, no spaces, letters and digits (an English word has no digits).
_KEYISH = r"(?=[A-Za-z0-9._~+/=-]*\d)(?=[A-Za-z0-9._~+/=-]*[A-Za-z])[A-Za-z0-9._~+/=-]{12,}"
_KEY_SHAPES = (  # compiled at first use (`_key_shapes`): a command that redacts nothing never pays
    r"(?i)(?:(?P<header>\bauthorization[\"']?\s*[:=]\s*[\"']?(?:secret|bearer)\s+|\bx-api-key[\"']?\s*[:=]\s*[\"']?)"
    r"(?P<any>[^\s\"',;]+)"
    r"|(?P<lead>\bsecret\s+|\bbearer\s+|[?&](?:key|api_key|apikey|token|secret)=)"
    rf"(?P<token>{_KEYISH})"
    # a URL's password: scheme://user:<password>@host (an SMTP URL written with one); the user may
    # be an address and the password may hold `@`: the host follows the authority's last `@`
    r"|(?P<userinfo>\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/?#]*:)(?P<password>[^\s/?#]+)(?=@[^\s/?#@]*(?:[\s/?#]|$)))"
)


def register_secret(secret: str) -> None:
    """Remember a secret value so that `redact` masks it wherever it might surface."""
    if isinstance(secret, str) and len(secret) >= _MIN_SECRET:
        _secrets.add(secret)


def known_secrets() -> frozenset[str]:
    """Every secret registered so far (so exports and stored files can prove they hold none)."""
    return frozenset(_secrets)


@functools.cache
def _key_shapes() -> re.Pattern[str]:
    return re.compile(_KEY_SHAPES)


@functools.cache
def _echoes(secrets: frozenset[str]) -> re.Pattern[str] | None:
    import base64

    forms = []
    for secret in sorted(secrets, key=len, reverse=True):
        if len(secret) < _MIN_DISGUISED:
            continue
        encoded = secret.encode()
        for text in (secret, secret[::-1]):  # as it is or reversed, spaced out or not
            forms.append(_SEPARATORS.join(re.escape(c) for c in text))
        # its bytes in hex, either case, one separator between them or none (`736b2d`, `73:6B:2D`)
        pairs = ["".join(f"[{d}{d.upper()}]" if d.isalpha() else d for d in f"{b:02x}") for b in encoded]
        forms.append("[ :.,_-]?".join(pairs))
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            forms.append(re.escape(encode(encoded).decode().rstrip("=")) + "={0,2}")
            forms += [re.escape(core) for core in _base64_cores(encoded, encode)]
    return re.compile("|".join(dict.fromkeys(forms))) if forms else None


def _base64_cores(encoded: bytes, encode: Any) -> list[str]:
    """The base64 characters that `encoded` alone decides wherever it sits in what is encoded: a
    secret after 0, 1 or 2 other bytes (a Basic login's `user:key`, SMTP's `\\0user\\0password`)
    or before others is no longer its own encoding, but holds one of these three."""
    cores = []
    for before in range(3):
        text = encode(b"\0" * before + encoded).decode()
        cores.append(text[4 if before else 0 : 4 * ((before + len(encoded)) // 3)])
    return cores


# The parts of `screen_pattern`, which RE2 searches too (Arrow's, over a stored table's strings):
# RE2's `\s` is ASCII's six characters and its case folding is not Python's, so both are written
# out as Python reads them. Every character Python's `\s` matches in text (`str.isspace`):
_SPACE = "[\t-\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"
# The letters Python's IGNORECASE matches to an ASCII letter of a key's label beyond its two cases:
_FOLDED = {"i": "\u0130\u0131", "k": "\u212a", "s": "\u017f"}
_LABELS = ("authorization", "x-api-key", f"secret{_SPACE}", f"bearer{_SPACE}")
_QUERY_KEYS = ("key", "api_key", "apikey", "token", "secret")


def _caseless(word: str) -> str:
    """`word`'s ASCII letters as classes of every character Python's IGNORECASE matches to them."""
    return "".join(
        f"[{c.lower()}{c.upper()}{_FOLDED.get(c.lower(), '')}]" if c.isascii() and c.isalpha() else c
        for c in word
    )


def screen_pattern() -> str:
    """A regular expression, Python's and RE2's syntax alike, found in every text that `redact`
    changes, but for a known secret as it is (a plain search finds that): a key's label in any case
    (then a token may follow), a URL holding a password, a known secret in disguise. It finds more
    than `redact` masks: a screen, after which `redact` decides, for an engine without Python's
    whitespace and case rules (Arrow's RE2 searching a stored table's strings)."""
    echoes = echo_pattern()
    return _shape_screen() if echoes is None else f"{_shape_screen()}|{echoes}"


@functools.cache
def _shape_screen() -> str:
    labels = [_caseless(label) for label in _LABELS]
    queries = "[?&](?:" + "|".join(map(_caseless, _QUERY_KEYS)) + ")="
    return "|".join([*labels, queries, "://[^/@]*@"])


def echo_pattern(extra_secrets: Iterable[str] = ()) -> str | None:
    """A regular expression (Python's and RE2's syntax alike) matching every known secret of at
    least 8 characters in any of its disguises; None when there is none."""
    pattern = _echoes(frozenset({*_secrets, *(s for s in extra_secrets if s)}))
    return pattern.pattern if pattern is not None else None


def written_forms(secrets: Iterable[str]) -> list[str]:
    """Each of `secrets` as it is and as text formats write it (JSON's escapes `\\"` and `\\u00e9`,
    HTML's `&quot;` and `&lt;`, Python's repr `\\'`, a URL's `%2F`), longest first: what a plain
    search looks for."""
    return list(_all_written(frozenset(secret for secret in secrets if secret)))


@functools.cache  # (redact asks it for every log line and every value it scrubs)
def _all_written(secrets: frozenset[str]) -> tuple[str, ...]:
    return tuple(sorted({form for secret in secrets for form in _written(secret)}, key=len, reverse=True))


@functools.cache
def _written(secret: str) -> frozenset[str]:
    import html
    import json
    from urllib.parse import quote, quote_plus

    shown = repr(secret)[1:-1]  # (a notebook's cell showing it; in an HTML output, escaped again)
    return frozenset(
        {
            secret,
            json.dumps(secret)[1:-1],
            json.dumps(secret, ensure_ascii=False)[1:-1],
            *(html.escape(text, quotes) for text in (secret, shown) for quotes in (True, False)),
            shown,
            quote(secret, safe=""),  # in a URL's path or query
            quote_plus(secret, safe=""),
        }
    )


def redact(text: str, extra_secrets: Iterable[str] = ()) -> str:
    """`text` with every known secret value (as text formats write it too, and in disguise: hex,
    reversed, spaced out, base64), and every key-shaped token after a key's label, masked."""
    secrets = frozenset({*_secrets, *(s for s in extra_secrets if s)})
    for form in written_forms(secrets):
        text = text.replace(form, MASK)
    echoes = _echoes(secrets)
    if echoes is not None:
        text = echoes.sub(MASK, text)
    return _key_shapes().sub(lambda m: (m["header"] or m["lead"] or m["userinfo"]) + MASK, text)


def mask_record(record: Any) -> bool:
    """A logging filter masking a record's message, exception and stack in place, as `redact` does:
    a handler that runs it shows no key whoever logged (httpcore's debug lines quote the headers an
    answer echoed). Duck-typed on `logging.LogRecord`, so that this module loads no logging."""
    record.msg = redact(record.getMessage())
    record.args = ()
    if record.exc_info and not record.exc_text:
        import traceback

        record.exc_text = "".join(traceback.format_exception(*record.exc_info)).rstrip("\n")
    if record.exc_text:
        record.exc_text = redact(record.exc_text)
    if record.stack_info:
        record.stack_info = redact(record.stack_info)
    return True


def scrub(value: Any, extra_secrets: Iterable[str] = ()) -> Any:
    """A JSON-like value with every known secret (and each of `extra_secrets`) masked in its strings
    (keys and values), as `redact` masks them."""
    extra = tuple(s for s in extra_secrets if s)
    if isinstance(value, str):
        return redact(value, extra) if _secrets or extra or _key_shapes().search(value) else value
    if isinstance(value, dict):
        return {scrub(k, extra): scrub(v, extra) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [scrub(v, extra) for v in value]
    return value


_BACKSLASH_ESCAPE = re.compile(
    r"""\\(?:u([0-9a-fA-F]{4})|x([0-9a-fA-F]{2})|U([0-9a-fA-F]{8})|(["'\\/bfnrt]))"""
)
_ESCAPED_AS = {
    '"': '"',
    "'": "'",
    "\\": "\\",
    "/": "/",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
}


def _unescaped(text: str) -> str:
    """`text` with the string escapes of JSON and of Python's repr read (`\\"`, `\\'`, `\\u003c`,
    `\\xe9`; a surrogate pair as its character)."""

    def read(m: re.Match[str]) -> str:
        code = m[1] or m[2] or m[3]
        return _ESCAPED_AS[m[4]] if code is None else chr(min(int(code, 16), 0x10FFFF))

    return _BACKSLASH_ESCAPE.sub(read, text).encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def holds_secret(data: bytes | str, secrets: Iterable[str]) -> bool:
    """Whether `data` holds one of `secrets` as it is, or as a page or a notebook writes it: behind
    HTML's character references (`&lt;`, `&#34;`) or JSON's escapes (`\\"`, `\\u003c`), one inside
    the other up to three deep (a chart's JSON in a page, a page in a notebook's JSON). A password
    holding `"` and `<` is in neither form as it is in a notebook and its page."""
    import html

    wanted = written_forms(secrets)  # (a URL-encoded one too, at any depth)
    layers = [data.decode("utf-8", "replace") if isinstance(data, bytes) else data]
    seen = set(layers)
    for _ in range(3):
        if any(secret in layer for layer in layers for secret in wanted):
            return True
        read = dict.fromkeys(text for layer in layers for text in (html.unescape(layer), _unescaped(layer)))
        layers = [layer for layer in read if layer not in seen]
        seen.update(layers)
    return any(secret in layer for layer in layers for secret in wanted)


def excerpt(body: bytes | str, content_type: str = "") -> str:
    """A short, single-line, secret-free rendering of a response body (JSON, HTML or text), its
    escapes read (JSON's `\\u0073`, HTML's `&#115;`): a key a server echoes escaped is masked as
    it reads, not shown in a form anyone can read back."""
    import html

    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    page = is_html(text, content_type)
    if page:
        title = re.search(r"(?is)<title>(.*?)</title>", text)
        text = re.sub(r"(?s)<(script|style).*?</\1>", " ", text)
        text = re.sub(r"<[^>]+>", " ", text)
        if title:
            text = f"{title.group(1).strip()}: {text}"
    # Masked before it is cut: a key crossing the cut would keep all but its last characters.
    # Only a window is masked (a body may be megabytes); a key cut by the window's edge lies within
    # its last `reach` characters, which are dropped once masked. The escapes are read in a part
    # of the body that holds the window even if every character of it is escaped.
    reach = _reach()
    window = _BODY_EXCERPT_CHARS + 2 * reach
    read = 16 * window
    cut = len(text) > read
    text = html.unescape(text[:read] if page else _unescaped(text[:read]))
    text = " ".join(("HTML page: " + text if page else text).split())
    masked = visible(redact(text[:window]))
    if cut or len(text) > window:
        masked = masked[:-reach]
    if cut or len(text) > window or len(masked) > _BODY_EXCERPT_CHARS:
        masked = masked[:_BODY_EXCERPT_CHARS] + "…"
    return masked


def _reach() -> int:
    """The most characters a masked form can span: a known key spaced out (3 separators between
    its characters, `echo_pattern`), or a key-shaped token with its label."""
    longest = max(map(len, _secrets), default=0)
    return max(64, 4 * longest)


def visible(text: str) -> str:
    """`text` with every control character written out as its escape (`\x1b`, `\r`, `\n`): a
    server's words shown on a terminal can then neither colour, move nor overwrite it."""
    return text.translate(_ESCAPED)


def is_html(body: bytes | str, content_type: str = "") -> bool:
    """True when a body is an HTML page (by its content type or its first characters)."""
    head = body[:64] if isinstance(body, str) else body[:64].decode("utf-8", "replace")
    return "html" in content_type.lower() or head.lstrip().lower().startswith(("<!doctype", "<html"))
