"""What the backward rules of every family share: their types and small gradient helpers.

A rule turns the gradient ``g`` of an op's output into the gradients of its inputs:

    rule(B, saved, need, g) -> tuple with one gradient (or None) per input

- ``B`` is the *inner* backend: rules compute on inner primitives, so backward is not recorded
  on this backend. When the inner backend is itself an autodiff backend
  (``Autodiff(Autodiff(x))``), it records the rules' ops: gradients of gradients.
- ``saved`` is what the forward op kept for its rule: a NamedTuple naming each value, the one
  value the rule needs, or ``None`` (`burn_autodiff.node`).
- ``need[i]`` is truthy when input ``i`` needs a gradient; rules skip the work for the others.
"""

from __future__ import annotations

from typing import Any

P = Any  # an inner primitive
Shape = tuple[int, ...]
Need = tuple[Any, ...]  # per input: truthy when it needs a gradient (its node, or None)
Grads = tuple[Any, ...]  # per input: its gradient, or None


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


def where_not(B: Any, g: P, mask: P) -> P:
    """`g` where `mask` is false, else 0 (the mask broadcasts to `g`)."""
    return B.float_mask_where(g, mask, _scalar_zero(B, g))


def one_minus(B: Any, x: P) -> P:
    """``1 - x``."""
    return B.float_add_scalar(B.float_neg(x), 1.0)


def as_2d(B: Any, t: P) -> P:
    """``[N, C, L]`` -> ``[N, C, 1, L]``: 1-D module ops reuse the 2-D backward helpers."""
    n, c, length = B.float_shape(t)
    return B.float_reshape(t, (n, c, 1, length))


def drop_h(B: Any, t: P) -> P:
    """``[N, C, 1, L]`` -> ``[N, C, L]``: a 2-D helper's result back to the 1-D op's layout."""
    n, c, _, length = B.float_shape(t)
    return B.float_reshape(t, (n, c, length))
