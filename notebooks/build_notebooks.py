"""Write the notebooks (this folder, `notebooks/*.ipynb`, no outputs) from the cells below: edit
here, then run

    .venv/bin/python notebooks/build_notebooks.py

The wheel ships them inside the package (`commerce_reports/notebooks/`, pyproject's
`force-include`): `commerce-reports init` copies them into a project, `demo` runs the report from
there (or from the package when no project holds one).

Each notebook has one cell tagged `parameters` (papermill); its names and types (annotations, or
the default's type) are what `commerce-reports export --param` accepts. Nothing in a notebook says
where the lake is: `cr.connect()` and `cr.sync()` find it as the command line does. Keys and
secrets come from the environment (COMMERCE_REPORTS_* or `.env`), never from parameters. Each
notebook shows the days it syncs (`days`, or `start`..`end`).
"""

# ruff: noqa: E501  (cell sources below are notebook lines, kept as they read in the notebook)
from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent

SYNC = """\
from datetime import UTC, datetime, timedelta

import commerce_reports as cr
from commerce_reports.charts import Selection

last_day = date.fromisoformat(str(end)) if end else datetime.now(UTC).date()
first_day = date.fromisoformat(str(start)) if start else last_day - timedelta(days=days - 1)
selection = Selection(site=site, start=first_day, end=last_day)  # what every chart below shows
print(cr.lake_location().describe())  # which lake, and why (and how to point at a project's)
if sync:  # fetches only what the lake lacks or what has not settled: nothing when it is current
    result = cr.sync(first_day, last_day, sites=site, countries=countries, options=cr.SyncOptions(progress=False))
    print(f"{result.summary()}; {len(result.plan.requests)} requests")
con = cr.connect()"""

TYPES = """\
from datetime import date  # the type of `start` and `end`: give them as "YYYY-MM-DD"
"""

WINDOW = """\
start: date | None = None  # first day; None: `days` days up to `end`
end: date | None = None  # last day; None: today
days = 30  # days synced and shown when `start` is None
countries = ["US", "GB"]  # a networks slice per country (clicks and EPC by country)
sync = True  # False: read the lake as it is"""

ALL_SITES = TYPES + "site: str | None = None  # a site name, or None for all\n" + WINDOW


def parameters(source: str) -> nbformat.NotebookNode:
    return new_code_cell(source, metadata={"tags": ["parameters"]})


def getting_started() -> nbformat.NotebookNode:
    return new_notebook(
        cells=[
            new_markdown_cell(
                "# Getting started\n\n"
                "Sync the lake, load a report, ask DuckDB a question, then explore with the dashboard.\n"
                "With no secret key configured everything runs against the embedded sandbox "
                "(sites `alpha` and `beta`); with keys in the environment (or `.env`) the same cells "
                "read your sites. Keys never go into a notebook's parameters."
            ),
            parameters(ALL_SITES),
            new_markdown_cell(
                "## 1. Sync\n\nThe first run fetches every day of the period; later runs only what changed."
            ),
            new_code_cell(SYNC),
            new_code_cell("cr.status()"),
            new_markdown_cell(
                "## 2. Load\n\nLoaders read the lake (fetching a missing day first). The `updateDate` ledger "
                "holds every version of a transaction on the day it changed."
            ),
            new_code_cell(
                "ledger = cr.load_transactions(last_day - timedelta(days=6), last_day, site=site,\n"
                "                              options=cr.SyncOptions(progress=False))\n"
                'ledger.select("site", "commission_id", "update_date", "network", "publisher_net_revenue").head()'
            ),
            new_markdown_cell(
                "## 3. Ask DuckDB\n\n`cr.connect()` opens the views (`transactions`, `link_performance`, "
                "`daily_performance`, `network_performance`, ...); `con.sql(q).pl()` gives polars."
            ),
            new_code_cell(
                'con.sql("""\n'
                "    SELECT site, date_trunc('week', day) AS week, sum(revenue) AS revenue,\n"
                "           sum(transactions) AS orders, sum(returns) / sum(transactions) AS return_rate\n"
                "    FROM daily_performance\n"
                "    WHERE day BETWEEN $first AND $last AND ($site IS NULL OR site = $site)\n"
                "    GROUP BY ALL ORDER BY site, week\n"
                '""", params={"first": first_day, "last": last_day, "site": site}).pl()'
            ),
            new_code_cell("from commerce_reports.charts import daily_chart\n\ndaily_chart(con, selection)"),
            new_markdown_cell(
                "## 4. Compare\n\nThe period against the previous one of the same length: a polars frame "
                "(`<figure>`, `<figure>_previous`, `<figure>_change`), in total or per network, device, country, "
                "merchant or link. Money is in the configured currency (`COMMERCE_REPORTS_CURRENCY`, default USD). "
                "`complete` and `previous_complete` say whether the lake holds each period whole: a previous "
                "period that began before the lake's first day is partial, and its changes read as growth."
            ),
            new_code_cell(
                'compared = cr.compare(con, selection, by="network", top_n=5)\n'
                'if not compared["previous_complete"].all():\n'
                '    print("The lake holds only part of the previous period: its figures, and the changes, are partial.")\n'
                "compared.select(\n"
                '    "key", "revenue", "revenue_previous", "revenue_change", "orders", "orders_change",\n'
                '    "complete", "previous_complete",\n'
                ")"
            ),
            new_markdown_cell(
                "## 5. Explore\n\nEvery control re-queries DuckDB (aggregated answers only); sliders "
                "report when released."
            ),
            new_code_cell("from commerce_reports.widgets import dashboard\n\ndashboard(con, selection)"),
        ]
    )


def link_performance() -> nbformat.NotebookNode:
    return new_notebook(
        cells=[
            new_markdown_cell(
                "# Link performance\n\nWhich links earn, which get returned, and how they move over time. "
                "Revenue counts commission days; a link's returns are orders later adjusted down or reversed."
            ),
            parameters(ALL_SITES + "\ntop_n = 15  # links in the ranking"),
            new_code_cell(SYNC),
            new_code_cell(
                "from commerce_reports.charts import link_trend_chart, ranking_frame, top_links_chart\n\n"
                'links = ranking_frame(con, "link", selection, top_n=top_n)\n'
                'links.select("rank", "key", "revenue", "orders", "returns", "return_rate")'
            ),
            new_markdown_cell(
                "The slider under the chart hides links below a minimum revenue (it works in exported HTML too)."
            ),
            new_code_cell("top_links_chart(con, selection, top_n=top_n)"),
            new_code_cell("link_trend_chart(con, selection, top_n=5)"),
            new_markdown_cell("Links with the most returns, by return rate (at least 5 orders):"),
            new_code_cell(
                'con.sql("""\n'
                "    SELECT link_url, sum(transactions) AS orders, sum(returns) AS returns,\n"
                "           sum(returns) / sum(transactions) AS return_rate, sum(revenue) AS revenue\n"
                "    FROM link_performance\n"
                "    WHERE day BETWEEN $start AND $end AND ($site IS NULL OR site = $site)\n"
                "    GROUP BY ALL HAVING sum(transactions) >= 5 ORDER BY return_rate DESC LIMIT 10\n"
                '""", params={"start": first_day, "end": last_day, "site": site}).pl()'
            ),
        ]
    )


def devices_and_countries() -> nbformat.NotebookNode:
    return new_notebook(
        cells=[
            new_markdown_cell(
                "# Devices, countries and networks\n\nTransaction figures count commission days; clicks, "
                "EPC and conversion come from the service's aggregates (month windows, click date) for the "
                "slices the sync keeps (`all`, each device, the `countries` parameter)."
            ),
            parameters(ALL_SITES),
            new_code_cell(SYNC),
            new_code_cell(
                "from commerce_reports.charts import (\n"
                "    country_chart,\n    device_chart,\n    network_epc_chart,\n    network_gap_chart,\n)\n\n"
                "device_chart(con, selection)"
            ),
            new_markdown_cell("Each device against the previous period of the same length:"),
            new_code_cell(
                'from commerce_reports.charts import comparison_chart\n\ncomparison_chart(con, selection, by="device")'
            ),
            new_code_cell("country_chart(con, selection, top_n=12)"),
            new_markdown_cell("Pick a network in the dropdown under the chart to highlight it."),
            new_code_cell("network_epc_chart(con, selection)"),
            new_markdown_cell(
                "The service's revenue per network against the ledger's, over the days both cover (a month "
                "window counts only once the ledger holds it from its first day): a positive gap is revenue "
                "the aggregate counts and the stored transactions do not (yet)."
            ),
            new_code_cell("network_gap_chart(con, selection)"),
        ]
    )


REPORT_PARAMETERS = """\
from datetime import date  # the type of `start` and `end`: give them as "YYYY-MM-DD"

site: str | None = None  # a site name; None: every configured site
start: date | None = None  # first day; None: `days` days up to `end`
end: date | None = None  # last day; None: yesterday, the last whole day
days = 7  # days reported when `start` is None, against the days before (whole months: the months before)
countries = ["US", "GB"]  # a networks slice per country (clicks and EPC by country)
sync = True  # False: read the lake as it is
daily_clicks = False  # also keep the networks report per day (EPC and conversion for any period; a request per day and slice)"""

REPORT_SETUP = """\
from datetime import UTC, datetime, timedelta

import commerce_reports as cr
from commerce_reports import report
from commerce_reports.charts import (
    Selection,
    comparison_chart,
    country_map_chart,
    daily_chart,
    device_chart,
    network_epc_chart,
    previous_period,
    top_links_chart,
    top_products_chart,
)

sites = [site] if site else cr.site_names()  # the configured sites, never a sandbox's name
last_day = date.fromisoformat(str(end)) if end else datetime.now(UTC).date() - timedelta(days=1)
first_day = date.fromisoformat(str(start)) if start else last_day - timedelta(days=days - 1)
selection = Selection(site=sites, start=first_day, end=last_day)  # what every section shows
if sync:  # the period and the one before it; quietly: the report shows figures, not the sync
    quiet = cr.SyncOptions(progress=False, say=lambda _: None)
    since = previous_period(selection).start
    cr.sync(since, last_day, sites=sites, countries=countries, options=quiet)
    if daily_clicks:
        cr.sync(since, last_day, sites=sites, countries=countries, grain="day", merchandise=[], options=quiet)
con = cr.connect()  # the project's lake, found as every entry point finds it"""


def report() -> nbformat.NotebookNode:
    return new_notebook(
        cells=[
            parameters(REPORT_PARAMETERS),
            new_code_cell(REPORT_SETUP),
            new_code_cell("report.title(con, selection)"),
            new_code_cell("report.alerts_section(con, selection)"),
            new_code_cell("report.summary(con, selection)"),
            new_markdown_cell("## Revenue over the period"),
            new_code_cell("daily_chart(con, selection)"),
            new_markdown_cell(
                "## Against the previous period\n\nEach cell holds this period's figure and, below it, the "
                "previous period's; the change is green when it is good news."
            ),
            new_code_cell('report.comparison(con, selection, "network")'),
            new_code_cell('comparison_chart(con, selection, by="network")'),
            new_code_cell('report.comparison(con, selection, "device")'),
            new_code_cell('report.comparison(con, selection, "country")'),
            new_markdown_cell("## Top links, merchants and networks"),
            new_code_cell('report.top_table(con, selection, "link")'),
            new_code_cell('report.top_table(con, selection, "merchant")'),
            new_code_cell('report.top_table(con, selection, "network")'),
            new_markdown_cell("## Links"),
            new_code_cell("top_links_chart(con, selection, top_n=15)"),
            new_markdown_cell("## Devices and countries"),
            new_code_cell("device_chart(con, selection)"),
            new_code_cell("country_map_chart(con, selection)"),
            new_markdown_cell(
                "## Networks\n\nClicks and EPC are the service's month aggregates (click date); the "
                "networks with the most revenue are named."
            ),
            new_code_cell("network_epc_chart(con, selection)"),
            new_markdown_cell("## Products"),
            new_code_cell("top_products_chart(con, selection, top_n=15)"),
        ]
    )


NOTEBOOKS = {
    "01_getting_started.ipynb": getting_started,
    "02_link_performance.ipynb": link_performance,
    "03_devices_and_countries.ipynb": devices_and_countries,
    "report.ipynb": report,
}


def main() -> None:
    for name, build in NOTEBOOKS.items():
        notebook = build()
        for number, cell in enumerate(notebook.cells):  # stable ids: rebuilding changes no line
            cell.id = f"{Path(name).stem}-{number}"
        notebook.metadata["kernelspec"] = {
            "name": "python3",
            "display_name": "Python 3",
            "language": "python",
        }
        notebook.metadata["language_info"] = {"name": "python"}
        nbformat.validate(notebook)
        nbformat.write(notebook, HERE / name)
        print(f"wrote {HERE / name}")


if __name__ == "__main__":
    main()
