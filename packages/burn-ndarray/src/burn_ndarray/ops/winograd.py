"""Winograd F(2x2, 3x3) convolution: burn-ndarray's float32 conv2d with 3x3 kernels, stride 1.

Each 2x2 block of outputs is computed from its 4x4 input tile with 16 products per channel pair
instead of 36 (Lavin and Gray, CVPR 2016): the tiles and the filter are transformed, multiplied
as 16 GEMMs ``[tiles, C] @ [C, O]`` and the products transformed back. The multiplies drop 2.25x;
the transforms are memory passes (`burn_ndarray.kernels.winograd`).

The tiles go through in blocks of `TILES_PER_BLOCK`, so that a block's coefficients stay in cache
from the input transform to the output transform; each of burn-ndarray's threads takes a run of
blocks and makes its own GEMMs with BLAS on one thread (`runtime.blas.single_threaded`). Whole-batch
buffers (19 MB for the layer below) left the transforms bound by memory, and OpenBLAS splitting
each block's small GEMMs between its threads scaled 1.2x from 1 to 2 threads; the blocks on
burn's threads scale 1.9x. The benchmark CNN's second layer shape (batch 64, 32 -> 64 channels,
14 x 14, padding 1; 2-core AVX-512 EPYC VM, best of 5, nothing else running): forward 1.8 ms
against 4.9-5.3 for im2col + one GEMM at 2 threads, 3.0 against 7.5 at one; input gradient 1.8
against 4.2-4.4 (2 threads); weight gradient 2.0 against 4.1-5.0.

The same machinery gives both gradients: the input gradient is this convolution of the output
gradient with the flipped, transposed filter; the weight gradient is ``G^T dU G`` with ``dU[k] =
V[k]^T @ (A dY A^T)[k]``, the exact adjoint of the forward transforms. Results differ from the
direct sum by rounding only (the transforms' coefficients are 0, +-1 and +-1/2): within a few
float32 ulps of the output's scale, like any other summation order. Each tile's coefficients and
each block's GEMMs are the same computation whichever thread runs them, so the output and the
input gradient are the same bits at any thread count; the weight gradient adds the threads'
sums, so it may differ across thread counts by rounding.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from burn_ndarray import kernels
from burn_ndarray.ops.windows import Pair
from burn_ndarray.runtime import blas, threads

Array = Any

# G of F(2x2, 3x3); the filter's 16 coefficients ``G g G^T`` are ``KRON @ g.flat`` (and the
# weight gradient ``KRON^T @ dU``).
G = np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0.0, 0.0, 1.0]])
KRON = np.kron(G, G)  # [16, 9]
# Tiles per block (rounded down to whole tile rows): a block's coefficients stay in cache from the input
# transform through its 16 GEMMs to the output transform (docs/benchmarks-log.md, burn-ndarray measurements).
TILES_PER_BLOCK = 256
# The size of a convolution here: output tiles x input channels x output channels (a GEMM
# multiply-add per unit and coefficient). With `MIN_TILES` output tiles, `MIN_WORK` and
# `MIN_CHANNELS` channels each way, this path beat im2col at 1 thread on every shape measured;
# fewer tiles lose even with many channels (docs/benchmarks-log.md, burn-ndarray measurements). Blocks
# go to burn-ndarray's threads from `WORK_PER_THREAD` per thread: a hand-off costs about what one
# thread does with 2^17 units here.
MIN_CHANNELS = 8
MIN_TILES = 256
MIN_WORK = 1 << 16
WORK_PER_THREAD = 1 << 18
# Floats between planes, so that the 16 planes' rows do not share one 4 KiB offset.
PLANE_PAD = 16


def applies(
    x: Array, weight_shape: tuple[int, ...], stride: Pair, padding: Pair, dilation: Pair, groups: int
) -> bool:
    """Whether conv2d of float32 `x` by a ``[O, C, 3, 3]`` weight runs here (the caller checks
    the other operands are float32): stride 1, no dilation, one group, `MIN_CHANNELS` channels
    in and out, `MIN_TILES` and `MIN_WORK`, numba present, and one thread or BLAS threads that
    sleep when idle."""
    if x.dtype != np.float32 or tuple(weight_shape[2:]) != (3, 3):
        return False
    if stride != (1, 1) or dilation != (1, 1) or groups != 1:
        return False
    n, c, h, w = x.shape
    o = weight_shape[0]
    if min(c, o) < MIN_CHANNELS:
        return False
    out_h, out_w = h + 2 * padding[0] - 2, w + 2 * padding[1] - 2
    if out_h <= 0 or out_w <= 0:
        return False
    tiles = n * math.prod(_tiles(out_h, out_w))
    if tiles < MIN_TILES or tiles * c * o < MIN_WORK or kernels.load("winograd") is None:
        return False
    # With several threads, the blocks run on burn-ndarray's: only where BLAS's idle threads do
    # not poll for work meanwhile (`blas.idle_threads_poll`), or they lose to im2col's GEMMs on
    # BLAS's own threads (docs/benchmarks-log.md, burn-ndarray measurements).
    return threads.get_num_threads() == 1 or not blas.idle_threads_poll()


def _tiles(out_h: int, out_w: int) -> tuple[int, int]:
    return (out_h + 1) // 2, (out_w + 1) // 2


def _kernels() -> Any:
    """`burn_ndarray.kernels.winograd` (numba: `applies` checked that it loads)."""
    return kernels.load("winograd")


def _parity_split(x: np.ndarray, offset: Pair, height: int, half: int) -> np.ndarray:
    """``[N, height, 2, half, C]`` float32 zeros holding NHWC `x` at row / column `offset`, its
    columns split by parity (column ``w`` at ``[w % 2, w // 2]``)."""
    n, _, _, c = x.shape
    out = np.empty((n, height, 2, half, c), np.float32)
    _kernels().parity_split(np.asarray(x, np.float32), out, *offset)
    return out


def _filter(weight: np.ndarray) -> np.ndarray:
    """``G g G^T`` of every ``[O, C, 3, 3]`` filter, as ``[16, C, O]`` float32 (rounded once)."""
    o, c = weight.shape[:2]
    u = KRON @ weight.reshape(o * c, 9).T.astype(np.float64)
    return np.ascontiguousarray(u.reshape(16, o, c).transpose(0, 2, 1), dtype=np.float32)


def _planes(tiles: int, width: int) -> np.ndarray:
    return np.empty((16, tiles * width + PLANE_PAD), np.float32)


def _as_stack(planes: np.ndarray, tiles: int, width: int) -> np.ndarray:
    """The first `tiles` rows of every plane, as ``[16, tiles, width]`` (a view)."""
    return planes[:, : tiles * width].reshape(16, tiles, width)


def _workers(rows: int, tiles_w: int, channels: int) -> tuple[int, list[slice]]:
    """Tile rows per block, and each thread's run of blocks (as block indices); `channels` is
    the product of the input and output channel counts."""
    per_block = max(1, TILES_PER_BLOCK // tiles_w)
    blocks = -(-rows // per_block)
    return per_block, threads.split(blocks, threads.parts(rows * tiles_w * channels, WORK_PER_THREAD))


def conv(x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None, padding: Pair) -> np.ndarray:
    """``[N, OH, OW, O]`` = the 3x3, stride-1 convolution of NHWC `x` by `weight` (``[O, C, 3,
    3]``) plus `bias`, zero-padded by `padding`, in float32.

    Example:
        >>> import numpy as np
        >>> from burn_ndarray.ops import winograd
        >>> x, w = np.ones((1, 4, 4, 16), np.float32), np.ones((16, 16, 3, 3), np.float32)
        >>> winograd.conv(x, w, None, (1, 1))[0, :2, :2, 0].tolist()
        [[64.0, 96.0], [96.0, 144.0]]
    """
    kernels = _kernels()
    n, h, w, c = x.shape
    o = weight.shape[0]
    out_h, out_w = h + 2 * padding[0] - 2, w + 2 * padding[1] - 2
    tiles = _tiles(out_h, out_w)
    src = _parity_split(x, padding, 2 * tiles[0] + 2, tiles[1] + 1)
    u = _filter(weight)
    out = np.empty((n, out_h, out_w, o), np.float32)
    bias_row = np.tile(np.zeros(o, np.float32) if bias is None else bias.astype(np.float32), tiles[1])
    rows = n * tiles[0]
    per_block, runs = _workers(rows, tiles[1], c * o)

    def run(blocks: slice) -> None:
        v, m = _planes(per_block * tiles[1], c), _planes(per_block * tiles[1], o)
        for first in range(blocks.start * per_block, min(rows, blocks.stop * per_block), per_block):
            count = min(per_block, rows - first)
            kernels.input_rows(0, count, first, src, v, *tiles)
            np.matmul(_as_stack(v, count * tiles[1], c), u, out=_as_stack(m, count * tiles[1], o))
            kernels.output_rows(0, count, first, m, out, bias_row, *tiles)

    with blas.single_threaded():
        threads.run(run, runs)
    return out


def x_grad(output_grad: np.ndarray, weight: np.ndarray, padding: Pair) -> np.ndarray:
    """The input gradient ``[N, H, W, C]`` of `conv` from its NHWC output gradient: the
    convolution of the gradient, padded by ``2 - padding``, with the flipped, transposed filter."""
    flipped = np.ascontiguousarray(weight[:, :, ::-1, ::-1].transpose(1, 0, 2, 3))
    return conv(output_grad, flipped, None, (2 - padding[0], 2 - padding[1]))


def weight_grad(x: np.ndarray, output_grad: np.ndarray, padding: Pair) -> np.ndarray:
    """The weight gradient ``[O, C, 3, 3]`` of `conv` from its NHWC input and output gradient.

    Each thread sums its blocks' products in float64; the threads' sums are added in order, so
    the bits may differ across thread counts (by rounding), never between runs at one count."""
    kernels = _kernels()
    n, h, w, c = x.shape
    _, out_h, out_w, o = output_grad.shape
    tiles = _tiles(out_h, out_w)
    src = _parity_split(x, padding, 2 * tiles[0] + 2, tiles[1] + 1)
    grads = _parity_split(output_grad, (0, 0), 2 * tiles[0], tiles[1])
    rows = n * tiles[0]
    per_block, runs = _workers(rows, tiles[1], c * o)
    sums = np.zeros((len(runs), 16, c, o))

    def run(blocks: slice) -> None:
        v, d = _planes(per_block * tiles[1], c), _planes(per_block * tiles[1], o)
        total = sums[runs.index(blocks)]
        for first in range(blocks.start * per_block, min(rows, blocks.stop * per_block), per_block):
            count = min(per_block, rows - first)
            kernels.input_rows(0, count, first, src, v, *tiles)
            kernels.grad_rows(0, count, first, grads, d, *tiles)
            v_t = _as_stack(v, count * tiles[1], c).transpose(0, 2, 1)
            total += np.matmul(v_t, _as_stack(d, count * tiles[1], o))

    with blas.single_threaded():
        threads.run(run, runs)
    grad = KRON.T @ sums.sum(axis=0).reshape(16, c * o)  # [9, C * O]
    return np.ascontiguousarray(grad.reshape(3, 3, c, o).transpose(3, 2, 0, 1), dtype=np.float32)
