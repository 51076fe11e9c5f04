"""The functional `linear` layer, ``x @ weight + bias``: composed of the float family's matmul and
add (no backend op of its own), with Burn's ``[d_input, d_output]`` weight layout.

Example:
    >>> from burn import Tensor
    >>> from burn.tensor import module as F
    >>> F.linear(Tensor.ones((2, 3)), Tensor.ones((3, 4))).shape  # doctest: +SKIP
    (2, 4)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from burn.errors import ShapeError
from burn.foundations.kind import Float
from burn.tensor import autocast as _amp
from burn.tensor._errors import expect_same
from burn.tensor.module._args import float_input

if TYPE_CHECKING:
    from burn.tensor.tensor import Tensor

__all__ = ["linear"]


def linear(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``x @ weight + bias`` over the last dim of `x` (any rank >= 1).

    The weight is ``[d_input, d_output]``: Burn's layout, the transpose of PyTorch's
    ``[out, in]`` (``F.linear(x, w.T, b)`` in PyTorch); `bias` is ``[d_output]``.

    Example:
        >>> linear(Tensor.ones((2, 3)), Tensor.ones((3, 4)), Tensor.zeros((4,))).shape  # doctest: +SKIP
        (2, 4)
    """
    op = "linear"
    shape = float_input(op, x, tuple(range(1, 33)), "a tensor of rank >= 1")
    expect_same(op, x, weight, Float, "weight")
    if len(weight.shape) != 2 or weight.shape[0] != shape[-1]:
        raise ShapeError(
            f"{op}: weight must be [d_input={shape[-1]}, d_output] (Burn's layout) for input {shape}, "
            f"got {weight.shape}"
        )
    if bias is not None:
        expect_same(op, x, bias, Float, "bias")
        if bias.shape != (weight.shape[1],):
            raise ShapeError(f"{op}: bias must have shape ({weight.shape[1]},), got {bias.shape}")
    if _amp.active:  # the bias too, so that the layer's output is low as well
        x, weight, bias = _amp.low_precision(op, x, weight, bias)
    out = x.unsqueeze().matmul(weight).squeeze(0) if len(shape) == 1 else x.matmul(weight)
    return out if bias is None else out + bias
