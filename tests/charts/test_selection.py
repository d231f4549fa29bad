"""Selection: one checked value for every chart; Coverage: charts say the days they really cover."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import pytest

import commerce_reports.charts as charts
from commerce_reports.charts import Selection, coverage, network_gap_frame, resolve
from commerce_reports.db import connect
from commerce_reports.db.published import published_reading
from commerce_reports.errors import CommerceReportsError, ValidationError
from tests.charts.conftest import END, NOW, START
from tests.charts.specs import figures
from tests.lakes import sandbox_lake, shared


def subtitle(chart: Any) -> str:
    spec = chart.to_dict()
    title = spec.get("title") or spec["vconcat"][0]["title"]
    return " | ".join(title["subtitle"])


@pytest.mark.parametrize(
    ("fields", "parameter"),
    [
        ({"start": "2026-02-30"}, "start"),
        ({"start": "yesterday"}, "start"),
        ({"end": 20260301}, "end"),
        ({"start": "2026-03-05", "end": "2026-03-01"}, "start"),
        ({"device": "Phone"}, "device"),
        ({"device": 3}, "device"),
        ({"country": "USA"}, "country"),
        ({"country": "XX"}, "country"),
        ({"site": ""}, "site"),
        ({"site": 7}, "site"),
        ({"site": []}, "site"),
        ({"network": ["a"]}, "network"),
    ],
)
def test_a_selection_is_checked_when_built(fields: dict[str, Any], parameter: str) -> None:
    with pytest.raises(ValidationError) as raised:
        Selection(**fields)
    assert raised.value.parameter == parameter


def test_a_selection_normalises_what_it_is_given() -> None:
    sel = Selection(site=["alpha", "beta", "alpha"], start="2026-03-01", device="mbl", country="gb")
    assert sel.sites == ("alpha", "beta") and sel.start == date(2026, 3, 1) and sel.end is None
    assert (sel.device, sel.country) == ("Mobile", "GB")
    assert Selection(site=["alpha"]).site == "alpha" and Selection().sites == ()
    assert hash(sel) == hash(
        Selection(site=("alpha", "beta"), start=date(2026, 3, 1), device="Mobile", country="GB")
    )


@pytest.mark.parametrize(
    ("call", "parameter"),
    [
        (lambda con: charts.top_links_chart(con, "alpha"), "selection"),  # the old positional form
        (lambda con: charts.top_links_chart(con, site="alpha", sites="beta"), "site"),  # one or several
        (lambda con: charts.daily_chart(object(), site="alpha"), "con"),
        (lambda con: charts.top_links_chart(con, site="gamma"), "site"),
        (lambda con: charts.top_links_chart(con, top_n="5"), "top_n"),
        (lambda con: charts.country_map_chart(con, metric="profit"), "metric"),
        (lambda con: charts.network_gap_chart(con, device="Mobile"), "device"),
        (lambda con: charts.link_trend_chart(con, links="https://x"), "links"),
        (lambda con: charts.ranking_frame(con, "page", Selection()), "dimension"),
        (lambda con: charts.ranking_chart(None, "link", "revenue", Selection()), "frame"),  # type: ignore[arg-type]
        (lambda con: charts.country_numeric_id(840), "country"),  # type: ignore[arg-type]
        (lambda con: resolve(con, {"site": "alpha"}), "selection"),  # type: ignore[arg-type]
    ],
)
def test_public_functions_raise_only_toolkit_errors(
    con: duckdb.DuckDBPyConnection, call: Any, parameter: str
) -> None:
    with pytest.raises(CommerceReportsError) as raised:
        call(con)
    assert isinstance(raised.value, ValidationError) and raised.value.parameter == parameter


def test_keywords_build_or_change_the_selection(con: duckdb.DuckDBPyConnection) -> None:
    month = Selection(site="alpha", start=START, end=END)
    given = charts.top_links_chart(con, month, device="Mobile").to_dict()
    built = charts.top_links_chart(con, site="alpha", start=START, end=END, device="Mobile").to_dict()
    assert figures(given) == figures(built)  # DuckDB's float sums may differ in the last bits
    assert "device Mobile" in given["title"]["subtitle"][0]


def test_open_dates_close_on_the_days_the_lake_holds(con: duckdb.DuckDBPyConnection) -> None:
    sel, cover = resolve(con, Selection(site="alpha"))
    assert (sel.start, sel.end) == (START, END) == (cover.first, cover.last)


def test_charts_state_the_days_they_cover_not_those_asked(con: duckdb.DuckDBPyConnection) -> None:
    asked = Selection(site="alpha", start=START - timedelta(days=60), end=END)
    for chart in (charts.top_links_chart, charts.device_chart, charts.daily_chart, charts.country_chart):
        said = subtitle(chart(con, asked))
        assert f"alpha · {START} to {END} (stored days of {asked.start} to {END})" in said, said


def test_the_partial_last_day_is_said_and_drawn_apart(con: duckdb.DuckDBPyConnection) -> None:
    cover = coverage(con, ["alpha"])
    assert cover.partial == END and cover.fetched_at is not None  # synced at noon of its last day
    spec = charts.daily_chart(con, site="alpha", start=START, end=END).to_dict()
    assert f"{END} partial, fetched {NOW:%H:%M} UTC" in spec["title"]["subtitle"][0]
    rows = next(iter(spec["datasets"].values()))
    assert [r["period"][:10] for r in rows if r["partial"]] == [END.isoformat()]
    marks = [layer["mark"]["type"] for layer in spec["layer"]]
    assert marks == ["line", "line", "point", "text"]
    assert "tick" not in str(spec)  # the old "periods with returns" ticks marked every day

    earlier = charts.daily_chart(con, site="alpha", start=START, end=END - timedelta(days=3)).to_dict()
    assert [layer["mark"]["type"] for layer in earlier["layer"]] == ["line"]
    assert "partial" not in earlier["title"]["subtitle"][0]


def test_the_gap_compares_only_days_both_sides_cover(con: duckdb.DuckDBPyConnection) -> None:
    """The ledger starts on START (Feb 9): February's aggregate also counts Feb 1-8, so only
    March, from its first day to the day its window was fetched, can be compared."""
    frame = network_gap_frame(con, Selection(site="alpha", start=START, end=END), top_n=50)
    assert set(frame["first_day"]) == {date(2026, 3, 1)} and set(frame["last_day"]) == {END}
    ledger = con.sql(
        "SELECT network, sum(publisher_net_revenue) FROM transactions WHERE site = 'alpha' "
        "AND commission_date BETWEEN DATE '2026-03-01' AND $end GROUP BY 1",
        params={"end": END},
    ).fetchall()
    aggregate = con.sql(
        "SELECT network_name, sum(revenue) FROM networks WHERE site = 'alpha' AND slice = 'all' "
        "AND grain = 'month' AND window_start = DATE '2026-03-01' GROUP BY 1"
    ).fetchall()
    for row in frame.iter_rows(named=True):
        assert row["revenue"] == dict(ledger).get(row["key"], 0)  # exact: DECIMAL on both sides
        assert row["aggregate_revenue"] == dict(aggregate).get(row["key"], 0)
        assert row["revenue_gap"] == row["aggregate_revenue"] - row["revenue"]
    february = frame["aggregate_revenue"].sum()
    whole = con.sql("SELECT sum(revenue) FROM networks WHERE site = 'alpha' AND slice = 'all'").fetchall()[0][
        0
    ]
    assert february < whole  # February's window is left out
    said = subtitle(charts.network_gap_chart(con, site="alpha", start=START, end=END))
    assert f"compared 2026-03-01 to {END}" in said


def test_no_window_covered_whole_is_an_empty_chart_saying_why(con: duckdb.DuckDBPyConnection) -> None:
    chart = charts.network_gap_chart(con, site="alpha", start=START, end=date(2026, 2, 28)).to_dict()
    assert chart["title"]["text"] == charts.EMPTY_TITLE
    assert "ledger covers whole" in chart["datasets"][next(iter(chart["datasets"]))][0]["message"]


def test_every_public_name_of_charts_and_export_loads_on_first_use() -> None:
    import subprocess
    import sys

    code = (
        "import sys, commerce_reports.charts as charts, commerce_reports.export as export\n"
        "import commerce_reports.charts.offline, commerce_reports.export.markdown\n"
        "print(sorted({'altair', 'duckdb', 'polars', 'papermill', 'nbconvert'} & set(sys.modules)))\n"
        "assert all(getattr(m, n) is not None for m in (charts, export) for n in m.__all__)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"  # one submodule does not load the rest of the package


MIDNIGHT = datetime(2026, 3, 3, 0, 0, 30, tzinfo=UTC)  # a daily sync just after the day began


@pytest.fixture(scope="module")
def midnight_lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A lake synced from March 1st to 30 s into March 3rd: that day is stored, fetched with no
    transaction yet."""
    return shared(
        "midnight-lake", tmp_path_factory, lambda folder: sandbox_lake(folder, now=MIDNIGHT, days=3)
    )


@pytest.fixture(scope="module")
def synced_at_midnight(midnight_lake: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    with connect(midnight_lake) as con:
        yield con


def test_a_day_stored_empty_is_a_stored_day(synced_at_midnight: duckdb.DuckDBPyConnection) -> None:
    """Its partition holds no row, so only the manifests can say it is stored: the charts still say
    they cover it (partial), and the revenue gap compares March's window up to it."""
    con, today = synced_at_midnight, MIDNIGHT.date()
    stored = con.sql("SELECT max(partition_day) FROM transaction_versions WHERE partition_by = 'updateDate'")
    assert stored.fetchall() == [(today - timedelta(days=1),)]  # the day holds no row
    ledger = con.sql("SELECT site, first_day, last_day, last_fetched_at FROM ledger_coverage ORDER BY site")
    first = today - timedelta(days=2)
    assert ledger.fetchall() == [(site, first, today, MIDNIGHT) for site in ("alpha", "beta")]

    cover = coverage(con, "alpha")
    assert (cover.first, cover.last, cover.partial) == (first, today, today)
    said = subtitle(charts.daily_chart(con, site="alpha"))
    assert f"alpha · {first} to {today}; {today} partial, fetched 00:00 UTC" in said, said
    frame = network_gap_frame(con, Selection(site="alpha", start=first, end=today), top_n=50)
    assert (set(frame["first_day"]), set(frame["last_day"])) == ({first}, {today})


def test_a_state_published_without_the_stored_days_is_not_read(midnight_lake: Path, tmp_path: Path) -> None:
    """A generation published by a version before `ledger_coverage` does not record the stored
    days: the views read the lake files instead, and say the same days, until the next publish."""
    lake = tmp_path / "lake"
    shutil.copytree(midnight_lake, lake)
    generation = json.loads((lake / "views" / "current.json").read_text())["generation"]
    record = lake / "views" / generation / "reading.json"
    older = json.loads(record.read_text())
    for site in older["coverage"]:
        del site["stored"]
    record.write_text(json.dumps(older))
    assert published_reading(lake) is None  # not read: the lake files are
    with connect(lake) as con:
        said = con.sql("SELECT site, last_day FROM ledger_coverage ORDER BY site").fetchall()
    assert said == [(site, MIDNIGHT.date()) for site in ("alpha", "beta")]
