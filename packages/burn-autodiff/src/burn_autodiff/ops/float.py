"""The float family of `Autodiff`: each float op, followed by its backward rule.

A forward unwraps its `ADTensor` inputs, calls the inner backend, and, only when an input
carries a node (needs a gradient), records ``Node(parents, rule, saved)``: the rule is the
static method right below the op, ``saved`` what that rule reads (a NamedTuple below, the one
value it needs, or ``None``). Untracked inputs cost one ``is None`` check. Ops whose result has
no gradient (comparisons, argmax, casts to int, host exchange) compute on the inner primitives
and return the inner result.

burn-core's defaults of the trigonometric and hyperbolic functions, ``fmod`` and the layout
ops (unfold, gather_nd, scatter_nd, the assign mode of scatter and select, cross) are
compositions (a Newton-refined ``atan``, sorts and segmented scans...): differentiating through
them would be correct but wasteful, and for the inverse trigonometric functions would
differentiate the refinement steps too, so each runs on the inner backend and records one node.
``float_cumprod`` and a ``scatter_nd`` that multiplies or keeps the maximum or minimum have no
rule: tracked, they record burn-core's composition, whose gradient is exact where inputs are
zero, at repeated indices and at ties (`burn_autodiff.ops.composed`).

Conventions where the math leaves a choice:

- clamp / clamp_min / clamp_max pass the gradient where ``min <= x <= max`` (boundaries
  included), like PyTorch.
- max/min (with or without a dim) and sort route the gradient to the one element their indices
  name (the first extremum, as ``argmax`` picks it); ties do not share it.
- abs has gradient ``sign(x)``, so 0 at 0; round, floor, ceil, trunc and sign have gradient 0.
- ``x ** y`` gives ``dy = 0`` where ``x == 0`` (the limit of ``x**y * log x`` for ``y > 0``).
- assign-mode scatters (scatter_nd, scatter, select_assign): overwritten positions get no
  gradient for the tensor, and of several updates to one position only the winner (the last)
  gets its gradient.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from burn.backend.tables import int_table
from burn_autodiff import engine
from burn_autodiff.errors import AutodiffError
from burn_autodiff.node import ADTensor as AD
from burn_autodiff.node import Node, make
from burn_autodiff.ops._grad import Grads, Need, P, Shape, one_minus, unbroadcast, where_not, zeros_like_grad
from burn_autodiff.ops.composed import inner_or_default, records_no_node
from burn_autodiff.products import ProductGrad, multiply, weight_grad
from burn_autodiff.sliced import SlicedGrad

if TYPE_CHECKING:
    from burn.backend import Backend, Device
    from burn.foundations.data import TensorData
    from burn.foundations.distribution import Distribution
    from burn.foundations.dtype import DType

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


# -- saved state of the rules (one value alone is saved as itself) -----------------------------
class Broadcast(NamedTuple):
    """add, sub: the operands' shapes to sum the gradient back to (`_SAME`: neither broadcast)."""

    lhs_shape: Shape | None
    rhs_shape: Shape | None


_SAME = Broadcast(None, None)  # both operands had the output's shape: nothing to un-broadcast


class Operands(NamedTuple):
    """A binary element-wise op (mul, div, remainder, fmod, atan2): each operand a needed
    gradient reads (None where none does), and the shapes as in `Broadcast`."""

    lhs: P | None
    rhs: P | None
    lhs_shape: Shape | None
    rhs_shape: Shape | None


class Power(NamedTuple):
    """powf: the operands, the output (only when the exponent needs a gradient), the shapes."""

    lhs: P
    rhs: P
    out: P | None
    lhs_shape: Shape | None
    rhs_shape: Shape | None


class MatmulSaved(NamedTuple):
    """matmul: each operand a needed gradient reads (dX reads Y, dY reads X), else None and
    its shape in ``*_shape`` (None when the operand is kept)."""

    lhs: P | None
    rhs: P | None
    lhs_shape: Shape | None
    rhs_shape: Shape | None


class PowScalar(NamedTuple):
    """powf_scalar: the input and the exponent."""

    x: P
    exponent: float


class Bounds(NamedTuple):
    """clamp, clamp_min, clamp_max: the input and the bounds (None: no bound on that side)."""

    x: P
    min: float | None
    max: float | None


class MeanDim(NamedTuple):
    """mean_dim: the input's shape and the dim."""

    shape: Shape
    dim: int


class ProdDim(NamedTuple):
    """prod_dim: the input and the dim."""

    x: P
    dim: int


class Picked(NamedTuple):
    """gather, select, max/min along a dim, sort, cummax/cummin: the input's shape, the dim, and
    the indices along it that the output elements came from."""

    shape: Shape
    dim: int
    indices: P


class FlatPicked(NamedTuple):
    """max, min: the input's shape and the flat index (shape ``(1,)``) of the extremum."""

    shape: Shape
    indices: P


class Sliced(NamedTuple):
    """slice: the input's shape and the slices read."""

    shape: Shape
    slices: tuple[slice, ...]


class SliceAssigned(NamedTuple):
    """slice_assign: the slices written and the shape of the value written there."""

    slices: tuple[slice, ...]
    value_shape: Shape


class Concatenated(NamedTuple):
    """cat: the dim and each input's size along it."""

    dim: int
    sizes: tuple[int, ...]


class Repeated(NamedTuple):
    """repeat_dim: the input's shape, the dim and the number of copies."""

    shape: Shape
    dim: int
    times: int


class Scattered(NamedTuple):
    """scatter_add, select_add, scatter_assign: the dim and the indices the values went to."""

    dim: int
    indices: P


class Masked(NamedTuple):
    """mask_where: the mask and the shapes of the tensor and of the value (to un-broadcast)."""

    mask: P
    tensor_shape: Shape
    value_shape: Shape


class Filled(NamedTuple):
    """mask_fill: the mask and the input's shape."""

    mask: P
    shape: Shape


class Windows(NamedTuple):
    """unfold: the input's shape, and the windows' dim, size and step."""

    shape: Shape
    dim: int
    size: int
    step: int


class PickedNd(NamedTuple):
    """gather_nd: the input's shape and the index tuples."""

    shape: Shape
    indices: P


class ScatteredNd(NamedTuple):
    """scatter_nd (add, assign): the index tuples and the values' shape."""

    indices: P
    values_shape: Shape


class SelectAssigned(NamedTuple):
    """select_assign: the dim, the rows' indices and the values' shape."""

    dim: int
    indices: P
    values_shape: Shape


class Crossed(NamedTuple):
    """cross: each operand the other's gradient reads (None where not needed), and the dim."""

    lhs: P | None
    rhs: P | None
    dim: int


def _broadcast(i: Backend, a: P, b: P) -> Broadcast:
    """The operands' shapes for un-broadcasting, or `_SAME` when no broadcast happened."""
    sa = i.float_shape(a)
    sb = i.float_shape(b)
    return _SAME if sa == sb else make(Broadcast, (sa, sb))


def _operands(i: Backend, a: P, b: P, lhs: P | None, rhs: P | None) -> Operands:
    """`Operands` keeping `lhs` and `rhs`, with the shapes of `a` and `b` when they differ."""
    sa = i.float_shape(a)
    sb = i.float_shape(b)
    return make(Operands, (lhs, rhs, None, None) if sa == sb else (lhs, rhs, sa, sb))


class AutodiffFloatOps:
    """The float op family of `Autodiff` (mixed into it; see `burn.backend.ops.float`)."""

    _in: Backend
    _own_device: Callable[[Device], Device]  # provided by Autodiff
    _inner_device: Callable[[Device], Device]

    # -- host exchange, metadata, creation ----------------------------------------------------
    def float_from_data(self, data: TensorData, device: Device) -> AD:
        return AD(self._in.float_from_data(data, self._inner_device(device)), None)

    def float_into_data(self, tensor: AD) -> TensorData:
        return self._in.float_into_data(tensor.p)

    def float_device(self, tensor: AD) -> Device:
        return self._own_device(self._in.float_device(tensor.p))

    def float_to_device(self, tensor: AD, device: Device) -> AD:
        i = self._in
        x = tensor.p
        out = i.float_to_device(x, self._inner_device(device))
        n = tensor.node
        return AD(out, None if n is None else Node((n,), self._to_device_rule, i.float_device(x)))

    @staticmethod
    def _to_device_rule(B: Any, device: Any, need: Need, g: P) -> Grads:
        return (B.float_to_device(g, device),)  # back to the input's device

    def float_shape(self, tensor: AD) -> Shape:
        return self._in.float_shape(tensor.p)

    def float_get_dtype(self, tensor: AD) -> DType:
        return self._in.float_get_dtype(tensor.p)

    def float_cast(self, tensor: AD, dtype: DType) -> AD:
        i = self._in
        x = tensor.p
        out = i.float_cast(x, dtype)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), self._cast_rule, i.float_get_dtype(x)))

    @staticmethod
    def _cast_rule(B: Any, dtype: DType, need: Need, g: P) -> Grads:
        return (B.float_cast(g, dtype),)  # the gradient goes back in the input's dtype

    def float_into_int(self, tensor: AD, dtype: DType) -> Any:
        return self._in.float_into_int(tensor.p, dtype)

    def float_full(self, shape: Shape, value: float, device: Device, dtype: DType) -> AD:
        return AD(self._in.float_full(shape, value, self._inner_device(device), dtype), None)

    def float_zeros(self, shape: Shape, device: Device, dtype: DType) -> AD:
        return AD(self._in.float_zeros(shape, self._inner_device(device), dtype), None)

    def float_ones(self, shape: Shape, device: Device, dtype: DType) -> AD:
        return AD(self._in.float_ones(shape, self._inner_device(device), dtype), None)

    def float_empty(self, shape: Shape, device: Device, dtype: DType) -> AD:
        return AD(self._in.float_empty(shape, self._inner_device(device), dtype), None)

    def float_random(self, shape: Shape, distribution: Distribution, device: Device, dtype: DType) -> AD:
        return AD(self._in.float_random(shape, distribution, self._inner_device(device), dtype), None)

    # -- graph membership: the contract's autodiff hooks --------------------------------------
    @records_no_node
    def float_detach(self, tensor: AD) -> AD:
        return tensor if tensor.node is None else AD(tensor.p, None)

    @records_no_node
    def float_set_require_grad(self, tensor: AD, require_grad: bool) -> AD:
        """True: a constant becomes a leaf; an intermediate tensor keeps its gradient in the next
        backward. False: the tensor is detached from its graph."""
        n = tensor.node
        if not require_grad:
            return tensor if n is None else AD(tensor.p, None)
        if n is None:
            return AD(tensor.p, Node.leaf(self._in.float_get_dtype(tensor.p)))
        if n.keep is None:
            if n.rule is engine.consumed:
                raise AutodiffError(
                    "set_require_grad(True): the tensor's graph was already consumed by backward(); "
                    "detach() it first to make it a new leaf"
                )
            n.keep = self._in.float_get_dtype(tensor.p)
        return tensor

    def float_is_require_grad(self, tensor: AD) -> bool:
        """Whether gradients flow through `tensor` (a leaf, or computed from one)."""
        return tensor.node is not None

    # -- arithmetic ---------------------------------------------------------------------------
    def float_add(self, lhs: AD, rhs: AD) -> AD:
        a, b = lhs.p, rhs.p
        i = self._in
        out = i.float_add(a, b)
        na, nb = lhs.node, rhs.node
        if na is None and nb is None:
            return AD(out, None)
        return AD(out, Node((na, nb), self._add_rule, _broadcast(i, a, b)))

    @staticmethod
    def _add_rule(B: Any, s: Broadcast, need: Need, g: P) -> Grads:
        # d(x + y)/dx = d(x + y)/dy = 1, summed over what broadcasting stretched
        if s.lhs_shape is None:  # no broadcast (the common case): g as it is
            return g, g
        return (unbroadcast(B, g, s.lhs_shape) if need[0] else None,
                unbroadcast(B, g, s.rhs_shape) if need[1] else None)

    def float_sub(self, lhs: AD, rhs: AD) -> AD:
        a, b = lhs.p, rhs.p
        i = self._in
        out = i.float_sub(a, b)
        na, nb = lhs.node, rhs.node
        if na is None and nb is None:
            return AD(out, None)
        return AD(out, Node((na, nb), self._sub_rule, _broadcast(i, a, b)))

    @staticmethod
    def _sub_rule(B: Any, s: Broadcast, need: Need, g: P) -> Grads:
        # d(x - y)/dx = 1, d(x - y)/dy = -1
        return (unbroadcast(B, g, s.lhs_shape) if need[0] else None,
                unbroadcast(B, B.float_neg(g), s.rhs_shape) if need[1] else None)

    def float_mul(self, lhs: AD, rhs: AD) -> AD:
        a, b = lhs.p, rhs.p
        i = self._in
        out = i.float_mul(a, b)
        na, nb = lhs.node, rhs.node
        if na is None and nb is None:
            return AD(out, None)
        # keep only what the needed gradients use: dx needs y, dy needs x
        saved = _operands(i, a, b, a if nb is not None else None, b if na is not None else None)
        return AD(out, Node((na, nb), self._mul_rule, saved))

    @staticmethod
    def _mul_rule(B: Any, s: Operands, need: Need, g: P) -> Grads:
        # d(xy)/dx = y, d(xy)/dy = x
        return (unbroadcast(B, B.float_mul(g, s.rhs), s.lhs_shape) if need[0] else None,
                unbroadcast(B, B.float_mul(g, s.lhs), s.rhs_shape) if need[1] else None)

    def float_div(self, lhs: AD, rhs: AD) -> AD:
        a, b = lhs.p, rhs.p
        i = self._in
        out = i.float_div(a, b)
        na, nb = lhs.node, rhs.node
        if na is None and nb is None:
            return AD(out, None)
        return AD(out, Node((na, nb), self._div_rule, _operands(i, a, b, a if nb is not None else None, b)))

    @staticmethod
    def _div_rule(B: Any, s: Operands, need: Need, g: P) -> Grads:
        x, y = s.lhs, s.rhs  # d(x/y)/dx = 1/y, d(x/y)/dy = -x/y^2
        gx = unbroadcast(B, B.float_div(g, y), s.lhs_shape) if need[0] else None
        gy = None
        if need[1]:
            gy = unbroadcast(B, B.float_neg(B.float_div(B.float_mul(g, x), B.float_mul(y, y))), s.rhs_shape)
        return gx, gy

    def float_remainder(self, lhs: AD, rhs: AD) -> AD:
        a, b = lhs.p, rhs.p
        i = self._in
        out = i.float_remainder(a, b)
        na, nb = lhs.node, rhs.node
        if na is None and nb is None:
            return AD(out, None)
        keep = nb is not None  # only the divisor's gradient needs the operands
        saved = _operands(i, a, b, a if keep else None, b if keep else None)
        return AD(out, Node((na, nb), self._remainder_rule, saved))

    @staticmethod
    def _remainder_rule(B: Any, s: Operands, need: Need, g: P) -> Grads:
        # x % y = x - floor(x/y) * y
        gx = unbroadcast(B, g, s.lhs_shape) if need[0] else None
        gy = None
        if need[1]:
            floor = B.float_floor(B.float_div(s.lhs, s.rhs))
            gy = unbroadcast(B, B.float_neg(B.float_mul(g, floor)), s.rhs_shape)
        return gx, gy

    def float_powf(self, lhs: AD, rhs: AD) -> AD:
        a, b = lhs.p, rhs.p
        i = self._in
        out = i.float_powf(a, b)
        na, nb = lhs.node, rhs.node
        if na is None and nb is None:
            return AD(out, None)
        saved = make(Power, (a, b, out if nb is not None else None, *_broadcast(i, a, b)))
        return AD(out, Node((na, nb), self._powf_rule, saved))

    @staticmethod
    def _powf_rule(B: Any, s: Power, need: Need, g: P) -> Grads:
        x, y = s.lhs, s.rhs  # d(x^y)/dx = y x^(y-1), d(x^y)/dy = x^y log x
        gx = gy = None
        if need[0]:
            dx = B.float_mul(y, B.float_powf(x, B.float_sub_scalar(y, 1.0)))
            gx = unbroadcast(B, B.float_mul(g, dx), s.lhs_shape)
        if need[1]:
            safe = B.float_mask_fill(x, B.float_equal_elem(x, 0.0), 1.0)  # log 1 = 0 where x == 0
            gy = unbroadcast(B, B.float_mul(g, B.float_mul(s.out, B.float_log(safe))), s.rhs_shape)
        return gx, gy

    def float_matmul(self, lhs: AD, rhs: AD) -> AD:
        a, b = lhs.p, rhs.p
        i = self._in
        out = i.float_matmul(a, b)
        na, nb = lhs.node, rhs.node
        if na is None and nb is None:
            return AD(out, None)
        # dX needs Y and X's shape, dY needs X and Y's shape: keep an operand or just its shape
        if na is None:
            saved = make(MatmulSaved, (a, None, None, i.float_shape(b)))
        elif nb is None:
            saved = make(MatmulSaved, (None, b, i.float_shape(a), None))
        else:
            saved = make(MatmulSaved, (a, b, None, None))
        return AD(out, Node((na, nb), self._matmul_rule, saved))

    @staticmethod
    def _matmul_rule(B: Any, s: MatmulSaved, need: Need, g: P) -> Grads:
        # dX = G Y^T, dY = X^T G (leading dims broadcast, then summed back)
        x, y = s.lhs, s.rhs
        gx = gy = None
        if need[0]:
            r = len(B.float_shape(y))
            gx = B.float_matmul(g, B.float_swap_dims(y, r - 2, r - 1))
            gx = unbroadcast(B, gx, B.float_shape(x) if s.lhs_shape is None else s.lhs_shape)
        if need[1]:
            xs, ys = B.float_shape(x), B.float_shape(y) if s.rhs_shape is None else s.rhs_shape
            if len(ys) == 2 and len(xs) == 2:
                return gx, weight_grad(B, x, g)  # X^T G, lazy when small: see burn_autodiff.products
            if len(ys) == 2 or (len(xs) >= len(ys) and math.prod(ys[:-2]) == 1):
                # A matrix applied to a batch (a Linear layer on [batch, seq, d], or a [1, K, N]
                # matrix broadcast at equal rank, as an imported tied LM head): the batch sum of
                # X_b^T G_b is one GEMM over the stacked rows, not a stacked GEMM and then a sum
                # (on GPT-2's LM head a [8, 256, 50257] product summed: 4x the time).
                rows = math.prod(xs[:-1])
                x2 = B.float_reshape(x, (rows, xs[-1]))
                g2 = B.float_reshape(g, (rows, ys[-1]))
                gy = weight_grad(B, x2, g2)
                if len(ys) == 2:
                    return gx, gy
                if gy.__class__ is ProductGrad:
                    gy = multiply(B, gy)  # a lazy product has no reshape
                return gx, B.float_reshape(gy, ys)
            r = len(xs)
            gy = B.float_matmul(B.float_swap_dims(x, r - 2, r - 1), g)
            gy = unbroadcast(B, gy, ys)
        return gx, gy

    def float_add_scalar(self, lhs: AD, rhs: float) -> AD:
        out = self._in.float_add_scalar(lhs.p, rhs)
        n = lhs.node
        return AD(out, None if n is None else Node((n,), self._identity_rule, None))

    @staticmethod
    def _identity_rule(B: Any, saved: None, need: Need, g: P) -> Grads:
        """add_scalar, sub_scalar, remainder_scalar, fmod_scalar: d(x + c)/dx = 1."""
        return (g,)

    def float_sub_scalar(self, lhs: AD, rhs: float) -> AD:
        out = self._in.float_sub_scalar(lhs.p, rhs)
        n = lhs.node
        return AD(out, None if n is None else Node((n,), self._identity_rule, None))

    def float_mul_scalar(self, lhs: AD, rhs: float) -> AD:
        out = self._in.float_mul_scalar(lhs.p, rhs)
        n = lhs.node
        return AD(out, None if n is None else Node((n,), self._mul_scalar_rule, rhs))

    @staticmethod
    def _mul_scalar_rule(B: Any, c: float, need: Need, g: P) -> Grads:
        return (B.float_mul_scalar(g, c),)  # d(cx) = c

    def float_div_scalar(self, lhs: AD, rhs: float) -> AD:
        out = self._in.float_div_scalar(lhs.p, rhs)
        n = lhs.node
        return AD(out, None if n is None else Node((n,), self._div_scalar_rule, rhs))

    @staticmethod
    def _div_scalar_rule(B: Any, c: float, need: Need, g: P) -> Grads:
        return (B.float_div_scalar(g, c),)  # d(x/c) = 1/c

    def float_remainder_scalar(self, lhs: AD, rhs: float) -> AD:
        out = self._in.float_remainder_scalar(lhs.p, rhs)
        n = lhs.node
        return AD(out, None if n is None else Node((n,), self._identity_rule, None))

    def float_powf_scalar(self, lhs: AD, rhs: float) -> AD:
        x = lhs.p
        out = self._in.float_powf_scalar(x, rhs)
        n = lhs.node
        if n is None:
            return AD(out, None)
        return AD(out, Node((n,), self._powf_scalar_rule, make(PowScalar, (x, rhs))))

    @staticmethod
    def _powf_scalar_rule(B: Any, s: PowScalar, need: Need, g: P) -> Grads:
        c = s.exponent  # d(x^c)/dx = c x^(c-1); 0 for c == 0 (x^0 is constant, even at x == 0)
        if c == 0:
            return (zeros_like_grad(B, g, B.float_shape(g)),)
        # x^(c-1) by the backend's powf_scalar, whose small integer exponents are products; x^1
        # (the gradient of x^2) is x itself.
        power = s.x if c == 2.0 else B.float_powf_scalar(s.x, c - 1.0)
        return (B.float_mul(g, B.float_mul_scalar(power, c)),)

    # -- unary math ---------------------------------------------------------------------------
    def float_exp(self, tensor: AD) -> AD:
        out = self._in.float_exp(tensor.p)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), self._exp_rule, out))

    @staticmethod
    def _exp_rule(B: Any, out: P, need: Need, g: P) -> Grads:
        return (B.float_mul(g, out),)  # d e^x = e^x

    def float_log(self, tensor: AD) -> AD:
        x = tensor.p
        out = self._in.float_log(x)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), self._log_rule, x))

    @staticmethod
    def _log_rule(B: Any, x: P, need: Need, g: P) -> Grads:
        return (B.float_div(g, x),)  # d log x = 1/x

    def float_log1p(self, tensor: AD) -> AD:
        x = tensor.p
        out = self._in.float_log1p(x)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), self._log1p_rule, x))

    @staticmethod
    def _log1p_rule(B: Any, x: P, need: Need, g: P) -> Grads:
        return (B.float_div(g, B.float_add_scalar(x, 1.0)),)  # d log(1+x) = 1/(1+x)

    def float_sqrt(self, tensor: AD) -> AD:
        out = self._in.float_sqrt(tensor.p)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), self._sqrt_rule, out))

    @staticmethod
    def _sqrt_rule(B: Any, out: P, need: Need, g: P) -> Grads:
        return (B.float_div(g, B.float_mul_scalar(out, 2.0)),)  # d sqrt x = 1 / (2 sqrt x)

    def float_abs(self, tensor: AD) -> AD:
        x = tensor.p
        out = self._in.float_abs(x)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), self._abs_rule, x))

    @staticmethod
    def _abs_rule(B: Any, x: P, need: Need, g: P) -> Grads:
        return (B.float_mul(g, B.float_sign(x)),)  # d|x| = sign(x)

    def float_sin(self, tensor: AD) -> AD:
        x = tensor.p
        out = self._in.float_sin(x)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), self._sin_rule, x))

    @staticmethod
    def _sin_rule(B: Any, x: P, need: Need, g: P) -> Grads:
        return (B.float_mul(g, B.float_cos(x)),)  # d sin x = cos x

    def float_cos(self, tensor: AD) -> AD:
        x = tensor.p
        out = self._in.float_cos(x)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), self._cos_rule, x))

    @staticmethod
    def _cos_rule(B: Any, x: P, need: Need, g: P) -> Grads:
        return (B.float_neg(B.float_mul(g, B.float_sin(x))),)  # d cos x = -sin x

    def float_tanh(self, tensor: AD) -> AD:
        out = self._in.float_tanh(tensor.p)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), self._tanh_rule, out))

    @staticmethod
    def _tanh_rule(B: Any, out: P, need: Need, g: P) -> Grads:
        return (B.float_sub(g, B.float_mul(B.float_mul(g, out), out)),)  # d tanh x = 1 - tanh^2 x

    def float_erf(self, tensor: AD) -> AD:
        x = tensor.p
        out = self._in.float_erf(x)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), self._erf_rule, x))

    @staticmethod
    def _erf_rule(B: Any, x: P, need: Need, g: P) -> Grads:
        # d erf x = 2/sqrt(pi) e^(-x^2)
        dx = B.float_mul_scalar(B.float_exp(B.float_neg(B.float_mul(x, x))), _TWO_OVER_SQRT_PI)
        return (B.float_mul(g, dx),)

    def float_round(self, tensor: AD) -> AD:
        out = self._in.float_round(tensor.p)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), self._zero_rule, None))

    @staticmethod
    def _zero_rule(B: Any, saved: None, need: Need, g: P) -> Grads:
        """round, floor, ceil, trunc, sign: piecewise constant, gradient 0."""
        return (zeros_like_grad(B, g, B.float_shape(g)),)

    def float_floor(self, tensor: AD) -> AD:
        out = self._in.float_floor(tensor.p)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), self._zero_rule, None))

    def float_ceil(self, tensor: AD) -> AD:
        out = self._in.float_ceil(tensor.p)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), self._zero_rule, None))

    def float_trunc(self, tensor: AD) -> AD:
        out = self._in.float_trunc(tensor.p)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), self._zero_rule, None))

    def float_sign(self, tensor: AD) -> AD:
        out = self._in.float_sign(tensor.p)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), self._zero_rule, None))

    def float_neg(self, tensor: AD) -> AD:
        out = self._in.float_neg(tensor.p)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), self._neg_rule, None))

    @staticmethod
    def _neg_rule(B: Any, saved: None, need: Need, g: P) -> Grads:
        return (B.float_neg(g),)  # d(-x) = -1

    def float_recip(self, tensor: AD) -> AD:
        out = self._in.float_recip(tensor.p)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), self._recip_rule, out))

    @staticmethod
    def _recip_rule(B: Any, out: P, need: Need, g: P) -> Grads:
        return (B.float_neg(B.float_mul(g, B.float_mul(out, out))),)  # d(1/x) = -1/x^2 = -out^2

    def float_clamp_min(self, tensor: AD, min: float) -> AD:
        x = tensor.p
        out = self._in.float_clamp_min(x, min)
        n = tensor.node
        if n is None:
            return AD(out, None)
        return AD(out, Node((n,), self._clamp_min_rule, make(Bounds, (x, min, None))))

    @staticmethod
    def _clamp_min_rule(B: Any, s: Bounds, need: Need, g: P) -> Grads:
        return (where_not(B, g, B.float_lower_elem(s.x, s.min)),)  # passes where x >= min

    def float_clamp_max(self, tensor: AD, max: float) -> AD:
        x = tensor.p
        out = self._in.float_clamp_max(x, max)
        n = tensor.node
        if n is None:
            return AD(out, None)
        return AD(out, Node((n,), self._clamp_max_rule, make(Bounds, (x, None, max))))

    @staticmethod
    def _clamp_max_rule(B: Any, s: Bounds, need: Need, g: P) -> Grads:
        return (where_not(B, g, B.float_greater_elem(s.x, s.max)),)  # passes where x <= max

    def float_clamp(self, tensor: AD, min: float, max: float) -> AD:
        x = tensor.p
        out = self._in.float_clamp(x, min, max)
        n = tensor.node
        if n is None:
            return AD(out, None)
        return AD(out, Node((n,), self._clamp_rule, make(Bounds, (x, min, max))))

    @staticmethod
    def _clamp_rule(B: Any, s: Bounds, need: Need, g: P) -> Grads:
        # passes where min <= x <= max
        outside = B.bool_or(B.float_lower_elem(s.x, s.min), B.float_greater_elem(s.x, s.max))
        return (where_not(B, g, outside),)

    # -- trigonometric and hyperbolic functions, fmod -----------------------------------------
    def _unary(self, tensor: AD, op: str, rule: Callable[..., Grads], keep: str) -> AD:
        """Run inner `op`; record `rule` saving the input (`keep` "x") or the output ("out")."""
        x = tensor.p
        out = getattr(self._in, op)(x)
        n = tensor.node
        if n is None:
            return AD(out, None)
        return AD(out, Node((n,), rule, x if keep == "x" else out))

    def float_tan(self, tensor: AD) -> AD:
        return self._unary(tensor, "float_tan", self._tan_rule, "out")

    @staticmethod
    def _tan_rule(B: Any, out: P, need: Need, g: P) -> Grads:
        return (B.float_add(g, B.float_mul(B.float_mul(g, out), out)),)  # d tan x = 1 + tan^2 x

    def float_sinh(self, tensor: AD) -> AD:
        return self._unary(tensor, "float_sinh", self._sinh_rule, "x")

    @staticmethod
    def _sinh_rule(B: Any, x: P, need: Need, g: P) -> Grads:
        return (B.float_mul(g, B.float_cosh(x)),)  # d sinh x = cosh x

    def float_cosh(self, tensor: AD) -> AD:
        return self._unary(tensor, "float_cosh", self._cosh_rule, "x")

    @staticmethod
    def _cosh_rule(B: Any, x: P, need: Need, g: P) -> Grads:
        return (B.float_mul(g, B.float_sinh(x)),)  # d cosh x = sinh x

    def float_asin(self, tensor: AD) -> AD:
        return self._unary(tensor, "float_asin", self._asin_rule, "x")

    @staticmethod
    def _asin_rule(B: Any, x: P, need: Need, g: P) -> Grads:
        return (B.float_div(g, B.float_sqrt(_one_minus_square(B, x))),)  # d asin x = 1 / sqrt(1 - x^2)

    def float_acos(self, tensor: AD) -> AD:
        return self._unary(tensor, "float_acos", self._acos_rule, "x")

    @staticmethod
    def _acos_rule(B: Any, x: P, need: Need, g: P) -> Grads:
        # d acos x = -1 / sqrt(1 - x^2)
        return (B.float_neg(B.float_div(g, B.float_sqrt(_one_minus_square(B, x)))),)

    def float_atan(self, tensor: AD) -> AD:
        return self._unary(tensor, "float_atan", self._atan_rule, "x")

    @staticmethod
    def _atan_rule(B: Any, x: P, need: Need, g: P) -> Grads:
        return (B.float_div(g, B.float_add_scalar(B.float_mul(x, x), 1.0)),)  # d atan x = 1 / (1 + x^2)

    def float_asinh(self, tensor: AD) -> AD:
        return self._unary(tensor, "float_asinh", self._asinh_rule, "x")

    @staticmethod
    def _asinh_rule(B: Any, x: P, need: Need, g: P) -> Grads:
        # d asinh x = 1 / sqrt(x^2 + 1)
        return (B.float_div(g, B.float_sqrt(B.float_add_scalar(B.float_mul(x, x), 1.0))),)

    def float_acosh(self, tensor: AD) -> AD:
        return self._unary(tensor, "float_acosh", self._acosh_rule, "x")

    @staticmethod
    def _acosh_rule(B: Any, x: P, need: Need, g: P) -> Grads:
        # d acosh x = 1 / sqrt((x - 1)(x + 1))
        root = B.float_sqrt(B.float_mul(B.float_sub_scalar(x, 1.0), B.float_add_scalar(x, 1.0)))
        return (B.float_div(g, root),)

    def float_atanh(self, tensor: AD) -> AD:
        return self._unary(tensor, "float_atanh", self._atanh_rule, "x")

    @staticmethod
    def _atanh_rule(B: Any, x: P, need: Need, g: P) -> Grads:
        return (B.float_div(g, _one_minus_square(B, x)),)  # d atanh x = 1 / (1 - x^2)

    def float_atan2(self, lhs: AD, rhs: AD) -> AD:
        a, b = lhs.p, rhs.p
        i = self._in
        out = i.float_atan2(a, b)
        na, nb = lhs.node, rhs.node
        if na is None and nb is None:
            return AD(out, None)
        return AD(out, Node((na, nb), self._atan2_rule, _operands(i, a, b, a, b)))

    @staticmethod
    def _atan2_rule(B: Any, s: Operands, need: Need, g: P) -> Grads:
        y, x = s.lhs, s.rhs  # d atan2(y, x) = (x dy - y dx) / (x^2 + y^2)
        scaled = B.float_div(g, B.float_add(B.float_mul(x, x), B.float_mul(y, y)))
        gy = unbroadcast(B, B.float_mul(scaled, x), s.lhs_shape) if need[0] else None
        gx = unbroadcast(B, B.float_neg(B.float_mul(scaled, y)), s.rhs_shape) if need[1] else None
        return gy, gx

    def float_fmod(self, lhs: AD, rhs: AD) -> AD:
        a, b = lhs.p, rhs.p
        i = self._in
        out = i.float_fmod(a, b)
        na, nb = lhs.node, rhs.node
        if na is None and nb is None:
            return AD(out, None)
        keep = nb is not None  # only the divisor's gradient needs the operands
        saved = _operands(i, a, b, a if keep else None, b if keep else None)
        return AD(out, Node((na, nb), self._fmod_rule, saved))

    @staticmethod
    def _fmod_rule(B: Any, s: Operands, need: Need, g: P) -> Grads:
        # fmod(x, y) = x - trunc(x / y) * y
        gx = unbroadcast(B, g, s.lhs_shape) if need[0] else None
        gy = None
        if need[1]:
            trunc = B.float_trunc(B.float_div(s.lhs, s.rhs))
            gy = unbroadcast(B, B.float_neg(B.float_mul(g, trunc)), s.rhs_shape)
        return gx, gy

    def float_fmod_scalar(self, lhs: AD, rhs: float) -> AD:
        out = self._in.float_fmod_scalar(lhs.p, rhs)
        n = lhs.node
        return AD(out, None if n is None else Node((n,), self._identity_rule, None))

    # -- comparisons and tests: no gradient, inner bool primitives ----------------------------
    def float_equal(self, lhs: AD, rhs: AD) -> Any:
        return self._in.float_equal(lhs.p, rhs.p)

    def float_not_equal(self, lhs: AD, rhs: AD) -> Any:
        return self._in.float_not_equal(lhs.p, rhs.p)

    def float_greater(self, lhs: AD, rhs: AD) -> Any:
        return self._in.float_greater(lhs.p, rhs.p)

    def float_greater_equal(self, lhs: AD, rhs: AD) -> Any:
        return self._in.float_greater_equal(lhs.p, rhs.p)

    def float_lower(self, lhs: AD, rhs: AD) -> Any:
        return self._in.float_lower(lhs.p, rhs.p)

    def float_lower_equal(self, lhs: AD, rhs: AD) -> Any:
        return self._in.float_lower_equal(lhs.p, rhs.p)

    def float_equal_elem(self, lhs: AD, rhs: float) -> Any:
        return self._in.float_equal_elem(lhs.p, rhs)

    def float_not_equal_elem(self, lhs: AD, rhs: float) -> Any:
        return self._in.float_not_equal_elem(lhs.p, rhs)

    def float_greater_elem(self, lhs: AD, rhs: float) -> Any:
        return self._in.float_greater_elem(lhs.p, rhs)

    def float_greater_equal_elem(self, lhs: AD, rhs: float) -> Any:
        return self._in.float_greater_equal_elem(lhs.p, rhs)

    def float_lower_elem(self, lhs: AD, rhs: float) -> Any:
        return self._in.float_lower_elem(lhs.p, rhs)

    def float_lower_equal_elem(self, lhs: AD, rhs: float) -> Any:
        return self._in.float_lower_equal_elem(lhs.p, rhs)

    def float_is_nan(self, tensor: AD) -> Any:
        return self._in.float_is_nan(tensor.p)

    def float_is_inf(self, tensor: AD) -> Any:
        return self._in.float_is_inf(tensor.p)

    # -- reductions ---------------------------------------------------------------------------
    def float_sum(self, tensor: AD) -> AD:
        i = self._in
        x = tensor.p
        out = i.float_sum(x)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), self._sum_rule, i.float_shape(x)))

    @staticmethod
    def _sum_rule(B: Any, shape: Shape, need: Need, g: P) -> Grads:
        # g has shape (1,), which broadcasts to any shape but ()
        return (B.float_expand(g, shape) if shape else B.float_reshape(g, shape),)

    def float_sum_dim(self, tensor: AD, dim: int) -> AD:
        i = self._in
        x = tensor.p
        out = i.float_sum_dim(x, dim)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), self._sum_dim_rule, i.float_shape(x)))

    @staticmethod
    def _sum_dim_rule(B: Any, shape: Shape, need: Need, g: P) -> Grads:
        return (B.float_expand(g, shape),)  # every element contributed once: broadcast g back

    def float_mean(self, tensor: AD) -> AD:
        i = self._in
        x = tensor.p
        out = i.float_mean(x)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), self._mean_rule, i.float_shape(x)))

    @staticmethod
    def _mean_rule(B: Any, shape: Shape, need: Need, g: P) -> Grads:
        count = float(math.prod(shape))  # each element contributed 1/count
        return (B.float_expand(B.float_reshape(B.float_div_scalar(g, count), (1,) * len(shape)), shape),)

    def float_mean_dim(self, tensor: AD, dim: int) -> AD:
        i = self._in
        x = tensor.p
        out = i.float_mean_dim(x, dim)
        n = tensor.node
        if n is None:
            return AD(out, None)
        return AD(out, Node((n,), self._mean_dim_rule, make(MeanDim, (i.float_shape(x), dim))))

    @staticmethod
    def _mean_dim_rule(B: Any, s: MeanDim, need: Need, g: P) -> Grads:
        shape = s.shape  # each element contributed 1/shape[dim]
        return (B.float_expand(B.float_div_scalar(g, float(shape[s.dim])), shape),)

    def float_prod(self, tensor: AD) -> AD:
        x = tensor.p
        out = self._in.float_prod(x)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), self._prod_rule, x))

    @staticmethod
    def _prod_rule(B: Any, x: P, need: Need, g: P) -> Grads:
        shape = B.float_shape(x)  # d prod / dx_i = the product of the others
        flat = B.float_reshape(x, (-1,) if shape != () else (1,))
        return (B.float_reshape(B.float_mul(g, _prod_others(B, flat, 0)), shape),)

    def float_prod_dim(self, tensor: AD, dim: int) -> AD:
        x = tensor.p
        out = self._in.float_prod_dim(x, dim)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), self._prod_dim_rule, make(ProdDim, (x, dim))))

    @staticmethod
    def _prod_dim_rule(B: Any, s: ProdDim, need: Need, g: P) -> Grads:
        return (B.float_mul(g, _prod_others(B, s.x, s.dim)),)

    def float_argmax(self, tensor: AD, dim: int) -> Any:
        return self._in.float_argmax(tensor.p, dim)

    def float_argmin(self, tensor: AD, dim: int) -> Any:
        return self._in.float_argmin(tensor.p, dim)

    def _extremum_dim(self, tensor: AD, dim: int, op: str) -> tuple[AD, Any]:
        i = self._in
        x = tensor.p
        out, indices = getattr(i, op)(x, dim)
        n = tensor.node
        if n is None:
            return AD(out, None), indices
        return AD(out, Node((n,), self._gather_rule, make(Picked, (i.float_shape(x), dim, indices)))), indices

    def float_max_dim(self, tensor: AD, dim: int) -> AD:
        if tensor.node is None:
            return AD(self._in.float_max_dim(tensor.p, dim), None)
        return self._extremum_dim(tensor, dim, "float_max_dim_with_indices")[0]

    def float_min_dim(self, tensor: AD, dim: int) -> AD:
        if tensor.node is None:
            return AD(self._in.float_min_dim(tensor.p, dim), None)
        return self._extremum_dim(tensor, dim, "float_min_dim_with_indices")[0]

    def float_max_dim_with_indices(self, tensor: AD, dim: int) -> tuple[AD, Any]:
        return self._extremum_dim(tensor, dim, "float_max_dim_with_indices")

    def float_min_dim_with_indices(self, tensor: AD, dim: int) -> tuple[AD, Any]:
        return self._extremum_dim(tensor, dim, "float_min_dim_with_indices")

    def _extremum(self, tensor: AD, op: str) -> AD:
        i = self._in
        x = tensor.p
        n = tensor.node
        if n is None:
            return AD(getattr(i, op)(x), None)
        shape = i.float_shape(x)
        flat = i.float_reshape(x, (-1,) if shape != () else (1,))
        out, indices = getattr(i, op + "_dim_with_indices")(flat, 0)
        return AD(out, Node((n,), self._extremum_rule, make(FlatPicked, (shape, indices))))

    @staticmethod
    def _extremum_rule(B: Any, s: FlatPicked, need: Need, g: P) -> Grads:
        """max() / min(): the extremum's flat index (shape (1,)) takes the whole gradient."""
        flat = zeros_like_grad(B, g, (math.prod(s.shape),))
        return (B.float_reshape(B.float_scatter_add(0, flat, s.indices, g), s.shape),)

    def float_max(self, tensor: AD) -> AD:
        return self._extremum(tensor, "float_max")

    def float_min(self, tensor: AD) -> AD:
        return self._extremum(tensor, "float_min")

    # -- cumulative ops -----------------------------------------------------------------------
    def float_cumsum(self, tensor: AD, dim: int) -> AD:
        out = self._in.float_cumsum(tensor.p, dim)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), self._cumsum_rule, dim))

    @staticmethod
    def _cumsum_rule(B: Any, dim: int, need: Need, g: P) -> Grads:
        axes = (dim,)  # each x_i feeds every out_j with j >= i: a reversed cumulative sum
        return (B.float_flip(B.float_cumsum(B.float_flip(g, axes), dim), axes),)

    @records_no_node
    def float_cumprod(self, tensor: AD, dim: int) -> AD:
        out: AD = inner_or_default(self, "float_cumprod", tensor, dim)  # tracked: the composition
        return out

    def _cum_extremum(self, tensor: AD, dim: int, op: str) -> AD:
        i = self._in
        x = tensor.p
        out = getattr(i, op)(x, dim)
        n = tensor.node
        if n is None:
            return AD(out, None)
        # out[j] comes from the last i <= j where x[i] == out[i] (where the running extremum was
        # last reached): a running max of those positions, 0 elsewhere (x[0] == out[0]).
        shape = i.float_shape(x)
        device, int_dtype = i.float_device(x), i.int_dtype
        positions = i.int_arange(0, shape[dim], 1, device, int_dtype)
        positions = i.int_reshape(positions, tuple(m if d == dim else 1 for d, m in enumerate(shape)))
        reached = i.bool_into_int(i.float_equal(x, out), int_dtype)
        indices = i.int_cummax(i.int_mul(reached, positions), dim)
        return AD(out, Node((n,), self._gather_rule, make(Picked, (shape, dim, indices))))

    def float_cummax(self, tensor: AD, dim: int) -> AD:
        return self._cum_extremum(tensor, dim, "float_cummax")

    def float_cummin(self, tensor: AD, dim: int) -> AD:
        return self._cum_extremum(tensor, dim, "float_cummin")

    # -- shape ops ----------------------------------------------------------------------------
    def float_reshape(self, tensor: AD, shape: Shape) -> AD:
        i = self._in
        x = tensor.p
        out = i.float_reshape(x, shape)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), self._reshape_rule, i.float_shape(x)))

    @staticmethod
    def _reshape_rule(B: Any, shape: Shape, need: Need, g: P) -> Grads:
        return (B.float_reshape(g, shape),)  # back to the input's shape

    def float_permute(self, tensor: AD, axes: Shape) -> AD:
        out = self._in.float_permute(tensor.p, axes)
        n = tensor.node
        if n is None:
            return AD(out, None)
        inverse = [0] * len(axes)
        for position, axis in enumerate(axes):
            inverse[axis] = position
        return AD(out, Node((n,), self._permute_rule, tuple(inverse)))

    @staticmethod
    def _permute_rule(B: Any, inverse: Shape, need: Need, g: P) -> Grads:
        return (B.float_permute(g, inverse),)  # the inverse permutation

    def float_swap_dims(self, tensor: AD, dim1: int, dim2: int) -> AD:
        out = self._in.float_swap_dims(tensor.p, dim1, dim2)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), self._swap_dims_rule, (dim1, dim2)))

    @staticmethod
    def _swap_dims_rule(B: Any, dims: tuple[int, int], need: Need, g: P) -> Grads:
        return (B.float_swap_dims(g, *dims),)  # its own inverse

    def float_flip(self, tensor: AD, axes: Shape) -> AD:
        out = self._in.float_flip(tensor.p, axes)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), self._flip_rule, axes))

    @staticmethod
    def _flip_rule(B: Any, axes: Shape, need: Need, g: P) -> Grads:
        return (B.float_flip(g, axes),)  # its own inverse

    def float_expand(self, tensor: AD, shape: Shape) -> AD:
        i = self._in
        x = tensor.p
        out = i.float_expand(x, shape)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), self._expand_rule, i.float_shape(x)))

    @staticmethod
    def _expand_rule(B: Any, shape: Shape, need: Need, g: P) -> Grads:
        return (unbroadcast(B, g, shape),)  # summed over the copies

    def float_slice(self, tensor: AD, slices: tuple[slice, ...]) -> AD:
        i = self._in
        x = tensor.p
        out = i.float_slice(x, slices)
        n = tensor.node
        if n is None:
            return AD(out, None)
        return AD(out, Node((n,), self._slice_rule, make(Sliced, (i.float_shape(x), slices))))

    @staticmethod
    def _slice_rule(B: Any, s: Sliced, need: Need, g: P) -> Grads:
        # g inside the slices, zero elsewhere: built by the engine (`sliced`)
        return (SlicedGrad(s.shape, s.slices, g),)

    def float_slice_assign(self, tensor: AD, slices: tuple[slice, ...], value: AD) -> AD:
        i = self._in
        v = value.p
        out = i.float_slice_assign(tensor.p, slices, v)
        na, nb = tensor.node, value.node
        if na is None and nb is None:
            return AD(out, None)
        saved = make(SliceAssigned, (slices, i.float_shape(v)))
        return AD(out, Node((na, nb), self._slice_assign_rule, saved))

    @staticmethod
    def _slice_assign_rule(B: Any, s: SliceAssigned, need: Need, g: P) -> Grads:
        # the assigned region came from `value`, the rest from `tensor`
        gx = B.float_slice_assign(g, s.slices, zeros_like_grad(B, g, s.value_shape)) if need[0] else None
        gv = B.float_slice(g, s.slices) if need[1] else None
        return gx, gv

    def float_cat(self, tensors: Sequence[AD], dim: int) -> AD:
        i = self._in
        prims = [t.p for t in tensors]
        out = i.float_cat(prims, dim)
        parents = tuple(t.node for t in tensors)
        if all(n is None for n in parents):
            return AD(out, None)
        sizes = tuple(i.float_shape(p)[dim] for p in prims)
        return AD(out, Node(parents, self._cat_rule, make(Concatenated, (dim, sizes))))

    @staticmethod
    def _cat_rule(B: Any, s: Concatenated, need: Need, g: P) -> Grads:
        dim = s.dim  # each input gets back its own stretch of g along dim
        shape = B.float_shape(g)
        grads = []
        start = 0
        for size, needed in zip(s.sizes, need, strict=True):
            if needed:
                ranges = tuple(
                    slice(start, start + size, 1) if d == dim else slice(0, n, 1) for d, n in enumerate(shape)
                )
                grads.append(B.float_slice(g, ranges))
            else:
                grads.append(None)
            start += size
        return tuple(grads)

    def float_repeat_dim(self, tensor: AD, dim: int, times: int) -> AD:
        i = self._in
        x = tensor.p
        out = i.float_repeat_dim(x, dim, times)
        n = tensor.node
        if n is None:
            return AD(out, None)
        return AD(out, Node((n,), self._repeat_dim_rule, make(Repeated, (i.float_shape(x), dim, times))))

    @staticmethod
    def _repeat_dim_rule(B: Any, s: Repeated, need: Need, g: P) -> Grads:
        shape, dim = s.shape, s.dim  # out = [x, x, ..., x] along dim: sum the copies
        if s.times == 0:
            return (zeros_like_grad(B, g, shape),)
        split = shape[:dim] + (s.times, shape[dim]) + shape[dim + 1 :]
        return (B.float_reshape(B.float_sum_dim(B.float_reshape(g, split), dim), shape),)

    # -- indexing -----------------------------------------------------------------------------
    def float_gather(self, dim: int, tensor: AD, indices: Any) -> AD:
        i = self._in
        x = tensor.p
        out = i.float_gather(dim, x, indices)
        n = tensor.node
        if n is None:
            return AD(out, None)
        return AD(out, Node((n,), self._gather_rule, make(Picked, (i.float_shape(x), dim, indices))))

    @staticmethod
    def _gather_rule(B: Any, s: Picked, need: Need, g: P) -> Grads:
        """out = x gathered at `indices` along `dim`: scatter (sum) g back to those positions.
        Also the rule of max/min along a dim, sort and cummax/cummin: gathers at the indices
        they found."""
        return (B.float_scatter_add(s.dim, zeros_like_grad(B, g, s.shape), s.indices, g),)

    def float_scatter_add(self, dim: int, tensor: AD, indices: Any, values: AD) -> AD:
        out = self._in.float_scatter_add(dim, tensor.p, indices, values.p)
        na, nb = tensor.node, values.node
        if na is None and nb is None:
            return AD(out, None)
        return AD(out, Node((na, nb), self._scatter_add_rule, make(Scattered, (dim, indices))))

    @staticmethod
    def _scatter_add_rule(B: Any, s: Scattered, need: Need, g: P) -> Grads:
        # out = x + values summed at indices
        return (g if need[0] else None, B.float_gather(s.dim, g, s.indices) if need[1] else None)

    def float_select(self, tensor: AD, dim: int, indices: Any) -> AD:
        i = self._in
        x = tensor.p
        out = i.float_select(x, dim, indices)
        n = tensor.node
        if n is None:
            return AD(out, None)
        return AD(out, Node((n,), self._select_rule, make(Picked, (i.float_shape(x), dim, indices))))

    @staticmethod
    def _select_rule(B: Any, s: Picked, need: Need, g: P) -> Grads:
        # rows picked (maybe repeatedly): add g back into them
        return (B.float_select_add(zeros_like_grad(B, g, s.shape), s.dim, s.indices, g),)

    def float_select_add(self, tensor: AD, dim: int, indices: Any, values: AD) -> AD:
        out = self._in.float_select_add(tensor.p, dim, indices, values.p)
        na, nb = tensor.node, values.node
        if na is None and nb is None:
            return AD(out, None)
        return AD(out, Node((na, nb), self._select_add_rule, make(Scattered, (dim, indices))))

    @staticmethod
    def _select_add_rule(B: Any, s: Scattered, need: Need, g: P) -> Grads:
        # out = x + values added into the selected rows
        return (g if need[0] else None, B.float_select(g, s.dim, s.indices) if need[1] else None)

    def float_mask_where(self, tensor: AD, mask: Any, value: AD) -> AD:
        i = self._in
        x, v = tensor.p, value.p
        out = i.float_mask_where(x, mask, v)
        na, nb = tensor.node, value.node
        if na is None and nb is None:
            return AD(out, None)
        saved = make(Masked, (mask, i.float_shape(x), i.float_shape(v)))
        return AD(out, Node((na, nb), self._mask_where_rule, saved))

    @staticmethod
    def _mask_where_rule(B: Any, s: Masked, need: Need, g: P) -> Grads:
        mask = s.mask  # out = value where mask else tensor
        gx = unbroadcast(B, where_not(B, g, mask), s.tensor_shape) if need[0] else None
        gv = unbroadcast(B, where_not(B, g, B.bool_not(mask)), s.value_shape) if need[1] else None
        return gx, gv

    def float_mask_fill(self, tensor: AD, mask: Any, value: float) -> AD:
        i = self._in
        x = tensor.p
        out = i.float_mask_fill(x, mask, value)
        n = tensor.node
        if n is None:
            return AD(out, None)
        return AD(out, Node((n,), self._mask_fill_rule, make(Filled, (mask, i.float_shape(x)))))

    @staticmethod
    def _mask_fill_rule(B: Any, s: Filled, need: Need, g: P) -> Grads:
        return (unbroadcast(B, where_not(B, g, s.mask), s.shape),)  # filled positions are constants

    def float_unfold(self, tensor: AD, dim: int, size: int, step: int) -> AD:
        i = self._in
        x = tensor.p
        out = i.float_unfold(x, dim, size, step)
        n = tensor.node
        if n is None:
            return AD(out, None)
        return AD(out, Node((n,), self._unfold_rule, make(Windows, (i.float_shape(x), dim, size, step))))

    @staticmethod
    def _unfold_rule(B: Any, s: Windows, need: Need, g: P) -> Grads:
        """Windows of `size` every `step` along `dim`: add each window's gradient back where it was
        read (overlapping windows accumulate)."""
        shape, dim, size = s.shape, s.dim, s.size
        windows = B.float_shape(g)[dim]
        rank = len(shape) + 1
        # out = permute(split, (..dim, dim + 2.., dim + 1)): undo it, then merge (windows, size)
        back = B.float_permute(g, (*range(dim + 1), rank - 1, *range(dim + 1, rank - 1)))
        rows = B.float_reshape(back, (*shape[:dim], windows * size, *shape[dim + 1 :]))
        table = (np.arange(windows)[:, None] * s.step + np.arange(size)[None, :]).reshape(-1)
        read = int_table(B, table, B.float_device(g))
        return (B.float_select_add(zeros_like_grad(B, g, shape), dim, read, rows),)

    def float_gather_nd(self, tensor: AD, indices: Any) -> AD:
        i = self._in
        x = tensor.p
        out = i.float_gather_nd(x, indices)
        n = tensor.node
        if n is None:
            return AD(out, None)
        return AD(out, Node((n,), self._gather_nd_rule, make(PickedNd, (i.float_shape(x), indices))))

    @staticmethod
    def _gather_nd_rule(B: Any, s: PickedNd, need: Need, g: P) -> Grads:
        # elements or slices picked (maybe repeatedly): add g back into them
        return (B.float_scatter_nd(zeros_like_grad(B, g, s.shape), s.indices, g, "add"),)

    def float_scatter_nd(self, tensor: AD, indices: Any, values: AD, mode: str) -> AD:
        na, nb = tensor.node, values.node
        rule: Callable[..., Grads] | None = None  # multiply, max, min: no rule of their own
        if mode == "add":
            rule = self._scatter_nd_add_rule
        elif mode == "assign":
            rule = self._scatter_nd_assign_rule
        if rule is None and (na is not None or nb is not None):
            composed: AD = inner_or_default(self, "float_scatter_nd", tensor, indices, values, mode)
            return composed
        i = self._in
        v = values.p
        out = i.float_scatter_nd(tensor.p, indices, v, mode)
        if na is None and nb is None:
            return AD(out, None)
        return AD(out, Node((na, nb), rule, make(ScatteredNd, (indices, i.float_shape(v)))))

    @staticmethod
    def _scatter_nd_add_rule(B: Any, s: ScatteredNd, need: Need, g: P) -> Grads:
        # out = x + values summed at indices
        return (g if need[0] else None, B.float_gather_nd(g, s.indices) if need[1] else None)

    @staticmethod
    def _scatter_nd_assign_rule(B: Any, s: ScatteredNd, need: Need, g: P) -> Grads:
        """Overwritten positions have no gradient for `x`; an update gets its position's gradient
        only if it is the one that won there (the last one, for repeated indices)."""
        indices, values_shape = s.indices, s.values_shape
        gx = None
        if need[0]:
            gx = B.float_scatter_nd(g, indices, zeros_like_grad(B, g, values_shape), "assign")
        gv = None
        if need[1]:
            ishape = B.int_shape(indices)
            lead = tuple(ishape[:-1])
            ids = _int_ids(B, indices, lead)
            shape = B.float_shape(g)
            nobody = _no_update(B, indices, tuple(shape[: ishape[-1]]))
            winners = B.int_scatter_nd(nobody, indices, ids, "assign")
            lost = B.int_not_equal(B.int_gather_nd(winners, indices), ids)
            lost = B.bool_reshape(lost, lead + (1,) * (len(values_shape) - len(lead)))
            gv = where_not(B, B.float_gather_nd(g, indices), lost)
        return gx, gv

    def float_scatter_assign(self, dim: int, tensor: AD, indices: Any, values: AD) -> AD:
        out = self._in.float_scatter_assign(dim, tensor.p, indices, values.p)
        na, nb = tensor.node, values.node
        if na is None and nb is None:
            return AD(out, None)
        return AD(out, Node((na, nb), self._scatter_assign_rule, make(Scattered, (dim, indices))))

    @staticmethod
    def _scatter_assign_rule(B: Any, s: Scattered, need: Need, g: P) -> Grads:
        dim, indices = s.dim, s.indices  # as scatter_nd_assign, along one dim
        ishape = B.int_shape(indices)
        gx = B.float_scatter_assign(dim, g, indices, zeros_like_grad(B, g, ishape)) if need[0] else None
        gv = None
        if need[1]:
            ids = _int_ids(B, indices, ishape)
            winners = B.int_scatter_assign(dim, _no_update(B, indices, B.float_shape(g)), indices, ids)
            lost = B.int_not_equal(B.int_gather(dim, winners, indices), ids)
            gv = where_not(B, B.float_gather(dim, g, indices), lost)
        return gx, gv

    def float_select_assign(self, tensor: AD, dim: int, indices: Any, values: AD) -> AD:
        i = self._in
        v = values.p
        out = i.float_select_assign(tensor.p, dim, indices, v)
        na, nb = tensor.node, values.node
        if na is None and nb is None:
            return AD(out, None)
        saved = make(SelectAssigned, (dim, indices, i.float_shape(v)))
        return AD(out, Node((na, nb), self._select_assign_rule, saved))

    @staticmethod
    def _select_assign_rule(B: Any, s: SelectAssigned, need: Need, g: P) -> Grads:
        dim, indices, values_shape = s.dim, s.indices, s.values_shape  # as scatter_nd_assign, whole rows
        gx = B.float_select_assign(g, dim, indices, zeros_like_grad(B, g, values_shape)) if need[0] else None
        gv = None
        if need[1]:
            count = values_shape[dim]
            ids = _int_ids(B, indices, (count,))
            winners = B.int_select_assign(_no_update(B, indices, (B.float_shape(g)[dim],)), 0, indices, ids)
            lost = B.int_not_equal(B.int_select(winners, 0, indices), ids)
            lost = B.bool_reshape(lost, tuple(count if d == dim else 1 for d in range(len(values_shape))))
            gv = where_not(B, B.float_select(g, dim, indices), lost)
        return gx, gv

    def float_cross(self, lhs: AD, rhs: AD, dim: int) -> AD:
        a, b = lhs.p, rhs.p
        out = self._in.float_cross(a, b, dim)
        na, nb = lhs.node, rhs.node
        if na is None and nb is None:
            return AD(out, None)
        # d/da needs b and d/db needs a: keep only the operands a needed gradient reads
        saved = make(Crossed, (a if nb is not None else None, b if na is not None else None, dim))
        return AD(out, Node((na, nb), self._cross_rule, saved))

    @staticmethod
    def _cross_rule(B: Any, s: Crossed, need: Need, g: P) -> Grads:
        a, b, dim = s.lhs, s.rhs, s.dim  # <g, a x b> = <a, b x g> = <b, g x a>
        return (B.float_cross(b, g, dim) if need[0] else None, B.float_cross(g, a, dim) if need[1] else None)

    # -- sorting ------------------------------------------------------------------------------
    def float_sort_with_indices(self, tensor: AD, dim: int, descending: bool) -> tuple[AD, Any]:
        i = self._in
        x = tensor.p
        out, indices = i.float_sort_with_indices(x, dim, descending)
        n = tensor.node
        if n is None:
            return AD(out, None), indices
        return AD(out, Node((n,), self._gather_rule, make(Picked, (i.float_shape(x), dim, indices)))), indices

    def float_sort(self, tensor: AD, dim: int, descending: bool) -> AD:
        if tensor.node is None:
            return AD(self._in.float_sort(tensor.p, dim, descending), None)
        return self.float_sort_with_indices(tensor, dim, descending)[0]

    def float_argsort(self, tensor: AD, dim: int, descending: bool) -> Any:
        return self._in.float_argsort(tensor.p, dim, descending)

    # Buffer reuse (burn.foundations.ownership) is for backends whose primitives are plain buffers:
    # an autodiff primitive carries its graph node and the inner arrays saved for backward, so
    # the handed-over variants are the tracked ops themselves (and the feature is not declared).
    float_add_owned = float_add
    float_sub_owned = float_sub
    float_mul_owned = float_mul
    float_div_owned = float_div
    float_add_scalar_owned = float_add_scalar
    float_sub_scalar_owned = float_sub_scalar
    float_mul_scalar_owned = float_mul_scalar
    float_div_scalar_owned = float_div_scalar
    float_exp_owned = float_exp
    float_log_owned = float_log
    float_sqrt_owned = float_sqrt
    float_neg_owned = float_neg
    float_tanh_owned = float_tanh


# -- helpers of the rules above ----------------------------------------------------------------
def _one_minus_square(B: Any, x: P) -> P:
    """``(1 - x)(1 + x)``: 1 - x^2 without cancellation near |x| = 1."""
    return B.float_mul(one_minus(B, x), B.float_add_scalar(x, 1.0))


def _prod_others(B: Any, x: P, dim: int) -> P:
    """The product of the other elements along `dim`, for each element (zero-safe).

    With no zero in a slice it is ``prod / x``; with exactly one zero it is the product of the
    nonzeros at the zero's position and 0 elsewhere; with two or more zeros it is 0 everywhere.
    """
    is_zero = B.float_equal_elem(x, 0.0)
    dtype = B.float_get_dtype(x)
    zeros_f = B.bool_into_float(is_zero, dtype)
    count = B.float_sum_dim(zeros_f, dim)
    nonzero = B.float_mask_fill(x, is_zero, 1.0)
    prod_nonzero = B.float_prod_dim(nonzero, dim)
    no_zero = B.float_div(prod_nonzero, nonzero)
    no_zero = B.float_mul(no_zero, B.bool_into_float(B.float_equal_elem(count, 0.0), dtype))
    one_zero_rows = B.bool_into_float(B.float_equal_elem(count, 1.0), dtype)
    one_zero = B.float_mul(zeros_f, B.float_mul(prod_nonzero, one_zero_rows))
    return B.float_add(no_zero, one_zero)


def _int_ids(B: Any, like: P, shape: Shape) -> P:
    """``0, 1, ..., prod(shape) - 1`` as an int tensor of `shape` on the device of int `like`."""
    ids = B.int_arange(0, math.prod(shape), 1, B.int_device(like), B.int_dtype)
    return B.int_reshape(ids, shape)


def _no_update(B: Any, like: P, shape: Shape) -> P:
    """-1 everywhere: the id of "no update" in a table of winning update ids."""
    return B.int_full(shape, -1, B.int_device(like), B.int_dtype)
