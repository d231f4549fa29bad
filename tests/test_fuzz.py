"""Every public function of the package root, called with one argument of a wrong type or value
(hypothesis, bounded and derandomised): only the toolkit's own errors come out, never a TypeError,
AttributeError or KeyError traceback. The other arguments are valid and cheap: a call that is
accepted syncs one day of the embedded sandbox once, then finds it current."""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from enum import Enum
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import commerce_reports as cr
from commerce_reports.errors import CommerceReportsError

# Values of every kind but the right one (any of them may happen to be right for some parameter:
# an accepted call is fine, an unexpected exception is not).
WRONG = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=6),
    st.binary(max_size=4),
    st.booleans(),
    st.lists(st.one_of(st.integers(), st.text(max_size=3), st.none()), max_size=3),
    st.dictionaries(st.text(max_size=4), st.one_of(st.integers(), st.text(max_size=3)), max_size=2),
    st.sampled_from(
        [
            object(),
            (1, 2),
            {1, 2},
            b"",
            "",
            " ",
            "2026-02-30",
            "9999-01-01",
            "alpha",
            "all",
            "US",
            -1,
            0,
            float("nan"),
            Path("/proc/self"),
            Path("/etc/passwd"),
            [None],
            [[]],
            {"device_type": 5},
            lambda: 1,
            datetime(2026, 1, 1),  # naive
            Exception("x"),
        ]
    ),
)


def _functions() -> Iterator[tuple[str, Callable[..., Any]]]:
    for name in sorted(cr.__all__):
        value = getattr(cr, name)
        if name.startswith("_") or getattr(value, "__module__", "") == "commerce_reports.errors":
            continue  # the error tree: types to catch, not functions
        if isinstance(value, type) and issubclass(value, Enum):
            continue  # enums are compared, not called
        if callable(value):
            yield name, value


FUNCTIONS = dict(_functions())


@pytest.fixture(scope="module")
def cheap(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Valid arguments that cost little: one day, a private lake, no output (at the embedded
    sandbox's own pace: asked faster, it answers 429 and the retry waits a second)."""
    today = datetime.now(UTC).date()
    return {
        "start": today,
        "end": today,
        "data_dir": tmp_path_factory.mktemp("fuzz-lake"),
        "options": cr.SyncOptions(progress=False, say=lambda _: None),
        "secret_key": "fuzz-key-0123456789",
        "base_url": "http://127.0.0.1:9",
        "pace_dir": tmp_path_factory.mktemp("fuzz-pace"),
    }


def test_every_public_function_is_fuzzed() -> None:
    assert set(FUNCTIONS) >= {
        "sync",
        "plan_sync",
        "status",
        "invalidate",
        "load_transactions",
        "load_networks",
        "load_merchandise",
        "connect",
        "write_catalog",
        "open_client",
        "lake_location",
        "ReportsClient",
        "RetryPolicy",
        "SyncOptions",
        "Filters",
    }


def _call(function: Callable[..., Any], arguments: dict[str, Any]) -> None:
    result = function(**arguments)
    for method in ("close",):  # a connection or a client that was accepted
        if callable(getattr(result, method, None)) and not isinstance(result, type):
            getattr(result, method)()


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
@settings(
    max_examples=15,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_wrong_arguments_raise_only_toolkit_errors(
    name: str, cheap: dict[str, Any], data: st.DataObject
) -> None:
    function = FUNCTIONS[name]
    parameters = [
        p
        for p in inspect.signature(function).parameters.values()
        if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]
    if not parameters:
        return
    arguments = {p.name: cheap[p.name] for p in parameters if p.name in cheap}
    arguments |= {p.name: None for p in parameters if p.default is p.empty and p.name not in arguments}
    target = data.draw(st.sampled_from(parameters), label="parameter")
    arguments[target.name] = data.draw(WRONG, label=target.name)
    with contextlib.suppress(CommerceReportsError):  # it says what is wrong, and what would be right
        _call(function, arguments)
