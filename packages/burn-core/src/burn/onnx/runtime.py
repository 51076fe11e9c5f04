"""What the op implementations share: the `Ctx` of a run (backend, device, float dtype, the
cache of constants already on the device) and the helpers that move values between the host
and tensors.

A value of the graph is either a `burn.Tensor` or a NumPy array on the host. Host arrays are
what shape computations produce (``Shape``, ``Gather`` of a shape, ``Concat`` of shapes...):
they stay on the host, with their ONNX element type, so that a ``Reshape`` target is a tuple of
Python ints without any device round trip. An op whose inputs are all on the host and which
has a host implementation runs in NumPy (at load time this is the constant folding); any other
op gets its host inputs as tensors.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from burn.foundations.kind import Bool, Float, Int, Kind
from burn.onnx.errors import OnnxError
from burn.tensor._base import TensorBase

if TYPE_CHECKING:
    from burn.backend.base import Backend
    from burn.backend.device import Device
    from burn.foundations.dtype import DType
    from burn.onnx.graph import Body, Node
    from burn.tensor.tensor import Tensor

Value = Any  # a burn.Tensor, a NumPy array, or None for an omitted optional input (the ops check)


def is_tensor(value: Value) -> bool:
    return isinstance(value, TensorBase)


def kind_of_numpy(array: np.ndarray) -> Kind:
    from burn.onnx.narrow_dtypes import is_narrow, is_narrow_integer

    if array.dtype == np.bool_:
        return Bool
    if np.issubdtype(array.dtype, np.integer) or is_narrow(array.dtype) and is_narrow_integer(array.dtype):
        return Int
    return Float


class Ctx:
    """One run of a graph: where tensors go, in which float dtype, and the device copies of the
    constants (kept per model and backend, so a constant crosses to the device once)."""

    def __init__(
        self,
        backend: Backend,
        device: Device,
        float_dtype: DType,
        cache: dict[Any, Any] | None = None,
        constants: dict[str, np.ndarray] | None = None,
    ) -> None:
        self.backend = backend
        self.device = device
        self.float_dtype = float_dtype
        self.cache = cache if cache is not None else {}
        # The graph's constants by identity: their device copies are cached.
        self.constant_ids = frozenset(id(v) for v in (constants or {}).values())
        # The values of the graph being run (a subgraph sees them), and how to run a subgraph
        # (`OnnxModel` sets both: the control-flow ops use them).
        self.scope: dict[str, Any] = {}
        self.run_body: Callable[[Body, Mapping[str, Any]], list[Any]] | None = None

    # -- host -> tensor ---------------------------------------------------------------------------
    def tensor(self, value: Value, kind: Kind | None = None) -> Tensor:
        """`value` as a tensor of this run's backend (host arrays are converted: floats to the
        run's float dtype, integers to Int, booleans to Bool; `kind` forces one). The device
        copies of the graph's constants are cached."""
        if isinstance(value, TensorBase):  # the common case first: no import on this path
            if kind is None or value._k is kind:
                return value  # type: ignore[return-value]
            return self.convert(value, kind)  # type: ignore[arg-type]
        from burn.onnx.narrow_dtypes import is_narrow, widen
        from burn.tensor.tensor import Tensor

        array = np.asarray(value)
        k = kind if kind is not None else kind_of_numpy(array)
        if is_narrow(array.dtype):
            array = widen(array)  # float8, int4...: exact in float32 / int64
        key = None
        if id(value) in self.constant_ids:
            key = (id(self.backend), self.device, self.float_dtype, id(value), k)
            hit = self.cache.get(key)
            if hit is not None and hit[0] is self.backend and hit[1] is value:
                return hit[2]  # type: ignore[no-any-return]
        if k is Float:
            t = Tensor.from_data(array, self.device, dtype=self.float_dtype, backend=self.backend)
        elif k is Int:
            t = Tensor.from_data(array.astype(np.int64), self.device, kind=Int, backend=self.backend)
        else:
            t = Tensor.from_data(array.astype(np.bool_), self.device, kind=Bool, backend=self.backend)
        if key is not None:
            self.cache[key] = (self.backend, value, t)  # both held: their ids cannot be reused
        return t

    def convert(self, t: Tensor, kind: Kind) -> Tensor:
        """`t` as `kind` (Float in the run's float dtype)."""
        if kind is Float:
            return t.cast(self.float_dtype) if t.kind is Float else t.float().cast(self.float_dtype)
        if kind is Int:
            return t.int()
        return t.bool()

    # -- tensor -> host ---------------------------------------------------------------------------
    @staticmethod
    def host(value: Value) -> np.ndarray:
        """`value` on the host (a tensor is read back: a device sync)."""
        if is_tensor(value):
            return np.asarray(value.to_numpy())
        return np.asarray(value)


def ints(value: Value) -> list[int]:
    """The values of a 0-D or 1-D integer input as Python ints."""
    return [int(v) for v in Ctx.host(value).reshape(-1)]


def scalar(value: Value) -> float | int | bool:
    """The single element of a host array as a Python number."""
    item = np.asarray(value).reshape(-1)[0].item()
    return item  # type: ignore[no-any-return]


def is_host_scalar(value: Value, rank: int) -> bool:
    """A host array of one element that does not raise the rank of a rank-`rank` operand."""
    return not is_tensor(value) and np.size(value) == 1 and np.ndim(value) <= rank


def align(a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    """Leading size-1 dims added to the lower-rank operand (NumPy broadcasting, made explicit)."""
    ra, rb = len(a.shape), len(b.shape)
    if ra < rb:
        a = a.reshape((1,) * (rb - ra) + tuple(a.shape))
    elif rb < ra:
        b = b.reshape((1,) * (ra - rb) + tuple(b.shape))
    return a, b


def broadcast_all(tensors: Sequence[Tensor]) -> list[Tensor]:
    """The tensors expanded to their common broadcast shape."""
    shape = tuple(np.broadcast_shapes(*(tuple(t.shape) for t in tensors)))
    return [t if tuple(t.shape) == shape else t.expand(shape) for t in tensors]


def norm_axis(axis: int, rank: int, node: Node, what: str = "axis") -> int:
    if not -rank <= axis < max(rank, 1):
        raise OnnxError(f"node {node.name!r} ({node.op_type}): {what} {axis} is out of range for rank {rank}")
    return axis + rank if axis < 0 else axis


def attr_or_input(node: Node, inputs: Sequence[Value], index: int, attr: str) -> list[int] | None:
    """Ints from input `index` when present (newer opsets), else from attribute `attr`."""
    if len(inputs) > index and inputs[index] is not None:
        return ints(inputs[index])
    value = node.attr(attr)
    return None if value is None else [int(v) for v in value]
