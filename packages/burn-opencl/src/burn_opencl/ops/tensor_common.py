"""Tensor ops that behave the same for every kind (float, int, bool) on `CLTensor` primitives: one
kernel serves every dtype. Each is a plain function taking ``self`` so that one body backs the
``float_``, ``int_`` and ``bool_`` methods (as `burn.backend.xp.tensor_common` does for the array
backends); the family mixins bind them under their names.

Also what those mixins read from the backend (`OpenCLTensorBase`), the flat view the full reductions
take and the matrix product in the wider dtype.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from burn.errors import DTypeError
from burn.foundations.dtype import DType
from burn_opencl import layout
from burn_opencl.dtypes import wider
from burn_opencl.kernels import elementwise as ew
from burn_opencl.kernels import index as ix
from burn_opencl.kernels import matmul as mm
from burn_opencl.kernels import reduce as rd
from burn_opencl.kernels import sort as srt
from burn_opencl.tensor import CLTensor

if TYPE_CHECKING:
    from burn.backend.device import Device
    from burn.foundations.data import TensorData
    from burn_opencl.runtime import Runtime

P = CLTensor
Shape = tuple[int, ...]
_run = ew.run
_BOOL = DType.BOOL
_OPS = ew.OPS


class OpenCLTensorBase:
    """What the float, int and bool ops read from `burn_opencl.OpenCL`, and the casts' dtype check."""

    int_dtype: DType
    capabilities: Any
    _devices: list[Device]

    def _rt(self, device: Device) -> Runtime:  # provided by the backend
        raise NotImplementedError

    def _next_counter(self, n: int) -> tuple[int, int]:  # provided by the backend
        raise NotImplementedError

    def _check_dtype(self, op: str, dtype: DType, kind: str) -> None:
        ok = dtype.is_float if kind == "float" else dtype.is_int
        if not ok or dtype not in self.capabilities.dtypes:
            raise DTypeError(f"{op}: {dtype.value} is not a {kind} dtype this backend supports")


def flat(t: CLTensor) -> CLTensor:
    return layout.reshape(t, (t.n,)) if t.shape != () else layout.reshape(t, (1,))


def matmul(a: P, b: P) -> P:
    """Matrix product in the wider dtype (float16 computed in float32)."""
    out = wider(a.dtype, b.dtype)
    compute = DType.F32 if out is DType.F16 else out
    return layout.cast(mm.matmul(layout.cast(a, compute), layout.cast(b, compute), compute), out)


# -- host exchange & metadata -------------------------------------------------------------------
def into_data(self: Any, tensor: P) -> TensorData:
    return layout.into_data(tensor)


def device(self: Any, tensor: P) -> Device:
    # The runtime is shared by every OpenCL backend; the device handed out is this backend's.
    return self._devices[tensor.rt.device.id]


def to_device(self: Any, tensor: P, device: Device) -> P:
    return layout.to_device(tensor, self._rt(device))


def shape(self: Any, tensor: P) -> Shape:
    return tensor.shape


def get_dtype(self: Any, tensor: P) -> DType:
    return tensor.dtype


# -- comparisons (float and int share the kernels) ------------------------------------------------
def equal(self: Any, lhs: P, rhs: P) -> P:
    return _run(_OPS["float_equal"], (lhs, rhs), _BOOL)


def not_equal(self: Any, lhs: P, rhs: P) -> P:
    return _run(_OPS["float_not_equal"], (lhs, rhs), _BOOL)


def greater(self: Any, lhs: P, rhs: P) -> P:
    return _run(_OPS["float_greater"], (lhs, rhs), _BOOL)


def greater_equal(self: Any, lhs: P, rhs: P) -> P:
    return _run(_OPS["float_greater_equal"], (lhs, rhs), _BOOL)


def lower(self: Any, lhs: P, rhs: P) -> P:
    return _run(_OPS["float_lower"], (lhs, rhs), _BOOL)


def lower_equal(self: Any, lhs: P, rhs: P) -> P:
    return _run(_OPS["float_lower_equal"], (lhs, rhs), _BOOL)


# -- reductions -----------------------------------------------------------------------------------
def sum_dim(self: Any, tensor: P, dim: int) -> P:
    return rd.reduce_dim("sum", tensor, dim)[0]


def prod_dim(self: Any, tensor: P, dim: int) -> P:
    return rd.reduce_dim("prod", tensor, dim)[0]


def max_dim(self: Any, tensor: P, dim: int) -> P:
    return rd.reduce_dim("max", tensor, dim)[0]


def min_dim(self: Any, tensor: P, dim: int) -> P:
    return rd.reduce_dim("min", tensor, dim)[0]


def argmax(self: Any, tensor: P, dim: int) -> P:
    return rd.reduce_dim("argmax", tensor, dim, self.int_dtype)[0]


def argmin(self: Any, tensor: P, dim: int) -> P:
    return rd.reduce_dim("argmin", tensor, dim, self.int_dtype)[0]


def max_dim_with_indices(self: Any, tensor: P, dim: int) -> tuple[P, P]:
    return rd.reduce_dim("max", tensor, dim, None, self.int_dtype)  # type: ignore[return-value]


def min_dim_with_indices(self: Any, tensor: P, dim: int) -> tuple[P, P]:
    return rd.reduce_dim("min", tensor, dim, None, self.int_dtype)  # type: ignore[return-value]


def sum_(self: Any, tensor: P) -> P:
    return rd.reduce_dim("sum", flat(tensor), 0)[0]


def prod(self: Any, tensor: P) -> P:
    return rd.reduce_dim("prod", flat(tensor), 0)[0]


def max_(self: Any, tensor: P) -> P:
    return rd.reduce_dim("max", flat(tensor), 0)[0]


def min_(self: Any, tensor: P) -> P:
    return rd.reduce_dim("min", flat(tensor), 0)[0]


def cumsum(self: Any, tensor: P, dim: int) -> P:
    return rd.cumsum(tensor, dim)


# -- layout ---------------------------------------------------------------------------------------
def reshape(self: Any, tensor: P, shape: Shape) -> P:
    return layout.reshape(tensor, shape)


def permute(self: Any, tensor: P, axes: Shape) -> P:
    return layout.permute(tensor, axes)


def flip(self: Any, tensor: P, axes: Shape) -> P:
    return layout.flip(tensor, axes)


def expand(self: Any, tensor: P, shape: Shape) -> P:
    return layout.expand(tensor, shape)


def slice_(self: Any, tensor: P, slices: tuple[slice, ...]) -> P:
    return layout.slice_(tensor, slices)


def slice_assign(self: Any, tensor: P, slices: tuple[slice, ...], value: P) -> P:
    return layout.slice_assign(tensor, slices, value)


def cat(self: Any, tensors: Sequence[P], dim: int) -> P:
    return layout.cat(tensors, dim)


def swap_dims(self: Any, tensor: P, dim1: int, dim2: int) -> P:
    axes = list(range(len(tensor.shape)))
    axes[dim1], axes[dim2] = axes[dim2], axes[dim1]
    return layout.permute(tensor, axes)


def repeat_dim(self: Any, tensor: P, dim: int, times: int) -> P:
    return layout.repeat_dim(tensor, dim, times)


# -- indexing -------------------------------------------------------------------------------------
def gather(self: Any, dim: int, tensor: P, indices: P) -> P:
    return ix.gather(dim, tensor, indices)


def scatter_add(self: Any, dim: int, tensor: P, indices: P, values: P) -> P:
    return ix.scatter_add(dim, tensor, indices, values)


def select(self: Any, tensor: P, dim: int, indices: P) -> P:
    return ix.select(tensor, dim, indices)


def select_add(self: Any, tensor: P, dim: int, indices: P, values: P) -> P:
    return ix.select_add(tensor, dim, indices, values)


def mask_where(self: Any, tensor: P, mask: P, value: P) -> P:
    return _run(ew.MASK_WHERE, (tensor, mask, value), tensor.dtype)


# -- sorting --------------------------------------------------------------------------------------
def sort_with_indices(self: Any, tensor: P, dim: int, descending: bool) -> tuple[P, P]:
    return srt.sort_with_indices(tensor, dim, descending, self.int_dtype)


def sort(self: Any, tensor: P, dim: int, descending: bool) -> P:
    return srt.sort_with_indices(tensor, dim, descending, self.int_dtype)[0]


def argsort(self: Any, tensor: P, dim: int, descending: bool) -> P:
    return srt.sort_with_indices(tensor, dim, descending, self.int_dtype)[1]
