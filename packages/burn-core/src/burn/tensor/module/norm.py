"""Functional layer normalization (the norm family): one backend op
(`burn.backend.ops.norm.NormOps.layer_norm`), so a backend can normalize each row in one pass and
autodiff keeps only the input and the scale for backward.

Example:
    >>> from burn import Tensor
    >>> from burn.tensor import module as F
    >>> x = Tensor.from_data([[1.0, 2.0, 3.0]])  # doctest: +SKIP
    >>> F.layer_norm(x, Tensor.ones((3,))).shape  # doctest: +SKIP
    (1, 3)
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from burn.errors import DTypeError, ShapeError
from burn.foundations.kind import Float
from burn.tensor import autocast as _amp
from burn.tensor._base import wrap
from burn.tensor._errors import expect_same
from burn.tensor.module._args import float_operand

if TYPE_CHECKING:
    from burn.tensor.tensor import Tensor

__all__ = ["layer_norm"]


def layer_norm(x: Tensor, gamma: Tensor, beta: Tensor | None = None, *, epsilon: float = 1e-5) -> Tensor:
    """Layer normalization over the last dim: ``(x - mean) / sqrt(var + epsilon) * gamma + beta``
    with each row's mean and biased variance.

    Args:
        x: Float ``[..., D]`` (rank >= 1).
        gamma: Float ``[D]``, of x's backend and dtype: the scale.
        beta: Float ``[D]`` or None (no shift).
        epsilon: added to the variance; finite and >= 0.

    Returns:
        ``[..., D]``. Differentiable in x, gamma and beta; the statistics are recomputed in
        backward, not kept. Under autocast it runs in float32 (a float32-policy op).

    Raises:
        KindError: a non-Float input.
        DTypeError: gamma or beta of another dtype than x.
        ShapeError: gamma or beta not ``[D]``, or x of rank 0.
        ValueError: a negative or non-finite epsilon.

    Example:
        >>> x = Tensor.from_data([[1.0, 3.0]])  # doctest: +SKIP
        >>> layer_norm(x, Tensor.ones((2,)), epsilon=0.0).tolist()  # doctest: +SKIP
        [[-1.0, 1.0]]
    """
    op = "layer_norm"
    float_operand(op, x, "x")
    if _amp.active:
        x = _amp.full_precision(op, x)
    if len(x.shape) < 1:
        raise ShapeError(f"{op}: x must have rank >= 1 ([..., D]), got shape {x.shape}")
    width = x.shape[-1]
    for name, t in (("gamma", gamma), ("beta", beta)):
        if t is None:
            continue
        expect_same(op, x, t, Float, name)
        if t.dtype is not x.dtype:
            raise DTypeError(f"{op}: {name} ({t.dtype.value}) must have the dtype of x ({x.dtype.value})")
        if t.shape != (width,):
            raise ShapeError(f"{op}: {name} must be [{width}] for x {x.shape}, got {t.shape}")
    eps = float(epsilon)
    if not math.isfinite(eps) or eps < 0:
        raise ValueError(f"{op}: epsilon must be finite and >= 0, got {epsilon!r}")
    b = x._b
    out = b.layer_norm(x._p, gamma._p, None if beta is None else beta._p, eps)
    return wrap(out, b, Float)
