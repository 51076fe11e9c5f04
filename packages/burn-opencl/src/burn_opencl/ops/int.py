"""Int ops of the contract (`burn.backend.ops.int`) on `CLTensor` primitives, each a thin call into
a kernel module; those every kind shares are `tensor_common`'s.

Int scalars are computed in int64 and stored in the tensor's dtype (wrapping like C), and compared
in int64 so that an out-of-range scalar compares correctly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from burn.foundations.data import TensorData
from burn.foundations.distribution import Distribution
from burn.foundations.dtype import DType
from burn_opencl import layout
from burn_opencl.kernels import elementwise as ew
from burn_opencl.kernels import random as rnd
from burn_opencl.kernels import reduce as rd
from burn_opencl.ops import tensor_common as c
from burn_opencl.ops.tensor_common import OpenCLTensorBase, P, Shape, flat

if TYPE_CHECKING:
    from burn.backend.device import Device

_run = ew.run
_I64 = DType.I64
_BOOL = DType.BOOL
_IB, _IU, _IS, _IS2 = ew.INT_BINARY, ew.INT_UNARY, ew.INT_SCALAR, ew.INT_SCALAR2
_ICMPS = ew.INT_COMPARE_SCALAR


class OpenCLIntOps(OpenCLTensorBase):
    """The ``int_*`` ops of `burn_opencl.OpenCL`."""

    # -- host exchange & metadata ---------------------------------------------------------------
    def int_from_data(self, data: TensorData, device: Device) -> P:
        return layout.from_data(self._rt(device), data, "int", self.capabilities.dtypes)

    int_into_data = c.into_data
    int_device = c.device
    int_to_device = c.to_device
    int_shape = c.shape
    int_get_dtype = c.get_dtype

    def int_cast(self, tensor: P, dtype: DType) -> P:
        self._check_dtype("int_cast", dtype, "int")
        return layout.cast(tensor, dtype)

    def int_into_float(self, tensor: P, dtype: DType) -> P:
        self._check_dtype("int_into_float", dtype, "float")
        return _run(ew.CAST, [tensor], dtype)

    # -- creation -------------------------------------------------------------------------------
    def int_full(self, shape: Shape, value: int, device: Device, dtype: DType) -> P:
        return _run(ew.INT_FILL, [], dtype, (value,), compute=_I64, shape=tuple(shape), rt=self._rt(device))

    def int_zeros(self, shape: Shape, device: Device, dtype: DType) -> P:
        return self.int_full(shape, 0, device, dtype)

    def int_ones(self, shape: Shape, device: Device, dtype: DType) -> P:
        return self.int_full(shape, 1, device, dtype)

    def int_empty(self, shape: Shape, device: Device, dtype: DType) -> P:
        return self.int_full(shape, 0, device, dtype)

    def int_arange(self, start: int, end: int, step: int, device: Device, dtype: DType) -> P:
        if step == 0:
            raise ValueError("int_arange: step must not be 0")
        count = max(0, -(-(end - start) // step))
        return _run(ew.ARANGE, [], dtype, (start, step), compute=_I64, shape=(count,), rt=self._rt(device))

    def int_random(self, shape: Shape, distribution: Distribution, device: Device, dtype: DType) -> P:
        key, counter = self._next_counter(layout.numel(tuple(shape)))
        return rnd.draw(self._rt(device), tuple(shape), distribution, dtype, key, counter)

    # -- comparisons (the float ops' kernels) -------------------------------------------------------
    int_equal = c.equal
    int_not_equal = c.not_equal
    int_greater = c.greater
    int_greater_equal = c.greater_equal
    int_lower = c.lower
    int_lower_equal = c.lower_equal

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

    # -- arithmetic -------------------------------------------------------------------------------
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

    # -- reductions -------------------------------------------------------------------------------
    int_sum_dim = c.sum_dim
    int_prod_dim = c.prod_dim
    int_max_dim = c.max_dim
    int_min_dim = c.min_dim
    int_argmax = c.argmax
    int_argmin = c.argmin
    int_max_dim_with_indices = c.max_dim_with_indices
    int_min_dim_with_indices = c.min_dim_with_indices
    int_sum = c.sum_
    int_prod = c.prod
    int_max = c.max_
    int_min = c.min_
    int_cumsum = c.cumsum

    def int_mean_dim(self, tensor: P, dim: int) -> P:
        return self.int_div_scalar(rd.reduce_dim("sum", tensor, dim)[0], tensor.shape[dim])

    def int_mean(self, tensor: P) -> P:
        return self.int_div_scalar(rd.reduce_dim("sum", flat(tensor), 0)[0], max(tensor.n, 1))

    # -- layout -----------------------------------------------------------------------------------
    int_reshape = c.reshape
    int_permute = c.permute
    int_flip = c.flip
    int_expand = c.expand
    int_slice = c.slice_
    int_slice_assign = c.slice_assign
    int_cat = c.cat
    int_swap_dims = c.swap_dims
    int_repeat_dim = c.repeat_dim

    # -- indexing ---------------------------------------------------------------------------------
    int_gather = c.gather
    int_scatter_add = c.scatter_add
    int_select = c.select
    int_select_add = c.select_add
    int_mask_where = c.mask_where

    def int_mask_fill(self, tensor: P, mask: P, value: int) -> P:
        return _run(ew.INT_MASK_FILL, (tensor, mask), tensor.dtype, (value,), _I64)

    # -- sorting ----------------------------------------------------------------------------------
    int_sort_with_indices = c.sort_with_indices
    int_sort = c.sort
    int_argsort = c.argsort
