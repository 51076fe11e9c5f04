"""`ParamId` and `Param`: a tensor with a stable identity, a require-grad flag and lazy init."""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from burn.foundations.dtype import DType
from burn.foundations.kind import Float, Kind
from burn.tensor._base import wrap

if TYPE_CHECKING:
    from burn.backend.device import Device
    from burn.tensor.tensor import Tensor


class ParamId:
    """A stable, random 64-bit parameter identity, saved as a string (16 hex digits).

    Optimizer state and records are keyed by it, so it survives `map`, `valid`, `to_device`,
    saving and loading.

    Example:
        >>> pid = ParamId.new()
        >>> ParamId.parse(str(pid)) == pid
        True
    """

    __slots__ = ("value",)

    def __init__(self, value: int) -> None:
        if not 0 <= value < 1 << 64:
            raise ValueError(f"ParamId must fit in 64 bits, got {value}")
        self.value = value

    @classmethod
    def new(cls) -> ParamId:
        return cls(secrets.randbits(64))

    @classmethod
    def parse(cls, text: str) -> ParamId:
        """Inverse of `str(param_id)`; raises ValueError naming the bad text."""
        try:
            return cls(int(text, 16))
        except (TypeError, ValueError):
            raise ValueError(f"invalid ParamId {text!r}: expected up to 16 hex digits") from None

    def __str__(self) -> str:
        return f"{self.value:016x}"

    def __repr__(self) -> str:
        return f"ParamId({self})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ParamId) and other.value == self.value

    def __hash__(self) -> int:
        return hash(self.value)


Initializer = Callable[["Device", bool], "Tensor"]


class _LazyInit:
    """The initializer of a lazy param, shared by every param derived from it (same ParamId:
    `to_device`, `set_require_grad`, `map`, `valid`...), so they all get the same values whichever
    is used first: the first use runs `init` on its own device, once; the others move that tensor
    to theirs. Without this, two copies of one param would draw two different random tensors."""

    __slots__ = ("init", "shape", "lock", "base")

    def __init__(self, init: Initializer, shape: tuple[int, ...]) -> None:
        self.init = init
        self.shape = shape
        self.lock = threading.Lock()
        self.base: Tensor | None = None

    def realize(self, device: Device, require_grad: bool, param_id: ParamId) -> Tensor:
        with self.lock:
            base = self.base
            if base is None:
                base = self.init(device, require_grad)
                if tuple(base.shape) != self.shape:
                    raise ValueError(
                        f"param {param_id}: initializer returned shape {tuple(base.shape)}, "
                        f"declared {self.shape}"
                    )
                self.base = base
        return _move(base, device)


class Param:
    """A module parameter: a tensor with a `ParamId` and whether it requires a gradient.

    A Param is a value: `map`, `set_require_grad` and friends return new Params with the same id.
    On an autodiff backend a float param that requires grad hands out its tensor as a graph leaf.

    Lazy params (`Param.uninitialized`) know their shape and device before their initializer runs;
    it runs once, on the first `val()`. A module built only to load weights never runs it. Params
    derived from a lazy one (``to_device``, ``no_grad``, ``map``...) stay lazy and share its
    initializer: whichever is used first initializes, and all of them see the same values.

    Example:
        >>> import burn
        >>> B = burn.backend("ndarray")
        >>> p = Param.from_tensor(burn.Tensor.ones((2, 3), backend=B))
        >>> p.shape, p.val().sum().item()
        ((2, 3), 6.0)
    """

    __slots__ = ("id", "_value", "_lazy", "_fn", "_shape", "_device", "_kind", "_require_grad")

    id: ParamId

    def __init__(
        self,
        id: ParamId,
        value: Tensor | None,
        require_grad: bool,
        *,
        init: Initializer | None = None,
        shape: Sequence[int] | None = None,
        device: Device | None = None,
        kind: Kind = Float,
    ) -> None:
        if value is None and init is None:
            raise ValueError("Param needs a tensor or an initializer")
        if value is not None and value.kind is not Float:
            require_grad = False
        self.id = id
        self._value = _leaf(value, require_grad) if value is not None else None
        self._shape = tuple(value.shape) if value is not None else tuple(shape or ())
        self._lazy = _LazyInit(init, self._shape) if value is None and init is not None else None
        self._fn: Callable[[Tensor], Tensor] | None = None
        self._device = value.device if value is not None else device
        self._kind = value.kind if value is not None else kind
        self._require_grad = require_grad

    # -- construction -------------------------------------------------------------------------
    @classmethod
    def from_tensor(cls, tensor: Tensor, *, id: ParamId | None = None, require_grad: bool = True) -> Param:
        """A param holding `tensor`. Int and Bool tensors never require grad."""
        return cls(id or ParamId.new(), tensor, require_grad)

    @classmethod
    def uninitialized(
        cls,
        init: Initializer,
        shape: Sequence[int],
        device: Device,
        *,
        require_grad: bool = True,
        id: ParamId | None = None,
        kind: Kind = Float,
    ) -> Param:
        """A lazy param: ``init(device, require_grad)`` runs on the first `val()`."""
        return cls(id or ParamId.new(), None, require_grad, init=init, shape=shape, device=device, kind=kind)

    def _derived(
        self,
        *,
        device: Device | None = None,
        require_grad: bool | None = None,
        fn: Callable[[Tensor], Tensor] | None = None,
    ) -> Param:
        """A lazy param sharing this one's initializer (same id), on `device` / with the flag."""
        out = Param.__new__(Param)
        out.id = self.id
        out._value = None
        out._lazy = self._lazy
        prev = self._fn
        out._fn = fn if prev is None else (prev if fn is None else (lambda t: fn(prev(t))))
        out._shape = self._shape
        out._device = self._device if device is None else device
        out._kind = self._kind
        out._require_grad = self._require_grad if require_grad is None else require_grad
        return out

    # -- access -------------------------------------------------------------------------------
    def val(self) -> Tensor:
        """The tensor, initializing a lazy param first (once, thread-safely)."""
        value = self._value
        if value is not None:
            return value
        lazy = self._lazy
        assert lazy is not None
        tensor = lazy.realize(self._device, self._require_grad, self.id)  # type: ignore[arg-type]
        if self._fn is not None:
            tensor = self._fn(tensor)
        value = _leaf(tensor, self._require_grad)
        # Another thread may have realized this same Param meanwhile: keep the first value.
        with lazy.lock:
            if self._value is None:
                self._value = value
                self._lazy = None
                self._fn = None
        return self._value

    @property
    def is_initialized(self) -> bool:
        return self._value is not None

    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    @property
    def device(self) -> Device:
        return self._device  # type: ignore[return-value]

    @property
    def kind(self) -> Kind:
        return self._kind

    @property
    def dtype(self) -> DType:
        """The element type (initializes a lazy param)."""
        return self.val().dtype

    @property
    def require_grad(self) -> bool:
        return self._require_grad

    def is_require_grad(self) -> bool:
        return self._require_grad

    def num_elements(self) -> int:
        n = 1
        for d in self._shape:
            n *= d
        return n

    # -- functional updates (same id) ---------------------------------------------------------
    def with_value(self, tensor: Tensor) -> Param:
        """A param with the same id and flag holding `tensor` (how optimizers and loaders update)."""
        return Param(self.id, tensor, self._require_grad)

    def stepped(self, tensor: Tensor) -> Param:
        """`with_value` for an update of this param's own value (an optimizer step): `tensor` has
        its shape, device and kind, so nothing is looked up again (a few microseconds per param
        and step, which add up on models with many small params)."""
        out = Param.__new__(Param)
        out.id = self.id
        out._value = _leaf(tensor, self._require_grad)
        out._lazy = None
        out._fn = None
        out._shape = self._shape
        out._device = self._device
        out._kind = self._kind
        out._require_grad = self._require_grad
        return out

    def map(self, fn: Callable[[Tensor], Tensor]) -> Param:
        """Apply `fn` to the tensor; a lazy param stays lazy (the map runs after its init)."""
        if self._value is not None:
            return self.with_value(fn(self._value))
        return self._derived(fn=fn)

    def set_require_grad(self, require_grad: bool) -> Param:
        """The same param with the flag changed (a new graph leaf on autodiff backends)."""
        if self._value is None:
            return self._derived(require_grad=require_grad)
        return Param(self.id, self._value.detach(), require_grad)

    def no_grad(self) -> Param:
        return self.set_require_grad(False)

    def to_device(self, device: Device) -> Param:
        """The param on `device`; a lazy param stays lazy and initializes directly there when it
        is the first of its copies to be used."""
        if self._value is None:
            return self._derived(device=device)
        return Param(self.id, self._value.detach().to_device(device), self._require_grad)

    def __repr__(self) -> str:
        state = "" if self.is_initialized else ", lazy"
        grad = "" if self._require_grad else ", no grad"
        return f"Param(id={self.id}, shape={list(self._shape)}{grad}{state})"


def _move(tensor: Tensor, device: Device) -> Tensor:
    """`tensor` on `device`, which may belong to the tensor's autodiff decorator or inner backend
    (lazy params shared between a model and its `valid()` copy)."""
    owner = device.owner
    backend = tensor.backend
    if owner is None or owner is backend:
        return tensor if tensor.device == device else tensor.to_device(device)
    if backend.ad_enabled and backend.inner is owner:
        inner = tensor.detach().inner()
        return inner if inner.device == device else inner.to_device(device)
    if owner.ad_enabled and owner.inner is backend:
        from burn.tensor.tensor import Tensor

        return Tensor.from_inner(tensor.to_device(device.with_owner(backend)), backend=owner)
    from burn.tensor.tensor import Tensor

    return Tensor.from_data(tensor.to_data(), device=device, dtype=tensor.dtype)


def _leaf(tensor: Tensor, require_grad: bool) -> Tensor:
    """A float tensor on an autodiff backend becomes a leaf that requires grad (or not)."""
    # On primitives: it runs for every param of every optimizer step.
    b = tensor._b
    if tensor._k is not Float or not b.ad_enabled:
        return tensor
    p = b.float_detach(tensor._p)
    if require_grad:
        return wrap(b.float_set_require_grad(p, True), b, Float)
    return tensor if p is tensor._p else wrap(p, b, Float)
