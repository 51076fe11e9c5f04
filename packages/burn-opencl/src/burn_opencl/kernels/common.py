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
    "global_size",
    "index_code",
    "index_params",
    "new",
    "window_args",
]
