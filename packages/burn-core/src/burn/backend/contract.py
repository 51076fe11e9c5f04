"""Marks the ops of the backend contract as *required* or *default*.

A backend must implement every required op; default ops are written once in burn-core in terms
of other ops and are overridden only to be faster. `contract_ops()` lists them all: the
conformance suite's meta-test uses it to check that every op has a test.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Literal, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

OpKind = Literal["required", "default"]


def required(fn: F) -> F:
    """Declare a required op; calling it on a backend that lacks it names the backend and op."""
    name = fn.__name__

    @functools.wraps(fn)
    def missing(self: Any, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"backend {self.name!r} does not implement the required op {name}")

    missing.__burn_op__ = "required"  # type: ignore[attr-defined]
    return missing  # type: ignore[return-value]


def default(fn: F) -> F:
    """Declare an op with a default implementation written in terms of other ops."""
    fn.__burn_op__ = "default"  # type: ignore[attr-defined]
    return fn


def contract_ops(cls: type | None = None) -> dict[str, OpKind]:
    """Every op of the contract, by name, with whether it is required or has a default.

    Example:
        >>> ops = contract_ops()
        >>> ops["float_add"], ops["float_mean_dim"]
        ('required', 'default')
    """
    if cls is None:
        from burn.backend.base import Backend

        cls = Backend
    found: dict[str, OpKind] = {}
    for klass in reversed(cls.__mro__):
        for name, value in vars(klass).items():
            kind = getattr(value, "__burn_op__", None)
            if kind is not None:
                found[name] = kind
    return dict(sorted(found.items()))


def required_ops() -> list[str]:
    """Names of the required ops."""
    return [name for name, kind in contract_ops().items() if kind == "required"]


def implemented_ops(backend_cls: type) -> set[str]:
    """Ops of the contract that `backend_cls` (or a class between it and Backend) overrides."""
    from burn.backend.base import Backend

    ops = contract_ops()
    out = set()
    for name in ops:
        impl = getattr(backend_cls, name, None)
        if impl is not None and impl is not getattr(Backend, name):
            out.add(name)
    return out
