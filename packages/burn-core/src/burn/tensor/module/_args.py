"""Argument normalisation and validation shared by the functional module ops, written once for
every rank (1-D to 3-D) and every family: sizes given as an int or one int per spatial axis, the
Float input of a given rank or layout, parameter tensors of a given shape, and the floor-mode
output size of a window op. Every error names the op and the offending value or shapes.

Example:
    >>> dims("conv2d", "stride", 2, 2, 1), dims("conv3d", "padding", (0, 1, 1), 3, 0)
    ((2, 2), (0, 1, 1))
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from burn.errors import ShapeError
from burn.foundations.kind import Float
from burn.tensor._base import TensorBase
from burn.tensor._errors import expect_same, kind_error

if TYPE_CHECKING:
    from burn.tensor.tensor import Tensor

Dims = tuple[int, ...]
Pair = tuple[int, int]
IntOrPair = int | Sequence[int]
IntOrTriple = int | Sequence[int]

# The name of a size tuple of each rank, in "must be an int or a pair" messages.
TUPLE = {1: "1-tuple", 2: "pair", 3: "triple"}
# Each rank's spatial axes, in "input height 3 is too small" messages.
AXES = {1: ("length",), 2: ("height", "width"), 3: ("depth", "height", "width")}
_SPATIAL = {1: "L", 2: "H, W", 3: "D, H, W"}
_FLOAT_HINT = "convert with .float() first"


def layout(rank: int, channels: str = "C") -> str:
    """The input layout of a module op over `rank` spatial axes, e.g. ``[N, C_in, H, W]``."""
    return f"[N, {channels}, {_SPATIAL[rank]}]"


# -- sizes ----------------------------------------------------------------------------------------
def int_arg(op: str, name: str, value: Any, minimum: int) -> int:
    """`value` as an int (anything with ``__index__``), at least `minimum`."""
    if value.__class__ is int and value >= minimum:
        return value  # type: ignore[no-any-return]  # the common case, checked once per call of every op
    try:
        v = operator.index(value)
    except TypeError:
        raise TypeError(f"{op}: {name} must be an int, got {value!r}") from None
    if v < minimum:
        raise ValueError(f"{op}: {name} must be >= {minimum}, got {v}")
    return v


def dims(op: str, name: str, value: Any, rank: int, minimum: int) -> Dims:
    """An int (for every axis) or `rank` ints, each at least `minimum`."""
    # Plain ints, and tuples or lists of them, skip the ABC check (a `Sequence` isinstance costs
    # more than the rest of a small op's checks); anything else, errors included, takes the
    # general path below.
    cls = value.__class__
    if cls is int:
        if value >= minimum:
            return (value,) * rank
    elif (cls is tuple or cls is list) and len(value) == rank:
        for v in value:
            if v.__class__ is not int or v < minimum:
                break
        else:
            return tuple(value)
    if isinstance(value, Sequence) and not isinstance(value, str):
        if len(value) != rank:
            raise ValueError(f"{op}: {name} must be an int or a {TUPLE[rank]}, got {value!r}")
        return tuple(int_arg(op, name, v, minimum) for v in value)
    return (int_arg(op, name, value, minimum),) * rank


def pair(op: str, name: str, value: Any, minimum: int) -> Pair:
    """`dims` of the 2-D-only ops: an int (for both axes) or a pair of ints."""
    h, w = dims(op, name, value, 2, minimum)
    return (h, w)


def as_op_args(rank: int, *args: Dims) -> tuple[Any, ...]:
    """Size arguments of the backend op of `rank`: ints in 1-D, tuples otherwise."""
    return tuple(a[0] for a in args) if rank == 1 else args


# -- tensors --------------------------------------------------------------------------------------
def _float_shape(op: str, x: Any) -> tuple[int, ...]:
    if not isinstance(x, TensorBase):
        raise TypeError(f"{op}: expects a burn.Tensor input, got {type(x).__name__}")
    if x._k is not Float:
        raise kind_error(op, x, "a Float input", _FLOAT_HINT)
    return x.shape  # type: ignore[no-any-return]


def input_of_rank(op: str, x: Any, rank: int, layout: str) -> tuple[int, ...]:
    """The shape of the Float input `x` of a window op, which must have `rank` dims (`layout`)."""
    shape = _float_shape(op, x)
    if len(shape) != rank:
        raise ShapeError(f"{op}: the input must have rank {rank} ({layout}), got shape {shape}")
    return shape


def float_input(op: str, x: Any, ranks: tuple[int, ...], layout: str) -> tuple[int, ...]:
    """The shape of the Float input `x`, whose rank must be one of `ranks` (`layout`)."""
    shape = _float_shape(op, x)
    if len(shape) not in ranks:
        raise ShapeError(f"{op}: the input must be {layout}, got shape {shape}")
    return shape


def float_operand(op: str, t: Any, name: str, hint: str = _FLOAT_HINT) -> TensorBase:
    """`t`, the first tensor argument `name` of `op`, checked to be a Float tensor (the others are
    checked against it with `expect_same`)."""
    if not isinstance(t, TensorBase):
        raise TypeError(f"{op}: {name} must be a burn.Tensor, got {type(t).__name__}")
    if t._k is not Float:
        raise kind_error(op, t, f"Float {name}", hint)
    return t


def param(op: str, x: TensorBase, t: Any, name: str, shape: Dims | None, rank: int) -> Dims:
    """The shape of the parameter `t` (weight, bias, offset...) of `x`'s op: a Float tensor of
    `x`'s backend, of `shape` when given, else of `rank` dims."""
    expect_same(op, x, t, Float, name)
    got = t.shape
    if (shape is not None and got != shape) or len(got) != rank:
        want = shape if shape is not None else f"rank {rank}"
        raise ShapeError(f"{op}: {name} must have shape {want}, got {got} (input shape {x.shape})")
    return got  # type: ignore[no-any-return]


def unwrap(t: Tensor | None) -> Any:
    """The primitive of an optional tensor argument (None stays None)."""
    return None if t is None else t._p


# -- output sizes ---------------------------------------------------------------------------------
def out_size(op: str, size: int, kernel: int, stride: int, padding: int, dilation: int, axis: str) -> int:
    """The (floor-mode) output size of a window op along one axis; an empty output is an error."""
    out = (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1
    if out < 1:
        raise ShapeError(
            f"{op}: input {axis} {size} is too small for kernel {kernel} (dilation {dilation}, padding "
            f"{padding}, stride {stride}): the output would be empty"
        )
    return out


def out_sizes(op: str, size: Dims, kernel: Dims, stride: Dims, padding: Dims, dilation: Dims) -> Dims:
    """`out_size` along every spatial axis (the first empty one is the error).

    Example:
        >>> out_sizes("max_pool2d", (5, 4), (2, 2), (2, 2), (0, 0), (1, 1))
        (2, 2)
    """
    if len(size) == len(kernel) == len(stride) == len(padding) == len(dilation):
        outs = []
        for n, k, s, p, d in zip(size, kernel, stride, padding, dilation, strict=True):
            o = (n + 2 * p - d * (k - 1) - 1) // s + 1
            if o < 1:
                break  # the message (naming the axis) comes from `out_size` below
            outs.append(o)
        else:
            return tuple(outs)
    return tuple(
        out_size(op, n, k, s, p, d, axis)
        for axis, n, k, s, p, d in zip(AXES[len(size)], size, kernel, stride, padding, dilation, strict=True)
    )
