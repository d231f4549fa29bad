"""Finding a key in a file about to be written or sent (`holds_secret`): as it is, and as the
file's format writes it. An export refused a notebook or a page that printed a password only when
the password's bytes were there as they are; a password holding `"` and `<` is in a notebook as
`\\"` (JSON) and in its page as `&lt;` (HTML), and both were written."""

from __future__ import annotations

import html
import json

import pytest

from commerce_reports.redaction import holds_secret

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
