"""One parameter list for two public functions that take the same arguments.

`plan_sync` takes what `sync` takes, `load_merchandise` what `load_networks` takes: written twice,
the lists drift apart (a new option reaches one and not the other). `arguments_of(model)` gives a
function the parameters of `model` for the type checker (a `ParamSpec`) and for `help()`,
`inspect.signature` and IDEs (`__signature__`); `bound(model, args, kwargs)` names the arguments of
a call by those parameters, defaults filled in, refusing what `model` would refuse (TypeError).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any, ParamSpec, TypeVar, cast

__all__ = ["arguments_of", "bound"]

P = ParamSpec("P")
R = TypeVar("R")


def arguments_of(model: Callable[P, object]) -> Callable[[Callable[..., R]], Callable[P, R]]:
    """A decorator: the function it wraps takes exactly the parameters of `model` (its own return
    type stays)."""

    def apply(function: Callable[..., R]) -> Callable[P, R]:
        returns = inspect.signature(function).return_annotation
        function.__signature__ = inspect.signature(model).replace(return_annotation=returns)  # type: ignore[attr-defined]
        return cast(Callable[P, R], function)

    return apply


def bound(model: Callable[..., object], args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments of a call by `model`'s parameter names, with its defaults for those not given."""
    call = inspect.signature(model).bind(*args, **kwargs)
    call.apply_defaults()
    return dict(call.arguments)
