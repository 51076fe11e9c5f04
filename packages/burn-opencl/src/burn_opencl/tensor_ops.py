"""Float, int and bool ops of the contract, each a thin call into a kernel module.

Methods are kept one line where possible: per-op overhead is what small tensors pay.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from burn.errors import DTypeError
from burn.foundations.data import TensorData
from burn.foundations.distribution import Distribution
from burn.foundations.dtype import DType
from burn_opencl import layout
from burn_opencl.dtypes import wider
from burn_opencl.kernels import elementwise as ew
from burn_opencl.kernels import index as ix
from burn_opencl.kernels import matmul as mm
from burn_opencl.kernels import random as rnd
from burn_opencl.kernels import reduce as rd
from burn_opencl.kernels import sort as srt
from burn_opencl.tensor import CLTensor

if TYPE_CHECKING:
    from burn.backend.device import Device
    from burn_opencl.runtime import Runtime

P = CLTensor
Shape = tuple[int, ...]
_run = ew.run
_I64 = DType.I64
_BOOL = DType.BOOL
_OPS, _OWN = ew.OPS, ew.OWN
_IB, _IU, _IS, _IS2 = ew.INT_BINARY, ew.INT_UNARY, ew.INT_SCALAR, ew.INT_SCALAR2
_ICMPS = ew.INT_COMPARE_SCALAR


def _flat(t: CLTensor) -> CLTensor:
    return layout.reshape(t, (t.n,)) if t.shape != () else layout.reshape(t, (1,))


class TensorOps:
    """Float, int and bool ops on `CLTensor` primitives (mixed into `burn_opencl.OpenCL`)."""

    int_dtype: DType
    capabilities: Any
    _devices: list[Device]

    def _rt(self, device: Device) -> Runtime:  # provided by the backend
        raise NotImplementedError

    def _next_counter(self, n: int) -> tuple[int, int]:  # provided by the backend
        raise NotImplementedError

    # -- host exchange & metadata (shared by every kind) ------------------------------------------
    def float_from_data(self, data: TensorData, device: Device) -> P:
        return layout.from_data(self._rt(device), data, "float", self.capabilities.dtypes)

    def int_from_data(self, data: TensorData, device: Device) -> P:
        return layout.from_data(self._rt(device), data, "int", self.capabilities.dtypes)

    def bool_from_data(self, data: TensorData, device: Device) -> P:
        return layout.from_data(self._rt(device), data, "bool", self.capabilities.dtypes)

    def float_into_data(self, tensor: P) -> TensorData:
        return layout.into_data(tensor)

    int_into_data = bool_into_data = float_into_data

    def float_device(self, tensor: P) -> Device:
        # The runtime is shared by every OpenCL backend; the device handed out is this backend's.
        return self._devices[tensor.rt.device.id]  # type: ignore[index]

    int_device = bool_device = float_device

    def float_to_device(self, tensor: P, device: Device) -> P:
        return layout.to_device(tensor, self._rt(device))

    int_to_device = bool_to_device = float_to_device

    def float_shape(self, tensor: P) -> Shape:
        return tensor.shape

    int_shape = bool_shape = float_shape

    def float_get_dtype(self, tensor: P) -> DType:
        return tensor.dtype

    int_get_dtype = float_get_dtype

    def _check_dtype(self, op: str, dtype: DType, kind: str) -> None:
        ok = dtype.is_float if kind == "float" else dtype.is_int
        if not ok or dtype not in self.capabilities.dtypes:
            raise DTypeError(f"{op}: {dtype.value} is not a {kind} dtype this backend supports")

    def float_cast(self, tensor: P, dtype: DType) -> P:
        self._check_dtype("float_cast", dtype, "float")
        return layout.cast(tensor, dtype)

    def float_into_int(self, tensor: P, dtype: DType) -> P:
        self._check_dtype("float_into_int", dtype, "int")
        return _run(ew.CAST, [tensor], dtype)

    def int_cast(self, tensor: P, dtype: DType) -> P:
        self._check_dtype("int_cast", dtype, "int")
        return layout.cast(tensor, dtype)

    def int_into_float(self, tensor: P, dtype: DType) -> P:
        self._check_dtype("int_into_float", dtype, "float")
        return _run(ew.CAST, [tensor], dtype)

    def bool_into_int(self, tensor: P, dtype: DType) -> P:
        self._check_dtype("bool_into_int", dtype, "int")
        return _run(ew.CAST, [tensor], dtype)

    def bool_into_float(self, tensor: P, dtype: DType) -> P:
        self._check_dtype("bool_into_float", dtype, "float")
        return _run(ew.CAST, [tensor], dtype)

    # -- creation -------------------------------------------------------------------------------
    def float_full(self, shape: Shape, value: float, device: Device, dtype: DType) -> P:
        return _run(ew.FILL, [], dtype, (value,), compute=dtype, shape=tuple(shape), rt=self._rt(device))

    def float_zeros(self, shape: Shape, device: Device, dtype: DType) -> P:
        return self.float_full(shape, 0.0, device, dtype)

    def float_ones(self, shape: Shape, device: Device, dtype: DType) -> P:
        return self.float_full(shape, 1.0, device, dtype)

    def float_empty(self, shape: Shape, device: Device, dtype: DType) -> P:
        return self.float_full(shape, 0.0, device, dtype)

    def int_full(self, shape: Shape, value: int, device: Device, dtype: DType) -> P:
        return _run(ew.INT_FILL, [], dtype, (value,), compute=_I64, shape=tuple(shape), rt=self._rt(device))

    def int_zeros(self, shape: Shape, device: Device, dtype: DType) -> P:
        return self.int_full(shape, 0, device, dtype)

    def int_ones(self, shape: Shape, device: Device, dtype: DType) -> P:
        return self.int_full(shape, 1, device, dtype)

    def int_empty(self, shape: Shape, device: Device, dtype: DType) -> P:
        return self.int_full(shape, 0, device, dtype)

    def bool_full(self, shape: Shape, value: bool, device: Device) -> P:
        return _run(
            ew.INT_FILL, [], _BOOL, (int(bool(value)),), compute=_I64, shape=tuple(shape), rt=self._rt(device)
        )

    def bool_zeros(self, shape: Shape, device: Device) -> P:
        return self.bool_full(shape, False, device)

    def bool_ones(self, shape: Shape, device: Device) -> P:
        return self.bool_full(shape, True, device)

    def bool_empty(self, shape: Shape, device: Device) -> P:
        return self.bool_full(shape, False, device)

    def int_arange(self, start: int, end: int, step: int, device: Device, dtype: DType) -> P:
        if step == 0:
            raise ValueError("int_arange: step must not be 0")
        count = max(0, -(-(end - start) // step))
        return _run(ew.ARANGE, [], dtype, (start, step), compute=_I64, shape=(count,), rt=self._rt(device))

    def float_random(self, shape: Shape, distribution: Distribution, device: Device, dtype: DType) -> P:
        key, counter = self._next_counter(layout.numel(tuple(shape)))
        return rnd.draw(self._rt(device), tuple(shape), distribution, dtype, key, counter)

    def int_random(self, shape: Shape, distribution: Distribution, device: Device, dtype: DType) -> P:
        key, counter = self._next_counter(layout.numel(tuple(shape)))
        return rnd.draw(self._rt(device), tuple(shape), distribution, dtype, key, counter)

    # -- float arithmetic -----------------------------------------------------------------------
    def float_add(self, lhs: P, rhs: P) -> P:
        return _run(_OPS["float_add"], (lhs, rhs))

    def float_sub(self, lhs: P, rhs: P) -> P:
        return _run(_OPS["float_sub"], (lhs, rhs))

    def float_mul(self, lhs: P, rhs: P) -> P:
        return _run(_OPS["float_mul"], (lhs, rhs))

    def float_div(self, lhs: P, rhs: P) -> P:
        return _run(_OPS["float_div"], (lhs, rhs))

    def float_remainder(self, lhs: P, rhs: P) -> P:
        return _run(_OPS["float_remainder"], (lhs, rhs))

    def float_powf(self, lhs: P, rhs: P) -> P:
        return _run(_OPS["float_powf"], (lhs, rhs))

    def float_add_scalar(self, lhs: P, rhs: float) -> P:
        return _run(_OPS["float_add_scalar"], (lhs,), None, (rhs,))

    def float_sub_scalar(self, lhs: P, rhs: float) -> P:
        return _run(_OPS["float_sub_scalar"], (lhs,), None, (rhs,))

    def float_mul_scalar(self, lhs: P, rhs: float) -> P:
        return _run(_OPS["float_mul_scalar"], (lhs,), None, (rhs,))

    def float_div_scalar(self, lhs: P, rhs: float) -> P:
        return _run(_OPS["float_div_scalar"], (lhs,), None, (rhs,))

    def float_remainder_scalar(self, lhs: P, rhs: float) -> P:
        return _run(_OPS["float_remainder_scalar"], (lhs,), None, (rhs,))

    def float_powf_scalar(self, lhs: P, rhs: float) -> P:
        return _run(_OPS["float_powf_scalar"], (lhs,), None, (rhs,))

    def float_matmul(self, lhs: P, rhs: P) -> P:
        out = wider(lhs.dtype, rhs.dtype)
        compute = DType.F32 if out is DType.F16 else out
        result = mm.matmul(layout.cast(lhs, compute), layout.cast(rhs, compute), compute)
        return layout.cast(result, out)

    # -- float unary ------------------------------------------------------------------------------
    def float_exp(self, tensor: P) -> P:
        return _run(_OPS["float_exp"], (tensor,))

    def float_log(self, tensor: P) -> P:
        return _run(_OPS["float_log"], (tensor,))

    def float_sqrt(self, tensor: P) -> P:
        return _run(_OPS["float_sqrt"], (tensor,))

    def float_abs(self, tensor: P) -> P:
        return _run(_OPS["float_abs"], (tensor,))

    def float_sin(self, tensor: P) -> P:
        return _run(_OPS["float_sin"], (tensor,))

    def float_cos(self, tensor: P) -> P:
        return _run(_OPS["float_cos"], (tensor,))

    def float_tanh(self, tensor: P) -> P:
        return _run(_OPS["float_tanh"], (tensor,))

    def float_erf(self, tensor: P) -> P:
        return _run(_OPS["float_erf"], (tensor,))

    def float_round(self, tensor: P) -> P:
        return _run(_OPS["float_round"], (tensor,))

    def float_floor(self, tensor: P) -> P:
        return _run(_OPS["float_floor"], (tensor,))

    def float_ceil(self, tensor: P) -> P:
        return _run(_OPS["float_ceil"], (tensor,))

    def float_neg(self, tensor: P) -> P:
        return _run(_OPS["float_neg"], (tensor,))

    def float_recip(self, tensor: P) -> P:
        return _run(_OPS["float_recip"], (tensor,))

    def float_log1p(self, tensor: P) -> P:
        return _run(_OPS["float_log1p"], (tensor,))

    def float_sign(self, tensor: P) -> P:
        return _run(_OPS["float_sign"], (tensor,))

    def float_clamp_min(self, tensor: P, min: float) -> P:
        return _run(_OPS["float_clamp_min"], (tensor,), None, (min,))

    def float_clamp_max(self, tensor: P, max: float) -> P:
        return _run(_OPS["float_clamp_max"], (tensor,), None, (max,))

    def float_clamp(self, tensor: P, min: float, max: float) -> P:
        return _run(_OPS["float_clamp"], (tensor,), None, (min, max))

    def float_is_nan(self, tensor: P) -> P:
        return _run(ew.OPS["float_is_nan"], (tensor,), _BOOL)

    def float_is_inf(self, tensor: P) -> P:
        return _run(ew.OPS["float_is_inf"], (tensor,), _BOOL)

    # -- comparisons (float and int share the kernels) ----------------------------------------------
    def float_equal(self, lhs: P, rhs: P) -> P:
        return _run(_OPS["float_equal"], (lhs, rhs), _BOOL)

    def float_not_equal(self, lhs: P, rhs: P) -> P:
        return _run(_OPS["float_not_equal"], (lhs, rhs), _BOOL)

    def float_greater(self, lhs: P, rhs: P) -> P:
        return _run(_OPS["float_greater"], (lhs, rhs), _BOOL)

    def float_greater_equal(self, lhs: P, rhs: P) -> P:
        return _run(_OPS["float_greater_equal"], (lhs, rhs), _BOOL)

    def float_lower(self, lhs: P, rhs: P) -> P:
        return _run(_OPS["float_lower"], (lhs, rhs), _BOOL)

    def float_lower_equal(self, lhs: P, rhs: P) -> P:
        return _run(_OPS["float_lower_equal"], (lhs, rhs), _BOOL)

    int_equal = float_equal
    int_not_equal = float_not_equal
    int_greater = float_greater
    int_greater_equal = float_greater_equal
    int_lower = float_lower
    int_lower_equal = float_lower_equal

    def float_equal_elem(self, lhs: P, rhs: float) -> P:
        return _run(_OPS["float_equal_elem"], (lhs,), _BOOL, (rhs,))

    def float_not_equal_elem(self, lhs: P, rhs: float) -> P:
        return _run(_OPS["float_not_equal_elem"], (lhs,), _BOOL, (rhs,))

    def float_greater_elem(self, lhs: P, rhs: float) -> P:
        return _run(_OPS["float_greater_elem"], (lhs,), _BOOL, (rhs,))

    def float_greater_equal_elem(self, lhs: P, rhs: float) -> P:
        return _run(_OPS["float_greater_equal_elem"], (lhs,), _BOOL, (rhs,))

    def float_lower_elem(self, lhs: P, rhs: float) -> P:
        return _run(_OPS["float_lower_elem"], (lhs,), _BOOL, (rhs,))

    def float_lower_equal_elem(self, lhs: P, rhs: float) -> P:
        return _run(_OPS["float_lower_equal_elem"], (lhs,), _BOOL, (rhs,))

    # Int scalars are compared in int64 so that an out-of-range scalar compares correctly.
    def int_equal_elem(self, lhs: P, rhs: int) -> P:
        return _run(_ICMPS["eq_s"], (lhs,), _BOOL, (rhs,), _I64)

    def int_not_equal_elem(self, lhs: P, rhs: int) -> P:
        return _run(_ICMPS["ne_s"], (lhs,), _BOOL, (rhs,), _I64)

    def int_greater_elem(self, lhs: P, rhs: int) -> P:
        return _run(_ICMPS["gt_s"], (lhs,), _BOOL, (rhs,), _I64)

    def int_greater_equal_elem(self, lhs: P, rhs: int) -> P:
        return _run(_ICMPS["ge_s"], (lhs,), _BOOL, (rhs,), _I64)

    def int_lower_elem(self, lhs: P, rhs: int) -> P:
        return _run(_ICMPS["lt_s"], (lhs,), _BOOL, (rhs,), _I64)

    def int_lower_equal_elem(self, lhs: P, rhs: int) -> P:
        return _run(_ICMPS["le_s"], (lhs,), _BOOL, (rhs,), _I64)

    # -- int arithmetic ---------------------------------------------------------------------------
    def int_add(self, lhs: P, rhs: P) -> P:
        return _run(_IB["add"], (lhs, rhs))

    def int_sub(self, lhs: P, rhs: P) -> P:
        return _run(_IB["sub"], (lhs, rhs))

    def int_mul(self, lhs: P, rhs: P) -> P:
        return _run(_IB["mul"], (lhs, rhs))

    def int_div(self, lhs: P, rhs: P) -> P:
        return _run(_IB["div"], (lhs, rhs))

    def int_remainder(self, lhs: P, rhs: P) -> P:
        return _run(_IB["rem"], (lhs, rhs))

    def int_abs(self, tensor: P) -> P:
        return _run(_IU["abs"], (tensor,))

    def int_neg(self, tensor: P) -> P:
        return _run(_IU["neg"], (tensor,))

    def int_sign(self, tensor: P) -> P:
        return _run(_IU["sign"], (tensor,))

    # Int scalar ops compute in int64 and store in the tensor's dtype (wrapping like C).
    def int_add_scalar(self, lhs: P, rhs: int) -> P:
        return _run(_IS["add_s"], (lhs,), lhs.dtype, (rhs,), _I64)

    def int_sub_scalar(self, lhs: P, rhs: int) -> P:
        return _run(_IS["sub_s"], (lhs,), lhs.dtype, (rhs,), _I64)

    def int_mul_scalar(self, lhs: P, rhs: int) -> P:
        return _run(_IS["mul_s"], (lhs,), lhs.dtype, (rhs,), _I64)

    def int_div_scalar(self, lhs: P, rhs: int) -> P:
        return _run(_IS["div_s"], (lhs,), lhs.dtype, (rhs,), _I64)

    def int_remainder_scalar(self, lhs: P, rhs: int) -> P:
        return _run(_IS["rem_s"], (lhs,), lhs.dtype, (rhs,), _I64)

    def int_clamp_min(self, tensor: P, min: int) -> P:
        return _run(_IS["clamp_min"], (tensor,), tensor.dtype, (min,), _I64)

    def int_clamp_max(self, tensor: P, max: int) -> P:
        return _run(_IS["clamp_max"], (tensor,), tensor.dtype, (max,), _I64)

    def int_clamp(self, tensor: P, min: int, max: int) -> P:
        return _run(_IS2["clamp"], (tensor,), tensor.dtype, (min, max), _I64)

    # -- bool -------------------------------------------------------------------------------------
    def bool_not(self, tensor: P) -> P:
        return _run(ew.OPS["bool_not"], (tensor,), _BOOL)

    def bool_and(self, lhs: P, rhs: P) -> P:
        return _run(ew.OPS["bool_and"], (lhs, rhs), _BOOL)

    def bool_or(self, lhs: P, rhs: P) -> P:
        return _run(ew.OPS["bool_or"], (lhs, rhs), _BOOL)

    def bool_equal(self, lhs: P, rhs: P) -> P:
        return _run(ew.OPS["bool_equal"], (lhs, rhs), _BOOL)

    def bool_not_equal(self, lhs: P, rhs: P) -> P:
        return _run(ew.BOOL_NE, (lhs, rhs), _BOOL)

    bool_xor = bool_not_equal

    def bool_argwhere(self, tensor: P) -> P:
        return ix.argwhere(tensor, self.int_dtype)

    def bool_any(self, tensor: P) -> P:
        return rd.reduce_dim("any", _flat(tensor), 0, _BOOL)[0]

    def bool_all(self, tensor: P) -> P:
        return rd.reduce_dim("all", _flat(tensor), 0, _BOOL)[0]

    def bool_any_dim(self, tensor: P, dim: int) -> P:
        return rd.reduce_dim("any", tensor, dim, _BOOL)[0]

    def bool_all_dim(self, tensor: P, dim: int) -> P:
        return rd.reduce_dim("all", tensor, dim, _BOOL)[0]

    # -- reductions -------------------------------------------------------------------------------
    def float_sum_dim(self, tensor: P, dim: int) -> P:
        return rd.reduce_dim("sum", tensor, dim)[0]

    def float_mean_dim(self, tensor: P, dim: int) -> P:
        if tensor.shape[dim] == 0:  # 0 / 0: NaN, as on every backend
            return self.float_div_scalar(rd.reduce_dim("sum", tensor, dim)[0], 0.0)
        return rd.reduce_dim("mean", tensor, dim)[0]

    def float_prod_dim(self, tensor: P, dim: int) -> P:
        return rd.reduce_dim("prod", tensor, dim)[0]

    def float_max_dim(self, tensor: P, dim: int) -> P:
        return rd.reduce_dim("max", tensor, dim)[0]

    def float_min_dim(self, tensor: P, dim: int) -> P:
        return rd.reduce_dim("min", tensor, dim)[0]

    def float_argmax(self, tensor: P, dim: int) -> P:
        return rd.reduce_dim("argmax", tensor, dim, self.int_dtype)[0]

    def float_argmin(self, tensor: P, dim: int) -> P:
        return rd.reduce_dim("argmin", tensor, dim, self.int_dtype)[0]

    def float_max_dim_with_indices(self, tensor: P, dim: int) -> tuple[P, P]:
        return rd.reduce_dim("max", tensor, dim, None, self.int_dtype)  # type: ignore[return-value]

    def float_min_dim_with_indices(self, tensor: P, dim: int) -> tuple[P, P]:
        return rd.reduce_dim("min", tensor, dim, None, self.int_dtype)  # type: ignore[return-value]

    def float_sum(self, tensor: P) -> P:
        return rd.reduce_dim("sum", _flat(tensor), 0)[0]

    def float_mean(self, tensor: P) -> P:
        return self.float_mean_dim(_flat(tensor), 0)

    def float_prod(self, tensor: P) -> P:
        return rd.reduce_dim("prod", _flat(tensor), 0)[0]

    def float_max(self, tensor: P) -> P:
        return rd.reduce_dim("max", _flat(tensor), 0)[0]

    def float_min(self, tensor: P) -> P:
        return rd.reduce_dim("min", _flat(tensor), 0)[0]

    def float_cumsum(self, tensor: P, dim: int) -> P:
        return rd.cumsum(tensor, dim)

    int_sum_dim = float_sum_dim
    int_prod_dim = float_prod_dim
    int_max_dim = float_max_dim
    int_min_dim = float_min_dim
    int_argmax = float_argmax
    int_argmin = float_argmin
    int_max_dim_with_indices = float_max_dim_with_indices
    int_min_dim_with_indices = float_min_dim_with_indices
    int_sum = float_sum
    int_prod = float_prod
    int_max = float_max
    int_min = float_min
    int_cumsum = float_cumsum

    def int_mean_dim(self, tensor: P, dim: int) -> P:
        return self.int_div_scalar(rd.reduce_dim("sum", tensor, dim)[0], tensor.shape[dim])

    def int_mean(self, tensor: P) -> P:
        return self.int_div_scalar(rd.reduce_dim("sum", _flat(tensor), 0)[0], max(tensor.n, 1))

    # -- layout (every kind) ----------------------------------------------------------------------
    def float_reshape(self, tensor: P, shape: Shape) -> P:
        return layout.reshape(tensor, shape)

    def float_permute(self, tensor: P, axes: Shape) -> P:
        return layout.permute(tensor, axes)

    def float_flip(self, tensor: P, axes: Shape) -> P:
        return layout.flip(tensor, axes)

    def float_expand(self, tensor: P, shape: Shape) -> P:
        return layout.expand(tensor, shape)

    def float_slice(self, tensor: P, slices: tuple[slice, ...]) -> P:
        return layout.slice_(tensor, slices)

    def float_slice_assign(self, tensor: P, slices: tuple[slice, ...], value: P) -> P:
        return layout.slice_assign(tensor, slices, value)

    def float_cat(self, tensors: Sequence[P], dim: int) -> P:
        return layout.cat(tensors, dim)

    def float_swap_dims(self, tensor: P, dim1: int, dim2: int) -> P:
        axes = list(range(len(tensor.shape)))
        axes[dim1], axes[dim2] = axes[dim2], axes[dim1]
        return layout.permute(tensor, axes)

    def float_repeat_dim(self, tensor: P, dim: int, times: int) -> P:
        return layout.repeat_dim(tensor, dim, times)

    int_reshape = bool_reshape = float_reshape
    int_permute = bool_permute = float_permute
    int_flip = bool_flip = float_flip
    int_expand = bool_expand = float_expand
    int_slice = bool_slice = float_slice
    int_slice_assign = bool_slice_assign = float_slice_assign
    int_cat = bool_cat = float_cat
    int_swap_dims = bool_swap_dims = float_swap_dims
    int_repeat_dim = bool_repeat_dim = float_repeat_dim

    # -- indexing (every kind) ----------------------------------------------------------------------
    def float_gather(self, dim: int, tensor: P, indices: P) -> P:
        return ix.gather(dim, tensor, indices)

    def float_scatter_add(self, dim: int, tensor: P, indices: P, values: P) -> P:
        return ix.scatter_add(dim, tensor, indices, values)

    def float_select(self, tensor: P, dim: int, indices: P) -> P:
        return ix.select(tensor, dim, indices)

    def float_select_add(self, tensor: P, dim: int, indices: P, values: P) -> P:
        return ix.select_add(tensor, dim, indices, values)

    def float_mask_where(self, tensor: P, mask: P, value: P) -> P:
        return _run(ew.MASK_WHERE, (tensor, mask, value), tensor.dtype)

    def float_mask_fill(self, tensor: P, mask: P, value: float) -> P:
        return _run(ew.MASK_FILL, (tensor, mask), tensor.dtype, (value,))

    def int_mask_fill(self, tensor: P, mask: P, value: int) -> P:
        return _run(ew.INT_MASK_FILL, (tensor, mask), tensor.dtype, (value,), _I64)

    int_gather = bool_gather = float_gather
    int_scatter_add = float_scatter_add
    int_select = bool_select = float_select
    int_select_add = float_select_add
    int_mask_where = bool_mask_where = float_mask_where

    # -- sorting ----------------------------------------------------------------------------------
    def float_sort_with_indices(self, tensor: P, dim: int, descending: bool) -> tuple[P, P]:
        return srt.sort_with_indices(tensor, dim, descending, self.int_dtype)

    def float_sort(self, tensor: P, dim: int, descending: bool) -> P:
        return srt.sort_with_indices(tensor, dim, descending, self.int_dtype)[0]

    def float_argsort(self, tensor: P, dim: int, descending: bool) -> P:
        return srt.sort_with_indices(tensor, dim, descending, self.int_dtype)[1]

    int_sort_with_indices = float_sort_with_indices
    int_sort = float_sort
    int_argsort = float_argsort
