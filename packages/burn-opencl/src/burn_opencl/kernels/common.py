"""Shared pieces of kernel generation and launching: strided index code, dim collapsing, sizes, and
the parameters of the sliding-window kernels (convolution and pooling)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from burn.foundations.dtype import DType
from burn_opencl.tensor import CLTensor, c_strides

if TYPE_CHECKING:
    from burn_opencl.runtime import Runtime

LOCAL = 256  # work-group size of 1-D kernels: fixed, so pocl compiles each kernel once
I64 = np.int64


def global_size(n: int, local: int = LOCAL) -> tuple[int]:
    return (((n + local - 1) // local) * local,)


def index_code(rank: int, operands: Sequence[str], flat: str = "i", dims: str = "d") -> str:
    """C code turning the row-major index `flat` over dims ``d0..d{rank-1}`` into the element
    offset ``<op>_i`` of each operand, from its ``<op>_off`` and strides ``<op>_s0..``."""
    lines = [f"long r_ = {flat};"] + [f"long {op}_i = {op}_off;" for op in operands]
    for d in range(rank - 1, 0, -1):
        lines.append(f"{{ long c_ = r_ % {dims}{d}; r_ /= {dims}{d};")
        lines.extend(f"  {op}_i += c_ * {op}_s{d};" for op in operands)
        lines.append("}")
    if rank:
        lines.extend(f"{op}_i += r_ * {op}_s0;" for op in operands)
    return "\n  ".join(lines)


# The *grid* layout of strided element-wise kernels: the innermost collapsed dim on NDRange axis 0,
# the next on axis 1, the rest (flattened) on axis 2, so a work-item finds its elements by
# multiply-adds. `index_code` divides the flat index by every dim instead; pocl cannot vectorize
# 64-bit division and spends ~20 ns an element on it (x + b over [1024, 1024] with b of [1024]:
# 2.6 ms against 0.25 ms for x + x; on the grid 0.3 ms). Work-groups stay 256 work-items; their
# width on axis 0 follows the innermost dim (one of `GRID_WIDTHS`, each one more pocl build).
GRID_WIDTHS = (LOCAL, 64, 16)


def grid_local(dims: Sequence[int]) -> tuple[int, int, int] | None:
    """The work-group shape of the grid layout over collapsed `dims`, or None where it does not
    pay (rank < 2: no division to save; innermost dim < 8: most of each group would idle).

    Example:
        >>> grid_local((1024, 1024)), grid_local((4096, 100)), grid_local((4096, 3))
        ((256, 1, 1), (64, 4, 1), None)
    """
    if len(dims) < 2 or dims[-1] < 8:
        return None
    last = dims[-1]
    width = LOCAL if last % LOCAL == 0 else (64 if last >= 64 else 16)
    return (width, LOCAL // width, 1)


def grid_size(dims: Sequence[int], local: tuple[int, int, int]) -> tuple[int, int, int]:
    """The global size of the grid layout over `dims` with work-groups `local`."""
    rest = 1
    for size in dims[:-2]:
        rest *= size
    return (
        (dims[-1] + local[0] - 1) // local[0] * local[0],
        (dims[-2] + local[1] - 1) // local[1] * local[1],
        rest,
    )


def grid_inner(strides: Sequence[Sequence[int]]) -> tuple[int | None, ...]:
    """Each operand's stride along the innermost collapsed dim where it is 0 or 1 (written into
    the kernel: LLVM then sees contiguous or uniform loads and vectorizes them; a stride that is
    a kernel argument makes every load a gather), else None (an argument).

    Example:
        >>> grid_inner([(1024, 1), (1, 0), (0, 1), (1, 1024)])
        (1, 0, 1, None)
    """
    return tuple(s[-1] if s[-1] in (0, 1) else None for s in strides)


def grid_index_code(
    rank: int, operands: Sequence[str], inner_strides: Sequence[int | None], flat: str = "i", dims: str = "d"
) -> str:
    """`index_code` for the grid layout (rank >= 2): returns from work-items outside `dims`, then
    sets each operand's ``<op>_i`` and the row-major index `flat`; divides only over dims
    ``0..rank-3`` (none after collapsing a broadcast of rank <= 3). `inner_strides` are
    `grid_inner`'s (literal innermost strides)."""
    inner, next_ = f"{dims}{rank - 1}", f"{dims}{rank - 2}"
    step = {0: "", 1: " + c0_"}
    lines = [
        f"long c0_ = get_global_id(0); GUARD(c0_, {inner});",
        f"long c1_ = get_global_id(1); GUARD_AXIS(1, c1_, {next_});",
        "long r_ = get_global_id(2);",
        f"long {flat} = (r_ * {next_} + c1_) * {inner} + c0_;",
    ]
    lines += [
        f"long {op}_i = {op}_off" + (f" + c0_ * {op}_s{rank - 1}" if st is None else step[st])
        + f" + c1_ * {op}_s{rank - 2};"
        for op, st in zip(operands, inner_strides, strict=True)
    ]
    for d in range(rank - 3, 0, -1):
        lines.append(f"{{ long c_ = r_ % {dims}{d}; r_ /= {dims}{d};")
        lines.extend(f"  {op}_i += c_ * {op}_s{d};" for op in operands)
        lines.append("}")
    if rank > 2:
        lines.extend(f"{op}_i += r_ * {op}_s0;" for op in operands)
    return "\n  ".join(lines)


def index_params(rank: int, operands: Sequence[str], dims: str = "d") -> str:
    """Kernel parameters matching `index_code` (dims, then each operand's strides)."""
    params = [f"long {dims}{d}" for d in range(rank)]
    for op in operands:
        params.extend(f"long {op}_s{d}" for d in range(rank))
    return ", ".join(params)


def broadcast_shape(op: str, shapes: Sequence[tuple[int, ...]]) -> tuple[int, ...]:
    rank = max(len(s) for s in shapes)
    out = [1] * rank
    for shape in shapes:
        off = rank - len(shape)
        for d, size in enumerate(shape):
            cur = out[off + d]
            if size != cur:
                if cur == 1:
                    out[off + d] = size
                elif size != 1:
                    raise ValueError(f"{op}: shapes {', '.join(str(s) for s in shapes)} do not broadcast")
    return tuple(out)


def broadcast_strides(t: CLTensor, shape: tuple[int, ...]) -> tuple[int, ...]:
    """`t`'s strides seen with `shape` (stride 0 on broadcast dims)."""
    off = len(shape) - len(t.shape)
    strides = [0] * len(shape)
    for d, size in enumerate(t.shape):
        if size != 1:
            strides[off + d] = t.strides[d]
    return tuple(strides)


def collapse(
    shape: tuple[int, ...], strides: Sequence[tuple[int, ...]]
) -> tuple[tuple[int, ...], list[tuple[int, ...]]]:
    """Merge adjacent dims that every operand walks contiguously, and drop size-1 dims.

    Returns the fewer dims and each operand's strides over them; the flat element order is kept.
    """
    dims: list[int] = []
    out: list[list[int]] = [[] for _ in strides]
    for d, size in enumerate(shape):
        if size == 1:
            continue
        if dims and all(out[k][-1] == s[d] * size for k, s in enumerate(strides)):
            dims[-1] *= size
            for k, s in enumerate(strides):
                out[k][-1] = s[d]
            continue
        dims.append(size)
        for k, s in enumerate(strides):
            out[k].append(s[d])
    return tuple(dims), [tuple(s) for s in out]


def new(rt: Runtime, shape: tuple[int, ...], dtype: DType, what: str = "tensor") -> CLTensor:
    """A fresh contiguous tensor (contents undefined)."""
    n = 1
    for s in shape:
        n *= s
    return CLTensor(rt, rt.alloc(n * dtype.itemsize, what), shape, dtype)


# The sliding-window kernels (`conv`, `pool`) walk an NCHW image through its four strides and offset,
# and take the window's geometry as eight numbers.
IMAGE_PARAMS = "long x_off, long x_sn, long x_sc, long x_sh, long x_sw"
WINDOW_PARAMS = "long KH, long KW, long sh, long sw, long ph, long pw, long dh, long dw"


def window_args(
    kernel: tuple[int, int], stride: tuple[int, int], padding: tuple[int, int], dilation: tuple[int, int]
) -> list[int]:
    """The values of `WINDOW_PARAMS`."""
    return [kernel[0], kernel[1], stride[0], stride[1], padding[0], padding[1], dilation[0], dilation[1]]


__all__ = [
    "I64",
    "IMAGE_PARAMS",
    "LOCAL",
    "WINDOW_PARAMS",
    "broadcast_shape",
    "broadcast_strides",
    "c_strides",
    "collapse",
    "GRID_WIDTHS",
    "global_size",
    "grid_index_code",
    "grid_inner",
    "grid_local",
    "grid_size",
    "index_code",
    "index_params",
    "new",
    "window_args",
]
