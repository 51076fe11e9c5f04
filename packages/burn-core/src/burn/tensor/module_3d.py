"""Functional 3-D convolution and pooling, 1-D/3-D transposed convolution, and the two options
shared by every rank: pooling's ``ceil_mode`` and asymmetric convolution padding.

Re-exported by `burn.tensor.module` (which also routes its 1-D/2-D pools' ``ceil_mode`` and its
convolutions' asymmetric padding through the helpers here). Layouts: inputs ``[N, C, D, H, W]``,
conv weights ``[C_out, C_in / groups, KD, KH, KW]``, transposed-conv weights
``[C_in, C_out / groups, *kernel]``; sizes are ints or ``(depth, height, width)`` triples.

Both options are written with the contract's symmetric-padding, floor-mode ops, so every backend
has them:

* asymmetric padding ``((before, after), ...)`` pads the difference explicitly (zeros), then runs
  the convolution with the common part as its symmetric padding;
* ``ceil_mode`` (PyTorch's: one more window where a partial one remains, as long as it starts
  inside the input or the left padding) pads the end of each axis with what the last window
  lacks (-inf for max, zeros for average) and runs the floor-mode op; average pooling then
  rescales each window to PyTorch's divisor (elements in the input, plus those in the padding
  with `count_include_pad`, never those past the padding), and max pooling's indices are
  mapped back into the unpadded input.

Example:
    >>> from burn import Tensor
    >>> from burn.tensor import module as F
    >>> x = Tensor.ones((1, 2, 5, 5, 5)); w = Tensor.ones((4, 2, 3, 3, 3))  # doctest: +SKIP
    >>> F.conv3d(x, w, padding=1).shape, F.max_pool3d(x, 2, ceil_mode=True).shape  # doctest: +SKIP
    ((1, 4, 5, 5, 5), (1, 2, 3, 3, 3))
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from burn.backend.tables import float_table
from burn.backend.windows import pad_nd
from burn.errors import ShapeError
from burn.foundations.kind import Float, Int
from burn.tensor._base import TensorBase, wrap
from burn.tensor._errors import expect_same, kind_error

if TYPE_CHECKING:
    from burn.backend.base import Backend
    from burn.tensor.tensor import Tensor

__all__ = [
    "adaptive_avg_pool3d",
    "avg_pool3d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose3d",
    "max_pool3d",
    "max_pool3d_with_indices",
]

Dims = tuple[int, ...]
Triple = tuple[int, int, int]
IntOrTriple = int | Sequence[int]
# An int, one int per spatial axis, or one ``(before, after)`` pair per spatial axis.
ConvPadding = int | Sequence[int] | Sequence[Sequence[int]]
_TUPLE = {1: "1-tuple", 2: "pair", 3: "triple"}
_AXES = {1: ("length",), 2: ("height", "width"), 3: ("depth", "height", "width")}
_SPATIAL = {1: "L", 2: "H, W", 3: "D, H, W"}


def _layout(rank: int, channels: str = "C") -> str:
    """The input layout of a module op over `rank` spatial axes, e.g. ``[N, C_in, H, W]``."""
    return f"[N, {channels}, {_SPATIAL[rank]}]"


# -- argument normalization -------------------------------------------------------------------
def _int(op: str, name: str, value: Any, minimum: int) -> int:
    try:
        v = operator.index(value)
    except TypeError:
        raise TypeError(f"{op}: {name} must be an int, got {value!r}") from None
    if v < minimum:
        raise ValueError(f"{op}: {name} must be >= {minimum}, got {v}")
    return v


def _dims(op: str, name: str, value: Any, rank: int, minimum: int) -> Dims:
    """An int (for every axis) or `rank` ints."""
    if isinstance(value, Sequence) and not isinstance(value, str):
        if len(value) != rank:
            raise ValueError(f"{op}: {name} must be an int or a {_TUPLE[rank]}, got {value!r}")
        return tuple(_int(op, name, v, minimum) for v in value)
    return (_int(op, name, value, minimum),) * rank


def _t(d: Dims) -> Triple:
    return (d[0], d[1], d[2])


def _input(op: str, x: Any, rank: int, layout: str) -> tuple[int, ...]:
    if not isinstance(x, TensorBase):
        raise TypeError(f"{op}: expects a burn.Tensor input, got {type(x).__name__}")
    if x._k is not Float:
        raise kind_error(op, x, "a Float input", "convert with .float() first")
    shape = x.shape
    if len(shape) != rank:
        raise ShapeError(f"{op}: the input must have rank {rank} ({layout}), got shape {shape}")
    return shape  # type: ignore[no-any-return]


def _param(op: str, x: TensorBase, t: Any, name: str, shape: Dims | None, rank: int) -> Dims:
    expect_same(op, x, t, Float, name)
    got = t.shape
    if (shape is not None and got != shape) or len(got) != rank:
        want = shape if shape is not None else f"rank {rank}"
        raise ShapeError(f"{op}: {name} must have shape {want}, got {got} (input shape {x.shape})")
    return got  # type: ignore[no-any-return]


def _out_size(op: str, size: int, kernel: int, stride: int, padding: int, dilation: int, axis: str) -> int:
    """The (floor-mode) output size of a window op along one axis; an empty output is an error."""
    out = (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1
    if out < 1:
        raise ShapeError(
            f"{op}: input {axis} {size} is too small for kernel {kernel} (dilation {dilation}, padding "
            f"{padding}, stride {stride}): the output would be empty"
        )
    return out


def _check_out(op: str, size: Dims, kernel: Dims, stride: Dims, padding: Dims, dilation: Dims) -> None:
    for axis, n, k, s, p, d in zip(_AXES[len(size)], size, kernel, stride, padding, dilation, strict=True):
        _out_size(op, n, k, s, p, d, axis)


def _pool_padding(op: str, kernel: Dims, padding: Dims) -> None:
    if any(p > k // 2 for k, p in zip(kernel, padding, strict=True)):
        raise ValueError(f"{op}: padding {padding} must be at most half the kernel size {kernel}")


def _unwrap(t: Tensor | None) -> Any:
    return None if t is None else t._p


# -- asymmetric convolution padding ------------------------------------------------------------
def conv_padding(op: str, padding: ConvPadding, rank: int) -> tuple[Dims, Dims, Dims]:
    """``(symmetric, extra_before, extra_after)`` of a convolution's `padding`: an int, or per axis
    an int or a ``(before, after)`` pair (a 1-D conv also takes a bare ``(left, right)``). The
    symmetric part goes to the backend op, the extras are padded explicitly (zeros when symmetric).

    Example:
        >>> conv_padding("conv2d", ((1, 2), (0, 0)), 2)
        ((1, 0), (0, 0), (1, 0))
    """
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
                f"{op}: padding must be an int or a {_TUPLE[rank]} (or one (before, after) pair per axis), "
                f"got {padding!r}"
            )
        sym = _dims(op, "padding", padding, rank, 0)
        return sym, (0,) * rank, (0,) * rank
    assert isinstance(padding, Sequence)
    if len(padding) != rank:
        raise ValueError(
            f"{op}: padding must be an int, a {_TUPLE[rank]} or {rank} (before, after) pairs, got {padding!r}"
        )
    before, after = [], []
    for v in padding:  # per axis: an int (both sides) or a (before, after) pair
        if isinstance(v, Sequence) and not isinstance(v, str):
            if len(v) != 2:
                raise ValueError(f"{op}: each padding pair must be (before, after), got {v!r} in {padding!r}")
            lo, hi = _int(op, "padding", v[0], 0), _int(op, "padding", v[1], 0)
        else:
            lo = hi = _int(op, "padding", v, 0)
        before.append(lo)
        after.append(hi)
    sym = tuple(min(lo, hi) for lo, hi in zip(before, after, strict=True))
    return (
        sym,
        tuple(lo - s for lo, s in zip(before, sym, strict=True)),
        tuple(hi - s for hi, s in zip(after, sym, strict=True)),
    )


def pad_input(x: Tensor, before: Dims, after: Dims, value: float = 0.0) -> Tensor:
    """`x` ``[N, C, *spatial]`` padded with `value` (x itself when nothing is added)."""
    if not any(before) and not any(after):
        return x
    return wrap(pad_nd(x._b, x._p, before, after, value), x._b, Float)  # type: ignore[return-value]


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


@functools.lru_cache(maxsize=256)
def _ceil_avg_scale(size: Dims, kernel: Dims, stride: Dims, padding: Dims, out: Dims,
                    count_include_pad: bool) -> np.ndarray:
    """``[*out]``: ``prod(kernel) / divisor`` per window, PyTorch's ceil-mode divisor."""
    scale = np.ones((), dtype=np.float64)
    for n, k, s, p, o in zip(size, kernel, stride, padding, out, strict=True):
        start = np.arange(o) * s - p
        end = np.minimum(start + k, n + p)
        count = end - start if count_include_pad else np.minimum(end, n) - np.maximum(start, 0)
        scale = np.multiply.outer(scale, k / count.astype(np.float64))
    scale.setflags(write=False)
    return scale


def _unpad_indices(b: Backend, indices: Any, padded: Dims, size: Dims) -> Any:
    """Flat indices into volumes of shape `padded` (grown at the end of each axis) as flat indices
    into the `size` volumes they came from."""
    if padded == size:
        return indices
    rest = indices
    result = None
    for axis in range(len(size)):
        step = math.prod(padded[axis + 1:])
        coord = b.int_div_scalar(rest, step) if step > 1 else rest
        if step > 1:
            rest = b.int_sub(rest, b.int_mul_scalar(coord, step))
        term = b.int_mul_scalar(coord, math.prod(size[axis + 1:])) if axis < len(size) - 1 else coord
        result = term if result is None else b.int_add(result, term)
    return result


def _as_op_args(rank: int, *args: Dims) -> tuple[Any, ...]:
    """Size arguments of the backend op of `rank`: ints in 1-D, tuples otherwise."""
    return tuple(a[0] for a in args) if rank == 1 else args


def max_pool(op: str, x: Tensor, kernel: Dims, stride: Dims, padding: Dims, dilation: Dims,
             ceil_mode: bool, with_indices: bool) -> Any:
    """Max pooling of any rank (arguments already checked) with PyTorch's `ceil_mode`; returns
    the values, or ``(values, indices)``."""
    b, rank = x._b, len(kernel)
    size = tuple(x.shape[2:])
    extra = ceil_extra(size, kernel, stride, padding, dilation) if ceil_mode else (0,) * rank
    xp = pad_input(x, (0,) * rank, extra, float("-inf"))
    name = {1: "max_pool1d", 2: "max_pool2d", 3: "max_pool3d"}[rank]
    args = _as_op_args(rank, kernel, stride, padding, dilation)
    if not with_indices:
        return wrap(getattr(b, name)(xp._p, *args), b, Float)
    values, indices = getattr(b, name + "_with_indices")(xp._p, *args)
    padded = tuple(s + e for s, e in zip(size, extra, strict=True))
    return wrap(values, b, Float), wrap(_unpad_indices(b, indices, padded, size), b, Int)


def avg_pool(op: str, x: Tensor, kernel: Dims, stride: Dims, padding: Dims, count_include_pad: bool,
             ceil_mode: bool) -> Tensor:
    """Average pooling of any rank (arguments already checked) with PyTorch's `ceil_mode`."""
    b, rank = x._b, len(kernel)
    size = tuple(x.shape[2:])
    name = {1: "avg_pool1d", 2: "avg_pool2d", 3: "avg_pool3d"}[rank]
    ones = (1,) * rank
    extra = ceil_extra(size, kernel, stride, padding, ones) if ceil_mode else (0,) * rank
    if not any(extra):
        args = _as_op_args(rank, kernel, stride, padding)
        return wrap(getattr(b, name)(x._p, *args, bool(count_include_pad)), b, Float)  # type: ignore[return-value]
    # The floor-mode op over the zero-extended input, counting every element, is sum / prod(kernel);
    # one multiply by prod(kernel) / divisor gives PyTorch's divisor for every window.
    xp = pad_input(x, (0,) * rank, extra, 0.0)
    out = getattr(b, name)(xp._p, *_as_op_args(rank, kernel, stride, padding), True)
    shape = tuple(b.float_shape(out)[2:])
    scale = _ceil_avg_scale(size, kernel, stride, padding, shape, bool(count_include_pad))
    scale_p = float_table(b, scale.reshape(1, 1, *shape), b.float_device(out), b.float_get_dtype(out))
    return wrap(b.float_mul(out, scale_p), b, Float)  # type: ignore[return-value]


# -- convolution ------------------------------------------------------------------------------
def _conv_groups(op: str, c_in: int, c_out: int, groups: int) -> None:
    if c_in % groups or c_out % groups:
        raise ShapeError(
            f"{op}: {c_in} input and {c_out} output channels are not divisible by groups={groups}"
        )


def _conv_channels(op: str, c_in: int, c_out: int, c_per_group: int, groups: int, x_shape: Any,
                   w_shape: Any) -> None:
    _conv_groups(op, c_in, c_out, groups)
    if c_per_group * groups != c_in:
        raise ShapeError(
            f"{op}: weight {w_shape} expects {c_per_group * groups} input channels "
            f"({c_per_group} per group x {groups} groups), the input {x_shape} has {c_in}"
        )


def _conv_args(
    op: str, rank: int, x: Tensor, weight: Tensor, bias: Tensor | None, stride: Any, padding: ConvPadding,
    dilation: Any, groups: int,
) -> tuple[Tensor, Dims, Dims, Dims, int]:
    """Checks a convolution of any rank; returns the input with the asymmetric part of the padding
    applied, and the stride, symmetric padding, dilation and groups for the backend op."""
    _input(op, x, rank + 2, _layout(rank, "C_in"))
    s, d = _dims(op, "stride", stride, rank, 1), _dims(op, "dilation", dilation, rank, 1)
    p, before, after = conv_padding(op, padding, rank)
    g = _int(op, "groups", groups, 1)
    c_out, c_per_group, *kernel = _param(op, x, weight, "weight", None, rank + 2)
    _conv_channels(op, x.shape[1], c_out, c_per_group, g, x.shape, weight.shape)
    if bias is not None:
        _param(op, x, bias, "bias", (c_out,), 1)
    x = pad_input(x, before, after)
    _check_out(op, tuple(x.shape[2:]), tuple(kernel), s, p, d)
    return x, s, p, d, g


def conv3d(
    x: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: IntOrTriple = 1,
    padding: ConvPadding = 0,
    dilation: IntOrTriple = 1,
    groups: int = 1,
) -> Tensor:
    """3-D convolution: ``x [N, C_in, D, H, W]``, ``weight [C_out, C_in / groups, KD, KH, KW]``,
    ``bias [C_out]`` -> ``[N, C_out, D_out, H_out, W_out]``.

    `padding` is an int, a ``(depth, height, width)`` triple, or three ``(before, after)`` pairs
    (asymmetric: the difference is zero-padded explicitly).

    Raises:
        ShapeError: mismatched channels, groups, or an empty output.

    Example:
        >>> y = conv3d(x, w, padding=((1, 0), 1, 1))  # doctest: +SKIP
    """
    x, s, p, d, g = _conv_args("conv3d", 3, x, weight, bias, stride, padding, dilation, groups)
    b = x._b
    out = b.conv3d(x._p, weight._p, _unwrap(bias), _t(s), _t(p), _t(d), g)
    return wrap(out, b, Float)  # type: ignore[return-value]


def _conv_transpose(
    op: str, rank: int, x: Tensor, weight: Tensor, bias: Tensor | None, stride: Any, padding: Any,
    padding_out: Any, dilation: Any, groups: int,
) -> tuple[Dims, Dims, Dims, Dims, int]:
    """Checks a transposed convolution of any rank; returns its stride, padding, padding_out,
    dilation and groups."""
    _, c_in, *size = _input(op, x, rank + 2, _layout(rank, "C_in"))
    s, p = _dims(op, "stride", stride, rank, 1), _dims(op, "padding", padding, rank, 0)
    po, d = _dims(op, "padding_out", padding_out, rank, 0), _dims(op, "dilation", dilation, rank, 1)
    g = _int(op, "groups", groups, 1)
    w_in, c_out_per_group, *kernel = _param(op, x, weight, "weight", None, rank + 2)
    if w_in != c_in:
        raise ShapeError(
            f"{op}: weight {weight.shape} expects {w_in} input channels, the input {x.shape} has {c_in}"
        )
    c_out = c_out_per_group * g
    _conv_groups(op, c_in, c_out, g)
    if bias is not None:
        _param(op, x, bias, "bias", (c_out,), 1)
    for i, axis in enumerate(_AXES[rank]):
        if po[i] >= max(s[i], d[i]):
            raise ValueError(f"{op}: padding_out {po} must be smaller than stride {s} or dilation {d}")
        out = (size[i] - 1) * s[i] - 2 * p[i] + d[i] * (kernel[i] - 1) + po[i] + 1
        if out < 1:
            raise ShapeError(
                f"{op}: the output {axis} would be {out} for input shape {x.shape}, weight {weight.shape}"
            )
    return s, p, po, d, g


def conv_transpose1d(
    x: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: int = 1,
    padding: int = 0,
    padding_out: int = 0,
    dilation: int = 1,
    groups: int = 1,
) -> Tensor:
    """1-D transposed convolution: ``x [N, C_in, L]``, ``weight [C_in, C_out / groups, K]`` ->
    ``[N, C_out, L_out]`` with ``L_out = (L - 1) * stride - 2 * padding + dilation * (K - 1) +
    padding_out + 1``; `padding_out` must be smaller than `stride` or `dilation`.

    Example:
        >>> # x [1, 4, 5], w [4, 2, 3]
        >>> conv_transpose1d(x, w, stride=2, padding_out=1).shape  # doctest: +SKIP
        (1, 2, 12)
    """
    op = "conv_transpose1d"
    s, p, po, d, g = _conv_transpose(op, 1, x, weight, bias, stride, padding, padding_out, dilation, groups)
    b = x._b
    out = b.conv_transpose1d(x._p, weight._p, _unwrap(bias), s[0], p[0], po[0], d[0], g)
    return wrap(out, b, Float)  # type: ignore[return-value]


def conv_transpose3d(
    x: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: IntOrTriple = 1,
    padding: IntOrTriple = 0,
    padding_out: IntOrTriple = 0,
    dilation: IntOrTriple = 1,
    groups: int = 1,
) -> Tensor:
    """3-D transposed convolution: ``x [N, C_in, D, H, W]``, ``weight [C_in, C_out / groups, KD, KH,
    KW]`` -> ``[N, C_out, D_out, H_out, W_out]``, per axis ``(D - 1) * stride - 2 * padding +
    dilation * (KD - 1) + padding_out + 1``; `padding_out` must be smaller than `stride` or
    `dilation` on each axis.

    Example:
        >>> conv_transpose3d(x, w, stride=2).shape  # x [1, 4, 2, 3, 3], w [4, 2, 2, 2, 2]  # doctest: +SKIP
        (1, 2, 4, 6, 6)
    """
    op = "conv_transpose3d"
    s, p, po, d, g = _conv_transpose(op, 3, x, weight, bias, stride, padding, padding_out, dilation, groups)
    b = x._b
    out = b.conv_transpose3d(x._p, weight._p, _unwrap(bias), _t(s), _t(p), _t(po), _t(d), g)
    return wrap(out, b, Float)  # type: ignore[return-value]


# -- pooling ----------------------------------------------------------------------------------
def _pool_args(
    op: str, rank: int, x: Tensor, kernel_size: Any, stride: Any, padding: Any, dilation: Any
) -> tuple[Dims, Dims, Dims, Dims]:
    """Checks a pooling of any rank (`stride` None: the kernel size); returns kernel, stride,
    padding and dilation."""
    _input(op, x, rank + 2, _layout(rank))
    k = _dims(op, "kernel_size", kernel_size, rank, 1)
    s = k if stride is None else _dims(op, "stride", stride, rank, 1)
    p, d = _dims(op, "padding", padding, rank, 0), _dims(op, "dilation", dilation, rank, 1)
    _pool_padding(op, k, p)
    _check_out(op, tuple(x.shape[2:]), k, s, p, d)
    return k, s, p, d


def max_pool3d(
    x: Tensor,
    kernel_size: IntOrTriple,
    stride: IntOrTriple | None = None,
    padding: IntOrTriple = 0,
    dilation: IntOrTriple = 1,
    ceil_mode: bool = False,
) -> Tensor:
    """3-D max pooling of ``[N, C, D, H, W]``; `stride` defaults to the kernel size; padding counts
    as -inf and is at most half the kernel; `ceil_mode` as PyTorch's.

    Example:
        >>> max_pool3d(x, 2, ceil_mode=True).shape  # x [1, 1, 5, 5, 5]  # doctest: +SKIP
        (1, 1, 3, 3, 3)
    """
    k, s, p, d = _pool_args("max_pool3d", 3, x, kernel_size, stride, padding, dilation)
    return max_pool("max_pool3d", x, k, s, p, d, bool(ceil_mode), False)  # type: ignore[no-any-return]


def max_pool3d_with_indices(
    x: Tensor,
    kernel_size: IntOrTriple,
    stride: IntOrTriple | None = None,
    padding: IntOrTriple = 0,
    dilation: IntOrTriple = 1,
    ceil_mode: bool = False,
) -> tuple[Tensor, Tensor]:
    """`max_pool3d` and the Int indices of the maxima (flat ``d * H * W + h * W + w`` in each input
    volume, as PyTorch's)."""
    op = "max_pool3d_with_indices"
    k, s, p, d = _pool_args(op, 3, x, kernel_size, stride, padding, dilation)
    return max_pool(op, x, k, s, p, d, bool(ceil_mode), True)  # type: ignore[no-any-return]


def avg_pool3d(
    x: Tensor,
    kernel_size: IntOrTriple,
    stride: IntOrTriple | None = None,
    padding: IntOrTriple = 0,
    count_include_pad: bool = True,
    ceil_mode: bool = False,
) -> Tensor:
    """3-D average pooling of ``[N, C, D, H, W]``; with `count_include_pad` the zero padding counts
    in the divisor (PyTorch's default); `ceil_mode` as PyTorch's.

    Example:
        >>> avg_pool3d(x, (1, 2, 2)).shape  # x [1, 3, 4, 6, 6]  # doctest: +SKIP
        (1, 3, 4, 3, 3)
    """
    op = "avg_pool3d"
    k, s, p, _ = _pool_args(op, 3, x, kernel_size, stride, padding, 1)
    return avg_pool(op, x, k, s, p, bool(count_include_pad), bool(ceil_mode))


def _adaptive_args(op: str, rank: int, x: Tensor, output_size: Any) -> Dims:
    """Checks an adaptive pooling of any rank; returns the output size."""
    shape = _input(op, x, rank + 2, _layout(rank))
    if 0 in shape[2:]:
        raise ShapeError(f"{op}: the input {shape} has an empty spatial dim")
    return _dims(op, "output_size", output_size, rank, 1)


def adaptive_avg_pool3d(x: Tensor, output_size: IntOrTriple) -> Tensor:
    """Average pooling of ``[N, C, D, H, W]`` to ``output_size`` with PyTorch's bins.

    Example:
        >>> adaptive_avg_pool3d(x, (1, 2, 2)).shape  # x [2, 3, 5, 7, 7]  # doctest: +SKIP
        (2, 3, 1, 2, 2)
    """
    out = _adaptive_args("adaptive_avg_pool3d", 3, x, output_size)
    return wrap(x._b.adaptive_avg_pool3d(x._p, _t(out)), x._b, Float)  # type: ignore[return-value]
