"""`DecoratorBackend`: the plumbing shared by backends that wrap another one (autodiff, fusion).

A decorator backend runs its ops on an inner backend (``self._in``) and hands out devices of its
own: the inner's devices re-owned by the decorator, so tensors made on them come back to it.
What every decorator needs the same way lives here once: building the `Backend` part from the
inner's dtypes and capabilities, sharing the inner's random generator, the device mapping in both
directions, and the methods that only forward to the inner (`seed`, `options`, `sync`,
`devices`, `default_device`), and `delegate_op`, which builds the call of one contract op on the
inner backend from the op's annotations (`OpFacts.operands`, `OpFacts.returns`): the same for
every op, so a decorator never lists ops by hand.

Example:
    >>> class Passthrough(DecoratorBackend):  # doctest: +SKIP
    ...     def __init__(self, inner):
    ...         self._init_decorator(inner, "passthrough", inner.capabilities.features)
    >>> Passthrough(burn.backend("ndarray")).name  # doctest: +SKIP
    'passthrough(ndarray)'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from burn.backend.base import Backend
from burn.backend.capabilities import Capabilities
from burn.backend.device import Device
from burn.backend.random_state import RandomState

__all__ = ["DecoratorBackend", "delegate_op"]


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


def delegate_op(
    name: str,
    fn: Callable[..., Any],
    unwrap: Callable[[Any], Any],
    wrap: Callable[[Any], Any],
    inner_device: Callable[[Any], Any],
    own_device: Callable[[Any], Any],
    after: Callable[[tuple[Any, ...], dict[str, Any], Any], None] | None = None,
) -> Callable[..., Any]:
    """Contract op `name` run as `fn` (the inner backend's op) on a decorator's primitives.

    The op's annotated operands are translated before the call (``P`` and ``P | None`` through
    `unwrap`, ``Sequence[P]`` item by item, ``Device`` through `inner_device`) and its result
    after it (``P`` through `wrap`, each primitive of a ``tuple`` result through `wrap` with
    ``None`` kept, ``Device`` through `own_device`); anything else passes through unchanged.

    Args:
        name: the contract op, as in `burn.backend.contract.op_facts`.
        fn: the inner backend's bound op.
        unwrap: the decorator's primitive -> the inner's.
        wrap: the inner's primitive -> the decorator's.
        inner_device: the decorator's device -> the inner's.
        own_device: the inner's device -> the decorator's.
        after: called with the op's original arguments, keyword arguments and translated result
            when given (how a recording decorator sees each call).

    Example:
        >>> import burn
        >>> inner = burn.backend("ndarray")
        >>> neg = delegate_op("float_neg", inner.float_neg, lambda t: t[0], lambda p: (p,),
        ...                   lambda d: d, lambda d: d)
        >>> x = (inner.float_from_data(burn.TensorData([1.0, 2.0]), inner.default_device()),)
        >>> inner.float_into_data(neg(x)[0]).to_numpy().tolist()
        [-1.0, -2.0]
    """
    from burn.backend.contract import op_facts

    facts = op_facts()[name]
    convert, how = facts.operands, facts.returns
    names = {pname: kind for _, pname, kind in convert}

    def arg(kind: str, x: Any) -> Any:
        if kind == "Device":
            return inner_device(x)
        if kind == "Sequence[P]":
            return [unwrap(t) for t in x]
        return None if x is None else unwrap(x)

    def op(*args: Any, **kwargs: Any) -> Any:
        a = list(args)
        for i, _, kind in convert:
            if i < len(a):
                a[i] = arg(kind, a[i])
        kw = kwargs
        if kwargs:
            kw = {key: arg(names[key], v) if key in names else v for key, v in kwargs.items()}
        result = fn(*a, **kw)
        if how == "P":
            result = wrap(result)
        elif how == "tuple":  # an optional result (``P | None``) stays None
            result = tuple(None if r is None else wrap(r) for r in result)
        elif how == "Device":
            result = own_device(result)
        if after is not None:
            after(args, kwargs, result)
        return result

    op.__name__ = name
    return op
