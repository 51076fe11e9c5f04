"""The int family of the backend contract (Burn's ``IntTensorOps``): the float family's
conventions (`burn.backend.ops.float`), plus int matmul and the bitwise ops.

Int results carry no gradient. The bitwise defaults take the bits apart with floor division and
remainder by 2 (exact in two's complement for negative values too) and put them back with
Horner's rule, so no intermediate leaves the dtype's range. Shifts by an amount outside
``[0, bits)`` are not part of the contract (as in Burn); the defaults and burn-ndarray give 0
(left) and 0 or -1 (right) for amounts ``>= bits``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from burn.backend.contract import Elementwise, default, family, required
from burn.backend.ops.kinds import KindOps
from burn.backend.ops.kinds import scan as _scan
from burn.foundations.data import TensorData
from burn.foundations.distribution import Bernoulli, Distribution, Normal, Uniform
from burn.foundations.dtype import DType

if TYPE_CHECKING:
    from burn.backend.base import Backend
    from burn.backend.device import Device

P = Any
Shape = tuple[int, ...]
Slices = tuple[slice, ...]


def _ops(backend: object) -> Backend:
    """`backend` seen as a whole `Backend` (this mixin calls the other families' ops)."""
    return cast("Backend", backend)


def _int_info(dtype: DType) -> tuple[int, bool]:
    """``(bits, signed)`` of an int dtype."""
    info = np.iinfo(dtype.numpy)
    return info.bits, info.min < 0


@family("int", grad=False, bound=None, kind="int")
class IntOps(KindOps):
    """Int tensor ops. Division floors and remainder takes the divisor's sign (Python's ``//``
    and ``%``), so ``a == b * (a // b) + a % b`` always holds."""

    @required
    def int_from_data(self, data: TensorData, device: Device) -> P: ...

    @required(host_read=True)
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

    @required(ew=Elementwise("a", result="cast", kinds=("int",)), results=("float",))
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

    @default(random=True)
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
    @required(results=("bool",))
    def int_equal(self, lhs: P, rhs: P) -> P: ...

    @required(results=("bool",))
    def int_greater(self, lhs: P, rhs: P) -> P: ...

    @required(results=("bool",))
    def int_greater_equal(self, lhs: P, rhs: P) -> P: ...

    @required(results=("bool",))
    def int_lower(self, lhs: P, rhs: P) -> P: ...

    @required(results=("bool",))
    def int_lower_equal(self, lhs: P, rhs: P) -> P: ...

    @default(results=("bool",))
    def int_not_equal(self, lhs: P, rhs: P) -> P:
        return self.bool_not(self.int_equal(lhs, rhs))  # type: ignore[attr-defined]

    @default(results=("bool",))
    def int_equal_elem(self, lhs: P, rhs: int) -> P:
        return self.int_equal(lhs, self._int_scalar_like(lhs, rhs))

    @default(results=("bool",))
    def int_not_equal_elem(self, lhs: P, rhs: int) -> P:
        return self.int_not_equal(lhs, self._int_scalar_like(lhs, rhs))

    @default(results=("bool",))
    def int_greater_elem(self, lhs: P, rhs: int) -> P:
        return self.int_greater(lhs, self._int_scalar_like(lhs, rhs))

    @default(results=("bool",))
    def int_greater_equal_elem(self, lhs: P, rhs: int) -> P:
        return self.int_greater_equal(lhs, self._int_scalar_like(lhs, rhs))

    @default(results=("bool",))
    def int_lower_elem(self, lhs: P, rhs: int) -> P:
        return self.int_lower(lhs, self._int_scalar_like(lhs, rhs))

    @default(results=("bool",))
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

    @default(results=("int", "int"))
    def int_max_dim_with_indices(self, tensor: P, dim: int) -> tuple[P, P]:
        indices = self.int_argmax(tensor, dim)
        return self.int_gather(dim, tensor, indices), indices

    @default(results=("int", "int"))
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
    @required(results=("int", "int"))
    def int_sort_with_indices(self, tensor: P, dim: int, descending: bool) -> tuple[P, P]: ...

    @default
    def int_sort(self, tensor: P, dim: int, descending: bool) -> P:
        return self.int_sort_with_indices(tensor, dim, descending)[0]

    @default
    def int_argsort(self, tensor: P, dim: int, descending: bool) -> P:
        return self.int_sort_with_indices(tensor, dim, descending)[1]

    @default
    def int_cumprod(self, tensor: P, dim: int) -> P:
        b = _ops(self)
        return _scan(b, tensor, dim, b.int_mul, b.int_shape(tensor), b.int_cat, b.int_slice)

    @default
    def int_cummax(self, tensor: P, dim: int) -> P:
        b = _ops(self)
        combine = lambda later, earlier: b.int_mask_where(later, b.int_greater(earlier, later), earlier)  # noqa: E731
        return _scan(b, tensor, dim, combine, b.int_shape(tensor), b.int_cat, b.int_slice)

    @default
    def int_cummin(self, tensor: P, dim: int) -> P:
        b = _ops(self)
        combine = lambda later, earlier: b.int_mask_where(later, b.int_lower(earlier, later), earlier)  # noqa: E731
        return _scan(b, tensor, dim, combine, b.int_shape(tensor), b.int_cat, b.int_slice)

    # -- int matmul ---------------------------------------------------------------------------
    @default
    def int_matmul(self, lhs: P, rhs: P) -> P:
        """Matrix product over the last two dims (ranks >= 2; batch dims broadcast), in the int
        dtype (overflow wraps or is undefined, as for `int_mul`)."""
        b = _ops(self)
        sa, sb = b.int_shape(lhs), b.int_shape(rhs)
        if len(sa) < 2 or len(sb) < 2 or sa[-1] != sb[-2]:
            raise ValueError(f"int_matmul: shapes {sa} and {sb} do not multiply")
        # [..., m, k, 1] * [..., 1, k, n] summed over k: exact, and k m n products of memory.
        prod = b.int_mul(b.int_reshape(lhs, (*sa, 1)), b.int_reshape(rhs, (*sb[:-2], 1, *sb[-2:])))
        out = b.int_sum_dim(prod, len(b.int_shape(prod)) - 2)
        shape = b.int_shape(out)
        return b.int_reshape(out, (*shape[:-2], shape[-1]))

    # -- bitwise ops on ints (two's complement) -----------------------------------------------
    def _int_bits(self, tensor: P, bits: int) -> list[P]:
        """The `bits` low bits of `tensor` as 0/1 ints, least significant first."""
        b = _ops(self)
        out = []
        for _ in range(bits):
            out.append(b.int_remainder_scalar(tensor, 2))  # 0 or 1: the divisor's sign
            tensor = b.int_div_scalar(tensor, 2)  # floor: an arithmetic shift
        return out

    def _int_from_bits(self, bits: list[P], signed: bool) -> P:
        """Horner's rule from the top bit (weight -2^(n-1) when signed): stays in range."""
        b = _ops(self)
        out = b.int_neg(bits[-1]) if signed else bits[-1]
        for bit in reversed(bits[:-1]):
            out = b.int_add(b.int_mul_scalar(out, 2), bit)
        return out

    def _int_bitwise(self, lhs: P, rhs: P, combine: Callable[[P, P], P]) -> P:
        b = _ops(self)
        dtype = DType.from_any(np.promote_types(b.int_get_dtype(lhs).numpy, b.int_get_dtype(rhs).numpy))
        bits, signed = _int_info(dtype)
        pairs = zip(self._int_bits(lhs, bits), self._int_bits(rhs, bits), strict=True)
        return self._int_from_bits([combine(x, y) for x, y in pairs], signed)

    @default
    def int_bitwise_and(self, lhs: P, rhs: P) -> P:
        b = _ops(self)
        return self._int_bitwise(lhs, rhs, b.int_mul)

    @default
    def int_bitwise_or(self, lhs: P, rhs: P) -> P:
        b = _ops(self)
        return self._int_bitwise(lhs, rhs, lambda x, y: b.int_sub(b.int_add(x, y), b.int_mul(x, y)))

    @default
    def int_bitwise_xor(self, lhs: P, rhs: P) -> P:
        b = _ops(self)
        return self._int_bitwise(lhs, rhs, lambda x, y: b.int_remainder_scalar(b.int_add(x, y), 2))

    @default
    def int_bitwise_and_scalar(self, lhs: P, rhs: int) -> P:
        b = _ops(self)
        return b.int_bitwise_and(lhs, b._int_scalar_like(lhs, rhs))

    @default
    def int_bitwise_or_scalar(self, lhs: P, rhs: int) -> P:
        b = _ops(self)
        return b.int_bitwise_or(lhs, b._int_scalar_like(lhs, rhs))

    @default
    def int_bitwise_xor_scalar(self, lhs: P, rhs: int) -> P:
        b = _ops(self)
        return b.int_bitwise_xor(lhs, b._int_scalar_like(lhs, rhs))

    @default
    def int_bitwise_not(self, tensor: P) -> P:
        b = _ops(self)
        bits, signed = _int_info(b.int_get_dtype(tensor))
        if signed:
            return b.int_sub_scalar(b.int_neg(tensor), 1)  # ~x == -x - 1
        return b.int_sub(b._int_scalar_like(tensor, (1 << bits) - 1), tensor)  # ~x == max - x

    def _int_shift(self, lhs: P, rhs: P, step: Callable[[P], P]) -> P:
        # One conditional step per bit: where rhs > s, shift once more.
        b = _ops(self)
        bits, _ = _int_info(b.int_get_dtype(lhs))
        for s in range(bits):
            lhs = b.int_mask_where(lhs, b.int_greater_elem(rhs, s), step(lhs))
        return lhs

    @default
    def int_bitwise_left_shift(self, lhs: P, rhs: P) -> P:
        """``lhs << rhs`` element-wise; bits shifted out are lost."""
        b = _ops(self)
        return self._int_shift(lhs, rhs, lambda x: b.int_mul_scalar(x, 2))

    @default
    def int_bitwise_right_shift(self, lhs: P, rhs: P) -> P:
        """``lhs >> rhs`` element-wise: arithmetic (sign-filling) for signed dtypes."""
        b = _ops(self)
        return self._int_shift(lhs, rhs, lambda x: b.int_div_scalar(x, 2))

    @default
    def int_bitwise_left_shift_scalar(self, lhs: P, rhs: int) -> P:
        b = _ops(self)
        bits, _ = _int_info(b.int_get_dtype(lhs))
        for _ in range(min(rhs, bits)):
            lhs = b.int_mul_scalar(lhs, 2)
        return lhs

    @default
    def int_bitwise_right_shift_scalar(self, lhs: P, rhs: int) -> P:
        b = _ops(self)
        bits, _ = _int_info(b.int_get_dtype(lhs))
        for _ in range(min(rhs, bits)):
            lhs = b.int_div_scalar(lhs, 2)
        return lhs

    @default
    def int_unfold(self, tensor: P, dim: int, size: int, step: int) -> P:
        return self._unfold("int", tensor, dim, size, step)

    @default
    def int_gather_nd(self, tensor: P, indices: P) -> P:
        return self._gather_nd("int", tensor, indices)

    @default
    def int_scatter_nd(self, tensor: P, indices: P, values: P, mode: str) -> P:
        return self._scatter_nd("int", tensor, indices, values, mode)

    @default
    def int_scatter_assign(self, dim: int, tensor: P, indices: P, values: P) -> P:
        return self._scatter_assign("int", dim, tensor, indices, values)

    @default
    def int_select_assign(self, tensor: P, dim: int, indices: P, values: P) -> P:
        return self._select_assign("int", tensor, dim, indices, values)

    @default
    def int_cross(self, lhs: P, rhs: P, dim: int) -> P:
        return self._cross("int", lhs, rhs, dim)
