"""Finding a key in a file about to be written or sent (`holds_secret`): as it is, and as the
file's format writes it. An export refused a notebook or a page that printed a password only when
the password's bytes were there as they are; a password holding `"` and `<` is in a notebook as
`\\"` (JSON) and in its page as `&lt;` (HTML), and both were written. And a key a server echoes
escaped in an answer's body: its excerpt (in errors, logs and failure records) showed it escaped."""

from __future__ import annotations

import base64
import contextlib
import html
import json
import re
from urllib.parse import quote

import pytest

from commerce_reports.redaction import excerpt, holds_secret, redact
from commerce_reports.secret import Secret

PASSWORD = 'pa"ss<w0rd&\\9é😀'  # what JSON and HTML both escape, one outside the BMP
FORMS = {
    "as it is": PASSWORD,
    "JSON": json.dumps({"text": PASSWORD}, ensure_ascii=False),
    "JSON, ASCII only": json.dumps({"text": PASSWORD}),
    "HTML": f"<pre>{html.escape(PASSWORD)}</pre>",
    "HTML, numeric references": "".join(f"&#{ord(c)};" for c in PASSWORD),
    "JSON in HTML": f"<script>{html.escape(json.dumps(PASSWORD))}</script>",
    "HTML in JSON": json.dumps({"text/html": f"<pre>{html.escape(PASSWORD)}</pre>"}),
    "JSON in JSON": json.dumps({"spec": json.dumps({"text": PASSWORD})}),
    "JSON in HTML in JSON (a chart's data in a page in a notebook)": json.dumps(
        {"text/html": f"<script>{html.escape(json.dumps(PASSWORD))}</script>"}
    ),
    "JSON with <, > and & escaped (a page's inline data)": json.dumps(PASSWORD)
    .replace("<", "\\u003c")
    .replace("&", "\\u0026"),
}


@pytest.mark.parametrize("form", FORMS)
def test_a_secret_is_found_as_a_page_or_a_notebook_writes_it(form: str) -> None:
    written = FORMS[form]
    assert PASSWORD not in written or form == "as it is"
    assert holds_secret(written, [PASSWORD]) and holds_secret(written.encode(), ["other-one", PASSWORD])


@pytest.mark.parametrize("form", FORMS)
def test_what_is_not_the_secret_is_not_found(form: str) -> None:
    assert not holds_secret(FORMS[form], [PASSWORD.replace("w0rd", "word")])
    assert not holds_secret(FORMS[form], [])


KEY = "sk-live-echoed-0123456789"
ESCAPED = {
    "JSON's \\u escapes": ("application/json", '{"error": "bad key %s"}', lambda c: f"\\u{ord(c):04x}"),
    "JSON's \\u escapes, upper case": ("application/json", '{"error": "%s"}', lambda c: f"\\u{ord(c):04X}"),
    "HTML's decimal references": ("text/html", "<p>bad key %s</p>", lambda c: f"&#{ord(c)};"),
    "HTML's hex references in JSON": ("", '{"error": "%s"}', lambda c: f"&#x{ord(c):x};"),
}


@pytest.mark.parametrize("escaped", ESCAPED)
def test_a_key_an_answer_echoes_escaped_is_masked_in_its_excerpt(escaped: str) -> None:
    Secret(KEY)  # known to the process, as a sync's key is
    content_type, template, escape = ESCAPED[escaped]
    body = template % "".join(map(escape, KEY))
    shown = excerpt(body.encode(), content_type)
    assert "***" in shown and not holds_secret(shown, [KEY]), shown


@pytest.mark.parametrize(
    "url, shown",
    [
        ("smtp://me:hunter2pass@mail.example.org:587", "smtp://me:***@mail.example.org:587"),
        # the user an address (the README's own form), the password holding `@`
        (
            "smtp://reports@example.org:hunter2pass@mail.example.org:587",
            "smtp://reports@example.org:***@mail.example.org:587",
        ),
        ("smtp://me:Tr0ub4dor@3xyz@127.0.0.1:2525", "smtp://me:***@127.0.0.1:2525"),
        (
            "error: http://me@x.org:pw6secretXYZ@127.0.0.1:1/v1 cannot be reached",
            "error: http://me@x.org:***@127.0.0.1:1/v1 cannot be reached",
        ),
        (
            "smtp://reports@example.org@mail.example.org:587",
            "smtp://reports@example.org@mail.example.org:587",
        ),
        ("https://api.example.com:8443/v1", "https://api.example.com:8443/v1"),
    ],
)
def test_a_url_s_password_is_masked_whatever_its_user_and_its_characters(url: str, shown: str) -> None:
    assert redact(url) == shown


SMTP_PASSWORD = "Hunter2-mailpass"


@pytest.mark.parametrize(
    "echoed",
    [
        # a login's base64: the key after other bytes is not its own encoding
        base64.b64encode(b"\0me\0" + SMTP_PASSWORD.encode()).decode(),  # SMTP's AUTH PLAIN
        base64.b64encode(b"user:" + SMTP_PASSWORD.encode()).decode(),  # HTTP's Basic
        base64.urlsafe_b64encode(b"ab:" + SMTP_PASSWORD.encode() + b"xyz").decode(),
        ":".join(f"{b:02x}" for b in SMTP_PASSWORD.encode()),  # a hex dump
        " ".join(f"{b:02X}" for b in SMTP_PASSWORD.encode()),
    ],
)
def test_a_key_in_a_login_s_base64_or_a_hex_dump_is_masked(echoed: str) -> None:
    """A mail server answering 535 with the AUTH PLAIN data it refused showed the password's base64
    (behind `\\0user\\0`) in the error: the base64 of the key alone was the only one masked."""
    Secret(SMTP_PASSWORD)
    shown = redact(f"535 credentials {echoed} refused")
    assert "***" in shown and not any(part in shown for part in _decodable_parts(shown))


def _decodable_parts(shown: str) -> list[str]:
    """The key, if what is left of the masked text still decodes to it (base64 or hex)."""
    left = [bit for bit in re.split(r"[\s*]+", shown) if bit]
    found = []
    for bit in left:
        for decode in (base64.b64decode, base64.urlsafe_b64decode, bytes.fromhex):
            with contextlib.suppress(Exception):
                if SMTP_PASSWORD.encode() in decode(bit.replace(":", "") + "=" * (-len(bit) % 4)):
                    found.append(bit)
    return found


SHORT = 'q"1\\z'  # a short key (no disguise is looked for) that JSON and a repr escape


@pytest.mark.parametrize(
    "written",
    [
        json.dumps({"echo": SHORT}),
        html.escape(SHORT),
        repr(SHORT),
        f"<pre>{html.escape(repr(SHORT))}</pre>",
        f"https://host/x?key={quote(SHORT, safe='')}",
    ],
)
def test_a_key_is_masked_as_text_formats_write_it(written: str) -> None:
    """A short key holding `"` or `\\` was stored as the `extra` column's JSON writes it (`q\\"1\\\\z`),
    and a key a failed notebook's HTML output held escaped stayed in the notebook kept to inspect."""
    Secret(SHORT)
    assert not holds_secret(redact(written), [SHORT]) and "***" in redact(written)
    assert holds_secret(written, [SHORT])
