"""`DecoratorBackend`: the plumbing shared by backends that wrap another one (autodiff, fusion).

A decorator backend runs its ops on an inner backend (``self._in``) and hands out devices of its
own: the inner's devices re-owned by the decorator, so tensors made on them come back to it.
What every decorator needs the same way lives here once: building the `Backend` part from the
inner's dtypes and capabilities, sharing the inner's random generator, the device mapping in both
directions, and the methods that only forward to the inner (`seed`, `options`, `sync`,
`devices`, `default_device`).

Example:
    >>> class Passthrough(DecoratorBackend):  # doctest: +SKIP
    ...     def __init__(self, inner):
    ...         self._init_decorator(inner, "passthrough", inner.capabilities.features)
    >>> Passthrough(burn.backend("ndarray")).name  # doctest: +SKIP
    'passthrough(ndarray)'
"""

from __future__ import annotations

from typing import Any

from burn.backend.base import Backend
from burn.backend.capabilities import Capabilities
from burn.backend.device import Device
from burn.backend.random_state import RandomState

__all__ = ["DecoratorBackend"]


class DecoratorBackend(Backend):
    """Base class of backends that wrap an inner backend; subclasses call `_init_decorator`."""

    _in: Backend

    @classmethod
    def _check_inner(cls, inner: Any) -> None:
        if not isinstance(inner, Backend):
            got = type(inner).__name__
            raise TypeError(f"{cls.__name__}(inner): inner must be a burn Backend, got {got}")

    def _init_decorator(self, inner: Backend, kind: str, features: frozenset[str]) -> None:
        """Wrap `inner`: the backend is named ``kind(inner)``, takes the inner's dtypes, declares
        the inner's dtypes and `features`, and shares the inner's random generator."""
        self._check_inner(inner)
        self._in = inner
        self.name = f"{kind}({inner.name})"  # type: ignore[misc]
        Backend.__init__(
            self,
            float_dtype=inner.float_dtype,
            int_dtype=inner.int_dtype,
            capabilities=Capabilities(dtypes=inner.capabilities.dtypes, features=features),
        )
        self._owned: dict[Device, Device] = {}
        self._unowned: dict[Device, Device] = {}

    def current_random(self) -> RandomState:
        """The inner backend's random state: random ops run there, and `seed` seeds it."""
        return self._in.current_random()

    def seed(self, seed: int | None, *, thread: bool = False) -> None:
        self._in.seed(seed, thread=thread)

    def options(self) -> dict[str, Any]:
        return self._in.options()

    def sync(self, device: Device | None = None) -> None:
        self._in.sync(None if device is None else self._inner_device(device))

    def devices(self) -> list[Device]:
        return [self._own_device(d) for d in self._in.devices()]

    def default_device(self) -> Device:
        return self._own_device(self._in.default_device())

    def _own_device(self, device: Device) -> Device:
        """The inner's `device`, handed out by this backend (cached: devices are few)."""
        owned = self._owned.get(device)
        if owned is None:
            owned = self._owned[device] = device.with_owner(self)
        return owned

    def _inner_device(self, device: Device) -> Device:
        """`device` as the inner backend's own, for ops that build primitives on it."""
        inner = self._unowned.get(device)
        if inner is None:
            inner = self._unowned[device] = device.with_owner(self._in)
        return inner
