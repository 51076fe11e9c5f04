"""Int ops (`burn.backend.IntOps`) on NumPy arrays.

Division floors and the remainder takes the divisor's sign, as NumPy's ``//`` and ``%`` do; by zero
both give 0, which NumPy also does, but with a RuntimeWarning that is silenced here (the contract
says integer kernels never raise). Sums, products and cumulative sums keep the tensor's int type
(NumPy would widen small ints to int64).
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any

import numpy as np

from burn.backend.device import Device
from burn.tensor.data import TensorData
from burn.tensor.distribution import Bernoulli, Distribution, Normal, Uniform
from burn.tensor.dtype import DType
from burn_ndarray import _common as c
from burn_ndarray._dtypes import INT_DTYPES, NP_OF

Array = Any


class IntOps:
    """The ``int_*`` ops of `burn_ndarray.NdArray`."""

    _device: Device
    _int_np: np.dtype
    rng: np.random.Generator

    # -- host exchange, metadata --------------------------------------------------------------
    def int_from_data(self, data: TensorData, device: Device) -> Array:
        return c.from_data("int_from_data", data, INT_DTYPES)

    def int_into_data(self, tensor: Array) -> TensorData:
        return c.into_data(tensor)

    int_device = c.device
    int_to_device = c.to_device
    int_shape = attrgetter("shape")
    int_get_dtype = c.get_dtype

    def int_cast(self, tensor: Array, dtype: DType) -> Array:
        return tensor.astype(NP_OF[dtype], copy=False)

    def int_into_float(self, tensor: Array, dtype: DType) -> Array:
        return tensor.astype(NP_OF[dtype])

    # -- creation -----------------------------------------------------------------------------
    def int_full(self, shape: tuple[int, ...], value: int, device: Device, dtype: DType) -> Array:
        return np.full(shape, value, NP_OF[dtype])

    def int_zeros(self, shape: tuple[int, ...], device: Device, dtype: DType) -> Array:
        return np.zeros(shape, NP_OF[dtype])

    def int_ones(self, shape: tuple[int, ...], device: Device, dtype: DType) -> Array:
        return np.ones(shape, NP_OF[dtype])

    def int_empty(self, shape: tuple[int, ...], device: Device, dtype: DType) -> Array:
        return np.empty(shape, NP_OF[dtype])

    def int_arange(self, start: int, end: int, step: int, device: Device, dtype: DType) -> Array:
        return np.arange(start, end, step, dtype=NP_OF[dtype])

    def int_random(
        self, shape: tuple[int, ...], distribution: Distribution, device: Device, dtype: DType
    ) -> Array:
        """Uniform(low, high) draws integers in ``[low, high)``; Normal rounds; Bernoulli gives 0/1."""
        target = NP_OF[dtype]
        rng = self.rng
        if isinstance(distribution, Uniform):
            return rng.integers(int(distribution.low), int(distribution.high), size=shape).astype(
                target, copy=False
            )
        if isinstance(distribution, Normal):
            return np.rint(rng.normal(distribution.mean, distribution.std, size=shape)).astype(target)
        if isinstance(distribution, Bernoulli):
            return (rng.random(shape) < distribution.prob).astype(target)
        raise TypeError(f"int_random: unknown distribution {distribution!r}")

    # -- arithmetic ---------------------------------------------------------------------------
    int_add = np.add
    int_sub = np.subtract
    int_mul = np.multiply
    int_abs = np.absolute
    int_neg = np.negative
    int_sign = np.sign

    def int_div(self, lhs: Array, rhs: Array) -> Array:
        with np.errstate(divide="ignore", over="ignore"):
            return np.floor_divide(lhs, rhs)

    def int_remainder(self, lhs: Array, rhs: Array) -> Array:
        with np.errstate(divide="ignore"):
            return np.remainder(lhs, rhs)

    # NEP 50: a Python int keeps the tensor's int type (and raises OverflowError if it cannot fit).
    def int_add_scalar(self, lhs: Array, rhs: int) -> Array:
        return lhs + rhs

    def int_sub_scalar(self, lhs: Array, rhs: int) -> Array:
        return lhs - rhs

    def int_mul_scalar(self, lhs: Array, rhs: int) -> Array:
        return lhs * rhs

    def int_div_scalar(self, lhs: Array, rhs: int) -> Array:
        if rhs == 0:
            return np.zeros_like(lhs)
        return lhs // rhs

    def int_remainder_scalar(self, lhs: Array, rhs: int) -> Array:
        if rhs == 0:
            return np.zeros_like(lhs)
        return lhs % rhs

    def int_clamp_min(self, tensor: Array, min: int) -> Array:
        return np.maximum(tensor, min)

    def int_clamp_max(self, tensor: Array, max: int) -> Array:
        return np.minimum(tensor, max)

    def int_clamp(self, tensor: Array, min: int, max: int) -> Array:
        return np.clip(tensor, min, max)

    # -- comparisons --------------------------------------------------------------------------
    int_equal = int_equal_elem = np.equal
    int_not_equal = int_not_equal_elem = np.not_equal
    int_greater = int_greater_elem = np.greater
    int_greater_equal = int_greater_equal_elem = np.greater_equal
    int_lower = int_lower_elem = np.less
    int_lower_equal = int_lower_equal_elem = np.less_equal

    # -- reductions ---------------------------------------------------------------------------
    def int_sum_dim(self, tensor: Array, dim: int) -> Array:
        return tensor.sum(axis=dim, dtype=tensor.dtype, keepdims=True)

    def int_sum(self, tensor: Array) -> Array:
        return tensor.sum(dtype=tensor.dtype).reshape(1)

    def int_prod_dim(self, tensor: Array, dim: int) -> Array:
        return tensor.prod(axis=dim, dtype=tensor.dtype, keepdims=True)

    def int_prod(self, tensor: Array) -> Array:
        return tensor.prod(dtype=tensor.dtype).reshape(1)

    def int_mean_dim(self, tensor: Array, dim: int) -> Array:
        """Floor of the mean, in the tensor's int type (Burn's int mean); 0 over an empty dim."""
        n = tensor.shape[dim]
        total = tensor.sum(axis=dim, dtype=tensor.dtype, keepdims=True)
        return total // n if n else total

    def int_mean(self, tensor: Array) -> Array:
        n = tensor.size
        total = tensor.sum(dtype=tensor.dtype).reshape(1)
        return total // n if n else total

    def int_cumsum(self, tensor: Array, dim: int) -> Array:
        return np.cumsum(tensor, axis=dim, dtype=tensor.dtype)

    int_argmax = c.argmax
    int_argmin = c.argmin
    int_max_dim = c.max_dim
    int_min_dim = c.min_dim
    int_max_dim_with_indices = c.max_dim_with_indices
    int_min_dim_with_indices = c.min_dim_with_indices
    int_max = c.max_
    int_min = c.min_

    # -- shape ops ----------------------------------------------------------------------------
    int_reshape = c.reshape
    int_permute = c.permute
    int_flip = c.flip
    int_expand = c.expand
    int_slice = c.slice_
    int_slice_assign = c.slice_assign
    int_cat = c.cat
    int_swap_dims = c.swap_dims
    int_repeat_dim = c.repeat_dim

    # -- indexing -----------------------------------------------------------------------------
    int_gather = c.gather
    int_scatter_add = c.scatter_add
    int_select = c.select
    int_select_add = c.select_add
    int_mask_where = c.mask_where
    int_mask_fill = c.mask_fill

    # -- sorting ------------------------------------------------------------------------------
    int_sort_with_indices = c.sort_with_indices
    int_sort = c.sort
    int_argsort = c.argsort
