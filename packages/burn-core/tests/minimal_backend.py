"""A backend written with NumPy that implements ONLY the required ops of the contract.

It proves the claim of the design: a third-party backend that implements the required set gets
every other op from burn-core's defaults and passes the conformance suite. It is deliberately
plain (no fast paths) and differs from burn-ndarray on purpose where that exercises the core:

- its primitive is a small wrapper object, not a NumPy array, so nothing in burn-core may treat
  primitives as arrays;
- it has two devices (``minimal:0`` and ``minimal:1``), so device moves and device mismatches are
  tested for real.

Use it directly (``Minimal()``) or by name once this module, a burn plugin, is registered::

    import burn, burn.plugins, minimal_backend
    burn.plugins.register(minimal_backend)
    B = burn.backend("minimal")

The conformance suite registers it with ``--burn-plugin minimal_backend`` (this directory on
``sys.path``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

import burn.plugins as bp
from burn.backend import Backend, Capabilities, Device
from burn.errors import DTypeError
from burn.foundations.data import TensorData
from burn.foundations.dtype import DType

Shape = tuple[int, ...]
Slices = tuple[slice, ...]

_DTYPES = frozenset({DType.F32, DType.F64, DType.I64, DType.BOOL})


class MinimalTensor:
    """The primitive: a NumPy array (never mutated after creation) and the device it lives on."""

    __slots__ = ("array", "device")

    def __init__(self, array: np.ndarray, device: Device) -> None:
        self.array = array
        self.device = device

    def __repr__(self) -> str:
        return f"MinimalTensor({self.device}, {self.array.dtype}, {self.array.shape})"


Prim = MinimalTensor  # short name for the op signatures


def _erf(x: np.ndarray) -> np.ndarray:
    """erf in float64 through `math.erf` (exact to rounding; slow, which is fine here)."""
    import math

    flat = np.fromiter((math.erf(v) for v in x.astype(np.float64).ravel()), np.float64, x.size)
    return flat.reshape(x.shape).astype(x.dtype)


def _stable_argsort(a: np.ndarray, dim: int, descending: bool) -> np.ndarray:
    """Stable argsort; descending keeps equal elements in their original order (and puts NaN
    first, the mirror image of NaN-last ascending)."""
    if not descending:
        return np.argsort(a, axis=dim, kind="stable")
    n = a.shape[dim]
    rev = np.flip(a, axis=dim)
    idx = np.flip(np.argsort(rev, axis=dim, kind="stable"), axis=dim)
    return (n - 1 - idx) if n else idx


def _scatter_add(dim: int, base: np.ndarray, indices: np.ndarray, values: np.ndarray) -> np.ndarray:
    out = base.copy()
    grid: list[Any] = list(np.indices(indices.shape, sparse=True))
    grid[dim] = indices
    np.add.at(out, tuple(grid), values.astype(out.dtype))
    return out


def _select_add(base: np.ndarray, dim: int, indices: np.ndarray, values: np.ndarray) -> np.ndarray:
    out = base.copy()
    index: Any = (slice(None),) * dim + (indices,)
    np.add.at(out, index, values.astype(out.dtype))
    return out


class Minimal(Backend):
    """A NumPy backend with only the required ops: float32/float64, int64, bool, two devices.

    Example:
        >>> B = Minimal()
        >>> [str(d) for d in B.devices()]
        ['minimal:0', 'minimal:1']
    """

    name = "minimal"

    def __init__(self, float_dtype: DType | str = DType.F32, int_dtype: DType | str = DType.I64) -> None:
        super().__init__(
            float_dtype=float_dtype,
            int_dtype=int_dtype,
            capabilities=Capabilities(dtypes=_DTYPES, features=frozenset({"multi_device"})),
        )
        self._devices = [Device("minimal", 0, owner=self), Device("minimal", 1, owner=self)]

    def devices(self) -> list[Device]:
        return list(self._devices)

    # -- helpers (not ops) --------------------------------------------------------------------
    def _check_dtype(self, op: str, dtype: DType) -> None:
        if dtype not in _DTYPES:
            raise DTypeError(f"{op}: backend 'minimal' does not support {dtype.value}")

    def _from_data(self, op: str, data: TensorData, device: Device) -> Prim:
        self._check_dtype(op, data.dtype)
        return MinimalTensor(np.array(data.array, copy=True), device)

    @staticmethod
    def _into_data(t: Prim) -> TensorData:
        return TensorData.from_numpy(np.array(t.array, copy=True))

    @staticmethod
    def _one_device(op: str, *tensors: Prim) -> None:
        # Like a real multi-device backend, never compute across devices: the Tensor layer turns
        # this failure into a DeviceError naming both devices.
        first = tensors[0].device
        for t in tensors[1:]:
            if t.device != first:
                raise ValueError(f"minimal: {op} got primitives on {first} and {t.device}")

    @staticmethod
    def _wrap(array: Any, like: Prim) -> Prim:
        return MinimalTensor(np.asarray(array), like.device)

    # == float ops ============================================================================
    def float_from_data(self, data: TensorData, device: Device) -> Prim:
        return self._from_data("float_from_data", data, device)

    def float_into_data(self, tensor: Prim) -> TensorData:
        return self._into_data(tensor)

    def float_device(self, tensor: Prim) -> Device:
        return tensor.device

    def float_to_device(self, tensor: Prim, device: Device) -> Prim:
        return MinimalTensor(tensor.array.copy(), device)

    def float_shape(self, tensor: Prim) -> Shape:
        return tuple(tensor.array.shape)

    def float_get_dtype(self, tensor: Prim) -> DType:
        return DType(tensor.array.dtype.name)

    def float_cast(self, tensor: Prim, dtype: DType) -> Prim:
        self._check_dtype("float_cast", dtype)
        return self._wrap(tensor.array.astype(dtype.numpy), tensor)

    def float_into_int(self, tensor: Prim, dtype: DType) -> Prim:
        self._check_dtype("float_into_int", dtype)
        return self._wrap(np.trunc(tensor.array).astype(dtype.numpy), tensor)

    def float_add(self, lhs: Prim, rhs: Prim) -> Prim:
        self._one_device("float_add", lhs, rhs)
        return self._wrap(lhs.array + rhs.array, lhs)

    def float_sub(self, lhs: Prim, rhs: Prim) -> Prim:
        self._one_device("float_sub", lhs, rhs)
        return self._wrap(lhs.array - rhs.array, lhs)

    def float_mul(self, lhs: Prim, rhs: Prim) -> Prim:
        self._one_device("float_mul", lhs, rhs)
        return self._wrap(lhs.array * rhs.array, lhs)

    def float_div(self, lhs: Prim, rhs: Prim) -> Prim:
        self._one_device("float_div", lhs, rhs)
        with np.errstate(divide="ignore", invalid="ignore"):
            return self._wrap(lhs.array / rhs.array, lhs)

    def float_remainder(self, lhs: Prim, rhs: Prim) -> Prim:
        self._one_device("float_remainder", lhs, rhs)
        with np.errstate(divide="ignore", invalid="ignore"):
            return self._wrap(np.remainder(lhs.array, rhs.array), lhs)

    def float_powf(self, lhs: Prim, rhs: Prim) -> Prim:
        self._one_device("float_powf", lhs, rhs)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return self._wrap(np.power(lhs.array, rhs.array), lhs)

    def float_matmul(self, lhs: Prim, rhs: Prim) -> Prim:
        self._one_device("float_matmul", lhs, rhs)
        return self._wrap(np.matmul(lhs.array, rhs.array), lhs)

    def _unary(self, fn: Any, tensor: Prim) -> Prim:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return self._wrap(fn(tensor.array).astype(tensor.array.dtype, copy=False), tensor)

    def float_exp(self, tensor: Prim) -> Prim:
        return self._unary(np.exp, tensor)

    def float_log(self, tensor: Prim) -> Prim:
        return self._unary(np.log, tensor)

    def float_sqrt(self, tensor: Prim) -> Prim:
        return self._unary(np.sqrt, tensor)

    def float_abs(self, tensor: Prim) -> Prim:
        return self._unary(np.abs, tensor)

    def float_sin(self, tensor: Prim) -> Prim:
        return self._unary(np.sin, tensor)

    def float_cos(self, tensor: Prim) -> Prim:
        return self._unary(np.cos, tensor)

    def float_tanh(self, tensor: Prim) -> Prim:
        return self._unary(np.tanh, tensor)

    def float_erf(self, tensor: Prim) -> Prim:
        return self._unary(_erf, tensor)

    def float_round(self, tensor: Prim) -> Prim:
        return self._unary(np.round, tensor)

    def float_floor(self, tensor: Prim) -> Prim:
        return self._unary(np.floor, tensor)

    def float_ceil(self, tensor: Prim) -> Prim:
        return self._unary(np.ceil, tensor)

    def float_equal(self, lhs: Prim, rhs: Prim) -> Prim:
        self._one_device("float_equal", lhs, rhs)
        return self._wrap(lhs.array == rhs.array, lhs)

    def float_greater(self, lhs: Prim, rhs: Prim) -> Prim:
        self._one_device("float_greater", lhs, rhs)
        return self._wrap(lhs.array > rhs.array, lhs)

    def float_greater_equal(self, lhs: Prim, rhs: Prim) -> Prim:
        self._one_device("float_greater_equal", lhs, rhs)
        return self._wrap(lhs.array >= rhs.array, lhs)

    def float_lower(self, lhs: Prim, rhs: Prim) -> Prim:
        self._one_device("float_lower", lhs, rhs)
        return self._wrap(lhs.array < rhs.array, lhs)

    def float_lower_equal(self, lhs: Prim, rhs: Prim) -> Prim:
        self._one_device("float_lower_equal", lhs, rhs)
        return self._wrap(lhs.array <= rhs.array, lhs)

    def float_sum_dim(self, tensor: Prim, dim: int) -> Prim:
        a = tensor.array
        return self._wrap(np.sum(a, axis=dim, keepdims=True, dtype=a.dtype), tensor)

    def float_prod_dim(self, tensor: Prim, dim: int) -> Prim:
        a = tensor.array
        return self._wrap(np.prod(a, axis=dim, keepdims=True, dtype=a.dtype), tensor)

    def float_argmax(self, tensor: Prim, dim: int) -> Prim:
        idx = np.argmax(tensor.array, axis=dim, keepdims=True)
        return self._wrap(idx.astype(self.int_dtype.numpy), tensor)

    def float_argmin(self, tensor: Prim, dim: int) -> Prim:
        idx = np.argmin(tensor.array, axis=dim, keepdims=True)
        return self._wrap(idx.astype(self.int_dtype.numpy), tensor)

    def float_cumsum(self, tensor: Prim, dim: int) -> Prim:
        a = tensor.array
        return self._wrap(np.cumsum(a, axis=dim, dtype=a.dtype), tensor)

    def float_reshape(self, tensor: Prim, shape: Shape) -> Prim:
        return self._wrap(tensor.array.reshape(shape), tensor)

    def float_permute(self, tensor: Prim, axes: Shape) -> Prim:
        return self._wrap(np.transpose(tensor.array, axes), tensor)

    def float_flip(self, tensor: Prim, axes: Shape) -> Prim:
        return self._wrap(np.flip(tensor.array, axis=tuple(axes)), tensor)

    def float_expand(self, tensor: Prim, shape: Shape) -> Prim:
        return self._wrap(np.broadcast_to(tensor.array, shape), tensor)

    def float_slice(self, tensor: Prim, slices: Slices) -> Prim:
        return self._wrap(tensor.array[tuple(slices)], tensor)

    def float_slice_assign(self, tensor: Prim, slices: Slices, value: Prim) -> Prim:
        self._one_device("float_slice_assign", tensor, value)
        out = tensor.array.copy()
        out[tuple(slices)] = value.array
        return self._wrap(out, tensor)

    def float_cat(self, tensors: Sequence[Prim], dim: int) -> Prim:
        self._one_device("float_cat", *tensors)
        return self._wrap(np.concatenate([t.array for t in tensors], axis=dim), tensors[0])

    def float_gather(self, dim: int, tensor: Prim, indices: Prim) -> Prim:
        self._one_device("float_gather", tensor, indices)
        return self._wrap(np.take_along_axis(tensor.array, indices.array, axis=dim), tensor)

    def float_scatter_add(self, dim: int, tensor: Prim, indices: Prim, values: Prim) -> Prim:
        self._one_device("float_scatter_add", tensor, indices, values)
        return self._wrap(_scatter_add(dim, tensor.array, indices.array, values.array), tensor)

    def float_select(self, tensor: Prim, dim: int, indices: Prim) -> Prim:
        self._one_device("float_select", tensor, indices)
        return self._wrap(np.take(tensor.array, indices.array, axis=dim), tensor)

    def float_select_add(self, tensor: Prim, dim: int, indices: Prim, values: Prim) -> Prim:
        self._one_device("float_select_add", tensor, indices, values)
        return self._wrap(_select_add(tensor.array, dim, indices.array, values.array), tensor)

    def float_mask_where(self, tensor: Prim, mask: Prim, value: Prim) -> Prim:
        self._one_device("float_mask_where", tensor, mask, value)
        return self._wrap(np.where(mask.array, value.array, tensor.array), tensor)

    def float_mask_fill(self, tensor: Prim, mask: Prim, value: float) -> Prim:
        self._one_device("float_mask_fill", tensor, mask)
        a = tensor.array
        return self._wrap(np.where(mask.array, a.dtype.type(value), a), tensor)

    def float_sort_with_indices(self, tensor: Prim, dim: int, descending: bool) -> tuple[Prim, Prim]:
        idx = _stable_argsort(tensor.array, dim, descending)
        values = np.take_along_axis(tensor.array, idx, axis=dim)
        return self._wrap(values, tensor), self._wrap(idx.astype(self.int_dtype.numpy), tensor)

    # == int ops ==============================================================================
    def int_from_data(self, data: TensorData, device: Device) -> Prim:
        return self._from_data("int_from_data", data, device)

    def int_into_data(self, tensor: Prim) -> TensorData:
        return self._into_data(tensor)

    def int_device(self, tensor: Prim) -> Device:
        return tensor.device

    def int_to_device(self, tensor: Prim, device: Device) -> Prim:
        return MinimalTensor(tensor.array.copy(), device)

    def int_shape(self, tensor: Prim) -> Shape:
        return tuple(tensor.array.shape)

    def int_get_dtype(self, tensor: Prim) -> DType:
        return DType(tensor.array.dtype.name)

    def int_cast(self, tensor: Prim, dtype: DType) -> Prim:
        self._check_dtype("int_cast", dtype)
        return self._wrap(tensor.array.astype(dtype.numpy), tensor)

    def int_into_float(self, tensor: Prim, dtype: DType) -> Prim:
        self._check_dtype("int_into_float", dtype)
        return self._wrap(tensor.array.astype(dtype.numpy), tensor)

    def int_add(self, lhs: Prim, rhs: Prim) -> Prim:
        self._one_device("int_add", lhs, rhs)
        return self._wrap(lhs.array + rhs.array, lhs)

    def int_sub(self, lhs: Prim, rhs: Prim) -> Prim:
        self._one_device("int_sub", lhs, rhs)
        return self._wrap(lhs.array - rhs.array, lhs)

    def int_mul(self, lhs: Prim, rhs: Prim) -> Prim:
        self._one_device("int_mul", lhs, rhs)
        return self._wrap(lhs.array * rhs.array, lhs)

    def int_div(self, lhs: Prim, rhs: Prim) -> Prim:
        self._one_device("int_div", lhs, rhs)
        # NumPy's integer floor_divide already gives 0 for a zero divisor (with a warning).
        with np.errstate(divide="ignore"):
            return self._wrap(np.floor_divide(lhs.array, rhs.array), lhs)

    def int_remainder(self, lhs: Prim, rhs: Prim) -> Prim:
        self._one_device("int_remainder", lhs, rhs)
        with np.errstate(divide="ignore"):
            return self._wrap(np.remainder(lhs.array, rhs.array), lhs)

    def int_abs(self, tensor: Prim) -> Prim:
        return self._wrap(np.abs(tensor.array), tensor)

    def int_equal(self, lhs: Prim, rhs: Prim) -> Prim:
        self._one_device("int_equal", lhs, rhs)
        return self._wrap(lhs.array == rhs.array, lhs)

    def int_greater(self, lhs: Prim, rhs: Prim) -> Prim:
        self._one_device("int_greater", lhs, rhs)
        return self._wrap(lhs.array > rhs.array, lhs)

    def int_greater_equal(self, lhs: Prim, rhs: Prim) -> Prim:
        self._one_device("int_greater_equal", lhs, rhs)
        return self._wrap(lhs.array >= rhs.array, lhs)

    def int_lower(self, lhs: Prim, rhs: Prim) -> Prim:
        self._one_device("int_lower", lhs, rhs)
        return self._wrap(lhs.array < rhs.array, lhs)

    def int_lower_equal(self, lhs: Prim, rhs: Prim) -> Prim:
        self._one_device("int_lower_equal", lhs, rhs)
        return self._wrap(lhs.array <= rhs.array, lhs)

    def int_sum_dim(self, tensor: Prim, dim: int) -> Prim:
        a = tensor.array
        return self._wrap(np.sum(a, axis=dim, keepdims=True, dtype=a.dtype), tensor)

    def int_prod_dim(self, tensor: Prim, dim: int) -> Prim:
        a = tensor.array
        return self._wrap(np.prod(a, axis=dim, keepdims=True, dtype=a.dtype), tensor)

    def int_argmax(self, tensor: Prim, dim: int) -> Prim:
        idx = np.argmax(tensor.array, axis=dim, keepdims=True)
        return self._wrap(idx.astype(self.int_dtype.numpy), tensor)

    def int_argmin(self, tensor: Prim, dim: int) -> Prim:
        idx = np.argmin(tensor.array, axis=dim, keepdims=True)
        return self._wrap(idx.astype(self.int_dtype.numpy), tensor)

    def int_cumsum(self, tensor: Prim, dim: int) -> Prim:
        a = tensor.array
        return self._wrap(np.cumsum(a, axis=dim, dtype=a.dtype), tensor)

    def int_reshape(self, tensor: Prim, shape: Shape) -> Prim:
        return self._wrap(tensor.array.reshape(shape), tensor)

    def int_permute(self, tensor: Prim, axes: Shape) -> Prim:
        return self._wrap(np.transpose(tensor.array, axes), tensor)

    def int_flip(self, tensor: Prim, axes: Shape) -> Prim:
        return self._wrap(np.flip(tensor.array, axis=tuple(axes)), tensor)

    def int_expand(self, tensor: Prim, shape: Shape) -> Prim:
        return self._wrap(np.broadcast_to(tensor.array, shape), tensor)

    def int_slice(self, tensor: Prim, slices: Slices) -> Prim:
        return self._wrap(tensor.array[tuple(slices)], tensor)

    def int_slice_assign(self, tensor: Prim, slices: Slices, value: Prim) -> Prim:
        self._one_device("int_slice_assign", tensor, value)
        out = tensor.array.copy()
        out[tuple(slices)] = value.array
        return self._wrap(out, tensor)

    def int_cat(self, tensors: Sequence[Prim], dim: int) -> Prim:
        self._one_device("int_cat", *tensors)
        return self._wrap(np.concatenate([t.array for t in tensors], axis=dim), tensors[0])

    def int_gather(self, dim: int, tensor: Prim, indices: Prim) -> Prim:
        self._one_device("int_gather", tensor, indices)
        return self._wrap(np.take_along_axis(tensor.array, indices.array, axis=dim), tensor)

    def int_scatter_add(self, dim: int, tensor: Prim, indices: Prim, values: Prim) -> Prim:
        self._one_device("int_scatter_add", tensor, indices, values)
        return self._wrap(_scatter_add(dim, tensor.array, indices.array, values.array), tensor)

    def int_select(self, tensor: Prim, dim: int, indices: Prim) -> Prim:
        self._one_device("int_select", tensor, indices)
        return self._wrap(np.take(tensor.array, indices.array, axis=dim), tensor)

    def int_select_add(self, tensor: Prim, dim: int, indices: Prim, values: Prim) -> Prim:
        self._one_device("int_select_add", tensor, indices, values)
        return self._wrap(_select_add(tensor.array, dim, indices.array, values.array), tensor)

    def int_mask_where(self, tensor: Prim, mask: Prim, value: Prim) -> Prim:
        self._one_device("int_mask_where", tensor, mask, value)
        return self._wrap(np.where(mask.array, value.array, tensor.array), tensor)

    def int_mask_fill(self, tensor: Prim, mask: Prim, value: int) -> Prim:
        self._one_device("int_mask_fill", tensor, mask)
        a = tensor.array
        return self._wrap(np.where(mask.array, a.dtype.type(value), a), tensor)

    def int_sort_with_indices(self, tensor: Prim, dim: int, descending: bool) -> tuple[Prim, Prim]:
        idx = _stable_argsort(tensor.array, dim, descending)
        values = np.take_along_axis(tensor.array, idx, axis=dim)
        return self._wrap(values, tensor), self._wrap(idx.astype(self.int_dtype.numpy), tensor)

    # == bool ops =============================================================================
    def bool_from_data(self, data: TensorData, device: Device) -> Prim:
        return self._from_data("bool_from_data", data, device)

    def bool_into_data(self, tensor: Prim) -> TensorData:
        return self._into_data(tensor)

    def bool_device(self, tensor: Prim) -> Device:
        return tensor.device

    def bool_to_device(self, tensor: Prim, device: Device) -> Prim:
        return MinimalTensor(tensor.array.copy(), device)

    def bool_shape(self, tensor: Prim) -> Shape:
        return tuple(tensor.array.shape)

    def bool_into_int(self, tensor: Prim, dtype: DType) -> Prim:
        self._check_dtype("bool_into_int", dtype)
        return self._wrap(tensor.array.astype(dtype.numpy), tensor)

    def bool_into_float(self, tensor: Prim, dtype: DType) -> Prim:
        self._check_dtype("bool_into_float", dtype)
        return self._wrap(tensor.array.astype(dtype.numpy), tensor)

    def bool_not(self, tensor: Prim) -> Prim:
        return self._wrap(np.logical_not(tensor.array), tensor)

    def bool_and(self, lhs: Prim, rhs: Prim) -> Prim:
        self._one_device("bool_and", lhs, rhs)
        return self._wrap(np.logical_and(lhs.array, rhs.array), lhs)

    def bool_or(self, lhs: Prim, rhs: Prim) -> Prim:
        self._one_device("bool_or", lhs, rhs)
        return self._wrap(np.logical_or(lhs.array, rhs.array), lhs)

    def bool_equal(self, lhs: Prim, rhs: Prim) -> Prim:
        self._one_device("bool_equal", lhs, rhs)
        return self._wrap(lhs.array == rhs.array, lhs)

    def bool_argwhere(self, tensor: Prim) -> Prim:
        a = tensor.array
        # np.argwhere gives [1, 1] for a true 0-d array; the contract wants [n_true, rank].
        found = np.argwhere(a) if a.ndim else np.zeros((int(bool(a)), 0), dtype=np.int64)
        return self._wrap(found.astype(self.int_dtype.numpy), tensor)

    def bool_reshape(self, tensor: Prim, shape: Shape) -> Prim:
        return self._wrap(tensor.array.reshape(shape), tensor)

    def bool_permute(self, tensor: Prim, axes: Shape) -> Prim:
        return self._wrap(np.transpose(tensor.array, axes), tensor)

    def bool_flip(self, tensor: Prim, axes: Shape) -> Prim:
        return self._wrap(np.flip(tensor.array, axis=tuple(axes)), tensor)

    def bool_expand(self, tensor: Prim, shape: Shape) -> Prim:
        return self._wrap(np.broadcast_to(tensor.array, shape), tensor)

    def bool_slice(self, tensor: Prim, slices: Slices) -> Prim:
        return self._wrap(tensor.array[tuple(slices)], tensor)

    def bool_slice_assign(self, tensor: Prim, slices: Slices, value: Prim) -> Prim:
        self._one_device("bool_slice_assign", tensor, value)
        out = tensor.array.copy()
        out[tuple(slices)] = value.array
        return self._wrap(out, tensor)

    def bool_cat(self, tensors: Sequence[Prim], dim: int) -> Prim:
        self._one_device("bool_cat", *tensors)
        return self._wrap(np.concatenate([t.array for t in tensors], axis=dim), tensors[0])


# -- registration: this module is itself a burn plugin -------------------------------------------
def _probe() -> str | None:
    return None  # NumPy is all it needs


def _factory(**options: Any) -> Minimal:
    return Minimal(**options)


@bp.hookimpl
def burn_backends() -> list[bp.BackendSpec]:
    """Provide the ``minimal`` backend (options: ``float_dtype``, ``int_dtype``)."""
    return [
        bp.BackendSpec(
            name="minimal",
            factory=_factory,
            probe=_probe,
            description="NumPy, required ops only (conformance tests)",
            package="burn-core-tests",
        )
    ]
