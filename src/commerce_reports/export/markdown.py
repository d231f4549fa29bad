"""Text for Markdown outputs (`IPython.display.Markdown`) that reads as written.

In a notebook's Markdown, and in the HTML an export makes of it, two dollar amounts on one line
are a TeX maths span: everything between the two dollar signs, stars included, shows literally. Names carry
`_`, `*` or `#` that would turn into emphasis or headings. Escaping each such character with a
backslash (CommonMark allows it before any ASCII punctuation) keeps the text as it is.
"""

from __future__ import annotations

import re

from ..errors import ValidationError

__all__ = ["escape_markdown"]

_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-!|<>$~])")


def escape_markdown(text: object) -> str:
    """`text` (a number or name becomes its `str`) with its Markdown and maths characters escaped."""
    if not isinstance(text, str | int | float):
        raise ValidationError("text", f"{type(text).__name__} is not text", "give a string or a number")
    return _SPECIAL.sub(r"\\\1", str(text))
