"""Convolutions, transposed convolutions and their gradients: im2col + one GEMM per group.

conv2d and its gradients work channels-last (NHWC), as the NumPy floor of the benchmarks does:
the columns are ``[N * OH * OW, KH * KW * C]`` with whole batch and positions in one GEMM (faster
in OpenBLAS than a stacked matmul of N small ones), the result ``[N * OH * OW, C_out]`` is returned
as an ``[N, C_out, OH, OW]`` view of that NHWC memory (primitives may be views), and ReLU, pooling
and the next convolution keep and read that layout without a transpose copy; so do the gradients,
whose ``[N * L, C_out]`` matrix is then a free view. The input gradient is one stacked matmul that
lands tap-major, so `_col2im_nhwc` adds contiguous slabs; the weight gradient is one GEMM per group
against recomputed columns (the im2col copy costs a tenth of the GEMM, not worth caching).
The transposed convolutions and the 1-D ops are the shared ones (`burn.backend.xp.conv`), which
use `gemm` and `weight_grad` below.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from burn.backend.xp.conv import check_groups
from burn.backend.xp.windows import out_size
from burn_ndarray import _parallel, _winograd
from burn_ndarray._windows import Pair, work_dtype

Array = Any


# im2col / col2im copies of at least this many elements run compiled (`_conv_kernels`, every
# thread); below, NumPy's strided copies, and small models never load numba.
COMPILED_MIN_SIZE = 1 << 15


def _compiled(size: int) -> Any:
    """`_conv_kernels` for a copy of `size` elements, or None (small, or numba missing)."""
    if size < COMPILED_MIN_SIZE or _parallel.kernels() is None:
        return None
    from burn_ndarray import _conv_kernels

    return _conv_kernels


def gemm(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` over a leading group axis: one 2-D matmul (one BLAS GEMM) per group.

    NumPy's stacked matmul is slower than its 2-D one here (a batch of one, transposed operands);
    the per-group products land in one fresh output buffer.
    """
    if a.shape[0] == 1:
        return (a[0] @ b[0])[None]  # type: ignore[no-any-return]
    out = np.empty((a.shape[0], a.shape[1], b.shape[2]), dtype=np.result_type(a, b))
    for g in range(a.shape[0]):
        np.matmul(a[g], b[g], out=out[g])
    return out


def _nhwc(x: np.ndarray) -> np.ndarray:
    """``[N, C, H, W]`` as a C-contiguous ``[N, H, W, C]`` (free when x is channels-last already,
    as every conv2d output is)."""
    return np.ascontiguousarray(x.transpose(0, 2, 3, 1))


def _pad_nhwc(x: np.ndarray, padding: Pair) -> np.ndarray:
    ph, pw = padding
    if ph == 0 and pw == 0:
        return x
    n, h, w, c = x.shape
    out = np.zeros((n, h + 2 * ph, w + 2 * pw, c), dtype=x.dtype)
    out[:, ph : ph + h, pw : pw + w] = x
    return out


def _columns(
    padded: np.ndarray, kernel: Pair, out: Pair, stride: Pair, dilation: Pair, groups: int
) -> np.ndarray:
    """im2col of a padded NHWC input: ``[G, N * OH * OW, KH * KW * C/G]`` (the one copy).

    Stored channels innermost (the copy moves runs of C/G values) or, when a window row is longer
    than that, as the transpose of a ``[G, KH * KW * C/G, N * OH * OW]`` buffer (runs of OW values):
    a first layer with C = 1 copies 4x faster so. BLAS takes either layout without a copy."""
    n, _, _, c = padded.shape
    cg = c // groups
    sn, sh, sw, sc = padded.strides
    win = as_strided(
        padded,
        shape=(n, out[0], out[1], kernel[0], kernel[1], groups, cg),
        strides=(sn, sh * stride[0], sw * stride[1], sh * dilation[0], sw * dilation[1], sc * cg, sc),
        writeable=False,
    )
    rows, taps = n * out[0] * out[1], kernel[0] * kernel[1] * cg
    if stride[1] == 1 and out[1] > cg:
        return win.transpose(5, 3, 4, 6, 0, 1, 2).reshape(groups, taps, rows).transpose(0, 2, 1)
    compiled = _compiled(rows * taps)
    if compiled is not None and groups == 1 and padded.flags.c_contiguous:
        cols = np.empty((rows, taps), padded.dtype)  # the same copy, on every thread
        compiled.im2col(padded, cols, out[1], (*kernel, *stride, *dilation))
        return cols[None]
    return win.transpose(5, 0, 1, 2, 3, 4, 6).reshape(groups, rows, taps)


def _add_bias(out: np.ndarray, bias: np.ndarray, width: int) -> None:
    """``out [N * OH * OW, O] += bias`` in rows of OW * O values: a row of only O values costs
    NumPy more in loop overhead than in arithmetic."""
    compiled = _compiled(out.size)
    if compiled is not None and out.flags.c_contiguous:
        compiled.add_bias(out, bias)  # the same adds, on every thread
        return
    rows = out.reshape(-1, width * out.shape[1])
    rows += np.tile(bias, width)


def _weight_matrix(weight: np.ndarray, groups: int, dtype: np.dtype) -> np.ndarray:
    """``[O, C/G, KH, KW]`` as ``[G, O/G, KH * KW * C/G]``, in the columns' (kh, kw, c) order."""
    o = weight.shape[0]
    w = weight.astype(dtype, copy=False).transpose(0, 2, 3, 1)
    return np.ascontiguousarray(w).reshape(groups, o // groups, -1)


def _by_group(matrix: np.ndarray, groups: int) -> np.ndarray:
    """``[M, G * K]`` as ``[G, M, K]`` (a view)."""
    m, k = matrix.shape
    return matrix.reshape(m, groups, k // groups).transpose(1, 0, 2)


def _ungroup(stack: np.ndarray) -> np.ndarray:
    """``[G, M, K]`` as a C-contiguous ``[M, G * K]`` (a view when G == 1)."""
    g, m, k = stack.shape
    return np.ascontiguousarray(stack.transpose(1, 0, 2)).reshape(m, g * k)


def conv2d(
    x: Array, weight: Array, bias: Array | None, stride: Pair, padding: Pair, dilation: Pair, groups: int
) -> Array:
    """NHWC inside: ``[N * OH * OW, O]`` = columns ``@`` weight^T, one GEMM per group; returned as
    an ``[N, O, OH, OW]`` view of channels-last memory, which the next pooling / ReLU / conv
    keep and consume without a transpose copy."""
    n, c, h, w = x.shape
    o, cg, kh, kw = weight.shape
    check_groups("conv2d", x, weight, c, cg * groups, o, groups)
    dtype = work_dtype(x, weight) if bias is None else work_dtype(x, weight, bias)
    oh = out_size(h, kh, stride[0], padding[0], dilation[0])  # may be 0: an empty result
    ow = out_size(w, kw, stride[1], padding[1], dilation[1])
    if dtype == np.float32 and _winograd.applies(x, weight.shape, stride, padding, dilation, groups):
        return _winograd.conv(_nhwc(x), weight, bias, padding).transpose(0, 3, 1, 2)
    padded = _pad_nhwc(_nhwc(x.astype(dtype, copy=False)), padding)
    cols = _columns(padded, (kh, kw), (oh, ow), stride, dilation, groups)
    out = _ungroup(gemm(cols, _weight_matrix(weight, groups, dtype).transpose(0, 2, 1)))
    if bias is not None and out.size:
        _add_bias(out, bias.astype(dtype, copy=False), ow)  # `out` is our own fresh result
    out = out.reshape(n, oh, ow, o).transpose(0, 3, 1, 2)
    return out.astype(np.result_type(x, weight), copy=False)


def _col2im_nhwc(cols: np.ndarray, size: Pair, stride: Pair, dilation: Pair) -> np.ndarray:
    """Sum ``[KH, KW, N, OH, OW, C]`` onto a zero ``[N, *size, C]`` plane (adjoint of `_columns`);
    each tap's slab is contiguous, so every slice-add moves runs of OW * C values."""
    kh, kw, n, oh, ow, c = cols.shape
    sh, sw = stride
    compiled = _compiled(cols.size)
    if compiled is not None:
        plane = np.empty((n, *size, c), dtype=cols.dtype)  # the same adds, in the same order
        compiled.col2im(cols, plane, (*stride, *dilation))
        return plane
    out = np.zeros((n, *size, c), dtype=cols.dtype)
    for i in range(kh):
        h0 = i * dilation[0]
        rows = slice(h0, h0 + sh * (oh - 1) + 1, sh)
        for j in range(kw):
            w0 = j * dilation[1]
            out[:, rows, w0 : w0 + sw * (ow - 1) + 1 : sw] += cols[i, j]
    return out


def conv2d_x_backward(
    x: Array, weight: Array, output_grad: Array, stride: Pair, padding: Pair, dilation: Pair, groups: int
) -> Array:
    n, c, h, w = x.shape
    o, cg, kh, kw = weight.shape
    _, _, oh, ow = output_grad.shape
    dtype = work_dtype(weight, output_grad)
    if dtype == np.float32 and max(padding) <= 2:  # the gradient is padded by 2 - padding
        if _winograd.applies(x, weight.shape, stride, padding, dilation, groups):
            grad = _winograd.x_grad(_nhwc(output_grad), weight, padding).transpose(0, 3, 1, 2)
            return grad.astype(x.dtype, copy=False)
    grads = _by_group(_nhwc(output_grad.astype(dtype, copy=False)).reshape(n * oh * ow, o), groups)
    # One [O/G, C/G] matrix per tap and group: the product lands as [G, KH*KW, N*L, C/G], so each
    # tap's columns are one contiguous slab for the col2im below (one GEMM into [N*L, taps, C/G]
    # is faster, but the col2im's strided reads cost more than it saves).
    wt = weight.astype(dtype, copy=False).reshape(groups, o // groups, cg, kh * kw).transpose(0, 3, 1, 2)
    cols = np.matmul(grads[:, None], np.ascontiguousarray(wt))
    cols = cols.reshape(groups, kh, kw, n, oh, ow, cg).transpose(1, 2, 3, 4, 5, 0, 6)
    size = (h + 2 * padding[0], w + 2 * padding[1])
    plane = _col2im_nhwc(cols.reshape(kh, kw, n, oh, ow, c), size, stride, dilation)  # a copy if G > 1
    plane = plane[:, padding[0] : padding[0] + h, padding[1] : padding[1] + w].transpose(0, 3, 1, 2)
    return plane.astype(x.dtype, copy=False)


def weight_grad(
    inp: Array, out_grad: Array, kernel: Pair, stride: Pair, padding: Pair, dilation: Pair, groups: int
) -> np.ndarray:
    """``dW[o, c, kh, kw] = sum over n, l of out_grad[n, o, l] * window(inp)[n, c, kh, kw, l]``:
    one GEMM per group, ``grads^T [O/G, N*L] @ columns [N*L, KH*KW*C/G]``."""
    c = inp.shape[1]
    n, o, oh, ow = out_grad.shape
    dtype = work_dtype(inp, out_grad)
    if dtype == np.float32 and _winograd.applies(inp, (o, c, *kernel), stride, padding, dilation, groups):
        return _winograd.weight_grad(_nhwc(inp), _nhwc(out_grad), padding)
    padded = _pad_nhwc(_nhwc(inp.astype(dtype, copy=False)), padding)
    cols = _columns(padded, kernel, (oh, ow), stride, dilation, groups)
    grads = _by_group(_nhwc(out_grad.astype(dtype, copy=False)).reshape(n * oh * ow, o), groups)
    # The transposed operands cost nothing: 2-D matmul hands BLAS a transpose flag. With fewer
    # taps than output channels (a first layer: C = 1), OpenBLAS takes the product the other way
    # round in half the time (3x3 taps, 32 channels, N*L = 43264: GEMM 0.83 -> 0.45 ms, the whole
    # weight gradient 1.0 -> 0.8 ms, 2 threads; the same bits).
    if cols.shape[2] < grads.shape[2]:
        grad = gemm(cols.transpose(0, 2, 1), grads).transpose(0, 2, 1)
    else:
        grad = gemm(grads.transpose(0, 2, 1), cols)
    grad = grad.reshape(o, *kernel, c // groups)
    return np.ascontiguousarray(grad.transpose(0, 3, 1, 2))


def conv2d_weight_backward(
    x: Array, weight: Array, output_grad: Array, stride: Pair, padding: Pair, dilation: Pair, groups: int
) -> Array:
    grad = weight_grad(x, output_grad, weight.shape[2:], stride, padding, dilation, groups)
    return grad.astype(weight.dtype, copy=False)
