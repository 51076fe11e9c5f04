"""Float ops of the contract (`burn.backend.ops.float`) on `CLTensor` primitives, each a thin call
into a kernel module; those every kind shares are `tensor_common`'s.

Methods are kept one line where possible: per-op overhead is what small tensors pay.
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
from burn_opencl.ops.tensor_common import OpenCLTensorBase, P, Shape, flat, matmul

if TYPE_CHECKING:
    from burn.backend.device import Device

_run = ew.run
_BOOL = DType.BOOL
_OPS = ew.OPS


class OpenCLFloatOps(OpenCLTensorBase):
    """The ``float_*`` ops of `burn_opencl.OpenCL`."""

    # -- host exchange & metadata ---------------------------------------------------------------
    def float_from_data(self, data: TensorData, device: Device) -> P:
        return layout.from_data(self._rt(device), data, "float", self.capabilities.dtypes)

    float_into_data = c.into_data
    float_device = c.device
    float_to_device = c.to_device
    float_shape = c.shape
    float_get_dtype = c.get_dtype

    def float_cast(self, tensor: P, dtype: DType) -> P:
        self._check_dtype("float_cast", dtype, "float")
        return layout.cast(tensor, dtype)

    def float_into_int(self, tensor: P, dtype: DType) -> P:
        self._check_dtype("float_into_int", dtype, "int")
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

    def float_random(self, shape: Shape, distribution: Distribution, device: Device, dtype: DType) -> P:
        key, counter = self._next_counter(layout.numel(tuple(shape)))
        return rnd.draw(self._rt(device), tuple(shape), distribution, dtype, key, counter)

    # -- arithmetic -----------------------------------------------------------------------------
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
        return matmul(lhs, rhs)

    # -- unary ------------------------------------------------------------------------------------
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

    # -- comparisons (the int ops share these kernels) ----------------------------------------------
    float_equal = c.equal
    float_not_equal = c.not_equal
    float_greater = c.greater
    float_greater_equal = c.greater_equal
    float_lower = c.lower
    float_lower_equal = c.lower_equal

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

    # -- reductions -------------------------------------------------------------------------------
    float_sum_dim = c.sum_dim

    def float_mean_dim(self, tensor: P, dim: int) -> P:
        if tensor.shape[dim] == 0:  # 0 / 0: NaN, as on every backend
            return self.float_div_scalar(rd.reduce_dim("sum", tensor, dim)[0], 0.0)
        return rd.reduce_dim("mean", tensor, dim)[0]

    float_prod_dim = c.prod_dim
    float_max_dim = c.max_dim
    float_min_dim = c.min_dim
    float_argmax = c.argmax
    float_argmin = c.argmin
    float_max_dim_with_indices = c.max_dim_with_indices
    float_min_dim_with_indices = c.min_dim_with_indices
    float_sum = c.sum_

    def float_mean(self, tensor: P) -> P:
        return self.float_mean_dim(flat(tensor), 0)

    float_prod = c.prod
    float_max = c.max_
    float_min = c.min_
    float_cumsum = c.cumsum

    # -- layout -----------------------------------------------------------------------------------
    float_reshape = c.reshape
    float_permute = c.permute
    float_flip = c.flip
    float_expand = c.expand
    float_slice = c.slice_
    float_slice_assign = c.slice_assign
    float_cat = c.cat
    float_swap_dims = c.swap_dims
    float_repeat_dim = c.repeat_dim

    # -- indexing ---------------------------------------------------------------------------------
    float_gather = c.gather
    float_scatter_add = c.scatter_add
    float_select = c.select
    float_select_add = c.select_add
    float_mask_where = c.mask_where

    def float_mask_fill(self, tensor: P, mask: P, value: float) -> P:
        return _run(ew.MASK_FILL, (tensor, mask), tensor.dtype, (value,))

    # -- sorting ----------------------------------------------------------------------------------
    float_sort_with_indices = c.sort_with_indices
    float_sort = c.sort
    float_argsort = c.argsort
