"""What a chart shows: a `Selection` (sites, commission days, filters), checked once when built,
and the `Coverage` of the lake for it (the ledger days really stored, and whether the last one is
still partial), so every chart can say which days it covers rather than which were asked for.

    Selection(site="alpha", start="2026-10-01", end="2026-10-31", device="Mobile")
    Selection(site=["alpha", "beta"])          # both sites; no dates: every day the lake holds
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields, replace
from datetime import UTC, date, datetime, time, timedelta
from typing import TYPE_CHECKING, Any

from ..errors import ValidationError
from ..params import DeviceType, as_days
from .geo import country_numeric_id

if TYPE_CHECKING:
    from ..db.readonly import Connection

__all__ = [
    "Coverage",
    "Selection",
    "as_selection",
    "check_connection",
    "coverage",
    "known_sites",
    "resolve",
    "scoped",
    "site_coverages",
]

_DEVICES = {d.label: d.value for d in DeviceType}  # Desktop -> DSK


def _name(parameter: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValidationError(parameter, f"{value!r} is not a name", "give a non-empty string")
    return value.strip()


def _device(value: str | None) -> str | None:
    if value is None:
        return None
    text = _name("device", value).lower()
    label = next((k for k, v in _DEVICES.items() if text in (k.lower(), v.lower())), None)
    if label is None:
        raise ValidationError("device", f"{value!r} is not a device", f"use one of {', '.join(_DEVICES)}")
    return label


def _country(value: str | None) -> str | None:
    if value is None:
        return None
    code = _name("country", value).upper()
    if len(code) != 2 or country_numeric_id(code) is None:
        raise ValidationError(
            "country", f"{value!r} is not an ISO 3166 country code", "give an alpha-2 code, e.g. 'US'"
        )
    return code


@dataclass(frozen=True, init=False)
class Selection:
    """Sites (one name, several, or None for all), commission days `start`..`end` (both included;
    None: as far as the lake goes) and optional network, device and country filters.

    Dates may be `date`s or 'YYYY-MM-DD'; a device a label or code ('Mobile', 'MBL'); a country an
    ISO alpha-2 code in any case. Anything else is a ValidationError, raised here, once.
    """

    site: str | tuple[str, ...] | None
    start: date | None
    end: date | None
    network: str | None
    device: str | None  # a label: Desktop, Mobile, Tablet, Unknown
    country: str | None  # ISO alpha-2, upper case

    def __init__(
        self,
        site: str | Iterable[str] | None = None,
        start: date | str | None = None,
        end: date | str | None = None,
        network: str | None = None,
        device: str | None = None,
        country: str | None = None,
    ) -> None:
        first, last = as_days(start, end)
        values = {
            "site": self._site(site),
            "start": first,
            "end": last,
            "network": None if network is None else _name("network", network),
            "device": _device(device),
            "country": _country(country),
        }
        for name, value in values.items():
            object.__setattr__(self, name, value)

    @staticmethod
    def _site(site: str | Iterable[str] | None) -> str | tuple[str, ...] | None:
        if site is None or isinstance(site, str):
            return None if site is None else _name("site", site)
        if not isinstance(site, Iterable):
            raise ValidationError("site", f"{site!r} is not a site", "give a name, a list of names or None")
        names = tuple(dict.fromkeys(_name("site", s) for s in site))
        if not names:
            raise ValidationError("site", "an empty list of sites", "give None for every site")
        return names[0] if len(names) == 1 else names

    @property
    def sites(self) -> tuple[str, ...]:
        """The chosen sites; empty for every site."""
        if self.site is None:
            return ()
        return (self.site,) if isinstance(self.site, str) else self.site

    @property
    def filtered(self) -> bool:
        """True when a network, device or country filter is set (rollups by day cannot answer)."""
        return any((self.network, self.device, self.country))

    @property
    def bounds(self) -> tuple[date, date]:
        """(start, end) of a resolved selection (see `resolve`); an open one is a ValidationError."""
        if self.start is None or self.end is None:
            raise ValidationError("selection", "the range is open", "resolve it against the lake first")
        return self.start, self.end

    @property
    def days(self) -> int:
        """Days in the range (a resolved selection)."""
        start, end = self.bounds
        return (end - start).days + 1

    def filters(self) -> dict[str, str]:
        """The network, device and country filters that are set."""
        chosen = {"network": self.network, "device": self.device, "country": self.country}
        return {name: value for name, value in chosen.items() if value}

    def describe(self, span: str | None = None) -> str:
        """One line: sites, the range (or `span` said instead), filters."""
        said = span or f"{self.start or 'first day'} to {self.end or 'last day'}"
        parts = [", ".join(self.sites) or "all sites", said]
        return " · ".join(parts + [f"{name} {value}" for name, value in self.filters().items()])

    def site_clause(self, params: dict[str, Any]) -> str | None:
        """`site = ...` for the chosen sites (None: every site), adding its parameters to `params`."""
        if not self.sites:
            return None
        names = [f"$site_{number}" for number in range(len(self.sites))]
        params.update({name[1:]: site for name, site in zip(names, self.sites, strict=True)})
        return f"site = {names[0]}" if len(names) == 1 else f"site IN ({', '.join(names)})"

    def network_clauses(self, params: dict[str, Any]) -> list[str]:
        """The chosen sites and network as conditions on the networks view (its `network_name`),
        adding their parameters to `params`."""
        site = self.site_clause(params)
        clauses = [site] if site else []
        if self.network:
            clauses.append("network_name = $network")
            params["network"] = self.network
        return clauses

    def where(
        self, date_column: str = "commission_date", *, filters: bool = True
    ) -> tuple[str, dict[str, Any]]:
        """A WHERE clause (and its parameters) for the transactions, link or daily views."""
        start, end = self.bounds
        clauses = [f"{date_column} BETWEEN $start AND $end"]
        params: dict[str, Any] = {"start": start, "end": end}
        site = self.site_clause(params)
        if site:
            clauses.append(site)
        if filters:
            for name, value in self.filters().items():
                column = "upper(country)" if name == "country" else name
                clauses.append(f"{column} = ${name}")
                params[name] = value
        return " AND ".join(clauses), params


_FIELDS = tuple(f.name for f in fields(Selection))


def as_selection(selection: Selection | None = None, /, **where: Any) -> Selection:
    """`selection` with the fields named in `where` replaced (no `selection`: a new one).

    This is what lets every chart be called as `chart(con, Selection(...))`, as
    `chart(con, site="alpha", start="2026-10-01")`, or as `chart(con, monthly, device="Mobile")`.
    """
    if selection is not None and not isinstance(selection, Selection):
        raise ValidationError(
            "selection",
            f"{selection!r} is not a Selection",
            "give Selection(site=..., start=..., end=...) or the same names as keywords",
        )
    if "sites" in where:  # `site=` one, `sites=` several: as everywhere sites are chosen
        if "site" in where:
            raise ValidationError(
                "site", "and sites= both given", "give site= for one site, or sites= for several"
            )
        where["site"] = where.pop("sites")
    unknown = sorted(set(where) - set(_FIELDS))
    if unknown:
        raise ValidationError(unknown[0], "is not a selection field", f"a Selection has {', '.join(_FIELDS)}")
    return replace(selection or Selection(), **where)


def check_connection(con: Any) -> Connection:
    """`con` if it is a connection over the views (`commerce_reports.connect()`, or DuckDB's own),
    else a ValidationError."""
    import duckdb

    from ..db.readonly import ReadOnlyConnection

    if not isinstance(con, duckdb.DuckDBPyConnection | ReadOnlyConnection):
        raise ValidationError(
            "con", f"{type(con).__name__} is not a DuckDB connection", "give commerce_reports.connect()"
        )
    return con


# ----------------------------------------------------------------------------- coverage


@dataclass(frozen=True)
class Coverage:
    """The updateDate ledger days the lake holds for some sites (`first`..`last`, None when it holds
    none) and when the last one was fetched: a day fetched before it ended is partial."""

    first: date | None
    last: date | None
    fetched_at: datetime | None

    @classmethod
    def combined(cls, covers: Iterable[Coverage]) -> Coverage:
        """The coverage of several sites together: from the first day any holds to the last, fetched
        when the site holding the last day last fetched it."""
        stored = [c for c in covers if c.first is not None and c.last is not None]
        if not stored:
            return cls(None, None, None)
        latest = max(stored, key=lambda c: (c.last, c.fetched_at or datetime.min.replace(tzinfo=UTC)))
        return cls(min(c.first for c in stored if c.first is not None), latest.last, latest.fetched_at)

    @property
    def partial(self) -> date | None:
        """The last stored day if it was fetched before it ended (the service was still filling it)."""
        if self.last is None or self.fetched_at is None:
            return None
        ended = datetime.combine(self.last + timedelta(days=1), time(), tzinfo=UTC)
        fetched = self.fetched_at if self.fetched_at.tzinfo else self.fetched_at.replace(tzinfo=UTC)
        return self.last if fetched < ended else None

    def holds(self, sel: Selection) -> bool:
        """True when the ledger holds every day of the resolved selection's range, none partial."""
        return self.span(sel) == sel.bounds and self.partial_in(sel) is None

    def partial_in(self, sel: Selection) -> date | None:
        """The partial day, if it lies in the selection's range."""
        span = self.span(sel)
        return self.partial if span is not None and span[1] == self.partial else None

    def span(self, sel: Selection) -> tuple[date, date] | None:
        """The days of the selection's range that the ledger holds, or None if none."""
        if self.first is None or self.last is None:
            return None
        first = max(self.first, sel.start) if sel.start else self.first
        last = min(self.last, sel.end) if sel.end else self.last
        return (first, last) if first <= last else None

    def describe(self, sel: Selection) -> str:
        """One line for subtitles: the days the chart really covers, against those asked for."""
        span = self.span(sel)
        if span is None:
            covered = f"no stored days in {sel.start} to {sel.end}"
        else:
            covered = f"{span[0]} to {span[1]}"
            if span != (sel.start, sel.end):
                covered += f" (stored days of {sel.start} to {sel.end})"
            if self.partial_in(sel) and self.fetched_at is not None:
                covered += f"; {self.partial} partial, fetched {self.fetched_at.astimezone(UTC):%H:%M} UTC"
        return sel.describe(covered)


def coverage(con: Connection, sites: str | Iterable[str] | None = None) -> Coverage:
    """The ledger days stored for `sites` (a name, names, or None/empty for every site), as the
    manifests list them (`ledger_coverage`: a day fetched with no transaction is stored too)."""
    return Coverage.combined(site_coverages(con, sites).values())


def site_coverages(con: Connection, sites: str | Iterable[str] | None = None) -> dict[str, Coverage]:
    """Each of `sites`' (a name, names, or None/empty for every site) stored ledger days, by site
    name in order, from `ledger_coverage`."""
    check_connection(con)
    params: dict[str, Any] = {}
    scope = Selection(site=sites or None).site_clause(params)  # checks the names
    rows = con.execute(
        "SELECT site, first_day, last_day, last_fetched_at FROM ledger_coverage"
        + (f" WHERE {scope}" if scope else "")
        + " ORDER BY site",
        params,
    ).fetchall()
    return {str(site): Coverage(first, last, fetched) for site, first, last, fetched in rows}


def known_sites(con: Connection) -> list[str]:
    """The sites the lake holds, sorted."""
    rows = con.sql("SELECT DISTINCT site FROM daily_performance ORDER BY 1").fetchall()
    return [str(site) for (site,) in rows]


def resolve(
    con: Connection, selection: Selection, cover: Coverage | None = None
) -> tuple[Selection, Coverage]:
    """The selection with its open dates closed on the lake (end: the last stored day, start: the
    first), its sites checked against the lake, and the lake's coverage of its sites (`cover`, when
    given, is that coverage already known: a served page keeps it per generation of the lake)."""
    check_connection(con)
    if not isinstance(selection, Selection):
        raise ValidationError("selection", f"{selection!r} is not a Selection", "give Selection(...)")
    if selection.sites:
        stored = known_sites(con)
        missing = [s for s in selection.sites if s not in stored]
        if missing:
            raise ValidationError(
                "site",
                f"{missing[0]!r} is not in the lake",
                f"use one of {', '.join(stored) or '(none: sync first)'}",
            )
    cover = cover or coverage(con, selection.sites)
    end = selection.end or cover.last or datetime.now(UTC).date()
    start = selection.start or min(cover.first or end, end)
    as_days(start, end)
    return replace(selection, start=start, end=end), cover


def scoped(con: Connection, selection: Selection | None, where: dict[str, Any]) -> tuple[Selection, Coverage]:
    """What every chart starts with: its selection (given, or built from keywords) resolved on
    the lake, and the lake's coverage of it."""
    check_connection(con)
    return resolve(con, as_selection(selection, **where))
