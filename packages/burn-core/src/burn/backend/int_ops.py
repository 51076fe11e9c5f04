"""Int ops of the backend contract (Burn's ``IntTensorOps``). Conventions: see `float_ops`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from burn.backend.contract import default, required
from burn.tensor.data import TensorData
from burn.tensor.distribution import Bernoulli, Distribution, Normal, Uniform
from burn.tensor.dtype import DType

if TYPE_CHECKING:
    from burn.backend.device import Device

P = Any
Shape = tuple[int, ...]
Slices = tuple[slice, ...]


class IntOps:
    """Int tensor ops. Division floors and remainder takes the divisor's sign (Python's ``//``
    and ``%``), so ``a == b * (a // b) + a % b`` always holds."""

    @required
    def int_from_data(self, data: TensorData, device: Device) -> P: ...

    @required
    def int_into_data(self, tensor: P) -> TensorData: ...

    @required
    def int_device(self, tensor: P) -> Device: ...

    @required
    def int_to_device(self, tensor: P, device: Device) -> P: ...

    @required
    def int_shape(self, tensor: P) -> Shape: ...

    @required
    def int_get_dtype(self, tensor: P) -> DType: ...

    @required
    def int_cast(self, tensor: P, dtype: DType) -> P: ...

    @required
    def int_into_float(self, tensor: P, dtype: DType) -> P: ...

    # -- creation -----------------------------------------------------------------------------
    @default
    def int_full(self, shape: Shape, value: int, device: Device, dtype: DType) -> P:
        return self.int_from_data(TensorData(np.full(shape, value, dtype=dtype.numpy)), device)

    @default
    def int_zeros(self, shape: Shape, device: Device, dtype: DType) -> P:
        return self.int_full(shape, 0, device, dtype)

    @default
    def int_ones(self, shape: Shape, device: Device, dtype: DType) -> P:
        return self.int_full(shape, 1, device, dtype)

    @default
    def int_empty(self, shape: Shape, device: Device, dtype: DType) -> P:
        return self.int_zeros(shape, device, dtype)

    @default
    def int_arange(self, start: int, end: int, step: int, device: Device, dtype: DType) -> P:
        return self.int_from_data(TensorData(np.arange(start, end, step, dtype=dtype.numpy)), device)

    @default
    def int_random(self, shape: Shape, distribution: Distribution, device: Device, dtype: DType) -> P:
        """Uniform(low, high) draws integers in ``[low, high)``; Normal rounds; Bernoulli 0/1."""
        rng: np.random.Generator = self.rng  # type: ignore[attr-defined]
        if isinstance(distribution, Uniform):
            values = rng.integers(int(distribution.low), int(distribution.high), size=shape)
        elif isinstance(distribution, Normal):
            values = np.rint(rng.normal(distribution.mean, distribution.std, size=shape))
        elif isinstance(distribution, Bernoulli):
            values = (rng.random(size=shape) < distribution.prob).astype(np.int64)
        else:
            raise TypeError(f"unknown distribution {distribution!r}")
        return self.int_from_data(TensorData(values.astype(dtype.numpy)), device)

    # -- arithmetic ---------------------------------------------------------------------------
    @required
    def int_add(self, lhs: P, rhs: P) -> P: ...

    @required
    def int_sub(self, lhs: P, rhs: P) -> P: ...

    @required
    def int_mul(self, lhs: P, rhs: P) -> P: ...

    @required
    def int_div(self, lhs: P, rhs: P) -> P:
        """Floor division. Division by zero gives 0 (no exception: kernels cannot raise)."""

    @required
    def int_remainder(self, lhs: P, rhs: P) -> P:
        """Remainder with the divisor's sign; by zero gives 0."""

    @required
    def int_abs(self, tensor: P) -> P: ...

    def _int_scalar_like(self, tensor: P, value: int) -> P:
        return self.int_full((), value, self.int_device(tensor), self.int_get_dtype(tensor))

    @default
    def int_add_scalar(self, lhs: P, rhs: int) -> P:
        return self.int_add(lhs, self._int_scalar_like(lhs, rhs))

    @default
    def int_sub_scalar(self, lhs: P, rhs: int) -> P:
        return self.int_sub(lhs, self._int_scalar_like(lhs, rhs))

    @default
    def int_mul_scalar(self, lhs: P, rhs: int) -> P:
        return self.int_mul(lhs, self._int_scalar_like(lhs, rhs))

    @default
    def int_div_scalar(self, lhs: P, rhs: int) -> P:
        return self.int_div(lhs, self._int_scalar_like(lhs, rhs))

    @default
    def int_remainder_scalar(self, lhs: P, rhs: int) -> P:
        return self.int_remainder(lhs, self._int_scalar_like(lhs, rhs))

    @default
    def int_neg(self, tensor: P) -> P:
        return self.int_mul_scalar(tensor, -1)

    @default
    def int_sign(self, tensor: P) -> P:
        dtype = self.int_get_dtype(tensor)
        positive = self.bool_into_int(self.int_greater_elem(tensor, 0), dtype)  # type: ignore[attr-defined]
        negative = self.bool_into_int(self.int_lower_elem(tensor, 0), dtype)  # type: ignore[attr-defined]
        return self.int_sub(positive, negative)

    @default
    def int_clamp_min(self, tensor: P, min: int) -> P:
        return self.int_mask_fill(tensor, self.int_lower_elem(tensor, min), min)

    @default
    def int_clamp_max(self, tensor: P, max: int) -> P:
        return self.int_mask_fill(tensor, self.int_greater_elem(tensor, max), max)

    @default
    def int_clamp(self, tensor: P, min: int, max: int) -> P:
        return self.int_clamp_max(self.int_clamp_min(tensor, min), max)

    # -- comparisons --------------------------------------------------------------------------
    @required
    def int_equal(self, lhs: P, rhs: P) -> P: ...

    @required
    def int_greater(self, lhs: P, rhs: P) -> P: ...

    @required
    def int_greater_equal(self, lhs: P, rhs: P) -> P: ...

    @required
    def int_lower(self, lhs: P, rhs: P) -> P: ...

    @required
    def int_lower_equal(self, lhs: P, rhs: P) -> P: ...

    @default
    def int_not_equal(self, lhs: P, rhs: P) -> P:
        return self.bool_not(self.int_equal(lhs, rhs))  # type: ignore[attr-defined]

    @default
    def int_equal_elem(self, lhs: P, rhs: int) -> P:
        return self.int_equal(lhs, self._int_scalar_like(lhs, rhs))

    @default
    def int_not_equal_elem(self, lhs: P, rhs: int) -> P:
        return self.int_not_equal(lhs, self._int_scalar_like(lhs, rhs))

    @default
    def int_greater_elem(self, lhs: P, rhs: int) -> P:
        return self.int_greater(lhs, self._int_scalar_like(lhs, rhs))

    @default
    def int_greater_equal_elem(self, lhs: P, rhs: int) -> P:
        return self.int_greater_equal(lhs, self._int_scalar_like(lhs, rhs))

    @default
    def int_lower_elem(self, lhs: P, rhs: int) -> P:
        return self.int_lower(lhs, self._int_scalar_like(lhs, rhs))

    @default
    def int_lower_equal_elem(self, lhs: P, rhs: int) -> P:
        return self.int_lower_equal(lhs, self._int_scalar_like(lhs, rhs))

    # -- reductions ---------------------------------------------------------------------------
    @required
    def int_sum_dim(self, tensor: P, dim: int) -> P: ...

    @required
    def int_prod_dim(self, tensor: P, dim: int) -> P: ...

    @required
    def int_argmax(self, tensor: P, dim: int) -> P: ...

    @required
    def int_argmin(self, tensor: P, dim: int) -> P: ...

    @required
    def int_cumsum(self, tensor: P, dim: int) -> P: ...

    def _int_flat(self, tensor: P) -> P:
        return self.int_reshape(tensor, (-1,) if self.int_shape(tensor) != () else (1,))

    @default
    def int_sum(self, tensor: P) -> P:
        return self.int_sum_dim(self._int_flat(tensor), 0)

    @default
    def int_prod(self, tensor: P) -> P:
        return self.int_prod_dim(self._int_flat(tensor), 0)

    @default
    def int_mean_dim(self, tensor: P, dim: int) -> P:
        """Floor of the mean, in the int dtype (as Burn's int mean)."""
        return self.int_div_scalar(self.int_sum_dim(tensor, dim), self.int_shape(tensor)[dim])

    @default
    def int_mean(self, tensor: P) -> P:
        return self.int_mean_dim(self._int_flat(tensor), 0)

    @default
    def int_max_dim(self, tensor: P, dim: int) -> P:
        return self.int_gather(dim, tensor, self.int_argmax(tensor, dim))

    @default
    def int_min_dim(self, tensor: P, dim: int) -> P:
        return self.int_gather(dim, tensor, self.int_argmin(tensor, dim))

    @default
    def int_max_dim_with_indices(self, tensor: P, dim: int) -> tuple[P, P]:
        indices = self.int_argmax(tensor, dim)
        return self.int_gather(dim, tensor, indices), indices

    @default
    def int_min_dim_with_indices(self, tensor: P, dim: int) -> tuple[P, P]:
        indices = self.int_argmin(tensor, dim)
        return self.int_gather(dim, tensor, indices), indices

    @default
    def int_max(self, tensor: P) -> P:
        return self.int_max_dim(self._int_flat(tensor), 0)

    @default
    def int_min(self, tensor: P) -> P:
        return self.int_min_dim(self._int_flat(tensor), 0)

    # -- shape ops ----------------------------------------------------------------------------
    @required
    def int_reshape(self, tensor: P, shape: Shape) -> P: ...

    @required
    def int_permute(self, tensor: P, axes: Shape) -> P: ...

    @required
    def int_flip(self, tensor: P, axes: Shape) -> P: ...

    @required
    def int_expand(self, tensor: P, shape: Shape) -> P: ...

    @required
    def int_slice(self, tensor: P, slices: Slices) -> P: ...

    @required
    def int_slice_assign(self, tensor: P, slices: Slices, value: P) -> P: ...

    @required
    def int_cat(self, tensors: Sequence[P], dim: int) -> P: ...

    @default
    def int_swap_dims(self, tensor: P, dim1: int, dim2: int) -> P:
        axes = list(range(len(self.int_shape(tensor))))
        axes[dim1], axes[dim2] = axes[dim2], axes[dim1]
        return self.int_permute(tensor, tuple(axes))

    @default
    def int_repeat_dim(self, tensor: P, dim: int, times: int) -> P:
        return self.int_cat([tensor] * times, dim) if times > 0 else self.int_slice(
            tensor, tuple(slice(0, 0 if d == dim else n) for d, n in enumerate(self.int_shape(tensor)))
        )

    # -- indexing -----------------------------------------------------------------------------
    @required
    def int_gather(self, dim: int, tensor: P, indices: P) -> P: ...

    @required
    def int_scatter_add(self, dim: int, tensor: P, indices: P, values: P) -> P: ...

    @required
    def int_select(self, tensor: P, dim: int, indices: P) -> P: ...

    @required
    def int_select_add(self, tensor: P, dim: int, indices: P, values: P) -> P: ...

    @required
    def int_mask_where(self, tensor: P, mask: P, value: P) -> P: ...

    @required
    def int_mask_fill(self, tensor: P, mask: P, value: int) -> P: ...

    # -- sorting ------------------------------------------------------------------------------
    @required
    def int_sort_with_indices(self, tensor: P, dim: int, descending: bool) -> tuple[P, P]: ...

    @default
    def int_sort(self, tensor: P, dim: int, descending: bool) -> P:
        return self.int_sort_with_indices(tensor, dim, descending)[0]

    @default
    def int_argsort(self, tensor: P, dim: int, descending: bool) -> P:
        return self.int_sort_with_indices(tensor, dim, descending)[1]
