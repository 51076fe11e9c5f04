"""`ParamId` and `Param`: a tensor with a stable identity, a require-grad flag and lazy init."""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from burn.tensor.dtype import DType
from burn.tensor.kind import Float, Kind

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


class Param:
    """A module parameter: a tensor with a `ParamId` and whether it requires a gradient.

    A Param is a value: `map`, `set_require_grad` and friends return new Params with the same id.
    On an autodiff backend a float param that requires grad hands out its tensor as a graph leaf.

    Lazy params (`Param.uninitialized`) know their shape and device before their initializer runs;
    it runs once, on the first `val()`. A module built only to load weights never runs it.

    Example:
        >>> import burn
        >>> B = burn.backend("ndarray")
        >>> p = Param.from_tensor(burn.Tensor.ones((2, 3), backend=B))
        >>> p.shape, p.val().sum().item()
        ((2, 3), 6.0)
    """

    __slots__ = ("id", "_value", "_init", "_shape", "_device", "_kind", "_require_grad", "_lock")

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
        self._init = init if value is None else None
        self._shape = tuple(value.shape) if value is not None else tuple(shape or ())
        self._device = value.device if value is not None else device
        self._kind = value.kind if value is not None else kind
        self._require_grad = require_grad
        self._lock = threading.Lock() if value is None else None

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

    # -- access -------------------------------------------------------------------------------
    def val(self) -> Tensor:
        """The tensor, initializing a lazy param first (once, thread-safely)."""
        value = self._value
        if value is not None:
            return value
        assert self._lock is not None and self._init is not None
        with self._lock:
            if self._value is None:
                tensor = self._init(self._device, self._require_grad)  # type: ignore[arg-type]
                if tuple(tensor.shape) != self._shape:
                    raise ValueError(
                        f"param {self.id}: initializer returned shape {tuple(tensor.shape)}, "
                        f"declared {self._shape}"
                    )
                self._value = _leaf(tensor, self._require_grad)
                self._init = None
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

    def map(self, fn: Callable[[Tensor], Tensor]) -> Param:
        """Apply `fn` to the tensor; a lazy param stays lazy (the map runs after its init)."""
        if self._value is not None:
            return self.with_value(fn(self._value))
        init = self._init
        assert init is not None
        return Param(
            self.id, None, self._require_grad, init=lambda d, g: fn(init(d, g)),
            shape=self._shape, device=self._device, kind=self._kind,
        )

    def set_require_grad(self, require_grad: bool) -> Param:
        """The same param with the flag changed (a new graph leaf on autodiff backends)."""
        if self._value is None:
            return Param(
                self.id, None, require_grad, init=self._init, shape=self._shape,
                device=self._device, kind=self._kind,
            )
        return Param(self.id, self._value.detach(), require_grad)

    def no_grad(self) -> Param:
        return self.set_require_grad(False)

    def to_device(self, device: Device) -> Param:
        """The param on `device`; a lazy param is initialized directly there."""
        if self._value is None:
            return Param(
                self.id, None, self._require_grad, init=self._init, shape=self._shape,
                device=device, kind=self._kind,
            )
        return Param(self.id, self._value.detach().to_device(device), self._require_grad)

    def __repr__(self) -> str:
        state = "" if self.is_initialized else ", lazy"
        grad = "" if self._require_grad else ", no grad"
        return f"Param(id={self.id}, shape={list(self._shape)}{grad}{state})"


def _leaf(tensor: Tensor, require_grad: bool) -> Tensor:
    """A float tensor on an autodiff backend becomes a leaf that requires grad (or not)."""
    if tensor.kind is not Float or not tensor.backend.ad_enabled:
        return tensor
    if require_grad:
        return tensor.detach().require_grad()
    return tensor.detach() if tensor.is_require_grad() else tensor
