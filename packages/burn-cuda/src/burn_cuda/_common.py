"""What CuPy primitives do differently from the shared bodies (`burn.backend.xp.tensor_common`):
uploads and downloads, devices, sums into an array by an atomic kernel, max/min values gathered
at their indices, and float16 sort keys. Each body is a plain function taking ``self`` that backs
the ``float_``, ``int_`` and ``bool_`` names (bound by the kind mixins, `burn_cuda.ops`);
`CommonOps` holds the hooks of the shared bodies. Primitives are CuPy arrays (0-d arrays, never
scalars), and may be views: they are never written to.
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

import cupy as cp
import numpy as np

from burn.backend.device import Device
from burn.backend.xp.tensor_common import XpTensorBase, check_scatter, linear_index
from burn.backend.xp.tensor_common import gather as shared_gather
from burn.errors import DTypeError
from burn.foundations.data import TensorData
from burn.foundations.dtype import DType
from burn_cuda import pinned
from burn_cuda._dtypes import BF16, DTYPE_OF, F32, FLOATS, I64, LOW, SUPPORTED, U64
from burn_cuda._runtime import device_id, on
from burn_cuda.kernels import index as k

Array = Any  # cupy.ndarray
F = TypeVar("F", bound=Callable[..., Any])


def placed(op: F) -> F:
    """The creation op `op` run with its ``device`` argument as CuPy's current device (CuPy
    allocates there); a DeviceError for a device that is not one of this backend's GPUs."""
    at = list(inspect.signature(op).parameters).index("device") - 1  # its place after ``self``

    @functools.wraps(op)
    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        with on(self, args[at] if len(args) > at else kwargs["device"]):
            return op(self, *args, **kwargs)

    return run  # type: ignore[return-value]


def into_data(self: Any, tensor: Array) -> TensorData:
    """Download to a C-contiguous host array (waits for the work that produces it)."""
    array = tensor.get(order="C")
    out = TensorData.__new__(TensorData)
    out.array = array
    out.dtype = DTYPE_OF[array.dtype]
    return out


def device(self: Any, tensor: Array) -> Device:
    return self._devices[tensor.device.id]  # type: ignore[no-any-return]


def to_device(self: Any, tensor: Array, device: Device) -> Array:
    target = device_id(device, len(self._devices))
    if tensor.device.id == target:
        return tensor
    with cp.cuda.Device(target):
        return tensor.copy()  # CuPy copies onto the current device (peer-to-peer where it can)


def along(index_shape: tuple[int, ...], shape: tuple[int, ...], dim: int) -> bool:
    """Whether an index of `index_shape` matches `shape` in every dim but `dim` (the one-kernel
    gather and scatter)."""
    return len(index_shape) == len(shape) and all(
        a == b for d, (a, b) in enumerate(zip(index_shape, shape, strict=True)) if d != dim
    )


def _bits(x: Any) -> Any:
    """A bfloat16 array (or host scalar) as the uint16 holding its bits."""
    if isinstance(x, cp.ndarray):
        return x.view(cp.uint16)
    return np.asarray(x, dtype=BF16).view(np.uint16)[()]


def gather(self: Any, dim: int, tensor: Array, indices: Array) -> Array:
    if tensor.dtype == BF16:  # a copy of bits: moved as uint16, so the kernel needs no bfloat16
        return gather(self, dim, tensor.view(cp.uint16), indices).view(BF16)
    if indices.size and tensor.shape[dim] and along(indices.shape, tensor.shape, dim):
        out = cp.empty(indices.shape, dtype=tensor.dtype)
        inner = math.prod(tensor.shape[dim + 1 :])
        k.gather_along(
            cp.ascontiguousarray(tensor), indices, tensor.shape[dim], indices.shape[dim], inner, out
        )
        return out
    return shared_gather(self, dim, tensor, indices)


def _scatter(tensor: Array, dim: int, indices: Array, values: Array) -> Array:
    """`tensor` plus `values` summed at `indices` along `dim` (indices/values of one shape)."""
    dtype = tensor.dtype
    if dtype in FLOATS:
        work = F32 if dtype in LOW else dtype
        out = tensor.astype(work, order="C", copy=True)
        add = values.astype(work)
    else:  # ints: two's complement adds in 64 bits, wrapped to the type by the final cast
        out = tensor.astype(I64, order="C", copy=True).view(U64)
        add = values.astype(I64).view(U64)
    if indices.size and along(indices.shape, tensor.shape, dim):
        inner = math.prod(tensor.shape[dim + 1 :])
        k.scatter_add_along(add, indices, tensor.shape[dim], indices.shape[dim], inner, out.reshape(-1))
    elif indices.size:
        positions = linear_index(cp, indices, dim, tensor.shape, I64)
        k.scatter_add(positions, add, indices.astype(I64), tensor.shape[dim], out.reshape(-1))
    if dtype not in FLOATS:
        out = out.view(I64)
    return out.astype(dtype, copy=False)


def scatter_add(self: Any, dim: int, tensor: Array, indices: Array, values: Array) -> Array:
    check_scatter("scatter_add", indices, values, tensor.shape)
    return _scatter(tensor, dim, indices, values)


def select_add(self: Any, tensor: Array, dim: int, indices: Array, values: Array) -> Array:
    # Row `indices[i]` of `dim` gets row `i` of `values`: a scatter with the index broadcast.
    values = cp.broadcast_to(values, tensor.shape[:dim] + (indices.shape[0],) + tensor.shape[dim + 1 :])
    index_shape = (1,) * dim + (-1,) + (1,) * (tensor.ndim - dim - 1)
    full = cp.broadcast_to(indices.reshape(index_shape), values.shape)
    return _scatter(tensor, dim, full, values)


def max_dim_with_indices(self: Any, tensor: Array, dim: int) -> tuple[Array, Array]:
    indices = tensor.argmax(axis=dim, keepdims=True).astype(self._int_np, copy=False)
    return gather(self, dim, tensor, indices), indices


def min_dim_with_indices(self: Any, tensor: Array, dim: int) -> tuple[Array, Array]:
    indices = tensor.argmin(axis=dim, keepdims=True).astype(self._int_np, copy=False)
    return gather(self, dim, tensor, indices), indices


class CommonOps(XpTensorBase):
    """CuPy's own hooks of the shared bodies; before the shared kind mixins in the MRO."""

    _devices: list[Device]

    # float16 and bfloat16 sort by float32 keys (exact: the same order).
    _sort_as_f32: ClassVar[frozenset[np.dtype]] = LOW

    def _where(self, mask: Array, a: Array, b: Array) -> Array:
        # CuPy 14's where has no bfloat16 loop (it would widen to float32): select the bits.
        if getattr(a, "dtype", None) == BF16 and getattr(b, "dtype", None) == BF16:
            return cp.where(mask, _bits(a), _bits(b)).view(BF16)
        return cp.where(mask, a, b)

    def _from_data(self, op: str, data: TensorData, accepts: frozenset[DType], device: Device) -> Array:
        """Upload `data` to `device` (one host-to-device copy)."""
        if data.dtype not in accepts or data.dtype not in SUPPORTED:
            raise DTypeError(f"{op}: got {data.dtype.value} data, which is not of this kind (or not on cuda)")
        # asynchronous when the data lies in a pinned host buffer (`burn_cuda.pinned`)
        return pinned.upload(data.array, device_id(device, len(self._devices)))
