"""Every setting, its value and where it came from: `commerce-reports config list` and
`cr.configuration()`.

    print(cr.configuration().describe())
    cr.configuration().row("pace").source      # 'environment', '.env', 'commerce-reports.toml', ...

Values are shown as written, secrets masked; a value that does not pass its check is listed with
the problem beside it rather than stopping the list (the one place a wrong setting does not stop
everything: it is where a user comes to find it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .config import Found, current_sources
from .errors import ConfigurationError, ValidationError
from .locate import LakeLocation, where
from .redaction import MASK, redact
from .settings import setting_named
from .sites import SITES_FILE, site_settings

__all__ = ["Configuration", "SettingRow", "configuration"]


@dataclass(frozen=True)
class SettingRow:
    """One setting as `config list` shows it: its name, its value (masked when secret; what
    applies when unset), its source and, when it does not pass its check, the problem."""

    name: str
    value: str
    source: str
    where: str
    problem: str = ""
    secret: bool = False
    is_set: bool = True


@dataclass(frozen=True)
class Configuration:
    """Every setting's row, and the files they were read from."""

    rows: list[SettingRow]
    files: dict[str, Path | None] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """No setting has a problem."""
        return not any(row.problem for row in self.rows)

    def row(self, name: str) -> SettingRow:
        """The row of setting `name` (its name, its variable, `alerts.z`, `sites.recipes.base_url`);
        a ValidationError naming the nearest settings when there is none."""
        for row in self.rows:
            if row.name == name:
                return row
        _, key = setting_named(name)  # an unknown name raises, with the nearest ones
        for row in self.rows:
            if row.name == key:
                return row
        if key.startswith("alerts."):  # a key of the alerts' table left out: its default
            from .alerting.thresholds import Thresholds

            defaults = Thresholds().table()
            threshold = key.removeprefix("alerts.")
            if threshold not in defaults:
                raise ValidationError(
                    "name", f"{name!r} is no key of [alerts]", f"use one of {', '.join(defaults)}"
                )
            return SettingRow(key, _text(defaults[threshold]), "default", key, is_set=False)
        return SettingRow(key, "(not set)", "default", key, is_set=False)

    def describe(self) -> str:
        """The files read, then a line per setting: name, value, source (and a problem below it)."""
        lines = [f"{what}: {path if path is not None else '(none)'}" for what, path in self.files.items()]
        width = max(len(row.name) for row in self.rows) + 2
        value_width = max(len(row.value) for row in self.rows) + 2
        lines.append("")
        lines.append(f"{'setting':<{width}}{'value':<{value_width}}source")
        for row in self.rows:
            lines.append(f"{row.name:<{width}}{row.value:<{value_width}}{row.source}")
            if row.problem:
                lines.append(f"{'':<{width}}error: {row.problem}")
        return "\n".join(lines)


def configuration() -> Configuration:
    """Every setting with its value and source (environment, `.env`, `commerce-reports.toml`,
    `sites.toml`, default), secrets masked, and the files read."""
    sources = current_sources()
    rows: list[SettingRow] = []
    lake: LakeLocation | None = None
    variables = sources.variables()
    for found in sources.every():
        if found.name == "data_dir":
            row, lake = _lake_row(found, variables)
            rows.append(row)
        elif found.name == "alerts":
            rows += _alerts_rows(found)
        else:
            rows.append(_row(found))
    if lake is not None:
        rows += _site_rows(lake.path / SITES_FILE, variables)
    files = {
        "project": sources.marker,
        ".env": sources.dotenv_path,
        "sites file": lake.path / SITES_FILE
        if lake is not None and (lake.path / SITES_FILE).is_file()
        else None,
    }
    return Configuration(rows, files)


def _row(found: Found, shown: str | None = None) -> SettingRow:
    setting = found.setting
    try:
        found.checked()
        problem = ""
    except ConfigurationError as error:
        problem = str(error)
    if found.value is None:
        value = setting.default or "(not set)"
    elif setting.secret:
        value = MASK
    else:  # a value may hold a secret all the same (a password in a URL): masked as in logs
        value = redact(shown if shown is not None else _text(found.value))
    return SettingRow(
        found.name, value, found.source, found.where, problem, setting.secret, found.value is not None
    )


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Mapping):
        return ",".join(f"{k}={v}" for k, v in value.items())
    return str(value)


def _lake_row(found: Found, variables: dict[str, str]) -> tuple[SettingRow, LakeLocation | None]:
    """The data folder as it resolves (the path, whichever rule chose it)."""
    try:
        lake = where(env=variables)
    except ConfigurationError as error:
        return SettingRow(found.name, _text(found.value), found.source, found.where, str(error)), None
    source = found.source if found.value is not None else "default"
    return SettingRow(found.name, str(lake.path), source, lake.reason, is_set=found.value is not None), lake


def _alerts_rows(found: Found) -> list[SettingRow]:
    """A row per key of the `[alerts]` table, each checked by the alerts' own `Thresholds`."""
    from .alerting.thresholds import Thresholds

    table = found.value
    if not isinstance(table, Mapping) or not table:
        return [_row(found, "the defaults")] if table is None else [_row(found)]
    rows = []
    for key, value in table.items():
        try:
            Thresholds.from_table({key: value}, f"{found.where}")
            problem = ""
        except ConfigurationError as error:
            problem = str(error)
        rows.append(SettingRow(f"alerts.{key}", _text(value), found.source, f"{found.where}.{key}", problem))
    return rows


def _site_rows(path: Path, variables: Mapping[str, str]) -> list[SettingRow]:
    """A row per key of each site of the sites file (a key's variable says whether it is set); an
    unreadable file is one row with its problem."""
    try:
        found = site_settings(path.parent)
    except ConfigurationError as error:
        return [SettingRow("sites", str(path), SITES_FILE, str(path), str(error))]
    rows = []
    for each in found:
        row = _row(each)
        if each.setting.name == "secret_key_env" and not row.problem:
            is_set = bool(variables.get(str(each.value), "").strip())
            row = replace(
                row,
                value=f"{each.value} ({'set' if is_set else 'not set'})",
                problem="" if is_set else f"{each.where}: the variable {each.value} is not set",
            )
        rows.append(row)
    return rows
