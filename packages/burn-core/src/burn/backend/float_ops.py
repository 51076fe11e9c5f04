"""Float ops of the backend contract (Burn's ``FloatTensorOps``).

Conventions for every op family (float, int, bool):
- Primitives are opaque; only the backend looks inside them.
- Dims are already normalized by the Tensor layer: ``0 <= dim < rank``.
- Binary ops broadcast like NumPy and must raise (any exception) on incompatible shapes; when
  the operands' dtypes differ, the result has the wider one. Scalar ops keep the tensor's dtype.
- Reductions along a dim keep it with size 1 (``sum_dim``, ``argmax``...); full reductions
  (``sum``, ``max``...) return a tensor of shape ``(1,)``, as in Burn.
- `slices` is a tuple with one Python ``slice`` per dim, with concrete ``0 <= start <= stop``
  within bounds and ``step >= 1``.
- Indices are int primitives. ``argmax``/``argmin`` return the first extremum. Sorting is stable.
"""

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

P = Any  # an opaque primitive
Shape = tuple[int, ...]
Slices = tuple[slice, ...]


class FloatOps:
    """Float tensor ops. See the module docstring for the conventions."""

    # -- host exchange, metadata --------------------------------------------------------------
    @required
    def float_from_data(self, data: TensorData, device: Device) -> P:
        """A primitive holding `data` (a float dtype the backend declares) on `device`."""

    @required
    def float_into_data(self, tensor: P) -> TensorData:
        """The contents on the host, in the primitive's own dtype."""

    @required
    def float_device(self, tensor: P) -> Device: ...

    @required
    def float_to_device(self, tensor: P, device: Device) -> P: ...

    @required
    def float_shape(self, tensor: P) -> Shape: ...

    @required
    def float_get_dtype(self, tensor: P) -> DType: ...

    @required
    def float_cast(self, tensor: P, dtype: DType) -> P:
        """The same values in another float dtype."""

    @required
    def float_into_int(self, tensor: P, dtype: DType) -> P:
        """Int primitive of `dtype`, values truncated toward zero."""

    # -- creation -----------------------------------------------------------------------------
    @default
    def float_full(self, shape: Shape, value: float, device: Device, dtype: DType) -> P:
        return self.float_from_data(TensorData(np.full(shape, value, dtype=dtype.numpy)), device)

    @default
    def float_zeros(self, shape: Shape, device: Device, dtype: DType) -> P:
        return self.float_full(shape, 0.0, device, dtype)

    @default
    def float_ones(self, shape: Shape, device: Device, dtype: DType) -> P:
        return self.float_full(shape, 1.0, device, dtype)

    @default
    def float_empty(self, shape: Shape, device: Device, dtype: DType) -> P:
        """Uninitialized contents are allowed; the default gives zeros."""
        return self.float_zeros(shape, device, dtype)

    @default
    def float_random(self, shape: Shape, distribution: Distribution, device: Device, dtype: DType) -> P:
        """Draws from the backend's seeded host generator (see `Backend.seed`)."""
        values = sample_host(self.rng, shape, distribution)  # type: ignore[attr-defined]
        return self.float_from_data(TensorData(values.astype(dtype.numpy)), device)

    # -- arithmetic ---------------------------------------------------------------------------
    @required
    def float_add(self, lhs: P, rhs: P) -> P: ...

    @required
    def float_sub(self, lhs: P, rhs: P) -> P: ...

    @required
    def float_mul(self, lhs: P, rhs: P) -> P: ...

    @required
    def float_div(self, lhs: P, rhs: P) -> P: ...

    @required
    def float_remainder(self, lhs: P, rhs: P) -> P:
        """Remainder with the sign of the divisor (Python's ``%``)."""

    @required
    def float_powf(self, lhs: P, rhs: P) -> P: ...

    @required
    def float_matmul(self, lhs: P, rhs: P) -> P:
        """Matrix product over the last two dims; leading (batch) dims broadcast. Ranks >= 2."""

    def _float_scalar_like(self, tensor: P, value: float) -> P:
        return self.float_full((), value, self.float_device(tensor), self.float_get_dtype(tensor))

    @default
    def float_add_scalar(self, lhs: P, rhs: float) -> P:
        return self.float_add(lhs, self._float_scalar_like(lhs, rhs))

    @default
    def float_sub_scalar(self, lhs: P, rhs: float) -> P:
        return self.float_sub(lhs, self._float_scalar_like(lhs, rhs))

    @default
    def float_mul_scalar(self, lhs: P, rhs: float) -> P:
        return self.float_mul(lhs, self._float_scalar_like(lhs, rhs))

    @default
    def float_div_scalar(self, lhs: P, rhs: float) -> P:
        return self.float_div(lhs, self._float_scalar_like(lhs, rhs))

    @default
    def float_remainder_scalar(self, lhs: P, rhs: float) -> P:
        return self.float_remainder(lhs, self._float_scalar_like(lhs, rhs))

    @default
    def float_powf_scalar(self, lhs: P, rhs: float) -> P:
        return self.float_powf(lhs, self._float_scalar_like(lhs, rhs))

    # -- unary math ---------------------------------------------------------------------------
    @required
    def float_exp(self, tensor: P) -> P: ...

    @required
    def float_log(self, tensor: P) -> P: ...

    @required
    def float_sqrt(self, tensor: P) -> P: ...

    @required
    def float_abs(self, tensor: P) -> P: ...

    @required
    def float_sin(self, tensor: P) -> P: ...

    @required
    def float_cos(self, tensor: P) -> P: ...

    @required
    def float_tanh(self, tensor: P) -> P: ...

    @required
    def float_erf(self, tensor: P) -> P: ...

    @required
    def float_round(self, tensor: P) -> P:
        """Round half to even, as Burn and NumPy do."""

    @required
    def float_floor(self, tensor: P) -> P: ...

    @required
    def float_ceil(self, tensor: P) -> P: ...

    @default
    def float_neg(self, tensor: P) -> P:
        return self.float_mul_scalar(tensor, -1.0)

    @default
    def float_recip(self, tensor: P) -> P:
        return self.float_div(self._float_scalar_like(tensor, 1.0), tensor)

    @default
    def float_log1p(self, tensor: P) -> P:
        return self.float_log(self.float_add_scalar(tensor, 1.0))

    @default
    def float_sign(self, tensor: P) -> P:
        dtype = self.float_get_dtype(tensor)
        positive = self.bool_into_float(self.float_greater_elem(tensor, 0.0), dtype)  # type: ignore[attr-defined]
        negative = self.bool_into_float(self.float_lower_elem(tensor, 0.0), dtype)  # type: ignore[attr-defined]
        return self.float_sub(positive, negative)

    @default
    def float_clamp_min(self, tensor: P, min: float) -> P:
        return self.float_mask_fill(tensor, self.float_lower_elem(tensor, min), min)

    @default
    def float_clamp_max(self, tensor: P, max: float) -> P:
        return self.float_mask_fill(tensor, self.float_greater_elem(tensor, max), max)

    @default
    def float_clamp(self, tensor: P, min: float, max: float) -> P:
        return self.float_clamp_max(self.float_clamp_min(tensor, min), max)

    # -- comparisons (return bool primitives) -------------------------------------------------
    @required
    def float_equal(self, lhs: P, rhs: P) -> P: ...

    @required
    def float_greater(self, lhs: P, rhs: P) -> P: ...

    @required
    def float_greater_equal(self, lhs: P, rhs: P) -> P: ...

    @required
    def float_lower(self, lhs: P, rhs: P) -> P: ...

    @required
    def float_lower_equal(self, lhs: P, rhs: P) -> P: ...

    @default
    def float_not_equal(self, lhs: P, rhs: P) -> P:
        return self.bool_not(self.float_equal(lhs, rhs))  # type: ignore[attr-defined]

    @default
    def float_equal_elem(self, lhs: P, rhs: float) -> P:
        return self.float_equal(lhs, self._float_scalar_like(lhs, rhs))

    @default
    def float_not_equal_elem(self, lhs: P, rhs: float) -> P:
        return self.float_not_equal(lhs, self._float_scalar_like(lhs, rhs))

    @default
    def float_greater_elem(self, lhs: P, rhs: float) -> P:
        return self.float_greater(lhs, self._float_scalar_like(lhs, rhs))

    @default
    def float_greater_equal_elem(self, lhs: P, rhs: float) -> P:
        return self.float_greater_equal(lhs, self._float_scalar_like(lhs, rhs))

    @default
    def float_lower_elem(self, lhs: P, rhs: float) -> P:
        return self.float_lower(lhs, self._float_scalar_like(lhs, rhs))

    @default
    def float_lower_equal_elem(self, lhs: P, rhs: float) -> P:
        return self.float_lower_equal(lhs, self._float_scalar_like(lhs, rhs))

    @default
    def float_is_nan(self, tensor: P) -> P:
        return self.float_not_equal(tensor, tensor)

    @default
    def float_is_inf(self, tensor: P) -> P:
        return self.float_equal_elem(self.float_abs(tensor), float("inf"))

    # -- reductions ---------------------------------------------------------------------------
    @required
    def float_sum_dim(self, tensor: P, dim: int) -> P: ...

    @required
    def float_prod_dim(self, tensor: P, dim: int) -> P: ...

    @required
    def float_argmax(self, tensor: P, dim: int) -> P:
        """Int primitive (the backend's int dtype) of the first maximum's index, dim kept."""

    @required
    def float_argmin(self, tensor: P, dim: int) -> P: ...

    @required
    def float_cumsum(self, tensor: P, dim: int) -> P: ...

    def _float_flat(self, tensor: P) -> P:
        return self.float_reshape(tensor, (-1,) if self.float_shape(tensor) != () else (1,))

    @default
    def float_sum(self, tensor: P) -> P:
        return self.float_sum_dim(self._float_flat(tensor), 0)

    @default
    def float_mean(self, tensor: P) -> P:
        flat = self._float_flat(tensor)
        return self.float_div_scalar(self.float_sum_dim(flat, 0), float(self.float_shape(flat)[0]))

    @default
    def float_mean_dim(self, tensor: P, dim: int) -> P:
        return self.float_div_scalar(self.float_sum_dim(tensor, dim), float(self.float_shape(tensor)[dim]))

    @default
    def float_prod(self, tensor: P) -> P:
        return self.float_prod_dim(self._float_flat(tensor), 0)

    @default
    def float_max_dim(self, tensor: P, dim: int) -> P:
        return self.float_gather(dim, tensor, self.float_argmax(tensor, dim))

    @default
    def float_min_dim(self, tensor: P, dim: int) -> P:
        return self.float_gather(dim, tensor, self.float_argmin(tensor, dim))

    @default
    def float_max_dim_with_indices(self, tensor: P, dim: int) -> tuple[P, P]:
        indices = self.float_argmax(tensor, dim)
        return self.float_gather(dim, tensor, indices), indices

    @default
    def float_min_dim_with_indices(self, tensor: P, dim: int) -> tuple[P, P]:
        indices = self.float_argmin(tensor, dim)
        return self.float_gather(dim, tensor, indices), indices

    @default
    def float_max(self, tensor: P) -> P:
        return self.float_max_dim(self._float_flat(tensor), 0)

    @default
    def float_min(self, tensor: P) -> P:
        return self.float_min_dim(self._float_flat(tensor), 0)

    # -- shape ops ----------------------------------------------------------------------------
    @required
    def float_reshape(self, tensor: P, shape: Shape) -> P:
        """`shape` may hold one ``-1``. Views are allowed: tensors are immutable."""

    @required
    def float_permute(self, tensor: P, axes: Shape) -> P: ...

    @required
    def float_flip(self, tensor: P, axes: Shape) -> P: ...

    @required
    def float_expand(self, tensor: P, shape: Shape) -> P:
        """Broadcast to `shape` (NumPy rules; may add leading dims)."""

    @required
    def float_slice(self, tensor: P, slices: Slices) -> P: ...

    @required
    def float_slice_assign(self, tensor: P, slices: Slices, value: P) -> P:
        """A new primitive: `tensor` with the region `slices` replaced by `value`."""

    @required
    def float_cat(self, tensors: Sequence[P], dim: int) -> P: ...

    @default
    def float_swap_dims(self, tensor: P, dim1: int, dim2: int) -> P:
        axes = list(range(len(self.float_shape(tensor))))
        axes[dim1], axes[dim2] = axes[dim2], axes[dim1]
        return self.float_permute(tensor, tuple(axes))

    @default
    def float_repeat_dim(self, tensor: P, dim: int, times: int) -> P:
        return self.float_cat([tensor] * times, dim) if times > 0 else self.float_slice(
            tensor, tuple(slice(0, 0 if d == dim else n) for d, n in enumerate(self.float_shape(tensor)))
        )

    # -- indexing -----------------------------------------------------------------------------
    @required
    def float_gather(self, dim: int, tensor: P, indices: P) -> P:
        """``out[i][j] = tensor[i][indices[i][j]]`` along `dim`; indices has tensor's rank."""

    @required
    def float_scatter_add(self, dim: int, tensor: P, indices: P, values: P) -> P:
        """`tensor` plus `values` summed into the positions `indices` names along `dim`."""

    @required
    def float_select(self, tensor: P, dim: int, indices: P) -> P:
        """Rows `indices` (1-D int) of `dim`, in that order, repeats allowed."""

    @required
    def float_select_add(self, tensor: P, dim: int, indices: P, values: P) -> P:
        """`tensor` with `values` added at rows `indices` of `dim`; repeated rows accumulate."""

    @required
    def float_mask_where(self, tensor: P, mask: P, value: P) -> P:
        """`value` where `mask` is true, else `tensor` (all three broadcast)."""

    @required
    def float_mask_fill(self, tensor: P, mask: P, value: float) -> P: ...

    # -- sorting ------------------------------------------------------------------------------
    @required
    def float_sort_with_indices(self, tensor: P, dim: int, descending: bool) -> tuple[P, P]:
        """Stable sort along `dim`; NaNs go last ascending."""

    @default
    def float_sort(self, tensor: P, dim: int, descending: bool) -> P:
        return self.float_sort_with_indices(tensor, dim, descending)[0]

    @default
    def float_argsort(self, tensor: P, dim: int, descending: bool) -> P:
        return self.float_sort_with_indices(tensor, dim, descending)[1]

    # -- autodiff hooks (identity on backends without autodiff) -------------------------------
    @default
    def float_detach(self, tensor: P) -> P:
        return tensor

    @default
    def float_set_require_grad(self, tensor: P, require_grad: bool) -> P:
        if require_grad:
            raise TypeError(
                f"backend {self.name!r} has no autodiff: use burn.backend('autodiff({self.name})')"  # type: ignore[attr-defined]
            )
        return tensor

    @default
    def float_is_require_grad(self, tensor: P) -> bool:
        return False


def sample_host(rng: np.random.Generator, shape: Shape, distribution: Distribution) -> np.ndarray:
    """Float64 samples of `distribution` from a NumPy generator (used by default random ops)."""
    if isinstance(distribution, Uniform):
        return rng.uniform(distribution.low, distribution.high, size=shape)
    if isinstance(distribution, Normal):
        return rng.normal(distribution.mean, distribution.std, size=shape)
    if isinstance(distribution, Bernoulli):
        return (rng.random(size=shape) < distribution.prob).astype(np.float64)
    raise TypeError(f"unknown distribution {distribution!r}")
