"""Explicit input padding: the two options of every rank that the contract's symmetric-padding,
floor-mode ops cannot express, written with them so that every backend has them.

* asymmetric convolution padding ``((before, after), ...)``: `conv_padding` splits it into the
  symmetric part, which goes to the backend op, and the extras, which `pad_input` pads
  explicitly (zeros);
* pooling's ``ceil_mode`` (PyTorch's: one more window where a partial one remains, as long as it
  starts inside the input or the left padding): `ceil_extra` says how much the end of each axis
  lacks for the last window, which `pad_input` pads (-inf for max, zeros for average) before the
  floor-mode op runs (the rest is in `burn.tensor.module.pool`).

Example:
    >>> conv_padding("conv1d", (2, 1), 1), ceil_extra((5,), (2,), (2,), (0,), (1,))
    (((1,), (1,), (0,)), (1,))
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from burn.backend.windows import pad_nd
from burn.foundations.kind import Float
from burn.tensor._base import wrap
from burn.tensor.module._args import TUPLE, Dims, dims, int_arg

if TYPE_CHECKING:
    from burn.tensor.tensor import Tensor

# An int, one int per spatial axis, or one ``(before, after)`` pair per spatial axis.
ConvPadding = int | Sequence[int] | Sequence[Sequence[int]]


def pad_input(x: Tensor, before: Dims, after: Dims, value: float = 0.0) -> Tensor:
    """`x` ``[N, C, *spatial]`` padded with `value` (x itself when nothing is added)."""
    if not any(before) and not any(after):
        return x
    return wrap(pad_nd(x._b, x._p, before, after, value), x._b, Float)


# -- asymmetric convolution padding ------------------------------------------------------------
def conv_padding(op: str, padding: ConvPadding, rank: int) -> tuple[Dims, Dims, Dims]:
    """``(symmetric, extra_before, extra_after)`` of a convolution's `padding`: an int, or per axis
    an int or a ``(before, after)`` pair (a 1-D conv also takes a bare ``(left, right)``). The
    symmetric part goes to the backend op, the extras are padded explicitly (zeros when symmetric).

    Example:
        >>> conv_padding("conv2d", ((1, 2), (0, 0)), 2)
        ((1, 0), (0, 0), (1, 0))
    """
    # An int, or one int per axis (what nearly every caller passes): symmetric, no ABC checks.
    cls = padding.__class__
    if cls is int or (
        (cls is tuple or cls is list)
        and len(padding) == rank  # type: ignore[arg-type]
        and all(v.__class__ is int for v in padding)  # type: ignore[union-attr]
    ):
        return dims(op, "padding", padding, rank, 0), (0,) * rank, (0,) * rank
    pairs = (
        isinstance(padding, Sequence)
        and not isinstance(padding, str)
        and any(isinstance(v, Sequence) and not isinstance(v, str) for v in padding)
    )
    if rank == 1 and not pairs and isinstance(padding, Sequence) and len(padding) == 2:
        padding, pairs = [padding], True  # type: ignore[assignment]  # (left, right) of a 1-D conv
    if not pairs:
        if isinstance(padding, Sequence) and not isinstance(padding, str) and len(padding) != rank:
            raise ValueError(
                f"{op}: padding must be an int or a {TUPLE[rank]} (or one (before, after) pair per axis), "
                f"got {padding!r}"
            )
        sym = dims(op, "padding", padding, rank, 0)
        return sym, (0,) * rank, (0,) * rank
    assert isinstance(padding, Sequence)
    if len(padding) != rank:
        raise ValueError(
            f"{op}: padding must be an int, a {TUPLE[rank]} or {rank} (before, after) pairs, got {padding!r}"
        )
    before, after = [], []
    for v in padding:  # per axis: an int (both sides) or a (before, after) pair
        if isinstance(v, Sequence) and not isinstance(v, str):
            if len(v) != 2:
                raise ValueError(f"{op}: each padding pair must be (before, after), got {v!r} in {padding!r}")
            lo, hi = int_arg(op, "padding", v[0], 0), int_arg(op, "padding", v[1], 0)
        else:
            lo = hi = int_arg(op, "padding", v, 0)
        before.append(lo)
        after.append(hi)
    sym = tuple(min(lo, hi) for lo, hi in zip(before, after, strict=True))
    return (
        sym,
        tuple(lo - s for lo, s in zip(before, sym, strict=True)),
        tuple(hi - s for hi, s in zip(after, sym, strict=True)),
    )


# -- ceil mode -----------------------------------------------------------------------------------
def ceil_extra(size: Dims, kernel: Dims, stride: Dims, padding: Dims, dilation: Dims) -> Dims:
    """Per axis, how many elements the end of the input needs so that floor mode gives PyTorch's
    ceil-mode output size (0 where ceil and floor agree).

    Example:
        >>> ceil_extra((5,), (2,), (2,), (0,), (1,))  # windows [0,2) [2,4) [4,6): one more element
        (1,)
    """
    extra = []
    for n, k, s, p, d in zip(size, kernel, stride, padding, dilation, strict=True):
        span = n + 2 * p - d * (k - 1) - 1
        out = -(-span // s) + 1
        if (out - 1) * s >= n + p:  # the last window would start in the right padding: dropped
            out -= 1
        extra.append(max(0, (out - 1) * s + d * (k - 1) + 1 - (n + 2 * p)))
    return tuple(extra)
