"""Reading chart specs (`chart.to_dict()`) in tests."""

from __future__ import annotations

from typing import Any


def figures(spec: dict[str, Any]) -> list[tuple[tuple[str, Any], ...]]:
    """Every row of a chart spec's data sets, sorted, floats rounded to 1e-4 (money to the cent):
    what two charts of the same numbers share, whatever their data sets are named."""
    rows = [row for values in spec.get("datasets", {}).values() if isinstance(values, list) for row in values]
    return sorted(
        (
            tuple((k, round(v, 4) if isinstance(v, float) else v) for k, v in sorted(row.items()))
            for row in rows
        ),
        key=repr,
    )
