"""The first hour outside the happy path: one language across the API (`site=`/`sites=`, one string
as one item, errors at the root), commands that refuse an unknown site or a mistyped data folder
before creating anything, absurd ranges only on request, a project laid out by `init`, and every
entry point naming the lake it uses."""

from __future__ import annotations

import argparse
import json
import stat
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import commerce_reports as cr
from commerce_reports.api import status_rows
from commerce_reports.cli import build_parser, main
from commerce_reports.deals import DealsClient
from commerce_reports.project import NOTEBOOK_NAMES, init_project, notebook_path, packaged_notebooks

TODAY = datetime.now(UTC).date()


def test_site_or_sites_wherever_sites_are_chosen() -> None:
    one = cr.plan_sync(TODAY, TODAY, site="alpha")
    assert {r.site for r in one.requests} == {"alpha"}
    several = cr.plan_sync(TODAY, TODAY, sites=["alpha", "beta"])
    assert {r.site for r in several.requests} == {"alpha", "beta"}
    with pytest.raises(cr.ValidationError, match="site"):
        cr.plan_sync(TODAY, TODAY, site="alpha", sites=["beta"])
    assert status_rows(site="alpha") == []  # an empty lake: nothing of alpha
    with pytest.raises(cr.ConfigurationError, match="unknown site 'zz'"):
        cr.status(site="zz")


@pytest.mark.parametrize(
    "flag, call",
    [
        ("refresh", lambda: cr.plan_sync(TODAY, TODAY, site="alpha", refresh="no")),  # would refetch
        ("refresh", lambda: cr.sync(TODAY, TODAY, site="alpha", refresh="false")),
        ("rebuild", lambda: cr.status(rebuild="no")),  # would rebuild every manifest
        ("lazy", lambda: cr.load_transactions(TODAY, TODAY, lazy="no")),
        ("refresh", lambda: cr.load_networks(TODAY, TODAY, refresh="no")),
        ("force", lambda: cr.write_catalog(force="no")),
        ("progress", lambda: cr.export(pl.DataFrame({"a": [1]}), "a.csv", progress="no")),
        (
            "dry_run",
            lambda: DealsClient("sbx-deals-write-0000000000000001", "http://127.0.0.1:9").create(
                {}, dry_run="no"
            ),
        ),
    ],
)
def test_a_flag_that_is_no_bool_is_refused_before_anything_runs(flag: str, call: Any) -> None:
    """ "no" is true to Python: it would do what it says not to (refetch a range, create nothing)."""
    with pytest.raises(cr.ValidationError, match=f"{flag}: .*'(no|false)'.*True or False"):
        call()


@pytest.mark.parametrize(
    "countries, said",
    [([None], "holds no country code"), ({"US": 1}, "is not a list of countries"), (b"US", "is not a list")],
)
def test_countries_that_name_no_country_are_refused(countries: Any, said: str) -> None:
    """[None] made no slice and no error; a dict gave its keys; bytes, their numbers."""
    with pytest.raises(cr.ValidationError, match=f"countries: .*{said}"):
        cr.plan_sync(TODAY, TODAY, site="alpha", countries=countries)


def test_a_reader_given_a_data_folder_that_is_not_there_says_so_not_an_empty_lake(tmp_path: Path) -> None:
    typo = tmp_path / "dta"
    for call in (
        lambda: cr.status(data_dir=typo),
        lambda: status_rows(data_dir=typo),
        lambda: cr.invalidate(TODAY, TODAY, data_dir=typo),
    ):
        with pytest.raises(cr.ValidationError, match="data_dir: there is no data folder at"):
            call()
    assert not typo.exists()


def test_an_empty_list_of_datasets_is_refused() -> None:
    with pytest.raises(cr.ValidationError, match="datasets: \\[\\] is not a list of datasets"):
        cr.invalidate(TODAY, TODAY, datasets=[])  # it marked nothing, and said nothing


def test_an_export_s_row_limit_out_of_any_range_is_refused_as_such(tmp_path: Path) -> None:
    with pytest.raises(cr.ValidationError, match=r"max_rows: .* is not a number of rows"):
        cr.export(pl.DataFrame({"a": [1]}), tmp_path / "a.csv", max_rows=10**20)  # DuckDB's INT128 error
    assert list(tmp_path.iterdir()) == []


def test_one_string_where_a_list_is_expected_is_one_item() -> None:
    plan = cr.plan_sync(TODAY, TODAY, site="alpha", countries="US", merchandise="all")
    slices = {r.key.slice for r in plan.requests if r.key.dataset == "networks"}
    assert "country=US" in slices and not any(s in ("country=U", "country=S") for s in slices), slices
    assert {r.key.slice for r in plan.requests if r.key.dataset == "merchandise"} == {"all"}
    assert cr.invalidate(TODAY, TODAY, site="alpha", datasets="transactions") == 0


def test_absurd_ranges_need_allow_large() -> None:
    with pytest.raises(cr.ValidationError, match="over 5 years") as caught:
        cr.load_transactions(date(2001, 1, 1), TODAY)
    assert "allow_large=True" in str(caught.value)
    with pytest.raises(cr.ValidationError, match="over 5 years"):
        cr.plan_sync(TODAY - timedelta(days=6 * 365), site="alpha")
    plan = cr.plan_sync(TODAY - timedelta(days=6 * 365), site="alpha", allow_large=True)
    assert len(plan.requests) > 6 * 365
    assert main(["sync", "--plan", "--site", "alpha", "--start", str(TODAY - timedelta(days=6 * 365))]) == 2
    assert (
        main(["sync", "--plan", "--site", "alpha", "--yes", "--start", str(TODAY - timedelta(days=2000))])
        == 0
    )


def test_the_error_tree_is_caught_from_the_root() -> None:
    with pytest.raises(cr.CommerceReportsError):
        cr.plan_sync("not a date")
    assert issubclass(cr.AuthenticationError, cr.StatusError) and cr.TransportError.retriable


def _lake(tmp_path: Path) -> Path:
    data_dir = tmp_path / "data"
    (data_dir / "lake" / "site=alpha").mkdir(parents=True)
    return data_dir


@pytest.mark.parametrize(
    "command",
    [
        ["verify", "--site", "zz2"],
        ["rollups", "--site", "zz4"],
        ["status", "--site", "zz1"],
        ["invalidate", "2026-01-01", "2026-01-02", "--site", "zz3"],
        ["sync", "--plan", "--site", "zz5"],
        ["sync", "--site", "zz6"],
    ],
)
def test_an_unknown_site_is_a_usage_error_and_creates_nothing(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data_dir = _lake(tmp_path)
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    assert main([*command, "--data-dir", str(data_dir)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --site: unknown site") and "known sites: alpha, beta" in err, err
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before


@pytest.mark.parametrize(
    "command",
    [
        ["catalog"],
        ["rollups"],
        ["rollups", "--rebuild"],
        ["verify"],
        ["status", "--verify"],
        ["invalidate", "2026-01-01", "2026-01-02"],
        ["sql", "SELECT 1"],
    ],
)
def test_a_mistyped_data_folder_is_refused_never_created(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    typo = tmp_path / "dta"
    assert main([*command, "--data-dir", str(typo)]) == 2
    assert f"error: --data-dir: there is no data folder at {typo}" in capsys.readouterr().err
    assert not typo.exists() and list(tmp_path.iterdir()) == []


def test_with_no_data_folder_given_the_error_names_the_configured_lake_and_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["status"]) == 2  # no project here, no variable: the user's folder, never made yet
    err = capsys.readouterr().err
    assert err.startswith("error: the lake: there is no data folder at") and "--data-dir:" not in err
    assert "no COMMERCE_REPORTS_DATA_DIR and no commerce-reports.toml above" in err


def test_every_command_describes_itself_and_data_dir_says_the_rule() -> None:
    parser = build_parser()
    (commands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    for name, command in commands.choices.items():
        assert command.description, f"`commerce-reports {name} --help` has no description"
        for action in command._actions:
            if "--data-dir" in action.option_strings and name != "demo":
                assert "COMMERCE_REPORTS_DATA_DIR" in str(action.help) and "commerce-reports.toml" in str(
                    action.help
                ), name
    assert {"init", "demo", "status", "invalidate"} <= set(commands.choices)


def test_init_lays_out_a_project_and_keeps_what_is_there(tmp_path: Path) -> None:
    folder = tmp_path / "my-reports"
    (folder / "notebooks").mkdir(parents=True)
    (folder / "notebooks" / "report.ipynb").write_text("mine")
    (folder / ".gitignore").write_text("*.pyc\n.env\n")
    done = init_project(folder)
    assert (folder / "notebooks" / "report.ipynb").read_text() == "mine"  # kept
    assert folder / "notebooks" / "report.ipynb" in done.kept
    assert stat.S_IMODE((folder / ".env").stat().st_mode) == 0o600
    assert (folder / ".gitignore").read_text().splitlines() == [
        "*.pyc",
        ".env",
        "# commerce-reports",
        "data/",
        "reports/",
        ".ipynb_checkpoints/",
    ]
    for name in NOTEBOOK_NAMES:
        assert (folder / "notebooks" / name).is_file()
        assert notebook_path(name, folder / "notebooks") == folder / "notebooks" / name
    assert notebook_path("report.ipynb", tmp_path) == packaged_notebooks() / "report.ipynb"
    again = init_project(folder)
    assert again.written == [] and len(again.kept) == 3 + len(NOTEBOOK_NAMES)
    with pytest.raises(cr.ValidationError, match="is a file"):
        init_project(folder / ".env")
    assert (
        main(["init", str(tmp_path / "other")]) == 0
        and (tmp_path / "other" / "commerce-reports.toml").is_file()
    )


def test_init_again_says_which_notebooks_this_release_changed_and_writes_them_beside(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`init` kept a project's notebooks as they were, and said nothing of a release's newer ones
    (the upgrades probe): a notebook that ran (its outputs saved) is still this release's; one whose
    cells differ is named, and `--notebooks` writes this release's beside it, never over it."""
    folder = tmp_path / "my-reports"
    init_project(folder)
    ran = json.loads((folder / "notebooks" / "01_getting_started.ipynb").read_text())
    ran["cells"][0]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": ["42\n"]}]
    (folder / "notebooks" / "01_getting_started.ipynb").write_text(json.dumps(ran))
    edited = json.loads((folder / "notebooks" / "report.ipynb").read_text())
    edited["cells"][-1]["source"] = ["print('my own cell')"]
    (folder / "notebooks" / "report.ipynb").write_text(json.dumps(edited))
    assert init_project(folder).outdated == [folder / "notebooks" / "report.ipynb"]
    assert main(["init", str(folder)]) == 0
    said = capsys.readouterr().out.splitlines()[-2]
    assert said == (
        f"this release's report.ipynb differ from yours: `commerce-reports init {folder} --notebooks` "
        "writes each beside yours, to compare"
    )
    assert main(["init", str(folder), "--notebooks"]) == 0
    assert "wrote notebooks/report.new.ipynb" in capsys.readouterr().out
    assert (folder / "notebooks" / "report.new.ipynb").read_bytes() == (
        packaged_notebooks() / "report.ipynb"
    ).read_bytes()
    assert json.loads((folder / "notebooks" / "report.ipynb").read_text()) == edited  # kept
    assert not (folder / "notebooks" / "01_getting_started.new.ipynb").exists()


def test_init_refuses_a_folder_no_command_could_use_and_its_hint_runs_as_printed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exited:
        main(["init", ""])  # not the working folder by accident
    assert exited.value.code == 2 and "an empty folder name" in capsys.readouterr().err
    assert main(["init", "site=shop/reports"]) == 2  # every site of its lake would read as `shop`
    assert "below a folder named 'site=shop'" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []  # nothing written
    assert main(["init", "my shop's reports"]) == 0
    hint = capsys.readouterr().out.splitlines()[-1]
    assert hint.startswith("project ready: cd 'my shop'\"'\"'s reports' && commerce-reports demo")


def test_the_lake_is_named_by_every_entry_point(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    init_project(tmp_path / "project")
    monkeypatch.chdir(tmp_path / "project" / "notebooks")
    where = cr.lake_location()
    assert where.path == tmp_path / "project" / "data" and "commerce-reports.toml" in where.reason
    result = cr.sync(TODAY, TODAY, site="alpha", options=cr.SyncOptions(progress=False, say=print))
    assert result.lake == where and f"lake: {where}" in repr(result)
    assert cr.status()["lake"].unique().to_list() == [str(where.path)]
    monkeypatch.setenv("COMMERCE_REPORTS_DATA_DIR", str(tmp_path / "elsewhere"))
    assert "COMMERCE_REPORTS_DATA_DIR" in str(cr.lake_location())


def test_a_day_before_1970_is_refused_wherever_a_day_is_taken(tmp_path: Path) -> None:
    """Year 1 less a week overflowed Python's dates: `alerts --as-of 0001-01-01` said "unexpected
    OverflowError", and `cr.compare`, `cr.explain` and `cr.alerts` raised it bare. A period whose
    comparison would begin before 1970 is refused too."""
    data = tmp_path / "data"
    early = {"start": "0001-01-01", "end": "0001-01-07"}
    from commerce_reports.charts import Selection
    from commerce_reports.charts.comparison import previous_period

    for call in (
        lambda: cr.alerts(as_of="0001-01-01", data_dir=data),
        lambda: cr.load_transactions(date(1, 1, 1), TODAY, data_dir=data),
        lambda: cr.plan_sync("0001-01-01", site="alpha", data_dir=data),
    ):
        with pytest.raises(cr.ValidationError, match="0001-01-01 is not a day of the service's data"):
            call()
    assert main(["alerts", "--as-of", "0001-01-01", "--data-dir", str(data)]) == 2
    with pytest.raises(cr.ValidationError, match="not a day of the service's data"):
        Selection(site="alpha", **early)
    for start, end in (
        ("1970-01-01", "8999-12-31"),
        ("1970-01-01", "1970-01-07"),
        ("1970-03-01", "1970-05-31"),
    ):
        with pytest.raises(cr.ValidationError, match="would begin before 1970-01-01"):
            previous_period(Selection(site="alpha", start=start, end=end))
    assert previous_period(Selection(site="alpha", start="1970-03-01", end="1970-04-30")).bounds == (
        date(1970, 1, 1),
        date(1970, 2, 28),
    )
