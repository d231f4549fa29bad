"""`commerce-reports config`: every setting with its value and source, one value, and set one in the
project's files; the declaration is the one list every place derives from."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from dotenv import dotenv_values

from commerce_reports.cli import main
from commerce_reports.config import Settings, Sources
from commerce_reports.errors import ConfigurationError
from commerce_reports.project import init_project
from commerce_reports.settings import PROJECT, SETTINGS, Setting

SITES = """\
[sites.recipes]
secret_key_env = "RECIPES_SECRET_KEY"
base_url = "https://api.example.com/v1"

[sites.gadgets]
secret_key_env = "GADGETS_SECRET_KEY"
dialect = "published"
revision_days = 60
"""


def _project(tmp_path: Path) -> Path:
    """A project as `init` lays it out, with a key in .env, settings in commerce-reports.toml and
    two sites in sites.toml."""
    project = init_project(tmp_path / "shop").folder
    with (project / ".env").open("a") as env:
        env.write("COMMERCE_REPORTS_DIALECT=published\nRECIPES_SECRET_KEY=rk-live-5551234567\n")
    with (project / "commerce-reports.toml").open("a") as marker:
        marker.write('currency = "EUR"\n\n[alerts]\nz = 5.0\n')
    (project / "data").mkdir()
    (project / "data" / "sites.toml").write_text(SITES)
    return project


def _rows(text: str) -> dict[str, tuple[str, str]]:
    """`config list`'s table: setting -> (value, source)."""
    rows = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 3 and not line.startswith(" "):
            rows[parts[0]] = (" ".join(parts[1:-1]), parts[-1])
    return rows


def test_config_list_shows_every_setting_its_value_and_its_source(tmp_path: Path) -> None:
    project = _project(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMMERCE_REPORTS_")}
    env |= {"COMMERCE_REPORTS_REVISION_DAYS": "50", "COMMERCE_REPORTS_SECRET_KEY": "sk-from-env-77777777"}
    done = subprocess.run(
        [sys.executable, "-m", "commerce_reports", "config", "list"],
        cwd=project / "notebooks",  # below the project: the same settings as at its top
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr  # a site's key is not set: said, and the exit says so
    rows = _rows(done.stdout)
    assert rows["secret_key"] == ("***", "environment")
    assert rows["revision_days"] == ("50", "environment")
    assert rows["dialect"] == ("published", ".env")
    assert rows["currency"] == ("EUR", "commerce-reports.toml")
    assert rows["alerts.z"] == ("5.0", "commerce-reports.toml")
    assert rows["data_dir"] == (str(project / "data"), "commerce-reports.toml")
    assert rows["pace"] == ("60", "default") and rows["base_url"] == ("(not set)", "default")
    assert rows["sites.recipes.secret_key_env"] == ("RECIPES_SECRET_KEY (set)", "sites.toml")
    assert rows["sites.gadgets.secret_key_env"] == ("GADGETS_SECRET_KEY (not set)", "sites.toml")
    assert rows["sites.gadgets.revision_days"] == ("60", "sites.toml")
    assert f"sites file: {project / 'data' / 'sites.toml'}" in done.stdout
    assert "sk-from-env" not in done.stdout + done.stderr and "rk-live" not in done.stdout + done.stderr
    assert "the variable GADGETS_SECRET_KEY is not set" in done.stdout  # said, below its row
    declared = {s.name for s in SETTINGS if not s.family and s.name not in ("alerts", "secret_key_env")}
    assert declared <= set(rows)


def test_a_wrong_value_is_listed_with_its_problem_and_the_list_exits_1(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COMMERCE_REPORTS_PACE", "fast")
    assert main(["config", "list"]) == 1
    out = capsys.readouterr().out
    assert "error: COMMERCE_REPORTS_PACE: 'fast' is not a number of seconds" in out
    assert _rows(out)["currency"] == ("USD", "default")  # the rest is listed all the same
    assert main(["sync", "--plan"]) == 2  # every other command refuses it (a setting that cannot be used)


def test_a_password_written_into_a_url_is_masked_where_the_url_is_listed(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(
        "COMMERCE_REPORTS_SMTP_URL", "smtps://me%40example.org:hunter2-mail@smtp.example.org:465"
    )
    assert main(["config", "list"]) == 1  # a password belongs in COMMERCE_REPORTS_SMTP_PASSWORD: said
    out = capsys.readouterr().out
    assert _rows(out)["smtp_url"] == ("smtps://me%40example.org:***@smtp.example.org:465", "environment")
    assert "hunter2" not in out and "COMMERCE_REPORTS_SMTP_PASSWORD instead" in out


def test_config_get_prints_one_value(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COMMERCE_REPORTS_PACE", "networks=10")
    monkeypatch.setenv("COMMERCE_REPORTS_DEALS_API_KEY", "dk-0123456789abcdef")
    assert main(["config", "get", "pace"]) == 0
    assert main(["config", "get", "COMMERCE_REPORTS_PACE"]) == 0
    assert main(["config", "get", "deals_api_key"]) == 0
    assert capsys.readouterr().out == "networks=10\nnetworks=10\n***\n"
    assert main(["config", "get", "base_url"]) == 1
    assert capsys.readouterr().err == "base_url is not set\n"
    assert main(["config", "get", "revison_days"]) == 2
    assert "did you mean revision_days?" in capsys.readouterr().err
    assert main(["config", "get", "alerts.baseline_weeks"]) == 0  # left out of [alerts]: its default
    assert main(["config", "get", "alerts.revenue_drop"]) == 0
    assert capsys.readouterr().out == "8\nthreshold=30%,min_volume=40\n"
    assert main(["config", "get", "alerts.nope"]) == 2
    assert "'alerts.nope' is no key of [alerts]; use one of baseline_weeks" in capsys.readouterr().err


def test_config_set_writes_the_project_file_keeping_its_comments(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = _project(tmp_path)
    monkeypatch.chdir(project / "notebooks")
    before = (project / "commerce-reports.toml").read_text()
    assert main(["config", "set", "pace", "transactions=60,networks=10"]) == 0
    assert main(["config", "set", "COMMERCE_REPORTS_REVISION_DAYS", "60"]) == 0
    assert main(["config", "set", "alerts.revenue_drop", "25%"]) == 0
    after = (project / "commerce-reports.toml").read_text()
    assert after.startswith(before.split("\n[alerts]")[0])  # the comments and keys as they were
    assert "revision_days = 60\n" in after and 'revenue_drop = "25%"' in after and "z = 5.0" in after
    settings = Settings.from_env()
    assert settings.pace["networks"] == 10 and settings.revision_days == 60
    assert settings.alerts == {"z": 5.0, "revenue_drop": "25%"}
    capsys.readouterr()

    assert main(["config", "set", "revision_days", "forever"]) == 2  # checked before anything is written
    assert main(["config", "set", "alerts.revenu_drop", "25%"]) == 2  # the thresholds' own check
    err = capsys.readouterr().err
    assert (
        "revision_days: 'forever' is not a number of days" in err and "unknown setting 'revenu_drop'" in err
    )
    assert (project / "commerce-reports.toml").read_text() == after
    assert main(["config", "set", "secret_key_env", "X"]) == 2
    assert "set per site in sites.toml" in capsys.readouterr().err


def test_a_rule_s_value_is_set_as_config_get_prints_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # get printed threshold=80%,min_volume=12, which set refused; -25% was argparse's
    # 'unrecognized arguments'; a wrong z said 'error: value: [alerts]: alerts: z = -1'
    monkeypatch.chdir(_project(tmp_path))
    assert main(["config", "get", "alerts.merchant_stopped"]) == 0
    shown = capsys.readouterr().out.strip()
    assert shown == "threshold=80%,min_volume=12"
    assert main(["config", "set", "alerts.link_stopped", shown]) == 0
    said = capsys.readouterr().out
    assert said.startswith('alerts.link_stopped = { threshold = "80%", min_volume = 12 } in ')
    assert Settings.from_env().alerts["link_stopped"] == {"threshold": "80%", "min_volume": 12}
    assert main(["config", "set", "alerts.revenue_drop", "-25%"]) == 2
    assert main(["config", "set", "alerts.z", "-1"]) == 2
    err = capsys.readouterr().err
    assert "[alerts] revenue_drop: threshold = -0.25; give a fraction in (0, 1]" in err
    assert "error: value: [alerts]: z = -1; give a positive number" in err


def test_a_secret_goes_into_dotenv_and_only_when_git_ignores_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = _project(tmp_path)
    monkeypatch.chdir(project)
    key = "sk-'quoted'\\and $dollar #hash"
    assert main(["config", "set", "secret_key", key]) == 0
    assert main(["config", "set", "secret_key_gadgets", "gk-9999999999"]) == 0
    assert main(["config", "set", "GADGETS_SECRET_KEY", "gk-site-1111111111"]) == 0  # named in sites.toml
    assert key not in capsys.readouterr().out
    values = dotenv_values(project / ".env")
    assert (
        values["COMMERCE_REPORTS_SECRET_KEY"] == key
        and values["COMMERCE_REPORTS_SECRET_KEY_GADGETS"] == "gk-9999999999"
    )
    assert values["GADGETS_SECRET_KEY"] == "gk-site-1111111111"
    assert values["RECIPES_SECRET_KEY"] == "rk-live-5551234567"  # the rest of the file as it was
    assert stat.S_IMODE((project / ".env").stat().st_mode) == 0o600
    assert "secret_key" not in (project / "commerce-reports.toml").read_text()

    (project / ".gitignore").write_text("data/\n")  # .env no longer ignored
    before = (project / ".env").read_text()
    assert main(["config", "set", "smtp_password", "pw-123456789"]) == 2
    assert "is not git-ignored" in capsys.readouterr().err and (project / ".env").read_text() == before

    (project / ".gitignore").write_text(".env\n")
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    subprocess.run(
        ["git", "-C", str(project), "add", "-f", ".env"], check=True
    )  # tracked: it would be committed
    assert main(["config", "set", "smtp_password", "pw-123456789"]) == 2
    err = capsys.readouterr().err
    assert "is tracked by git" in err and "`git rm --cached .env`" in err  # not "add it to .gitignore"
    assert (project / ".env").read_text() == before


@pytest.mark.parametrize(
    "line, variable",
    [
        ('secret_key = "sk-oops-12345678"', "COMMERCE_REPORTS_SECRET_KEY"),
        (
            'COMMERCE_REPORTS_SECRET_KEY = "sk-oops-12345678"',
            "COMMERCE_REPORTS_SECRET_KEY",
        ),  # its variable's name
        ('Secret_Key = "sk-oops-12345678"', "COMMERCE_REPORTS_SECRET_KEY"),
        ('secret_key_shop = "sk-oops-12345678"', "COMMERCE_REPORTS_SECRET_KEY_<NAME>"),  # a site's
        ('smtp_password = "pw-oops-12345678"', "COMMERCE_REPORTS_SMTP_PASSWORD"),
    ],
)
def test_a_secret_in_the_committed_project_file_is_refused(tmp_path: Path, line: str, variable: str) -> None:
    (tmp_path / "commerce-reports.toml").write_text(line + "\n")
    with pytest.raises(
        ConfigurationError, match="is a secret and this file is meant to be committed"
    ) as raised:
        Settings.from_env()
    assert f"set {variable} in the environment" in str(raised.value) and "oops" not in str(raised.value)


@pytest.mark.parametrize(
    "text, said",
    [
        ('curency = "EUR"\n', "'curency' is no setting of this file; did you mean 'currency'?"),
        ('[sites.shop]\nbase_url = "https://api.example.com"\n', "'sites' is no setting of this file"),
    ],
)
def test_a_key_no_setting_of_the_project_file_has_is_refused_naming_the_nearest(
    tmp_path: Path, text: str, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A typo would leave the default in place without a word."""
    (tmp_path / "commerce-reports.toml").write_text(text)
    with pytest.raises(ConfigurationError, match=re.escape(said)):
        Settings.from_env()
    assert main(["config", "list"]) == 2 and said in capsys.readouterr().err


def test_config_set_says_when_the_environment_wins_over_what_it_wrote_and_list_names_a_bare_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "commerce-reports.toml").write_text("")
    (tmp_path / ".env").write_text("# COMMERCE_REPORTS_SECRET_KEY=\n")  # init's template: comments only
    monkeypatch.setenv("COMMERCE_REPORTS_CURRENCY", "EUR")
    assert main(["config", "set", "currency", "CHF"]) == 0
    out, err = capsys.readouterr()
    assert (
        'currency = "CHF"' in out
        and "note: COMMERCE_REPORTS_CURRENCY wins over it: the value in use stays EUR" in err
    )
    assert main(["config", "list"]) == 0
    assert f".env: {tmp_path / '.env'}" in capsys.readouterr().out


def test_config_set_refuses_a_site_name_no_command_could_use(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "commerce-reports.toml").write_text("")
    assert main(["config", "set", "mail_from", "Reports\n<r@example.org>"]) == 2
    assert "holds a line break" in capsys.readouterr().err
    for name in ("../../evil", "a b", "Recipes"):
        assert main(["config", "set", "site", name]) == 2
        assert "is not a usable site name" in capsys.readouterr().err
    assert (tmp_path / "commerce-reports.toml").read_text() == ""
    assert main(["config", "set", "site", "recipes"]) == 0


@pytest.mark.parametrize("value", ["", "\udcff"], ids=["empty", "not-utf8"])
@pytest.mark.parametrize(
    "name", [*(s.name for s in SETTINGS if not s.family), "secret_key_shop", "alerts.z"], ids=str
)
def test_config_set_refuses_an_empty_or_non_utf8_value_of_every_setting_in_one_line(
    name: str, value: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`pace ""` was "unexpected ValueError" and `data_dir $'\\xff'` (a lone surrogate once in
    Python) "unexpected UnicodeEncodeError", both exit 1; `share_group ""` wrote `false`."""
    project = init_project(tmp_path / "shop").folder
    monkeypatch.chdir(project)
    files = {path: path.read_bytes() for path in (project / "commerce-reports.toml", project / ".env")}
    assert main(["config", "set", name, value]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "unexpected" not in err
    assert {path: path.read_bytes() for path in files} == files


def test_config_set_never_writes_nor_shows_a_configured_secret_given_to_another_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A key pasted into a setting of the committed project file was printed back and written
    there, and a refusal of it (`dialect <key>`) printed it: `config set` had not made the
    configured secrets known to the process's masking before it spoke."""
    project = _project(tmp_path)  # RECIPES_SECRET_KEY, named by sites.toml, is set in .env
    monkeypatch.chdir(project)
    key = "sk_live_cfgset_7f3a9c2e51"  # no other test registers it: its masking is this test's doing
    monkeypatch.setenv("COMMERCE_REPORTS_SECRET_KEY", key)
    before = {path: path.read_bytes() for path in (project / "commerce-reports.toml", project / ".env")}
    for name, value, variable in [
        ("base_url", f"https://api.example.com/{key}/v1", "COMMERCE_REPORTS_SECRET_KEY"),
        ("mail_from", f"Reports {key} <r@example.org>", "COMMERCE_REPORTS_SECRET_KEY"),
        ("dialect", key, "COMMERCE_REPORTS_SECRET_KEY"),
        ("alerts.z", key, "COMMERCE_REPORTS_SECRET_KEY"),
        ("serve_host", "rk-live-5551234567.example.org", "RECIPES_SECRET_KEY"),
    ]:
        assert main(["config", "set", name, value]) == 2
        out, err = capsys.readouterr()
        assert f"error: value: {name}: the value holds the secret set in {variable}" in err
        assert "git-ignored .env" in err and key not in out + err and "rk-live" not in out + err
    assert main(["config", "set", "RECIPES_SECRET_KEY", "rk-\udcff"]) == 2  # a site's key, not UTF-8
    assert "is a byte that is not UTF-8 text" in capsys.readouterr().err
    assert {path: path.read_bytes() for path in before} == before

    monkeypatch.setenv("COMMERCE_REPORTS_SERVE_HOST", f"{key}.example.org")  # its note names what wins
    assert main(["config", "set", "serve_host", "0.0.0.0"]) == 0
    out, err = capsys.readouterr()
    assert "the value in use stays ***.example.org" in err and key not in out + err


def test_outside_a_project_config_set_says_how_to_make_one(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config", "set", "currency", "EUR"]) == 2
    assert "run `commerce-reports init <folder>` first" in capsys.readouterr().err


@pytest.mark.parametrize(
    "setting", [s for s in SETTINGS if s.variable and not s.family], ids=lambda s: s.name
)
def test_every_declared_variable_is_read_and_checked(setting: Setting, tmp_path: Path) -> None:
    """Generated from the declaration: each setting's variable is found in the environment, over
    `.env`, over the project file, and its example passes its check."""
    example = setting.example or setting.default if setting.check.__name__ != "_secret" else "k-0123456789"
    if not example or (" " in example and setting.name != "mail_from"):
        example = {"site": "recipes"}.get(setting.name, "1")
    sources = Sources({str(setting.variable): example}, {str(setting.variable): "other"}, tmp_path / ".env")
    found = sources.found(setting.name)
    assert (found.source, found.value) == ("environment", example)
    found.checked()
    if PROJECT in setting.places:
        table = Sources({}, table={setting.name: example}, marker=tmp_path / "commerce-reports.toml")
        assert table.found(setting.name).source == "commerce-reports.toml"
        assert table.variables().get(str(setting.variable)) == (
            None if setting.name == "data_dir" else example
        )


def test_every_error_of_the_tree_says_its_causes_and_fixes() -> None:
    """The troubleshooting page is written from `errors.TROUBLESHOOTING`: an error class added
    without its entry fails here (the deal wing's errors have their exit statuses on the CLI page)."""
    from commerce_reports import errors

    tree = {
        value
        for value in vars(errors).values()
        if isinstance(value, type) and issubclass(value, errors.CommerceReportsError)
    }
    assert set(errors.TROUBLESHOOTING) == tree - {errors.CommerceReportsError}
    assert all(
        troubles and all(t.says and t.cause and t.fix for t in troubles)
        for troubles in errors.TROUBLESHOOTING.values()
    )
