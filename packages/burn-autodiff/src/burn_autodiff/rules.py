"""Every backward rule of the autodiff backend, one per differentiable op, in one place.

A rule turns the gradient ``g`` of an op's output into the gradients of its inputs:

    rule(B, saved, need, g) -> tuple with one gradient (or None) per input

- ``B`` is the *inner* backend: rules compute on inner primitives, so backward is not recorded
  on this backend. When the inner backend is itself an autodiff backend
  (``Autodiff(Autodiff(x))``), it records the rules' ops: gradients of gradients.
- ``saved`` is the tuple the forward op stored for this rule (inputs, outputs, shapes, dims...).
- ``need[i]`` is truthy when input ``i`` needs a gradient; rules skip the work for the others.

The forward side lives in `burn_autodiff.ops_float`, `burn_autodiff.ops_module` and the other
``ops_*`` modules; each op names its rule here. Conventions where the math leaves a choice:

- clamp / clamp_min / clamp_max pass the gradient where ``min <= x <= max`` (boundaries
  included), like PyTorch; hard_sigmoid passes it strictly inside its linear part, like
  PyTorch's hardsigmoid.
- max/min (with or without a dim) and sort route the gradient to the one element their indices
  name (the first extremum, as ``argmax`` picks it); ties do not share it.
- abs has gradient ``sign(x)``, so 0 at 0; round, floor, ceil and sign have gradient 0.
- ``x ** y`` gives ``dy = 0`` where ``x == 0`` (the limit of ``x**y * log x`` for ``y > 0``).
- hardtanh and relu6 pass the gradient strictly inside their bounds, threshold and
  thresholded_relu strictly above the threshold (PyTorch's); elu, celu and selu take the
  exponential branch at 0 (slopes ``alpha``, 1, ``scale * alpha``); hard_swish has slope 0 at
  -3 and 1 at 3 (the side outside ``(-3, 3)``, as burn-core's composition; PyTorch's formula
  gives -0.5 and 1.5 there).
- assign-mode scatters (scatter_nd, scatter, select_assign): overwritten positions get no
  gradient for the tensor, and of several updates to one position only the winner (the last)
  gets its gradient.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from burn.backend.tables import int_table
from burn_autodiff.products import weight_grad
from burn_autodiff.sliced import SlicedGrad

P = Any  # an inner primitive
Shape = tuple[int, ...]

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


# -- helpers -----------------------------------------------------------------------------------
def unbroadcast(B: Any, g: P, shape: Shape | None) -> P:
    """Sum `g` over the dims broadcasting added or stretched, so it has `shape` again.

    `shape` None means the input already had the output's shape (the forward op checked).
    """
    if shape is None:
        return g
    gs = B.float_shape(g)
    if gs == shape:
        return g
    lead = len(gs) - len(shape)
    for d in range(len(gs)):
        if d < lead or (shape[d - lead] == 1 and gs[d] != 1):
            g = B.float_sum_dim(g, d)
    return B.float_reshape(g, shape)


def zeros_like_grad(B: Any, g: P, shape: Shape) -> P:
    """Zeros of `shape` with `g`'s dtype and device."""
    return B.float_zeros(shape, B.float_device(g), B.float_get_dtype(g))


def _scalar_zero(B: Any, g: P) -> P:
    return B.float_zeros((), B.float_device(g), B.float_get_dtype(g))


def _where_not(B: Any, g: P, mask: P) -> P:
    """`g` where `mask` is false, else 0 (the mask broadcasts to `g`)."""
    return B.float_mask_where(g, mask, _scalar_zero(B, g))


def _one_minus(B: Any, x: P) -> P:
    return B.float_add_scalar(B.float_neg(x), 1.0)


def _as_2d(B: Any, t: P) -> P:
    """``[N, C, L]`` -> ``[N, C, 1, L]``: 1-D module ops reuse the 2-D backward helpers."""
    n, c, length = B.float_shape(t)
    return B.float_reshape(t, (n, c, 1, length))


def _drop_h(B: Any, t: P) -> P:
    n, c, _, length = B.float_shape(t)
    return B.float_reshape(t, (n, c, length))


# -- arithmetic --------------------------------------------------------------------------------
def add(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    ls, rs = saved
    if ls is None:  # no broadcast (the common case): g as it is
        return g, g
    return (unbroadcast(B, g, ls) if need[0] else None, unbroadcast(B, g, rs) if need[1] else None)


def sub(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    ls, rs = saved
    return (unbroadcast(B, g, ls) if need[0] else None,
            unbroadcast(B, B.float_neg(g), rs) if need[1] else None)


def mul(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    x, y, ls, rs = saved  # d(xy)/dx = y, d(xy)/dy = x
    return (unbroadcast(B, B.float_mul(g, y), ls) if need[0] else None,
            unbroadcast(B, B.float_mul(g, x), rs) if need[1] else None)


def div(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    x, y, ls, rs = saved  # d(x/y)/dx = 1/y, d(x/y)/dy = -x/y^2
    gx = unbroadcast(B, B.float_div(g, y), ls) if need[0] else None
    gy = None
    if need[1]:
        gy = unbroadcast(B, B.float_neg(B.float_div(B.float_mul(g, x), B.float_mul(y, y))), rs)
    return gx, gy


def remainder(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    x, y, ls, rs = saved  # x % y = x - floor(x/y) * y
    gx = unbroadcast(B, g, ls) if need[0] else None
    gy = None
    if need[1]:
        gy = unbroadcast(B, B.float_neg(B.float_mul(g, B.float_floor(B.float_div(x, y)))), rs)
    return gx, gy


def powf(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    x, y, out, ls, rs = saved  # d(x^y)/dx = y x^(y-1), d(x^y)/dy = x^y log x
    gx = gy = None
    if need[0]:
        dx = B.float_mul(y, B.float_powf(x, B.float_sub_scalar(y, 1.0)))
        gx = unbroadcast(B, B.float_mul(g, dx), ls)
    if need[1]:
        safe = B.float_mask_fill(x, B.float_equal_elem(x, 0.0), 1.0)  # log 1 = 0 where x == 0
        gy = unbroadcast(B, B.float_mul(g, B.float_mul(out, B.float_log(safe))), rs)
    return gx, gy


def matmul(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    x, y, ls, rs = saved  # dX = G Y^T, dY = X^T G (leading dims broadcast, then summed back)
    # the forward op kept an operand, or only its shape when the operand itself is not needed
    gx = gy = None
    if need[0]:
        r = len(B.float_shape(y))
        gx = B.float_matmul(g, B.float_swap_dims(y, r - 2, r - 1))
        gx = unbroadcast(B, gx, B.float_shape(x) if ls is None else ls)
    if need[1]:
        xs, ys = B.float_shape(x), B.float_shape(y) if rs is None else rs
        if len(ys) == 2 and len(xs) == 2:
            return gx, weight_grad(B, x, g)  # X^T G, lazy when small: see burn_autodiff.products
        if len(ys) == 2:
            # A matrix applied to a batch (a Linear layer on [batch, seq, d]): the batch sum of
            # X_b^T G_b is one GEMM over the stacked rows, not a stacked GEMM and then a sum.
            rows = math.prod(xs[:-1])
            x2 = B.float_reshape(x, (rows, xs[-1]))
            g2 = B.float_reshape(g, (rows, ys[-1]))
            return gx, weight_grad(B, x2, g2)
        r = len(xs)
        gy = B.float_matmul(B.float_swap_dims(x, r - 2, r - 1), g)
        gy = unbroadcast(B, gy, ys)
    return gx, gy


def identity(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    """add_scalar, sub_scalar, remainder_scalar: d(x + c)/dx = 1."""
    return (g,)


def mul_scalar(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    (c,) = saved
    return (B.float_mul_scalar(g, c),)


def div_scalar(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    (c,) = saved
    return (B.float_div_scalar(g, c),)


def powf_scalar(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    x, c = saved  # d(x^c)/dx = c x^(c-1); 0 for c == 0 (x^0 is constant, even at x == 0)
    if c == 0:
        return (zeros_like_grad(B, g, B.float_shape(g)),)
    return (B.float_mul(g, B.float_mul_scalar(B.float_powf_scalar(x, c - 1.0), c)),)


# -- unary math --------------------------------------------------------------------------------
def exp(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    (out,) = saved  # d e^x = e^x
    return (B.float_mul(g, out),)


def log(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    (x,) = saved  # d log x = 1/x
    return (B.float_div(g, x),)


def log1p(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    (x,) = saved  # d log(1+x) = 1/(1+x)
    return (B.float_div(g, B.float_add_scalar(x, 1.0)),)


def sqrt(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    (out,) = saved  # d sqrt x = 1 / (2 sqrt x)
    return (B.float_div(g, B.float_mul_scalar(out, 2.0)),)


def abs_(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    (x,) = saved  # d|x| = sign(x)
    return (B.float_mul(g, B.float_sign(x)),)


def sin(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    (x,) = saved
    return (B.float_mul(g, B.float_cos(x)),)


def cos(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    (x,) = saved
    return (B.float_neg(B.float_mul(g, B.float_sin(x))),)


def tanh(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    (out,) = saved  # d tanh x = 1 - tanh^2 x
    return (B.float_sub(g, B.float_mul(B.float_mul(g, out), out)),)


def erf(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    (x,) = saved  # d erf x = 2/sqrt(pi) e^(-x^2)
    dx = B.float_mul_scalar(B.float_exp(B.float_neg(B.float_mul(x, x))), _TWO_OVER_SQRT_PI)
    return (B.float_mul(g, dx),)


# -- more trigonometric and hyperbolic functions, fmod (forward ops in ops_math) ---------------
def tan(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    (out,) = saved  # d tan x = 1 + tan^2 x
    return (B.float_add(g, B.float_mul(B.float_mul(g, out), out)),)


def sinh(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    (x,) = saved
    return (B.float_mul(g, B.float_cosh(x)),)


def cosh(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    (x,) = saved
    return (B.float_mul(g, B.float_sinh(x)),)


def _one_minus_square(B: Any, x: P) -> P:
    """``(1 - x)(1 + x)``: 1 - x^2 without cancellation near |x| = 1."""
    return B.float_mul(_one_minus(B, x), B.float_add_scalar(x, 1.0))


def asin(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    (x,) = saved  # d asin x = 1 / sqrt(1 - x^2)
    return (B.float_div(g, B.float_sqrt(_one_minus_square(B, x))),)


def acos(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    (x,) = saved  # d acos x = -1 / sqrt(1 - x^2)
    return (B.float_neg(B.float_div(g, B.float_sqrt(_one_minus_square(B, x)))),)


def atan(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    (x,) = saved  # d atan x = 1 / (1 + x^2)
    return (B.float_div(g, B.float_add_scalar(B.float_mul(x, x), 1.0)),)


def asinh(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    (x,) = saved  # d asinh x = 1 / sqrt(x^2 + 1)
    return (B.float_div(g, B.float_sqrt(B.float_add_scalar(B.float_mul(x, x), 1.0))),)


def acosh(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    (x,) = saved  # d acosh x = 1 / sqrt((x - 1)(x + 1))
    root = B.float_sqrt(B.float_mul(B.float_sub_scalar(x, 1.0), B.float_add_scalar(x, 1.0)))
    return (B.float_div(g, root),)


def atanh(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    (x,) = saved  # d atanh x = 1 / (1 - x^2)
    return (B.float_div(g, _one_minus_square(B, x)),)


def atan2(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    y, x, ys, xs = saved  # d atan2(y, x) = (x dy - y dx) / (x^2 + y^2)
    scaled = B.float_div(g, B.float_add(B.float_mul(x, x), B.float_mul(y, y)))
    gy = unbroadcast(B, B.float_mul(scaled, x), ys) if need[0] else None
    gx = unbroadcast(B, B.float_neg(B.float_mul(scaled, y)), xs) if need[1] else None
    return gy, gx


def fmod(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    x, y, ls, rs = saved  # fmod(x, y) = x - trunc(x / y) * y
    gx = unbroadcast(B, g, ls) if need[0] else None
    gy = None
    if need[1]:
        gy = unbroadcast(B, B.float_neg(B.float_mul(g, B.float_trunc(B.float_div(x, y)))), rs)
    return gx, gy


def zero(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    """round, floor, ceil, trunc, sign: piecewise constant, gradient 0."""
    return (zeros_like_grad(B, g, B.float_shape(g)),)


def neg(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    return (B.float_neg(g),)


def recip(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    (out,) = saved  # d(1/x) = -1/x^2 = -out^2
    return (B.float_neg(B.float_mul(g, B.float_mul(out, out))),)


def clamp_min(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    x, lo = saved  # passes where x >= min
    return (_where_not(B, g, B.float_lower_elem(x, lo)),)


def clamp_max(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    x, hi = saved  # passes where x <= max
    return (_where_not(B, g, B.float_greater_elem(x, hi)),)


def clamp(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    x, lo, hi = saved  # passes where min <= x <= max
    outside = B.bool_or(B.float_lower_elem(x, lo), B.float_greater_elem(x, hi))
    return (_where_not(B, g, outside),)


# -- reductions --------------------------------------------------------------------------------
def sum_dim(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    (shape,) = saved  # every element contributed once: broadcast g back
    return (B.float_expand(g, shape),)


def sum_(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    (shape,) = saved  # g has shape (1,), which broadcasts to any shape but ()
    return (B.float_expand(g, shape) if shape else B.float_reshape(g, shape),)


def mean_dim(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    shape, dim = saved
    return (B.float_expand(B.float_div_scalar(g, float(shape[dim])), shape),)


def mean(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    (shape,) = saved
    count = float(math.prod(shape))
    return (B.float_expand(B.float_reshape(B.float_div_scalar(g, count), (1,) * len(shape)), shape),)


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


def prod_dim(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    x, dim = saved
    return (B.float_mul(g, _prod_others(B, x, dim)),)


def prod(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    (x,) = saved
    shape = B.float_shape(x)
    flat = B.float_reshape(x, (-1,) if shape != () else (1,))
    return (B.float_reshape(B.float_mul(g, _prod_others(B, flat, 0)), shape),)


def cumsum(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    (dim,) = saved  # each x_i feeds every out_j with j >= i: a reversed cumulative sum
    axes = (dim,)
    return (B.float_flip(B.float_cumsum(B.float_flip(g, axes), dim), axes),)


def gather(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    """out = x gathered at `indices` along `dim`: scatter (sum) g back to those positions."""
    shape, dim, indices = saved
    return (B.float_scatter_add(dim, zeros_like_grad(B, g, shape), indices, g),)


# max/min along a dim (with or without indices) and sort are gathers at the indices they found.
max_dim = min_dim = sort = gather


def max_full(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    """max() / min(): the extremum's flat index (shape (1,)) takes the whole gradient."""
    shape, indices = saved
    flat = zeros_like_grad(B, g, (math.prod(shape),))
    return (B.float_reshape(B.float_scatter_add(0, flat, indices, g), shape),)


# -- shape ops ---------------------------------------------------------------------------------
def reshape(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    (shape,) = saved
    return (B.float_reshape(g, shape),)


def permute(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    (inverse,) = saved  # the inverse permutation
    return (B.float_permute(g, inverse),)


def swap_dims(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    d1, d2 = saved
    return (B.float_swap_dims(g, d1, d2),)


def flip(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    (axes,) = saved
    return (B.float_flip(g, axes),)


def expand(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    (shape,) = saved
    return (unbroadcast(B, g, shape),)


def slice_(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    shape, slices = saved  # g inside the slices, zero elsewhere: built by the engine (`sliced`)
    return (SlicedGrad(shape, slices, g),)


def slice_assign(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    slices, value_shape = saved  # the assigned region came from `value`, the rest from `tensor`
    gx = B.float_slice_assign(g, slices, zeros_like_grad(B, g, value_shape)) if need[0] else None
    gv = B.float_slice(g, slices) if need[1] else None
    return gx, gv


def cat(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    dim, sizes = saved  # each input gets back its own stretch of g along dim
    shape = B.float_shape(g)
    grads = []
    start = 0
    for size, needed in zip(sizes, need, strict=True):
        if needed:
            ranges = tuple(
                slice(start, start + size, 1) if d == dim else slice(0, n, 1) for d, n in enumerate(shape)
            )
            grads.append(B.float_slice(g, ranges))
        else:
            grads.append(None)
        start += size
    return tuple(grads)


def repeat_dim(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    shape, dim, times = saved  # out = [x, x, ..., x] along dim: sum the copies
    if times == 0:
        return (zeros_like_grad(B, g, shape),)
    split = shape[:dim] + (times, shape[dim]) + shape[dim + 1 :]
    return (B.float_reshape(B.float_sum_dim(B.float_reshape(g, split), dim), shape),)


# -- indexing ----------------------------------------------------------------------------------
def scatter_add(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    dim, indices = saved  # out = x + values summed at indices
    return (g if need[0] else None, B.float_gather(dim, g, indices) if need[1] else None)


def select(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    shape, dim, indices = saved  # rows picked (maybe repeatedly): add g back into them
    return (B.float_select_add(zeros_like_grad(B, g, shape), dim, indices, g),)


def select_add(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    dim, indices = saved
    return (g if need[0] else None, B.float_select(g, dim, indices) if need[1] else None)


def mask_where(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    mask, ls, vs = saved  # out = value where mask else tensor
    gx = unbroadcast(B, _where_not(B, g, mask), ls) if need[0] else None
    gv = unbroadcast(B, _where_not(B, g, B.bool_not(mask)), vs) if need[1] else None
    return gx, gv


def mask_fill(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    mask, shape = saved  # filled positions are constants
    return (unbroadcast(B, _where_not(B, g, mask), shape),)


# -- casts and moves ---------------------------------------------------------------------------
def cast(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    (dtype,) = saved  # the gradient goes back in the input's dtype
    return (B.float_cast(g, dtype),)


def to_device(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    (device,) = saved
    return (B.float_to_device(g, device),)


# -- module ops (through the inner backend's *_backward helpers) -------------------------------
def conv2d(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    x, w, stride, padding, dilation, groups = saved
    gx = B.conv2d_x_backward(x, w, g, stride, padding, dilation, groups) if need[0] else None
    gw = B.conv2d_weight_backward(x, w, g, stride, padding, dilation, groups) if need[1] else None
    gb = _bias_grad(B, g) if len(need) > 2 and need[2] else None
    return gx, gw, gb


def _bias_grad(B: Any, g: P) -> P:
    """Sum over every dim but the channels (dim 1)."""
    shape = B.float_shape(g)
    for d in range(len(shape) - 1, -1, -1):
        if d != 1:
            g = B.float_sum_dim(g, d)
    return B.float_reshape(g, (shape[1],))


def conv1d(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    x, w, stride, padding, dilation, groups = saved  # a conv2d with a height-1 kernel
    x2, w2, g2 = _as_2d(B, x), _as_2d(B, w), _as_2d(B, g)
    args = ((1, stride), (0, padding), (1, dilation), groups)
    gx = _drop_h(B, B.conv2d_x_backward(x2, w2, g2, *args)) if need[0] else None
    gw = _drop_h(B, B.conv2d_weight_backward(x2, w2, g2, *args)) if need[1] else None
    gb = _bias_grad(B, g) if len(need) > 2 and need[2] else None
    return gx, gw, gb


def conv_transpose2d(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    x, w, stride, padding, padding_out, dilation, groups = saved
    args = (stride, padding, padding_out, dilation, groups)
    gx = B.conv_transpose2d_x_backward(x, w, g, *args) if need[0] else None
    gw = B.conv_transpose2d_weight_backward(x, w, g, *args) if need[1] else None
    gb = _bias_grad(B, g) if len(need) > 2 and need[2] else None
    return gx, gw, gb


def max_pool2d(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    x, indices, kernel, stride, padding, dilation = saved  # g goes to each window's argmax
    return (B.max_pool2d_with_indices_backward(x, kernel, stride, padding, dilation, g, indices),)


def max_pool1d(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    x, indices, kernel, stride, padding, dilation = saved  # flat index h*W + w with h = 0
    n, c, lo = B.int_shape(indices)
    gx = B.max_pool2d_with_indices_backward(
        _as_2d(B, x), (1, kernel), (1, stride), (0, padding), (1, dilation), _as_2d(B, g),
        B.int_reshape(indices, (n, c, 1, lo)),
    )
    return (_drop_h(B, gx),)


def avg_pool2d(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    x, kernel, stride, padding, count_include_pad = saved
    return (B.avg_pool2d_backward(x, g, kernel, stride, padding, count_include_pad),)


def avg_pool1d(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    x, kernel, stride, padding, count_include_pad = saved
    gx = B.avg_pool2d_backward(
        _as_2d(B, x), _as_2d(B, g), (1, kernel), (1, stride), (0, padding), count_include_pad
    )
    return (_drop_h(B, gx),)


def adaptive_avg_pool2d(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    (x,) = saved
    return (B.adaptive_avg_pool2d_backward(x, g),)


def adaptive_avg_pool1d(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    (x,) = saved  # one row of height 1: the 2-D bins along H are the identity
    return (_drop_h(B, B.adaptive_avg_pool2d_backward(_as_2d(B, x), _as_2d(B, g))),)


# 3-D convolution and pooling, 1-D/3-D transposed convolution (forwards: `ops_module_3d`).
def conv3d(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    x, w, stride, padding, dilation, groups = saved
    gx = B.conv3d_x_backward(x, w, g, stride, padding, dilation, groups) if need[0] else None
    gw = B.conv3d_weight_backward(x, w, g, stride, padding, dilation, groups) if need[1] else None
    gb = _bias_grad(B, g) if len(need) > 2 and need[2] else None
    return gx, gw, gb


def conv_transpose1d(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    x, w, stride, padding, padding_out, dilation, groups = saved  # a 2-D one with a height-1 kernel
    x2, w2, g2 = _as_2d(B, x), _as_2d(B, w), _as_2d(B, g)
    args = ((1, stride), (0, padding), (0, padding_out), (1, dilation), groups)
    gx = _drop_h(B, B.conv_transpose2d_x_backward(x2, w2, g2, *args)) if need[0] else None
    gw = _drop_h(B, B.conv_transpose2d_weight_backward(x2, w2, g2, *args)) if need[1] else None
    gb = _bias_grad(B, g) if len(need) > 2 and need[2] else None
    return gx, gw, gb


def conv_transpose3d(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    x, w, stride, padding, padding_out, dilation, groups = saved
    args = (stride, padding, padding_out, dilation, groups)
    gx = B.conv_transpose3d_x_backward(x, w, g, *args) if need[0] else None
    gw = B.conv_transpose3d_weight_backward(x, w, g, *args) if need[1] else None
    gb = _bias_grad(B, g) if len(need) > 2 and need[2] else None
    return gx, gw, gb


def max_pool3d(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    x, indices, kernel, stride, padding, dilation = saved  # g goes to each window's argmax
    return (B.max_pool3d_with_indices_backward(x, kernel, stride, padding, dilation, g, indices),)


def avg_pool3d(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    x, kernel, stride, padding, count_include_pad = saved
    return (B.avg_pool3d_backward(x, g, kernel, stride, padding, count_include_pad),)


def adaptive_avg_pool3d(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    (x,) = saved
    return (B.adaptive_avg_pool3d_backward(x, g),)


def embedding(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    weights, indices = saved  # rows looked up (maybe repeatedly): sum g into them
    return (B.embedding_backward(weights, g, indices),)


def interpolate(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    x, output_size, mode, align_corners = saved
    return (B.interpolate_backward(x, g, output_size, mode, align_corners),)


# -- activations -------------------------------------------------------------------------------
def relu(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    (out,) = saved
    return (B.relu_backward(out, g),)


def leaky_relu(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    x, slope = saved  # 1 for x > 0, slope otherwise (at 0 too, like PyTorch)
    return (B.float_mask_where(B.float_mul_scalar(g, slope), B.float_greater_elem(x, 0.0), g),)


def gelu(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    (x,) = saved
    return (B.gelu_backward(x, g),)


def sigmoid(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    (out,) = saved
    return (B.sigmoid_backward(out, g),)


def log_sigmoid(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    (x,) = saved  # d log(sigmoid x) = 1 - sigmoid(x) = sigmoid(-x)
    return (B.float_mul(g, B.sigmoid(B.float_neg(x))),)


def silu(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    (x,) = saved  # d(x s(x)) = s(x) (1 + x (1 - s(x)))
    s = B.sigmoid(x)
    dx = B.float_mul(s, B.float_add_scalar(B.float_mul(x, _one_minus(B, s)), 1.0))
    return (B.float_mul(g, dx),)


def softplus(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    x, beta = saved  # d log(1 + e^(bx))/b = sigmoid(bx)
    return (B.float_mul(g, B.sigmoid(B.float_mul_scalar(x, beta))),)


def hard_sigmoid(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    x, alpha, beta = saved  # alpha inside the linear part 0 < alpha x + beta < 1, else 0
    lin = B.float_add_scalar(B.float_mul_scalar(x, alpha), beta)
    outside = B.bool_or(B.float_lower_equal_elem(lin, 0.0), B.float_greater_equal_elem(lin, 1.0))
    return (_where_not(B, B.float_mul_scalar(g, alpha), outside),)


def softmax(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    out, dim = saved  # dx = s * (g - sum(g * s))
    dot = B.float_sum_dim(B.float_mul(g, out), dim)
    return (B.float_mul(out, B.float_sub(g, dot)),)


def log_softmax(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    out, dim = saved  # dx = g - softmax(x) * sum(g)
    return (B.float_sub(g, B.float_mul(B.float_exp(out), B.float_sum_dim(g, dim))),)


def cross_entropy(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    logits, targets, reduction = saved  # dx = (softmax(x) - onehot(t)) * g per row
    return (B.cross_entropy_backward(logits, targets, g, reduction),)


def lstm_cell(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    gates, cell, out = saved  # both gradients come from one pass (`lstm_cell_backward`)
    d_gates, d_cell = B.lstm_cell_backward(gates, cell, out, g)
    return (d_gates if need[0] else None, d_cell if need[1] else None)


def gru_cell(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    gates_x, gates_h, hidden = saved  # the three gradients come from one pass
    grads = B.gru_cell_backward(gates_x, gates_h, hidden, g)
    return tuple(d if wanted else None for d, wanted in zip(grads, need, strict=True))


# -- further activations (forwards: `ops_activation`) ------------------------------------------
def _exp_branch(B: Any, x: P, coef: float, rate: float) -> P:
    """The slope of elu-like activations: 1 for ``x > 0``, else ``coef * exp(rate * x)``
    (computed at ``min(x, 0)``, so the branch not taken never overflows)."""
    slope = B.float_mul_scalar(B.float_exp(B.float_mul_scalar(B.float_clamp_max(x, 0.0), rate)), coef)
    return B.float_mask_fill(slope, B.float_greater_elem(x, 0.0), 1.0)


def elu(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    x, alpha = saved  # d alpha (e^x - 1) = alpha e^x
    return (B.float_mul(g, _exp_branch(B, x, alpha, 1.0)),)


def celu(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    x, alpha = saved  # d alpha (e^(x/alpha) - 1) = e^(x/alpha)
    return (B.float_mul(g, _exp_branch(B, x, 1.0, 1.0 / alpha)),)


def selu(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    x, alpha, scale = saved  # scale * elu(x, alpha)
    return (B.float_mul_scalar(B.float_mul(g, _exp_branch(B, x, alpha, 1.0)), scale),)


def hardtanh(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    x, lo, hi = saved  # relu6 too (lo = 0, hi = 6): 1 strictly inside, 0 at and beyond the bounds
    outside = B.bool_or(B.float_lower_equal_elem(x, lo), B.float_greater_equal_elem(x, hi))
    return (_where_not(B, g, outside),)


def threshold(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    x, level = saved  # thresholded_relu too: x passes strictly above the threshold
    return (_where_not(B, g, B.float_lower_equal_elem(x, level)),)


def hard_swish(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    (x,) = saved  # d x (x + 3) / 6 = (2x + 3) / 6 on (-3, 3); 0 below, 1 above
    slope = B.float_add_scalar(B.float_div_scalar(x, 3.0), 0.5)
    slope = B.float_mask_fill(slope, B.float_lower_equal_elem(x, -3.0), 0.0)
    slope = B.float_mask_fill(slope, B.float_greater_equal_elem(x, 3.0), 1.0)
    return (B.float_mul(g, slope),)


_GELU_C = math.sqrt(2.0 / math.pi)
_GELU_K = 0.044715


def gelu_approximate(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    (x,) = saved  # x s(2u), u = c (x + k x^3): s + x s (1 - s) 2c (1 + 3k x^2)
    x2 = B.float_mul(x, x)
    u2 = B.float_mul_scalar(B.float_add(x, B.float_mul_scalar(B.float_mul(x2, x), _GELU_K)), 2.0 * _GELU_C)
    s = B.sigmoid(u2)
    du2 = B.float_mul_scalar(B.float_add_scalar(B.float_mul_scalar(x2, 3.0 * _GELU_K), 1.0), 2.0 * _GELU_C)
    slope = B.float_add(s, B.float_mul(B.float_mul(x, B.float_mul(s, _one_minus(B, s))), du2))
    return (B.float_mul(g, slope),)


def softsign(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    (x,) = saved  # d x / (1 + |x|) = 1 / (1 + |x|)^2
    denominator = B.float_add_scalar(B.float_abs(x), 1.0)
    return (B.float_div(g, B.float_mul(denominator, denominator)),)


def tanhshrink(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    (x,) = saved  # d (x - tanh x) = tanh^2 x
    t = B.float_tanh(x)
    return (B.float_mul(g, B.float_mul(t, t)),)


def _halves(B: Any, x: P, dim: int) -> tuple[P, P]:
    shape = B.float_shape(x)
    half = shape[dim] // 2
    ranges = [slice(0, n, 1) for n in shape]
    first = B.float_slice(x, tuple(ranges[:dim] + [slice(0, half, 1)] + ranges[dim + 1 :]))
    second = B.float_slice(x, tuple(ranges[:dim] + [slice(half, 2 * half, 1)] + ranges[dim + 1 :]))
    return first, second


def glu(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    x, dim = saved  # out = a s(b): da = g s(b), db = g a s(b) (1 - s(b))
    a, b = _halves(B, x, dim)
    s = B.sigmoid(b)
    return (B.float_cat([B.float_mul(g, s), B.sigmoid_backward(s, B.float_mul(g, a))], dim),)


def softmin(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    out, dim = saved  # softmax(-x): dx = -s * (g - sum(g * s))
    dot = B.float_sum_dim(B.float_mul(g, out), dim)
    return (B.float_mul(out, B.float_sub(dot, g)),)


# -- layout and indexing ops (forwards: `ops_layout`) ------------------------------------------
def unfold(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    """Windows of `size` every `step` along `dim`: add each window's gradient back where it was
    read (overlapping windows accumulate)."""
    shape, dim, size, step = saved
    windows = B.float_shape(g)[dim]
    rank = len(shape) + 1
    # out = permute(split, (..dim, dim + 2.., dim + 1)): undo it, then merge (windows, size)
    back = B.float_permute(g, (*range(dim + 1), rank - 1, *range(dim + 1, rank - 1)))
    rows = B.float_reshape(back, (*shape[:dim], windows * size, *shape[dim + 1 :]))
    table = (np.arange(windows)[:, None] * step + np.arange(size)[None, :]).reshape(-1)
    read = int_table(B, table, B.float_device(g))
    return (B.float_select_add(zeros_like_grad(B, g, shape), dim, read, rows),)


def gather_nd(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    shape, indices = saved  # elements or slices picked (maybe repeatedly): add g back into them
    return (B.float_scatter_nd(zeros_like_grad(B, g, shape), indices, g, "add"),)


def scatter_nd_add(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    indices, _ = saved  # out = x + values summed at indices
    return (g if need[0] else None, B.float_gather_nd(g, indices) if need[1] else None)


def _int_ids(B: Any, like: P, shape: Shape) -> P:
    """``0, 1, ..., prod(shape) - 1`` as an int tensor of `shape` on the device of int `like`."""
    ids = B.int_arange(0, math.prod(shape), 1, B.int_device(like), B.int_dtype)
    return B.int_reshape(ids, shape)


def _no_update(B: Any, like: P, shape: Shape) -> P:
    """-1 everywhere: the id of "no update" in a table of winning update ids."""
    return B.int_full(shape, -1, B.int_device(like), B.int_dtype)


def scatter_nd_assign(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    """Overwritten positions have no gradient for `x`; an update gets its position's gradient
    only if it is the one that won there (the last one, for repeated indices)."""
    indices, values_shape = saved
    gx = B.float_scatter_nd(g, indices, zeros_like_grad(B, g, values_shape), "assign") if need[0] else None
    gv = None
    if need[1]:
        ishape = B.int_shape(indices)
        lead = tuple(ishape[:-1])
        ids = _int_ids(B, indices, lead)
        shape = B.float_shape(g)
        winners = B.int_scatter_nd(_no_update(B, indices, tuple(shape[: ishape[-1]])), indices, ids, "assign")
        lost = B.int_not_equal(B.int_gather_nd(winners, indices), ids)
        lost = B.bool_reshape(lost, lead + (1,) * (len(values_shape) - len(lead)))
        gv = _where_not(B, B.float_gather_nd(g, indices), lost)
    return gx, gv


def scatter_assign(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    dim, indices = saved  # as scatter_nd_assign, along one dim
    ishape = B.int_shape(indices)
    gx = B.float_scatter_assign(dim, g, indices, zeros_like_grad(B, g, ishape)) if need[0] else None
    gv = None
    if need[1]:
        ids = _int_ids(B, indices, ishape)
        winners = B.int_scatter_assign(dim, _no_update(B, indices, B.float_shape(g)), indices, ids)
        lost = B.int_not_equal(B.int_gather(dim, winners, indices), ids)
        gv = _where_not(B, B.float_gather(dim, g, indices), lost)
    return gx, gv


def select_assign(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    dim, indices, values_shape = saved  # as scatter_nd_assign, whole rows of one dim
    gx = B.float_select_assign(g, dim, indices, zeros_like_grad(B, g, values_shape)) if need[0] else None
    gv = None
    if need[1]:
        count = values_shape[dim]
        ids = _int_ids(B, indices, (count,))
        winners = B.int_select_assign(_no_update(B, indices, (B.float_shape(g)[dim],)), 0, indices, ids)
        lost = B.int_not_equal(B.int_select(winners, 0, indices), ids)
        lost = B.bool_reshape(lost, tuple(count if d == dim else 1 for d in range(len(values_shape))))
        gv = _where_not(B, B.float_select(g, dim, indices), lost)
    return gx, gv


def cross(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    a, b, dim = saved  # <g, a x b> = <a, b x g> = <b, g x a>
    return (B.float_cross(b, g, dim) if need[0] else None, B.float_cross(g, a, dim) if need[1] else None)


# -- im2col / col2im (forwards: `ops_module_extra`): each is the other's adjoint ----------------
def unfold4d(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    size, kernel, stride, padding, dilation = saved
    return (B.fold4d(g, size, kernel, stride, padding, dilation),)


def fold4d(B: Any, saved: tuple, need: tuple, g: P) -> tuple:
    kernel, stride, padding, dilation = saved
    return (B.unfold4d(g, kernel, stride, padding, dilation),)
