"""Scheduled exports: executed by a real kernel, self-contained HTML checked for references off the
page and rendered in real Chromium offline; parameters checked against the notebook's own cell."""

from __future__ import annotations

import contextlib
import html
import os
import re
import signal
import stat
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import nbformat
import pytest

from commerce_reports.charts import EMPTY_TITLE, Selection, compare, ranking_frame
from commerce_reports.db import connect
from commerce_reports.errors import DeliveryError, ExportError, ValidationError
from commerce_reports.export import chart_specs, checked_parameters, export_notebook, notebook_html
from commerce_reports.export.mail import MailSettings, mail_report
from commerce_reports.export.notebook import ExportResult
from commerce_reports.money import Currency
from tests.browser import chart_marks, chromium_available, external_references, rendered_dom
from tests.charts.specs import figures
from tests.waiting import wait_for

REPORT = Path(__file__).resolve().parents[2] / "notebooks" / "report.ipynb"
SECRET = "sk-live-export-test-5f4e3d2c1b"
needs_chromium = pytest.mark.skipif(
    not chromium_available() and not os.environ.get("CI"), reason="Debian's chromium is not installed"
)


def small_notebook(folder: Path) -> Path:
    """A parameters cell, one chart from inline data, switches to fail, to print a secret or to fail
    naming it (`refused`), and a probe: with `marker` set, a SIGINT that reaches the kernel after its
    cells ran writes that file."""
    cells = [
        nbformat.v4.new_code_cell(
            "from datetime import date\nfail = False\nleak = False\nrefused = False\npoints = 3\n"
            'leaked = "COMMERCE_REPORTS_SECRET_KEY"\n'
            'marker = ""\n'
            "since: date | None = None  # papermill's own inspector reads no `|`",
            metadata={"tags": ["parameters"]},
        ),
        nbformat.v4.new_code_cell(
            "import altair as alt, os\n"
            "data = alt.Data(values=[{'x': i, 'y': i * i} for i in range(points)])\n"
            "alt.Chart(data).mark_bar().encode(x='x:O', y='y:Q', tooltip=['x:O', 'y:Q'])"
        ),
        nbformat.v4.new_code_cell("if fail:\n    raise RuntimeError('the data looked wrong')"),
        nbformat.v4.new_code_cell("if leak:\n    print(os.environ[leaked])"),
        nbformat.v4.new_code_cell(
            "if refused:\n    raise ValueError('bad key ' + os.environ['COMMERCE_REPORTS_SECRET_KEY'])"
        ),
        nbformat.v4.new_code_cell(
            "import asyncio, pathlib, signal\n"
            "def note(signum, frame):\n"
            "    pathlib.Path(marker).write_text('interrupted')\n"
            "if marker:  # from the event loop, once this cell's handler has restored the kernel's own\n"
            "    asyncio.get_event_loop().call_soon(signal.signal, signal.SIGINT, note)"
        ),
    ]
    notebook = nbformat.v4.new_notebook(cells=cells, metadata=small_notebook_metadata())
    path = folder / "small.ipynb"
    nbformat.write(notebook, path)
    return path


def small_notebook_metadata() -> dict[str, object]:
    return {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}


@pytest.fixture
def with_secret(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("COMMERCE_REPORTS_SECRET_KEY", SECRET)
    return SECRET


@needs_chromium
@pytest.mark.xdist_group("published-lake")
def test_the_report_exports_from_a_published_lake_to_html_that_renders_offline_with_its_figures(
    in_the_published_lake: Path, notebook_lake: Path, tmp_path: Path, with_secret: str
) -> None:
    """The report, exported from a lake synced in the published dialect: named after its default
    period, nothing off the page, every chart drawn in Chromium from data (and written as PNG), no
    secret in any file, and the summary's figures those of the contract lake of the same world."""
    result = export_notebook(REPORT, tmp_path / "out", {"site": "alpha", "sync": "false"}, png=True)
    last = datetime.now(UTC).date() - timedelta(days=1)  # the default: the last 7 whole days
    first = last - timedelta(days=6)
    assert result.html.name == f"report_alpha_{first}_{last}.html"
    page = result.html.read_text()
    assert external_references(page) == []
    assert "Commerce report: alpha</h1>" in page and "This period against the previous one" in page
    specs = chart_specs(nbformat.read(result.notebook, as_version=4))
    assert len(specs) == 7 and all(figures(spec) for spec in specs) and EMPTY_TITLE not in str(specs)
    marks = chart_marks(rendered_dom(result.html))
    assert len(marks) == 7 and all(count > 0 for count in marks), marks
    assert len([p for p in result.images if p.suffix == ".png"]) == len(marks)
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in result.images)
    for path in (tmp_path / "out").iterdir():
        assert with_secret.encode() not in path.read_bytes()
    alpha = Selection(site="alpha", start=first, end=last)
    with connect(notebook_lake) as con:
        (row,) = compare(con, alpha).to_dicts()
        best = ranking_frame(con, "merchant", alpha, top_n=1).row(0, named=True)
    summary = page.split("This period against the previous one", 1)[1].split("</table>", 1)[0]
    usd = Currency.of("USD")
    expected = [usd.format(row["revenue"]), usd.format(row["revenue_previous"]), f"{row['orders']:,}"]
    expected += [f"{row['revenue_change']:+.1%}"]
    assert [e for e in expected if e not in summary] == [], summary
    merchants = page.split("Top 10 merchants by revenue", 1)[1].split("</table>", 1)[0]
    assert best["key"] in merchants and usd.format(best["revenue"]) in merchants


def test_a_small_notebook_exports_html_and_svg(tmp_path: Path) -> None:
    result = export_notebook(small_notebook(tmp_path), tmp_path / "out", {"points": 4}, svg=True)
    assert result.html.name == "small_points-4.html" and result.notebook.name == "small_points-4.ipynb"
    assert [p.name for p in result.images] == ["small_points-4_chart-1.svg"]
    assert result.images[0].read_text().lstrip().startswith("<svg")
    assert result.html.read_text().count('id="commerce-chart-') == 1
    outputs = [result.html, result.notebook, *result.images]  # a report is its owner's alone
    assert [oct(p.stat().st_mode & 0o777) for p in [tmp_path / "out", *outputs]] == ["0o700"] + ["0o600"] * 3


def test_a_failed_cell_raises_names_the_cell_and_keeps_the_executed_notebook(tmp_path: Path) -> None:
    with pytest.raises(ExportError, match="RuntimeError: the data looked wrong") as caught:
        export_notebook(small_notebook(tmp_path), tmp_path / "out", {"fail": True})
    kept = tmp_path / "out" / "small.ipynb"
    assert str(kept) in str(caught.value) and kept.is_file()
    assert "the data looked wrong" in kept.read_text()
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600  # private, as every file the toolkit writes


def test_a_failed_notebook_kept_to_inspect_holds_no_secret_but_says_where_it_failed(
    tmp_path: Path, with_secret: str
) -> None:
    """A cell whose error (message and traceback) quotes the key: the console's message masked it,
    but the kept notebook held it in plain text. Now every output of the kept notebook is masked."""
    with pytest.raises(ExportError, match=r"ValueError: bad key \*\*\*") as caught:
        export_notebook(small_notebook(tmp_path), tmp_path / "out", {"refused": True})
    kept = tmp_path / "out" / "small.ipynb"
    assert str(kept) in str(caught.value)
    assert with_secret.encode() not in kept.read_bytes()
    node = nbformat.read(kept, as_version=4)
    (failed,) = [cell for cell in node.cells if cell.metadata.get("papermill", {}).get("exception")]
    (error,) = [output for output in failed.outputs if output.output_type == "error"]
    assert (error.ename, error.evalue) == ("ValueError", "bad key ***")
    traceback = re.sub(r"\x1b\[[0-9;]*m", "", "".join(error.traceback))  # without its colours
    assert "ValueError: bad key ***" in traceback
    assert "raise ValueError('bad key ' + os.environ" in traceback  # it still shows the failing line
    assert "An Exception was encountered at" in node.cells[0].source  # papermill's pointer to the cell
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600


def test_an_output_that_would_hold_a_secret_is_deleted(tmp_path: Path, with_secret: str) -> None:
    with pytest.raises(ExportError, match="would contain a secret"):
        export_notebook(small_notebook(tmp_path), tmp_path / "out", {"leak": True})
    assert list((tmp_path / "out").iterdir()) == []


PASSWORD = 'pa"ss<w0rd&9'  # a notebook holds it as `pa\\"ss<w0rd&9` (JSON), its page as `pa"ss&lt;w0rd&amp;9`


def test_a_password_a_notebook_and_its_page_hold_escaped_is_found_and_nothing_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cell printed the mail password: the notebook and the page were each searched for its bytes
    as they are, found neither (JSON escapes the `"`, HTML the `<` and `&`), and were written."""
    monkeypatch.setenv("COMMERCE_REPORTS_SMTP_PASSWORD", PASSWORD)
    leak = {"leak": True, "leaked": "COMMERCE_REPORTS_SMTP_PASSWORD"}
    with pytest.raises(ExportError, match="would contain a secret"):
        export_notebook(small_notebook(tmp_path), tmp_path / "out", leak)
    assert list((tmp_path / "out").iterdir()) == []


def test_a_mail_that_would_carry_a_password_escaped_is_not_sent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The mail's own search: a page holding the password as HTML writes it (the attachment then
    travels in base64 or quoted-printable) is refused before any connection is made."""
    monkeypatch.setenv("COMMERCE_REPORTS_SMTP_PASSWORD", PASSWORD)
    page = tmp_path / "small.html"
    page.write_text(f"<!DOCTYPE html><html><body><pre>{html.escape(PASSWORD)}</pre></body></html>")
    notebook = tmp_path / "small.ipynb"
    nbformat.write(nbformat.v4.new_notebook(metadata=small_notebook_metadata()), notebook)
    settings = MailSettings("127.0.0.1", 9, "starttls", "reports@example.org")  # nothing listens there
    with pytest.raises(DeliveryError, match="would contain a secret value; it was not sent"):
        mail_report(ExportResult(notebook, page), "boss@example.org", settings)


def test_an_export_killed_midway_leaves_no_partial_notebook_holding_a_secret_in_its_folder(
    tmp_path: Path, with_secret: str
) -> None:
    """papermill saves the notebook as each cell runs: killed once a cell has printed a secret, an
    export left that partial notebook, unmasked, in `--out`. It runs in a private folder of its own
    (0700, in the system's temporary folder), and `--out` holds nothing of the run."""
    marker = tmp_path / "running"
    cells = [
        nbformat.v4.new_code_cell('marker = ""', metadata={"tags": ["parameters"]}),
        nbformat.v4.new_code_cell("import os\nprint(os.environ['COMMERCE_REPORTS_SECRET_KEY'])"),
        nbformat.v4.new_code_cell(  # the kernel's pid, for the test to stop it once the export is killed
            "import pathlib, time\npathlib.Path(marker).write_text(str(os.getpid()))\ntime.sleep(300)"
        ),
    ]
    notebook = tmp_path / "slow.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=cells, metadata=small_notebook_metadata()), notebook)
    out, temporary = tmp_path / "o", tmp_path / "tmp"
    temporary.mkdir()
    command = [sys.executable, "-m", "commerce_reports", "export", "--notebook", str(notebook)]
    command += ["--out", str(out), "--param", f"marker={marker}"]
    export = subprocess.Popen(command, env={**os.environ, "TMPDIR": str(temporary)}, stderr=subprocess.PIPE)
    try:
        wait_for(lambda: marker.exists() and marker.read_text().isdigit(), "the last cell to start")
    finally:
        export.kill()
        export.wait()
        if marker.exists() and marker.read_text().isdigit():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(marker.read_text()), signal.SIGKILL)
    assert [p for p in out.rglob("*") if p.is_file()] == []
    left = [p for p in temporary.rglob("*.ipynb") if with_secret.encode() in p.read_bytes()]
    assert left, "the run's notebook, as papermill saved it before the kill, was looked for where it runs"
    assert all(stat.S_IMODE(p.parent.stat().st_mode) == 0o700 for p in left)


def test_no_template_script_style_or_module_is_loaded_from_off_the_page() -> None:
    """nbconvert's lab template loads require.js, MathJax, mermaid (a dynamic `import("https://...")`)
    and, for a notebook with widgets, the widget manager, all from CDNs: none may be left."""
    notebook = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell("Maths $x^2$ and a diagram\n\n```mermaid\ngraph TD; A-->B\n```"),
            nbformat.v4.new_code_cell("1"),
        ],
        metadata={
            "widgets": {"application/vnd.jupyter.widget-state+json": {"state": {}, "version_major": 2}}
        },
    )
    page = notebook_html(notebook, "probe", show_code=True)
    assert external_references(page) == []
    assert "vegaEmbed" in page and "<title>probe</title>" in page


def test_the_reference_scan_finds_what_loads_from_off_the_page() -> None:
    page = (
        '<link rel="stylesheet" href="https://cdn.example/x.css"><img src="logo.png">'
        '<img src="data:image/png;base64,AAAA"><script>const m = await import("https://cdn.example/m.mjs");</script>'
        '<script type="module">import x from "https://cdn.example/y.js";</script>'
        "<style>a { background: url(https://cdn.example/a.png) } b { fill: url(#clip) }</style>"
    )
    found = external_references(page)
    assert len(found) == 5 and not any("data:" in f or "#clip" in f for f in found), found


@pytest.mark.parametrize("params", [{"secret_key": "x"}, {"api_token": "x"}, {"bad name": 1}])
def test_secret_like_or_bad_parameters_are_refused_before_running(
    params: dict[str, object], tmp_path: Path
) -> None:
    with pytest.raises(ValidationError):
        export_notebook(small_notebook(tmp_path), tmp_path / "out", params)
    assert not (tmp_path / "out").exists() or list((tmp_path / "out").iterdir()) == []


def test_the_cli_exits_1_on_a_failed_cell_and_a_clean_run_prints_only_the_html_path(tmp_path: Path) -> None:
    """A clean run prints no "running over TCP without encryption" (the kernel gets CurveZMQ keys)
    and its kernel is never interrupted: jupyter_client's default SIGINT before shutdown prints
    "KeyboardInterrupt caught in kernel" when it lands while the kernel handles a message, and
    the probe cell records any SIGINT that reaches the kernel after the cells ran."""
    notebook = small_notebook(tmp_path)
    base = [
        sys.executable,
        "-m",
        "commerce_reports",
        "export",
        "--notebook",
        str(notebook),
        "--out",
        str(tmp_path / "o"),
    ]
    failed = subprocess.run([*base, "--param", "fail=true"], capture_output=True, text=True, timeout=120)
    assert failed.returncode == 1 and "the data looked wrong" in failed.stderr
    marker = tmp_path / "interrupted"
    done = subprocess.run(
        [*base, "--param", "points=5", "--param", f"marker={marker}", "--param", "since=2026-11-01"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith(".html") and "small_" in done.stdout
    assert "without encryption" not in done.stderr and "KeyboardInterrupt" not in done.stderr, done.stderr
    steps = [line for line in done.stderr.splitlines() if line.startswith("running small.ipynb in a kernel")]
    # what a slow step says in a log: when it starts, and how long it took
    assert len(steps) == 2, done.stderr
    # nothing else: nor papermill's "Passed unknown parameter" (all of it said, should anything be)
    assert done.stderr.splitlines() == steps, done.stderr
    assert not marker.exists()


def test_an_unknown_parameter_exits_2_lists_the_known_ones_and_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "o"
    command = [
        sys.executable,
        "-m",
        "commerce_reports",
        "export",
        "--notebook",
        str(small_notebook(tmp_path)),
    ]
    done = subprocess.run(
        [*command, "--out", str(out), "--param", "strat=2026-11-01"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and "'strat' is not a parameter of small.ipynb" in done.stderr, done.stderr
    assert "known parameters:\n  fail (bool, default False)\n  leak (bool" in done.stderr
    assert "points (int, default 3)" in done.stderr
    assert not out.exists()


@pytest.mark.parametrize(
    ("params", "said"),
    [
        ({"points": "three"}, "points='three' is not int"),
        ({"fail": "maybe"}, "fail='maybe' is not bool"),
        ({"points": 2.5}, "points=2.5 is not int"),
        ({"strat": "2026-11-01"}, "'strat' is not a parameter of small.ipynb"),
    ],
)
def test_mistyped_parameters_are_refused_before_anything_is_written(
    tmp_path: Path, params: dict[str, object], said: str
) -> None:
    with pytest.raises(ValidationError) as raised:
        export_notebook(small_notebook(tmp_path), tmp_path / "out", params)
    assert said in str(raised.value) and "known parameters:" in str(raised.value)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("params", "said"),
    [
        (["start=2026-11-20", "end=2026-11-10"], "--param start: 2026-11-20 is after end 2026-11-10"),
        (["days=0"], "--param days: 0 is not a count of days; give 1 to "),
        (["days=100000000"], "--param days: 100000000 is not a count of days"),  # (past year 1)
        ([f"end={datetime.now(UTC).date() + timedelta(days=1)}"], "is after today"),
        (["countries=USA"], "--param countries: 'USA' is not a country code"),
        (["countries=US,Mars"], "--param countries: 'Mars' is not a country code"),
    ],
)
def test_the_days_asked_of_a_report_are_checked_before_its_kernel_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], params: list[str], said: str
) -> None:
    # They failed in a cell seconds later (exit 1), and left a failed notebook in the reports folder.
    from commerce_reports.cli import main

    out = tmp_path / "out"
    words = [
        "export",
        "--notebook",
        str(REPORT),
        "--out",
        str(out),
        *(w for p in params for w in ("--param", p)),
    ]
    assert main(words) == 2
    assert said in capsys.readouterr().err and not out.exists()


def test_report_parameters_are_read_as_the_notebook_declares_them(tmp_path: Path) -> None:
    """The report's dates are `date | None` (ISO text), `days` an int, `countries` a list."""
    with pytest.raises(ValidationError, match="start='2026-11-31' is not date or None"):
        export_notebook(REPORT, tmp_path / "out", {"start": "2026-11-31"})
    assert not (tmp_path / "out").exists()
    checked = checked_parameters(
        REPORT, {"start": "2026-11-01", "days": "7", "countries": "US,GB", "end": "none", "sync": "false"}
    )
    assert checked == {
        "start": "2026-11-01",
        "days": 7,
        "countries": ["US", "GB"],
        "end": None,
        "sync": False,
    }


def test_an_export_from_any_folder_uses_the_project_lake_as_the_notebook_would(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing says where the lake is: the kernel runs in the notebook's folder and finds the
    project's marker above it, whichever folder the export was started from."""
    project = tmp_path / "project"
    (project / "notebooks").mkdir(parents=True)
    (project / "commerce-reports.toml").write_text('data_dir = "lake-here"\n')
    probe = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell('note = ""', metadata={"tags": ["parameters"]}),
            nbformat.v4.new_code_cell("from commerce_reports.locate import where\nprint(where().path)"),
        ],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    )
    nbformat.write(probe, project / "notebooks" / "probe.ipynb")
    monkeypatch.delenv("COMMERCE_REPORTS_DATA_DIR", raising=False)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    result = export_notebook(project / "notebooks" / "probe.ipynb", tmp_path / "out")
    printed = [
        o["text"] for c in nbformat.read(result.notebook, as_version=4).cells for o in c.get("outputs", [])
    ]
    assert [p.strip() for p in printed if p.strip()] == [str(project / "lake-here")]
    assert not (project / "notebooks" / "data").exists() and not (elsewhere / "data").exists()

    other = tmp_path / "another-lake"  # a caller (the demo) may point the kernel elsewhere
    environment = {"COMMERCE_REPORTS_DATA_DIR": str(other)}
    result = export_notebook(project / "notebooks" / "probe.ipynb", tmp_path / "out", environment=environment)
    printed = [
        o["text"] for c in nbformat.read(result.notebook, as_version=4).cells for o in c.get("outputs", [])
    ]
    assert [p.strip() for p in printed if p.strip()] == [str(other)]
