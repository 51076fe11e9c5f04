"""The float family of the backend contract (Burn's ``FloatTensorOps``): creation and host
exchange, arithmetic, math (trigonometric and hyperbolic functions, rounding, C's ``fmod``),
comparisons, reductions and cumulative ops, layout and indexing (reshape to scatter_nd, unfold,
cross), sorting, and the ``*_owned`` variants that may reuse an operand's buffer.

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

What autodiff, checkpointing and fusion need to know of an op is declared at the op, in its
decorator (see `burn.backend.contract`): ``grad=False`` for a result without a gradient,
``bound="memory"`` for an element-wise op whose output checkpointing recomputes (the family's
default is ``"compute"``: the output is kept), ``ew=`` its per-element C expression.

The defaults favour being exact over being fast (a backend with a native kernel overrides them):
the inverse trigonometric functions start from a small polynomial for ``atan`` on ``[0, 1]`` and
refine it with two Newton steps that use only ``sin``/``cos`` (each step cubes the error), then
unfold the octant; ``asin``/``acos`` go through ``atan2``; the cumulative ops are a log-step scan
(``ceil(log2 n)`` combine steps of slices and ``cat``). Index tables that depend only on shapes
are built on the host; tensor contents never are.

The ``*_owned`` ops (Burn's ownership trick; see `burn.foundations.ownership`): the Tensor layer
calls one only after proving that an operand's tensor is a dying temporary and moving its
primitive out, so the operands are handed over by value. A backend may then write the result
into an operand's buffer, but only where it proves for itself that nothing else refers to that
buffer; otherwise it computes out of place. Results are the plain op's, bit for bit. The
defaults call the plain op, so a backend that does not declare the ``buffer_reuse`` feature
needs nothing for them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from burn.backend.contract import Elementwise, binary, compare, default, family, required, unary
from burn.backend.ops.kinds import KindOps
from burn.backend.ops.kinds import scan as _scan
from burn.foundations.data import TensorData
from burn.foundations.distribution import Bernoulli, Distribution, Normal, Uniform
from burn.foundations.dtype import DType

if TYPE_CHECKING:
    from burn.backend.base import Backend
    from burn.backend.device import Device

P = Any  # an opaque primitive
Shape = tuple[int, ...]
Slices = tuple[slice, ...]

_HALF_PI = math.pi / 2


def _ops(backend: object) -> Backend:
    """`backend` seen as a whole `Backend` (this mixin calls the other families' ops)."""
    return cast("Backend", backend)


@family("float")
class FloatOps(KindOps):
    """Float tensor ops. See the module docstring for the conventions."""

    # -- host exchange, metadata --------------------------------------------------------------
    @required(grad=False)
    def float_from_data(self, data: TensorData, device: Device) -> P:
        """A primitive holding `data` (a float dtype the backend declares) on `device`."""

    @required(grad=False, host_read=True)
    def float_into_data(self, tensor: P) -> TensorData:
        """The contents on the host, in the primitive's own dtype."""

    @required(grad=False)
    def float_device(self, tensor: P) -> Device: ...

    @required
    def float_to_device(self, tensor: P, device: Device) -> P: ...

    @required(grad=False)
    def float_shape(self, tensor: P) -> Shape: ...

    @required(grad=False)
    def float_get_dtype(self, tensor: P) -> DType: ...

    @required(ew=Elementwise("a", result="cast"))
    def float_cast(self, tensor: P, dtype: DType) -> P:
        """The same values in another float dtype."""

    @required(grad=False, results=("int",))
    def float_into_int(self, tensor: P, dtype: DType) -> P:
        """Int primitive of `dtype`, values truncated toward zero."""

    # -- creation -----------------------------------------------------------------------------
    @default(grad=False)
    def float_full(self, shape: Shape, value: float, device: Device, dtype: DType) -> P:
        return self.float_from_data(TensorData(np.full(shape, value, dtype=dtype.numpy)), device)

    @default(grad=False)
    def float_zeros(self, shape: Shape, device: Device, dtype: DType) -> P:
        return self.float_full(shape, 0.0, device, dtype)

    @default(grad=False)
    def float_ones(self, shape: Shape, device: Device, dtype: DType) -> P:
        return self.float_full(shape, 1.0, device, dtype)

    @default(grad=False)
    def float_empty(self, shape: Shape, device: Device, dtype: DType) -> P:
        """Uninitialized contents are allowed; the default gives zeros."""
        return self.float_zeros(shape, device, dtype)

    @default(grad=False, random=True)
    def float_random(self, shape: Shape, distribution: Distribution, device: Device, dtype: DType) -> P:
        """Draws from the backend's seeded host generator (see `Backend.seed`)."""
        values = sample_host(self.rng, shape, distribution)  # type: ignore[attr-defined]
        return self.float_from_data(TensorData(values.astype(dtype.numpy)), device)

    # -- arithmetic ---------------------------------------------------------------------------
    @required(bound="memory", ew=binary("a + b"))
    def float_add(self, lhs: P, rhs: P) -> P: ...

    @required(bound="memory", ew=binary("a - b"))
    def float_sub(self, lhs: P, rhs: P) -> P: ...

    @required(bound="memory", ew=binary("a * b"))
    def float_mul(self, lhs: P, rhs: P) -> P: ...

    @required(bound="memory", ew=binary("a / b"))
    def float_div(self, lhs: P, rhs: P) -> P: ...

    @required(bound="memory", ew=binary("b_rem(a, b)"))
    def float_remainder(self, lhs: P, rhs: P) -> P:
        """Remainder with the sign of the divisor (Python's ``%``)."""

    @required(bound="memory", ew=binary("b_pow(a, b)"))
    def float_powf(self, lhs: P, rhs: P) -> P: ...

    @required
    def float_matmul(self, lhs: P, rhs: P) -> P:
        """Matrix product over the last two dims; leading (batch) dims broadcast. Ranks >= 2."""

    def _float_scalar_like(self, tensor: P, value: float) -> P:
        return self.float_full((), value, self.float_device(tensor), self.float_get_dtype(tensor))

    @default(bound="memory", ew=unary("a + s0", 1))
    def float_add_scalar(self, lhs: P, rhs: float) -> P:
        return self.float_add(lhs, self._float_scalar_like(lhs, rhs))

    @default(bound="memory", ew=unary("a - s0", 1))
    def float_sub_scalar(self, lhs: P, rhs: float) -> P:
        return self.float_sub(lhs, self._float_scalar_like(lhs, rhs))

    @default(bound="memory", ew=unary("a * s0", 1))
    def float_mul_scalar(self, lhs: P, rhs: float) -> P:
        return self.float_mul(lhs, self._float_scalar_like(lhs, rhs))

    @default(bound="memory", ew=unary("a / s0", 1))
    def float_div_scalar(self, lhs: P, rhs: float) -> P:
        return self.float_div(lhs, self._float_scalar_like(lhs, rhs))

    @default(bound="memory", ew=unary("b_rem(a, s0)", 1))
    def float_remainder_scalar(self, lhs: P, rhs: float) -> P:
        return self.float_remainder(lhs, self._float_scalar_like(lhs, rhs))

    # The exponents b_pow (burn.backend.fusion_exprs) takes apart, written into kernels as literals.
    @default(bound="memory", ew=unary("b_pow(a, s0)", 1, (0.0, 1.0, 2.0, 3.0, 4.0, -1.0, -2.0, 0.5, -0.5)))
    def float_powf_scalar(self, lhs: P, rhs: float) -> P:
        return self.float_powf(lhs, self._float_scalar_like(lhs, rhs))

    # -- unary math ---------------------------------------------------------------------------
    @required(bound="memory", ew=unary("exp(a)"))
    def float_exp(self, tensor: P) -> P: ...

    @required(bound="memory", ew=unary("log(a)"))
    def float_log(self, tensor: P) -> P: ...

    @required(bound="memory", ew=unary("b_sqrt(a)"))
    def float_sqrt(self, tensor: P) -> P: ...

    @required(bound="memory", ew=unary("b_fabs(a)"))
    def float_abs(self, tensor: P) -> P: ...

    @required(bound="memory", ew=unary("sin(a)"))
    def float_sin(self, tensor: P) -> P: ...

    @required(bound="memory", ew=unary("cos(a)"))
    def float_cos(self, tensor: P) -> P: ...

    @required(bound="memory", ew=unary("tanh(a)"))
    def float_tanh(self, tensor: P) -> P: ...

    @required(bound="memory", ew=unary("erf(a)"))
    def float_erf(self, tensor: P) -> P: ...

    @required(ew=unary("b_rint(a)"))
    def float_round(self, tensor: P) -> P:
        """Round half to even, as Burn and NumPy do."""

    @required(ew=unary("b_floor(a)"))
    def float_floor(self, tensor: P) -> P: ...

    @required(ew=unary("b_ceil(a)"))
    def float_ceil(self, tensor: P) -> P: ...

    @default(bound="memory", ew=unary("-a"))
    def float_neg(self, tensor: P) -> P:
        return self.float_mul_scalar(tensor, -1.0)

    @default(bound="memory", ew=unary("(T)1 / a"))
    def float_recip(self, tensor: P) -> P:
        return self.float_div(self._float_scalar_like(tensor, 1.0), tensor)

    @default(bound="memory", ew=unary("log1p(a)"))
    def float_log1p(self, tensor: P) -> P:
        return self.float_log(self.float_add_scalar(tensor, 1.0))

    @default(ew=unary("b_sign(a)"))
    def float_sign(self, tensor: P) -> P:
        dtype = self.float_get_dtype(tensor)
        positive = self.bool_into_float(self.float_greater_elem(tensor, 0.0), dtype)  # type: ignore[attr-defined]
        negative = self.bool_into_float(self.float_lower_elem(tensor, 0.0), dtype)  # type: ignore[attr-defined]
        return self.float_sub(positive, negative)

    @default(bound="memory", ew=unary("a < s0 ? s0 : a", 1))
    def float_clamp_min(self, tensor: P, min: float) -> P:
        return self.float_mask_fill(tensor, self.float_lower_elem(tensor, min), min)

    @default(bound="memory", ew=unary("a > s0 ? s0 : a", 1))
    def float_clamp_max(self, tensor: P, max: float) -> P:
        return self.float_mask_fill(tensor, self.float_greater_elem(tensor, max), max)

    @default(bound="memory", ew=unary("a < s0 ? s0 : (a > s1 ? s1 : a)", 2))
    def float_clamp(self, tensor: P, min: float, max: float) -> P:
        return self.float_clamp_max(self.float_clamp_min(tensor, min), max)

    # -- comparisons (return bool primitives) -------------------------------------------------
    @required(grad=False, ew=compare("a == b"))
    def float_equal(self, lhs: P, rhs: P) -> P: ...

    @required(grad=False, ew=compare("a > b"))
    def float_greater(self, lhs: P, rhs: P) -> P: ...

    @required(grad=False, ew=compare("a >= b"))
    def float_greater_equal(self, lhs: P, rhs: P) -> P: ...

    @required(grad=False, ew=compare("a < b"))
    def float_lower(self, lhs: P, rhs: P) -> P: ...

    @required(grad=False, ew=compare("a <= b"))
    def float_lower_equal(self, lhs: P, rhs: P) -> P: ...

    @default(grad=False, ew=compare("a != b"))
    def float_not_equal(self, lhs: P, rhs: P) -> P:
        return self.bool_not(self.float_equal(lhs, rhs))  # type: ignore[attr-defined]

    @default(grad=False, ew=compare("a == s0", 1))
    def float_equal_elem(self, lhs: P, rhs: float) -> P:
        return self.float_equal(lhs, self._float_scalar_like(lhs, rhs))

    @default(grad=False, ew=compare("a != s0", 1))
    def float_not_equal_elem(self, lhs: P, rhs: float) -> P:
        return self.float_not_equal(lhs, self._float_scalar_like(lhs, rhs))

    @default(grad=False, ew=compare("a > s0", 1))
    def float_greater_elem(self, lhs: P, rhs: float) -> P:
        return self.float_greater(lhs, self._float_scalar_like(lhs, rhs))

    @default(grad=False, ew=compare("a >= s0", 1))
    def float_greater_equal_elem(self, lhs: P, rhs: float) -> P:
        return self.float_greater_equal(lhs, self._float_scalar_like(lhs, rhs))

    @default(grad=False, ew=compare("a < s0", 1))
    def float_lower_elem(self, lhs: P, rhs: float) -> P:
        return self.float_lower(lhs, self._float_scalar_like(lhs, rhs))

    @default(grad=False, ew=compare("a <= s0", 1))
    def float_lower_equal_elem(self, lhs: P, rhs: float) -> P:
        return self.float_lower_equal(lhs, self._float_scalar_like(lhs, rhs))

    @default(grad=False, ew=Elementwise("b_isnan(a)", result="bool"))
    def float_is_nan(self, tensor: P) -> P:
        return self.float_not_equal(tensor, tensor)

    @default(grad=False, ew=Elementwise("b_isinf(a)", result="bool"))
    def float_is_inf(self, tensor: P) -> P:
        return self.float_equal_elem(self.float_abs(tensor), float("inf"))

    # -- reductions ---------------------------------------------------------------------------
    @required
    def float_sum_dim(self, tensor: P, dim: int) -> P: ...

    @required
    def float_prod_dim(self, tensor: P, dim: int) -> P: ...

    @required(grad=False, results=("int",))
    def float_argmax(self, tensor: P, dim: int) -> P:
        """Int primitive (the backend's int dtype) of the first maximum's index, dim kept."""

    @required(grad=False, results=("int",))
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

    @default(results=("float", "int"))
    def float_max_dim_with_indices(self, tensor: P, dim: int) -> tuple[P, P]:
        indices = self.float_argmax(tensor, dim)
        return self.float_gather(dim, tensor, indices), indices

    @default(results=("float", "int"))
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

    @required(
        bound="memory",
        ew=Elementwise("b ? c : a", 3, kinds=("float", "bool", "float"), promote=(True, False, True)),
    )
    def float_mask_where(self, tensor: P, mask: P, value: P) -> P:
        """`value` where `mask` is true, else `tensor` (all three broadcast)."""

    @required(
        bound="memory", ew=Elementwise("b ? s0 : a", 2, 1, kinds=("float", "bool"), promote=(True, False))
    )
    def float_mask_fill(self, tensor: P, mask: P, value: float) -> P: ...

    # -- sorting ------------------------------------------------------------------------------
    @required(results=("float", "int"))
    def float_sort_with_indices(self, tensor: P, dim: int, descending: bool) -> tuple[P, P]:
        """Stable sort along `dim`; NaNs go last ascending."""

    @default
    def float_sort(self, tensor: P, dim: int, descending: bool) -> P:
        return self.float_sort_with_indices(tensor, dim, descending)[0]

    @default(grad=False, results=("int",))
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

    @default(grad=False)
    def float_is_require_grad(self, tensor: P) -> bool:
        return False

    # -- trigonometric and hyperbolic functions ----------------------------------------------
    @default(bound="memory")
    def float_tan(self, tensor: P) -> P:
        b = _ops(self)
        return b.float_div(b.float_sin(tensor), b.float_cos(tensor))

    @default(bound="memory")
    def float_sinh(self, tensor: P) -> P:
        b = _ops(self)
        return b.float_mul_scalar(b.float_sub(b.float_exp(tensor), b.float_exp(b.float_neg(tensor))), 0.5)

    @default(bound="memory")
    def float_cosh(self, tensor: P) -> P:
        b = _ops(self)
        return b.float_mul_scalar(b.float_add(b.float_exp(tensor), b.float_exp(b.float_neg(tensor))), 0.5)

    def _atan_unit(self, t: P) -> P:
        """``atan(t)`` for ``0 <= t <= 1`` (NaN stays NaN) from ``sin``/``cos`` only."""
        b = _ops(self)
        # Start within 4e-3 rad: atan t ~ t (pi/4 + 0.273 (1 - t)).
        a = b.float_mul(t, b.float_add_scalar(b.float_mul_scalar(t, -0.273), math.pi / 4 + 0.273))
        for _ in range(2):
            # a + tan(atan t - a) exactly is atan t; tan(d) = d + O(d^3), so each step cubes the error.
            s, c = b.float_sin(a), b.float_cos(a)
            r = b.float_div(b.float_sub(b.float_mul(t, c), s), b.float_add(c, b.float_mul(t, s)))
            a = b.float_add(a, r)
        return a

    @default(bound="memory")
    def float_atan2(self, lhs: P, rhs: P) -> P:
        """``atan2(lhs, rhs)``: the angle of the point ``(x=rhs, y=lhs)``, in ``[-pi, pi]``."""
        b = _ops(self)
        y, x = lhs, rhs
        ay, ax = b.float_abs(y), b.float_abs(x)
        steep = b.float_greater(ay, ax)  # |y| > |x|: take atan of |x|/|y| and reflect
        t = b.float_mask_where(b.float_div(ay, ax), steep, b.float_div(ax, ay))
        # equal magnitudes (both infinite included) give pi/4 exactly; both zero give 0
        t = b.float_mask_fill(t, b.float_equal(ay, ax), 1.0)
        t = b.float_mask_fill(t, b.bool_and(b.float_equal_elem(ay, 0.0), b.float_equal_elem(ax, 0.0)), 0.0)
        a = self._atan_unit(t)
        a = b.float_mask_where(a, steep, b.float_add_scalar(b.float_neg(a), _HALF_PI))
        a = b.float_mask_where(a, b.float_lower_elem(x, 0.0), b.float_add_scalar(b.float_neg(a), math.pi))
        return b.float_mask_where(a, b.float_lower_elem(y, 0.0), b.float_neg(a))

    @default(bound="memory")
    def float_atan(self, tensor: P) -> P:
        b = _ops(self)
        one = b._float_scalar_like(tensor, 1.0)
        return b.float_atan2(tensor, one)

    def _float_sqrt_one_minus_square(self, x: P) -> P:
        """``sqrt(1 - x^2)`` as ``sqrt((1 - x)(1 + x))``: no cancellation near ``|x| = 1``."""
        b = _ops(self)
        return b.float_sqrt(b.float_mul(b.float_add_scalar(b.float_neg(x), 1.0), b.float_add_scalar(x, 1.0)))

    @default(bound="memory")
    def float_asin(self, tensor: P) -> P:
        """NaN outside ``[-1, 1]``."""
        b = _ops(self)
        return b.float_atan2(tensor, self._float_sqrt_one_minus_square(tensor))

    @default(bound="memory")
    def float_acos(self, tensor: P) -> P:
        """NaN outside ``[-1, 1]``."""
        b = _ops(self)
        return b.float_atan2(self._float_sqrt_one_minus_square(tensor), tensor)

    @default(bound="memory")
    def float_asinh(self, tensor: P) -> P:
        b = _ops(self)
        # asinh|x| = log1p(|x| + x^2 / (1 + sqrt(1 + x^2))): no cancellation near 0; odd in x.
        ax = b.float_abs(tensor)
        sq = b.float_mul(ax, ax)
        root = b.float_add_scalar(b.float_sqrt(b.float_add_scalar(sq, 1.0)), 1.0)
        out = b.float_log1p(b.float_add(ax, b.float_div(sq, root)))
        return b.float_mask_where(out, b.float_lower_elem(tensor, 0.0), b.float_neg(out))

    @default(bound="memory")
    def float_acosh(self, tensor: P) -> P:
        """NaN below 1."""
        b = _ops(self)
        # acosh x = log1p(t + sqrt(t (t + 2))) with t = x - 1 (exact near 1).
        t = b.float_sub_scalar(tensor, 1.0)
        return b.float_log1p(b.float_add(t, b.float_sqrt(b.float_mul(t, b.float_add_scalar(t, 2.0)))))

    @default(bound="memory")
    def float_atanh(self, tensor: P) -> P:
        """NaN outside ``[-1, 1]``, +-inf at +-1."""
        b = _ops(self)
        # atanh x = log1p(2x / (1 - x)) / 2
        ratio = b.float_div(b.float_mul_scalar(tensor, 2.0), b.float_add_scalar(b.float_neg(tensor), 1.0))
        return b.float_mul_scalar(b.float_log1p(ratio), 0.5)

    # -- rounding toward zero, C's fmod -------------------------------------------------------
    @default
    def float_trunc(self, tensor: P) -> P:
        """Round toward zero."""
        b = _ops(self)
        negative = b.float_lower_elem(tensor, 0.0)
        return b.float_mask_where(b.float_floor(tensor), negative, b.float_ceil(tensor))

    def _fmod_from_remainder(self, lhs: P, rem: P, sub_divisor: Callable[[P], P]) -> P:
        # remainder has the divisor's sign, fmod the dividend's: they differ by one divisor
        # where the remainder is nonzero and its sign is not the dividend's.
        b = _ops(self)
        wrong_sign = b.bool_not_equal(b.float_lower_elem(rem, 0.0), b.float_lower_elem(lhs, 0.0))
        fix = b.bool_and(b.float_not_equal_elem(rem, 0.0), wrong_sign)
        return b.float_mask_where(rem, fix, sub_divisor(rem))

    @default(bound="memory")
    def float_fmod(self, lhs: P, rhs: P) -> P:
        """Remainder with the dividend's sign (C's ``fmod``, ``x - trunc(x / y) * y``); NaN for
        ``y == 0``. `float_remainder` has the divisor's sign instead."""
        b = _ops(self)
        return self._fmod_from_remainder(lhs, b.float_remainder(lhs, rhs), lambda r: b.float_sub(r, rhs))

    @default(bound="memory")
    def float_fmod_scalar(self, lhs: P, rhs: float) -> P:
        b = _ops(self)
        rem = b.float_remainder_scalar(lhs, rhs)
        return self._fmod_from_remainder(lhs, rem, lambda r: b.float_sub_scalar(r, rhs))

    # -- cumulative ops (the dim keeps its size) ----------------------------------------------
    @default
    def float_cumprod(self, tensor: P, dim: int) -> P:
        b = _ops(self)
        return _scan(b, tensor, dim, b.float_mul, b.float_shape(tensor), b.float_cat, b.float_slice)

    def _float_pick(self, later: P, earlier: P, better: Callable[[P, P], P]) -> P:
        # `earlier` wins where it is better, or NaN (NaN propagates, as in NumPy and PyTorch)
        b = _ops(self)
        take = b.bool_or(better(earlier, later), b.float_is_nan(earlier))
        return b.float_mask_where(later, take, earlier)

    @default
    def float_cummax(self, tensor: P, dim: int) -> P:
        """Running maximum along `dim`; a NaN propagates to the end."""
        b = _ops(self)
        combine = lambda later, earlier: self._float_pick(later, earlier, b.float_greater)  # noqa: E731
        return _scan(b, tensor, dim, combine, b.float_shape(tensor), b.float_cat, b.float_slice)

    @default
    def float_cummin(self, tensor: P, dim: int) -> P:
        """Running minimum along `dim`; a NaN propagates to the end."""
        b = _ops(self)
        combine = lambda later, earlier: self._float_pick(later, earlier, b.float_lower)  # noqa: E731
        return _scan(b, tensor, dim, combine, b.float_shape(tensor), b.float_cat, b.float_slice)

    @default
    def float_unfold(self, tensor: P, dim: int, size: int, step: int) -> P:
        """Sliding windows of `size` elements every `step` along `dim`: `dim` becomes the window
        count ``(n - size) // step + 1`` (0 when ``n < size``) and a last dim of `size` is added.
        ``size >= 1``, ``step >= 1`` (checked by the Tensor layer)."""
        return self._unfold("float", tensor, dim, size, step)

    @default
    def float_gather_nd(self, tensor: P, indices: P) -> P:
        """`indices` ``[..., K]`` (int, ``K <= rank``) names elements or slices of the first
        `K` dims: the result has shape ``indices.shape[:-1] + tensor.shape[K:]``."""
        return self._gather_nd("float", tensor, indices)

    @default
    def float_scatter_nd(self, tensor: P, indices: P, values: P, mode: str) -> P:
        """`tensor` with `values` (shape ``indices.shape[:-1] + tensor.shape[K:]``) combined
        into the places the ``[..., K]`` `indices` name (as in `float_gather_nd`). `mode` is
        ``add``, ``mul``, ``max``, ``min`` (combine with the current value; repeated indices
        accumulate) or ``assign`` (replace; with repeated indices the last update wins)."""
        return self._scatter_nd("float", tensor, indices, values, mode)

    @default
    def float_scatter_assign(self, dim: int, tensor: P, indices: P, values: P) -> P:
        """`tensor` with ``out[..., indices[..., i, ...], ...] = values[..., i, ...]`` along
        `dim` (`indices` and `values` share a shape of the tensor's rank); with repeated
        indices the last value (in row-major order) wins."""
        return self._scatter_assign("float", dim, tensor, indices, values)

    @default
    def float_select_assign(self, tensor: P, dim: int, indices: P, values: P) -> P:
        """`tensor` with rows `indices` (1-D int) of `dim` replaced by the rows of `values`;
        with repeated indices the last row wins."""
        return self._select_assign("float", tensor, dim, indices, values)

    @default
    def float_cross(self, lhs: P, rhs: P, dim: int) -> P:
        """The cross product of 3-vectors along `dim` (both operands of one shape, size 3 there)."""
        return self._cross("float", lhs, rhs, dim)

    # -- binary, tensor operands: either may be handed over -------------------------------------
    @default(bound="memory")
    def float_add_owned(self, lhs: P, rhs: P) -> P:
        return self.float_add(lhs, rhs)  # type: ignore[attr-defined,no-any-return]

    @default(bound="memory")
    def float_sub_owned(self, lhs: P, rhs: P) -> P:
        return self.float_sub(lhs, rhs)  # type: ignore[attr-defined,no-any-return]

    @default(bound="memory")
    def float_mul_owned(self, lhs: P, rhs: P) -> P:
        return self.float_mul(lhs, rhs)  # type: ignore[attr-defined,no-any-return]

    @default(bound="memory")
    def float_div_owned(self, lhs: P, rhs: P) -> P:
        return self.float_div(lhs, rhs)  # type: ignore[attr-defined,no-any-return]

    # -- scalar operand -----------------------------------------------------------------------
    @default(bound="memory")
    def float_add_scalar_owned(self, lhs: P, rhs: float) -> P:
        return self.float_add_scalar(lhs, rhs)  # type: ignore[attr-defined,no-any-return]

    @default(bound="memory")
    def float_sub_scalar_owned(self, lhs: P, rhs: float) -> P:
        return self.float_sub_scalar(lhs, rhs)  # type: ignore[attr-defined,no-any-return]

    @default(bound="memory")
    def float_mul_scalar_owned(self, lhs: P, rhs: float) -> P:
        return self.float_mul_scalar(lhs, rhs)  # type: ignore[attr-defined,no-any-return]

    @default(bound="memory")
    def float_div_scalar_owned(self, lhs: P, rhs: float) -> P:
        return self.float_div_scalar(lhs, rhs)  # type: ignore[attr-defined,no-any-return]

    # -- unary math ---------------------------------------------------------------------------
    @default(bound="memory")
    def float_exp_owned(self, tensor: P) -> P:
        return self.float_exp(tensor)  # type: ignore[attr-defined,no-any-return]

    @default(bound="memory")
    def float_log_owned(self, tensor: P) -> P:
        return self.float_log(tensor)  # type: ignore[attr-defined,no-any-return]

    @default(bound="memory")
    def float_sqrt_owned(self, tensor: P) -> P:
        return self.float_sqrt(tensor)  # type: ignore[attr-defined,no-any-return]

    @default(bound="memory")
    def float_neg_owned(self, tensor: P) -> P:
        return self.float_neg(tensor)  # type: ignore[attr-defined,no-any-return]

    @default(bound="memory")
    def float_tanh_owned(self, tensor: P) -> P:
        return self.float_tanh(tensor)  # type: ignore[attr-defined,no-any-return]


def sample_host(rng: np.random.Generator, shape: Shape, distribution: Distribution) -> np.ndarray:
    """Float64 samples of `distribution` from a NumPy generator (used by default random ops)."""
    if isinstance(distribution, Uniform):
        return rng.uniform(distribution.low, distribution.high, size=shape)
    if isinstance(distribution, Normal):
        return rng.normal(distribution.mean, distribution.std, size=shape)
    if isinstance(distribution, Bernoulli):
        return (rng.random(size=shape) < distribution.prob).astype(np.float64)
    raise TypeError(f"unknown distribution {distribution!r}")
