"""mkdocs hook: pages written from the code's own declarations, so they cannot go stale.

- `<!-- commerce-reports settings -->`: every setting (`commerce_reports.settings.SETTINGS`): its
  variable, kind, default, where it can be set and what it means.
- `<!-- commerce-reports troubleshooting -->`: every error of the tree (`commerce_reports.errors`),
  in the tree's order, with what its messages say, why and what to do
  (`errors.TROUBLESHOOTING`).
- `<!-- commerce-reports alert rules -->`: every alert rule (`commerce_reports.alerting.rules.RULES`),
  what it judges and its default threshold and minimum volume.
"""

from __future__ import annotations

import inspect
from typing import Any

from commerce_reports import errors
from commerce_reports.alerting.rules import rules_table
from commerce_reports.settings import settings_table

SETTINGS = "<!-- commerce-reports settings -->"
TROUBLESHOOTING = "<!-- commerce-reports troubleshooting -->"
ALERT_RULES = "<!-- commerce-reports alert rules -->"


def on_page_markdown(markdown: str, **_: Any) -> str:
    """mkdocs event: replace each marker with what it stands for."""
    if SETTINGS in markdown:
        markdown = markdown.replace(SETTINGS, settings_table())
    if TROUBLESHOOTING in markdown:
        markdown = markdown.replace(TROUBLESHOOTING, troubleshooting())
    if ALERT_RULES in markdown:
        markdown = markdown.replace(ALERT_RULES, rules_table())
    return markdown


def troubleshooting() -> str:
    """A section per error class, parents first, each with its messages' causes and fixes."""
    parts = []
    for error, troubles in errors.TROUBLESHOOTING.items():
        parents = [c.__name__ for c in error.__mro__[1:] if c in errors.TROUBLESHOOTING]
        kind = "retried on its own" if error.retriable else "not retried: change something first"
        about = (inspect.getdoc(error) or "").split("\n\n")[0].replace("\n", " ")
        lineage = f" (a kind of `{parents[0]}`)" if parents else ""
        rows = "\n".join(f"| `{t.says}` | {t.cause} | {t.fix} |" for t in troubles)
        parts.append(
            f"## `{error.__name__}`\n\n{about}{lineage}; {kind}.\n\n"
            f"| the message says | why | what to do |\n|---|---|---|\n{rows}\n"
        )
    return "\n".join(parts)
