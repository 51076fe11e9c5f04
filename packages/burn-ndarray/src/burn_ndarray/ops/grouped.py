"""Direct grouped convolutions: burn-ndarray's conv2d (and so conv1d) and both its gradients
when each group has few input channels, depthwise (one input channel per group) above all.

im2col + one GEMM per group is the wrong shape there: a depthwise 3x3 layer makes C GEMMs of
``[N * OH * OW, 9] @ [9, 1]``, each a call into BLAS with no reuse, after a column copy nine times
the input. The direct sum (`burn_ndarray.kernels.grouped`) reads the input once per tap in place,
channels-last, and vectorizes over channels; on the depthwise layers of MobileNetV3-small,
EfficientNet-B0 and ConvNeXt-tiny it is 5-100x faster than the GEMM path (docs/benchmarks-log.md,
"Depthwise and grouped convolution (issue 34)").

Which path a grouped convolution takes is decided by `applies`: every float32 / float64 one with
at most `MAX_GROUP_CHANNELS` input channels per group runs here (the direct sum does
``C/G * O`` multiply-adds per tap and position with vectors as long as the output channels;
the per-group GEMMs win once each group's ``[C/G * KH * KW]`` reduction is long enough to feed
BLAS's blocked kernels: measured, the direct sums win at 2 and 4 channels per group, tie at 8 and
lose 2-4x at 16, docs/benchmarks-log.md). With stride 1 the input gradient is the forward sum over
the output gradient with each group's filters flipped and transposed. Depthwise layers of at most
`MAX_ROW_CHANNELS` channels (MobileNet's and EfficientNet's first ones) run over whole rows instead
(`kernels.grouped.depthwise_forward_rows`...), 1.5-1.9x faster there. Rows go to burn-ndarray's
threads (numba's TBB pool from `NATIVE_WORK_PER_THREAD` multiply-adds each, else the Python pool
from `WORK_PER_THREAD`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from burn_ndarray import kernels
from burn_ndarray.ops.windows import Pair
from burn_ndarray.runtime import split, tbb, threads

Array = Any

# Input channels per group up to which a grouped convolution runs here (measured with
# bench/conv_depthwise.py: a tie with the GEMMs at 8, a 2-4x loss at 16).
MAX_GROUP_CHANNELS = 8
# Channels up to which a depthwise convolution (one input and one output channel per group) runs
# over whole rows (`kernels.grouped.depthwise_forward_rows`...) rather than per position: with few
# channels the per-position kernels' inner loop is a vector or two long (bench/conv_depthwise.py,
# docs/benchmarks-log.md "Depthwise convolution over rows").
MAX_ROW_CHANNELS = 32
# Multiply-adds a thread must get before rows are split: on the TBB pool (hot workers, a hand-off
# of microseconds) and on the Python pool (a sleeping thread's wake-up, 20-100 us).
NATIVE_WORK_PER_THREAD = 1 << 16
WORK_PER_THREAD = 1 << 19


def applies(dtype: np.dtype, groups: int, group_channels: int, out_size: int) -> bool:
    """Whether a convolution in `dtype` with `groups` groups of `group_channels` input channels
    and `out_size` output elements (> 0) runs here: float32 / float64, more than one group, at
    most `MAX_GROUP_CHANNELS` channels per group, numba present.

    Example:
        >>> import numpy as np
        >>> from burn_ndarray.ops import grouped
        >>> grouped.applies(np.dtype(np.float64), 1, 16, 100)  # one group: im2col + GEMM
        False
    """
    if groups < 2 or group_channels > MAX_GROUP_CHANNELS or out_size == 0:
        return False
    if dtype not in (np.float32, np.float64):
        return False
    return kernels.load("grouped") is not None


def _kernels() -> Any:
    return kernels.load("grouped")


def _taps(weight: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``[O, C/G, KH, KW]`` as the kernels' ``[KH, KW, C/G, O]``."""
    return np.ascontiguousarray(weight.astype(dtype, copy=False).transpose(2, 3, 1, 0))


def _expand(x: np.ndarray, groups: int, out_channels: int) -> np.ndarray:
    """Channels-last `x` ``[N, H, W, C]`` as ``[N, H, W, C/G, O]``: input channel ``i`` of each
    group under each of the group's output channels, so that the kernels' innermost loop runs
    over all output channels contiguously (a view for depthwise with one output per channel)."""
    n, h, w, c = x.shape
    cg, og = c // groups, out_channels // groups
    x = np.ascontiguousarray(x)
    if cg == 1 and og == 1:
        return x.reshape(n, h, w, 1, c)
    by_group = x.reshape(n, h, w, groups, cg).transpose(0, 1, 2, 4, 3)[..., None]
    wide = np.broadcast_to(by_group, (n, h, w, cg, groups, og))
    return np.ascontiguousarray(wide).reshape(n, h, w, cg, out_channels)


def _by_rows(groups: int, channels: int, out_channels: int, sw: int = 1) -> bool:
    """Whether a convolution of `groups` groups takes the row kernels: depthwise, few channels,
    and for the sums over the input (the forward and the weight gradient) stride 1 along the
    width: with a wider stride they would read the input split by phase, and making that copy
    costs as much as the sums (16@112 3x3 s2, batch 8: 3.7 ms against 1.9 ms per position)."""
    return groups == channels == out_channels and channels <= MAX_ROW_CHANNELS and sw == 1


def _cols(width: int, sw: int) -> np.ndarray:
    """The number of columns of each of the `sw` column phases of a row `width` wide."""
    return np.array([len(range(p, width, sw)) for p in range(sw)], dtype=np.int64)


def _row_taps(weight: np.ndarray, dtype: np.dtype, out_w: int) -> np.ndarray:
    """Depthwise `weight` ``[C, 1, KH, KW]`` tiled along an output row: ``[KH, KW, OW * C]``."""
    taps = weight[:, 0].astype(dtype, copy=False).transpose(1, 2, 0)
    return np.ascontiguousarray(np.tile(taps, (1, 1, out_w)))


def _parts(rows: int, work: int) -> int:
    return min(rows, split.compiled_parts(work, WORK_PER_THREAD, NATIVE_WORK_PER_THREAD))


def _sizes(stride: Pair, padding: Pair, dilation: Pair) -> tuple[int, ...]:
    return (*stride, *padding, *dilation)


def _run(
    serial: Any, parallel: Any, rows: int, parts: int, arrays: tuple[np.ndarray, ...], scratch: np.ndarray,
    sizes: tuple[Any, ...],
) -> None:  # fmt: skip
    """``serial(lo, hi, *arrays, scratch[c], *sizes)`` over `parts` chunks ``c`` of ``range(rows)``
    (`run_ranges` with a scratch buffer, or a partial sum, of each chunk's own): one launch of
    `parallel` on the TBB pool when it runs, else the Python pool, or one call here."""
    if parts > 1 and tbb.ready():
        # Chunks handed out one at a time: a stalled worker never holds a fixed share.
        tbb.launch(parallel, parts, *arrays, scratch, *sizes)
        return
    chunks = threads.split(rows, parts)

    def run(chunk: slice) -> None:
        serial(chunk.start, chunk.stop, *arrays, scratch[chunks.index(chunk)], *sizes)

    threads.run(run, chunks)


def conv(
    x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None, stride: Pair, padding: Pair,
    dilation: Pair, out: Pair, act: int = 0,
) -> np.ndarray:  # fmt: skip
    """``[N, OH, OW, O]`` = the grouped convolution of channels-last `x` (``[N, H, W, C]``, the
    work dtype) by `weight` (``[O, C/G, KH, KW]``) plus `bias`, then the activation code `act`
    (`burn_ndarray.kernels.conv.activate`, 0 for none) inside the kernels; `out` is ``(OH, OW)``;
    `padding` is where the first window starts (top, left): the bottom and right follow from
    `out`, so the padding may be asymmetric.

    Example:
        >>> import numpy as np
        >>> from burn_ndarray.ops import grouped
        >>> x = np.ones((1, 3, 3, 2), np.float32)  # two channels, depthwise 3x3, padding 1
        >>> w = np.stack([np.ones((1, 3, 3)), 2 * np.ones((1, 3, 3))]).astype(np.float32)
        >>> grouped.conv(x, w, None, (1, 1), (1, 1), (1, 1), (3, 3))[0, :, :, 1].tolist()
        [[8.0, 12.0, 8.0], [12.0, 18.0, 12.0], [8.0, 12.0, 8.0]]
    """
    n, _, _, c = x.shape
    o, cg, kh, kw = weight.shape
    result = np.empty((n, *out, o), dtype=x.dtype)
    b = None if bias is None else np.ascontiguousarray(bias, dtype=x.dtype)
    k = _kernels()
    rows = n * out[0]
    parts = _parts(rows, result.size * kh * kw * cg)
    if _by_rows(c // cg, c, o, stride[1]):
        xs, cols = np.ascontiguousarray(x).reshape(n, x.shape[1], 1, -1), _cols(x.shape[2], 1)
        brow = None if b is None else np.tile(b, out[1])
        split.run_ranges(k.depthwise_forward_rows, k.depthwise_forward_parallel, rows, parts,
                         xs, _row_taps(weight, x.dtype, out[1]), brow, result.reshape(n, out[0], -1),
                         cols, c, *_sizes(stride, padding, dilation), act)  # fmt: skip
        return result
    split.run_ranges(k.forward_rows, k.forward_parallel, rows, parts,
                     _expand(x, c // cg, o), _taps(weight, x.dtype), b, result,
                     *_sizes(stride, padding, dilation), act)  # fmt: skip
    return result


def x_grad(
    output_grad: np.ndarray, weight: np.ndarray, size: tuple[int, int, int], stride: Pair, padding: Pair,
    dilation: Pair,
) -> np.ndarray:  # fmt: skip
    """The input gradient ``[N, H, W, C]`` (`size` is ``(H, W, C)``) of `conv` from its
    channels-last output gradient ``[N, OH, OW, O]`` in the work dtype."""
    n, _, _, o = output_grad.shape
    _, cg, kh, kw = weight.shape
    h, w, c = size
    groups, og = c // cg, o // (c // cg)
    full = (dilation[0] * (kh - 1) - padding[0], dilation[1] * (kw - 1) - padding[1])
    if stride == (1, 1) and min(full) >= 0 and og <= MAX_GROUP_CHANNELS:
        # With stride 1 the input gradient is the forward sum of the output gradient, padded by
        # dilation * (K - 1) - padding, with each group's filters flipped and transposed: the
        # forward kernel, whose sums run along contiguous output positions, is 1.5-3x faster than
        # gathering each input position's taps (ConvNeXt's 7x7: 49 index tests per position).
        flipped = weight[:, :, ::-1, ::-1].reshape(groups, og, cg, kh, kw).transpose(0, 2, 1, 3, 4)
        return conv(output_grad, flipped.reshape(c, og, kh, kw), None, (1, 1), full, dilation, (h, w))
    dx = np.empty((n, *size), dtype=output_grad.dtype)
    rows = n * size[0]
    parts = _parts(rows, output_grad.size * kh * kw * cg)
    if _by_rows(groups, c, o):
        cols = _cols(w, stride[1])
        dxs = np.empty((parts, stride[1], -(-w // stride[1]) * c), dtype=output_grad.dtype)
        grad = np.ascontiguousarray(output_grad).reshape(n, output_grad.shape[1], -1)
        k = _kernels()
        _run(k.depthwise_x_grad_rows, k.depthwise_x_grad_parallel, rows, parts,
             (grad, _row_taps(weight, output_grad.dtype, output_grad.shape[2]), dx.reshape(n, h, -1)), dxs,
             (cols, c, *_sizes(stride, padding, dilation)))  # fmt: skip
        return dx
    acc = np.empty((parts, cg, o), dtype=output_grad.dtype)
    _run(_kernels().x_grad_rows, _kernels().x_grad_parallel, rows, parts,
         (np.ascontiguousarray(output_grad), _taps(weight, output_grad.dtype), dx), acc,
         _sizes(stride, padding, dilation))  # fmt: skip
    return dx


def weight_grad(
    x: np.ndarray, output_grad: np.ndarray, kernel: Pair, group_channels: int, stride: Pair,
    padding: Pair, dilation: Pair,
) -> np.ndarray:  # fmt: skip
    """The weight gradient ``[O, C/G, KH, KW]`` of `conv` from its channels-last input and output
    gradient (the work dtype; `group_channels` is C/G).

    Each chunk of output rows sums into its own partial and the partials are added in order, so
    the bits may differ across thread counts (by rounding), never between runs at one count."""
    n, out_h, out_w, o = output_grad.shape
    rows = n * out_h
    parts = _parts(rows, output_grad.size * kernel[0] * kernel[1] * group_channels)
    if _by_rows(x.shape[3] // group_channels, x.shape[3], o, stride[1]):
        xs, cols = np.ascontiguousarray(x).reshape(n, x.shape[1], 1, -1), _cols(x.shape[2], 1)
        acc = np.empty((parts, *kernel, out_w * o), dtype=output_grad.dtype)
        grad = np.ascontiguousarray(output_grad).reshape(n, out_h, -1)
        k = _kernels()
        _run(k.depthwise_weight_grad_rows, k.depthwise_weight_grad_parallel, rows, parts, (xs, grad), acc,
             (cols, o, *_sizes(stride, padding, dilation)))  # fmt: skip
        per_column = acc[0] if parts == 1 else acc.sum(axis=0)
        total = per_column.reshape(*kernel, out_w, o).sum(axis=2)
        return np.ascontiguousarray(total.transpose(2, 0, 1))[:, None]
    sums = np.empty((parts, 2, *kernel, group_channels, o), dtype=output_grad.dtype)
    x = _expand(x, x.shape[3] // group_channels, o)
    _run(_kernels().weight_grad_rows, _kernels().weight_grad_parallel, rows, parts,
         (x, np.ascontiguousarray(output_grad)), sums, _sizes(stride, padding, dilation))  # fmt: skip
    total = sums[0, 0] if parts == 1 else sums[:, 0].sum(axis=0)
    return np.ascontiguousarray(total.transpose(3, 2, 0, 1))
