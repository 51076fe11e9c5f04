"""Compiled transforms of the Winograd F(2x2, 3x3) convolution (`burn_ndarray.ops.winograd`), numba.

Work is cut in *tile rows*: tile row ``g = n * tiles_h + i`` covers output rows ``2i, 2i+1`` of
image ``n``, its tiles ``t = g * tiles_w + j`` one 2x2 output block each. The 16 Winograd
coefficients of every tile live in 16 *planes* (rows of a ``[16, plane]`` buffer): plane ``k``
holds ``[tiles, channels]`` row-major from offset 0, so each plane is one GEMM operand. The
spatial inputs come with their columns split by parity (``[..., 2, W/2, C]``: even columns, then
odd), so that the four taps of every tile in a tile row are four shifted *contiguous* runs and
each transform is a handful of long vector loops over a whole tile row.

Offsets are unsigned on purpose: numba wraps a negative signed index, and that check on every
element kept these loops scalar (1.9 ns per coefficient against 0.12 unsigned, 2-core AVX-512
EPYC). Slicing a view per tile row instead cost as much in reference counting. The row kernels
run on burn-ndarray's threads, a run of blocks each (`ops.winograd`); the parity split runs on
numba's pool.

Transforms (``B^T d B`` of a 4x4 input tile, ``A^T m A`` of a 4x4 product, ``A z A^T`` of a 2x2
output gradient) follow Lavin and Gray, "Fast Algorithms for Convolutional Neural Networks"
(CVPR 2016), with ``B^T = [[1,0,-1,0],[0,1,1,0],[0,-1,1,0],[0,1,0,-1]]`` and
``A^T = [[1,1,1,0],[0,1,-1,-1]]``. Every coefficient is computed by the same code whichever
thread takes its tile row, so the bits do not depend on the thread count.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit, prange

from burn_ndarray.kernels.jit import bounds, jit, jit_parallel
from burn_ndarray.runtime.split import copy_parts, run_ranges

Array = Any
_u = np.uint64


# The three 1-D transforms, each applied along a tile's rows and then its columns: four (or two)
# runs of `n` values at offsets `x0..x3` of `x` into runs at offsets `y0..` of `y`, one loop per
# output run. Inlined into the kernels (numba's inliner), so the offsets stay unsigned there.
_inline = njit(inline="always", error_model="numpy", nogil=True)


@_inline
def _bt(
    x: Array, x0: Any, x1: Any, x2: Any, x3: Any, y: Array, y0: Any, y1: Any, y2: Any, y3: Any, n: Any
) -> None:
    """``B^T`` of F(2x2, 3x3): ``(d0 - d2, d1 + d2, d2 - d1, d1 - d3)``."""
    for q in range(n):
        y[y0 + q] = x[x0 + q] - x[x2 + q]
    for q in range(n):
        y[y1 + q] = x[x1 + q] + x[x2 + q]
    for q in range(n):
        y[y2 + q] = x[x2 + q] - x[x1 + q]
    for q in range(n):
        y[y3 + q] = x[x1 + q] - x[x3 + q]


@_inline
def _at(x: Array, x0: Any, x1: Any, x2: Any, x3: Any, y: Array, y0: Any, y1: Any, n: Any) -> None:
    """``A^T`` of F(2x2, 3x3): ``(m0 + m1 + m2, m1 - m2 - m3)``."""
    for q in range(n):
        y[y0 + q] = x[x0 + q] + x[x1 + q] + x[x2 + q]
    for q in range(n):
        y[y1 + q] = x[x1 + q] - x[x2 + q] - x[x3 + q]


@_inline
def _a(x: Array, x0: Any, x1: Any, y: Array, y0: Any, y1: Any, y2: Any, y3: Any, n: Any) -> None:
    """``A`` of F(2x2, 3x3), the adjoint of `_at`: ``(z0, z0 + z1, z0 - z1, -z1)``."""
    for q in range(n):
        y[y0 + q] = x[x0 + q]
    for q in range(n):
        y[y1 + q] = x[x0 + q] + x[x1 + q]
    for q in range(n):
        y[y2 + q] = x[x0 + q] - x[x1 + q]
    for q in range(n):
        y[y3 + q] = -x[x1 + q]


@jit
def input_rows(lo: int, hi: int, first: int, src: Array, planes: Array, tiles_h: int, tiles_w: int) -> None:
    """Planes of the tiles in tile rows ``first + lo`` to ``first + hi`` of `src` (``[N, 2 *
    tiles_h + 2, 2, tiles_w + 1, C]``, parity-split and zero-padded): ``B^T d B`` of each 4x4
    input tile ``d``, at tile ``t - first * tiles_w`` of each plane."""
    _, height, _, half, channels = src.shape
    row = _u(2 * half * channels)
    odd = _u(half * channels)
    span = _u(tiles_w * channels)
    c = _u(channels)
    plane = _u(planes.shape[1])
    flat = src.reshape(-1)
    out = planes.reshape(-1)
    a = np.empty(4 * (2 * half * channels), src.dtype)  # B^T d: 4 rows, columns still parity-split
    for g in range(first + lo, first + hi):
        n, i = divmod(g, tiles_h)
        r0 = _u((n * height + 2 * i) * (2 * half * channels))
        _bt(
            flat,
            r0,
            r0 + row,
            r0 + _u(2) * row,
            r0 + _u(3) * row,
            a,
            _u(0),
            row,
            _u(2) * row,
            _u(3) * row,
            row,
        )
        base = _u((g - first) * tiles_w * channels)
        for r in range(4):
            ev = _u(r) * row  # tile j's taps: even j, odd j, even j+1, odd j+1
            od = ev + odd
            o0 = _u(4 * r) * plane + base
            _bt(a, ev, od, ev + c, od + c, out, o0, o0 + plane, o0 + _u(2) * plane, o0 + _u(3) * plane, span)


@jit
def output_rows(
    lo: int, hi: int, first: int, planes: Array, out: Array, bias_row: Array, tiles_h: int, tiles_w: int
) -> None:
    """``out[n, 2i + a, 2j + b] = (A^T m A)[a, b] + bias`` for the tiles ``m`` of tile rows
    ``first + lo`` to ``first + hi`` (planes ``[16, >= tiles * O]``; `out` ``[N, OH, OW, O]``,
    positions past OH / OW dropped; `bias_row` the bias repeated `tiles_w` times)."""
    _, out_h, out_w, width = out.shape
    span = _u(tiles_w * width)
    o = _u(width)
    plane = _u(planes.shape[1])
    m = planes.reshape(-1)
    y = out.reshape(-1)
    s = np.empty(8 * tiles_w * width, planes.dtype)  # A^T m: 2 rows of 4 columns, per tile row
    pair = np.empty(2 * tiles_w * width, planes.dtype)  # one output row: even, then odd columns
    for g in range(first + lo, first + hi):
        n, i = divmod(g, tiles_h)
        base = _u((g - first) * tiles_w * width)
        for k in range(4):
            m0 = _u(k) * plane + base
            _at(
                m,
                m0,
                m0 + _u(4) * plane,
                m0 + _u(8) * plane,
                m0 + _u(12) * plane,
                s,
                _u(k) * span,
                _u(4 + k) * span,
                span,
            )
        for r in range(2):
            h = 2 * i + r
            if h >= out_h:
                break
            e0 = _u(4 * r) * span
            _at(s, e0, e0 + span, e0 + _u(2) * span, e0 + _u(3) * span, pair, _u(0), span, span)
            row = _u((n * out_h + h) * out_w * width)
            for j in range(tiles_w):
                d, src = row + _u(2 * j) * o, _u(j) * o
                for q in range(o):
                    y[d + q] = pair[src + q] + bias_row[src + q]
                if 2 * j + 1 < out_w:
                    for q in range(o):
                        y[d + o + q] = pair[span + src + q] + bias_row[src + q]


@jit
def grad_rows(lo: int, hi: int, first: int, src: Array, planes: Array, tiles_h: int, tiles_w: int) -> None:
    """Planes of ``A z A^T`` for the 2x2 output-gradient tiles ``z`` of tile rows ``first + lo``
    to ``first + hi`` of `src` (``[N, 2 * tiles_h, 2, tiles_w, O]``, parity-split, zero past the
    output)."""
    _, height, _, _, width = src.shape
    span = _u(tiles_w * width)
    row = _u(2) * span
    plane = _u(planes.shape[1])
    flat = src.reshape(-1)
    out = planes.reshape(-1)
    u = np.empty(4 * 2 * tiles_w * width, src.dtype)  # A z: 4 rows, columns parity-split
    for g in range(first + lo, first + hi):
        n, i = divmod(g, tiles_h)
        z0 = _u((n * height + 2 * i) * 2 * tiles_w * width)
        _a(flat, z0, z0 + row, u, _u(0), row, _u(2) * row, _u(3) * row, row)
        base = _u((g - first) * tiles_w * width)
        for r in range(4):
            ev = _u(r) * row
            o0 = _u(4 * r) * plane + base
            _a(u, ev, ev + span, out, o0, o0 + plane, o0 + _u(2) * plane, o0 + _u(3) * plane, span)


@jit
def split_images(lo: int, hi: int, x: Array, out: Array, top: int, left: int) -> None:
    """``out[n]`` (``[height, 2, half, C]``) = image ``n`` of NHWC `x` placed at row `top`, column
    `left` of a zero plane, columns split by parity (column ``w`` at ``[w % 2, w // 2]``), for
    images `lo` to `hi`. Writes every element of `out`."""
    _, h, w, channels = x.shape
    _, height, _, half, _ = out.shape
    zero = out.dtype.type(0)
    for n in range(lo, hi):
        for r in range(height):
            src_r = r - top
            for parity in range(2):
                for j in range(half):
                    dst = out[n, r, parity, j]
                    src_c = 2 * j + parity - left
                    if 0 <= src_r < h and 0 <= src_c < w:
                        src = x[n, src_r, src_c]
                        for c in range(channels):
                            dst[c] = src[c]
                    else:
                        for c in range(channels):
                            dst[c] = zero


@jit_parallel
def split_parallel(parts: int, x: Array, out: Array, top: int, left: int) -> None:
    for c in prange(parts):
        lo, hi = bounds(x.shape[0], c, parts)
        split_images(lo, hi, x, out, top, left)


def parity_split(x: Array, out: Array, top: int, left: int) -> None:
    """`split_images` over every image, on the threads the size warrants."""
    run_ranges(split_images, split_parallel, x.shape[0], copy_parts(out.size), x, out, top, left)
