"""The conv family (`burn.backend.ops.conv`) on NumPy arrays: the shared ops
(`burn.backend.xp.conv`: 1-D and transposed 2-D convolutions, which use `gemm` and `weight_grad`
below) and NumPy's own: 2-D convolutions and their gradients, 3-D convolutions and transposed
convolutions, ``unfold4d`` / ``fold4d``, and the deformable convolution.

2-D, im2col + one GEMM per group (a 1x1 convolution the GEMM alone, `pointwise`), channels-last
(NHWC), as the NumPy floor of the benchmarks does: the columns are ``[N * OH * OW, KH * KW * C]``
with whole batch and positions in one GEMM (faster in OpenBLAS than a stacked matmul of N small
ones), the result ``[N * OH * OW, C_out]`` is
returned as an ``[N, C_out, OH, OW]`` view of that NHWC memory (primitives may be views), and
ReLU, pooling and the next convolution keep and read that layout without a transpose copy; so do
the gradients, whose ``[N * L, C_out]`` matrix is then a free view. The input gradient is one
stacked matmul that lands tap-major, so `_col2im_nhwc` adds contiguous slabs; the weight gradient
is one GEMM per group against recomputed columns (the im2col copy costs a tenth of the GEMM, not
worth caching). float32 3x3 convolutions with stride 1 take the Winograd path where it pays
(`burn_ndarray.ops.winograd`); depthwise and grouped convolutions with few channels per group (the
GEMMs would be tiny) a direct sum (`burn_ndarray.ops.grouped`), and with them conv1d, a 2-D
convolution of height 1; large copies run compiled (`burn_ndarray.kernels.conv`).

3-D, one GEMM per group over a window view: the window view of the padded input ``[N, C/G, KD,
KH, KW, OD, OH, OW]`` is an `as_strided` view; `np.tensordot` contracts it with the weight,
copying it once into the column matrix it hands to BLAS (the im2col copy). Three kernels serve
six ops, as in 2-D: the transposed convolution is the input gradient of the convolution
(`_col2im3d` of the weight times the output gradient), its input gradient is the convolution, and
its weight gradient is the convolution's with input and output gradient swapped.

``unfold4d`` / ``fold4d`` (PyTorch's ``nn.Unfold`` / ``nn.Fold``): `unfold4d` copies a window view
of the padded input once into PyTorch's column layout ``[N, C * KH * KW, OH * OW]``; `fold4d` sums
the columns back with `burn_ndarray.ops.windows.col2im` (one strided slice-add per kernel tap).
Sizes are checked, with the default's messages, by burn-core's `burn.backend.windows.out_size`.

``deform_conv2d`` (torchvision's deformable convolution) follows its burn-core default step for
step (`burn.backend.ops.conv`: the same coordinate formulas in the same order, so float32
positions round identically), but each bilinear tap is one `np.take_along_axis` over the whole
batch instead of a chain of contract ops. float16 / bfloat16 compute in float32 and cast back.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from burn.backend.ops.conv import CONV_ACTIVATIONS, _check, _grid, check_activation, conv_activation
from burn.backend.windows import out_size  # checked: errors name the op (fold, deformable conv)
from burn.backend.xp.conv import XpConvOps, check_groups
from burn.backend.xp.windows import out_size as axis_out_size  # one axis, 0 when empty (conv2d)
from burn.errors import ShapeError
from burn_ndarray import kernels
from burn_ndarray.ops import grouped, winograd
from burn_ndarray.ops.rounding import to_dtype
from burn_ndarray.ops.windows import Pair, col2im, pad, windows, work_dtype
from burn_ndarray.runtime import gemm as blocked  # the large GEMMs on the TBB pool
from burn_ndarray.runtime.dtypes import LOW

Array = Any
Triple = tuple[int, int, int]
Quad = tuple[int, int, int, int]
NONE = 0  # the activation code of no activation (`burn_ndarray.kernels.conv.activate`)


# im2col / col2im copies of at least this many elements run compiled (`kernels.conv`, every
# thread); below, NumPy's strided copies, and small models never load numba.
COMPILED_MIN_SIZE = 1 << 15


# Channels up to which the compiled im2col reads an NCHW input in place (strided reads of a few
# planes) rather than after a channels-last copy: at 3 channels half the time of copy + im2col,
# at 32 channels 1.6x the time (bench in docs/benchmarks-log.md "small CNNs").
STRIDED_MAX_CHANNELS = 4


def _compiled(size: int) -> Any:
    """`burn_ndarray.kernels.conv` for a copy of `size` elements, or None (small, or numba missing)."""
    if size < COMPILED_MIN_SIZE:
        return None
    return kernels.load("conv")


def gemm(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` over a leading group axis: one 2-D matmul (one BLAS GEMM) per group.

    NumPy's stacked matmul is slower than its 2-D one here (a batch of one, transposed operands);
    the per-group products land in one fresh output buffer.
    """
    if a.shape[0] == 1:
        return blocked.product(a[0], b[0])[None]  # type: ignore[no-any-return]
    out = np.empty((a.shape[0], a.shape[1], b.shape[2]), dtype=np.result_type(a, b))
    for g in range(a.shape[0]):
        blocked.product(a[g], b[g], out=out[g])
    return out


def _float32(*arrays: Any) -> tuple[Any, ...]:
    """float16 / bfloat16 operands widened (exactly) to float32, others (None, float32, float64)
    as they are: a low-precision 2-D convolution and its gradients run the float32 kernels,
    Winograd included, and round the result once to the low dtype, which is what a GPU's half
    convolution with float32 accumulation gives (an autocast conv2d, `burn.tensor.autocast`)."""
    return tuple(a.astype(np.float32) if a is not None and a.dtype in LOW else a for a in arrays)


def _nhwc(x: np.ndarray) -> np.ndarray:
    """``[N, C, H, W]`` as a C-contiguous ``[N, H, W, C]`` (free when x is channels-last already,
    as every conv2d output is)."""
    return np.ascontiguousarray(x.transpose(0, 2, 3, 1))


def _pad_nhwc(x: np.ndarray, padding: Pair, after: Pair | None = None) -> np.ndarray:
    """`x` ``[N, H, W, C]`` with `padding` zero rows / columns before and `after` (default: as
    many) after."""
    ph, pw = padding
    bottom, right = padding if after is None else after
    if ph == 0 and pw == 0 and bottom == 0 and right == 0:
        return x
    n, h, w, c = x.shape
    out = np.zeros((n, h + ph + bottom, w + pw + right, c), dtype=x.dtype)
    out[:, ph : ph + h, pw : pw + w] = x
    return out


def _columns(
    x: np.ndarray, padding: Pair, kernel: Pair, out: Pair, stride: Pair, dilation: Pair, groups: int,
    after: Pair | None = None,
) -> np.ndarray:
    """im2col of an NHWC input `x` (any strides) padded by `padding` (before; `after` when it
    differs): ``[G, N * OH * OW, KH * KW * C/G]`` (the one copy).

    Stored channels innermost (the copy moves runs of C/G values) or, when a window row is longer
    than that, as the transpose of a ``[G, KH * KW * C/G, N * OH * OW]`` buffer (runs of OW values):
    a first layer with C = 1 copies 4x faster so. BLAS takes either layout without a copy. Large
    one-group copies run compiled and pad on the fly, so a channels-last input is read in place,
    and so is a network's NCHW input of at most `STRIDED_MAX_CHANNELS` channels, which is not
    transposed first either (MobileNetV3's 3 -> 16 stem at 224x224, batch 1: the copy 1.49 -> 0.72
    ms of CPU, docs/benchmarks-log.md "small CNNs")."""
    n, _, _, c = x.shape
    rows, taps = n * out[0] * out[1], kernel[0] * kernel[1] * c // groups
    if not (stride[1] == 1 and out[1] > c // groups) and groups == 1:
        compiled = _compiled(rows * taps)
        if compiled is not None:
            if not x.flags.c_contiguous and c > STRIDED_MAX_CHANNELS:
                x = np.ascontiguousarray(x)
            cols = np.empty((rows, taps), x.dtype)  # the same copy, on every thread
            compiled.im2col(x, cols, out[1], (*kernel, *stride, *padding, *dilation))
            return cols[None]
    padded = _pad_nhwc(np.ascontiguousarray(x), padding, after)
    cg = c // groups
    sn, sh, sw, sc = padded.strides
    win = as_strided(
        padded,
        shape=(n, out[0], out[1], kernel[0], kernel[1], groups, cg),
        strides=(sn, sh * stride[0], sw * stride[1], sh * dilation[0], sw * dilation[1], sc * cg, sc),
        writeable=False,
    )
    if stride[1] == 1 and out[1] > cg:
        return win.transpose(5, 3, 4, 6, 0, 1, 2).reshape(groups, taps, rows).transpose(0, 2, 1)
    return win.transpose(5, 0, 1, 2, 3, 4, 6).reshape(groups, rows, taps)


def _add_bias(out: np.ndarray, bias: np.ndarray, width: int) -> None:
    """``out [N * OH * OW, O] += bias`` in rows of OW * O values: a row of only O values costs
    NumPy more in loop overhead than in arithmetic."""
    compiled = _compiled(out.size)
    if compiled is not None and out.flags.c_contiguous:
        compiled.add_bias(out, bias)  # the same adds, on every thread
        return
    if out.shape[0] == 1 or out.shape[1] >= 64:  # rows long enough, or one: no tiling
        out += bias
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


def pointwise(weight_shape: tuple[int, ...], stride: Pair, padding: Pair, groups: int) -> bool:
    """Whether a 2-D convolution is pointwise (1x1 kernel, stride 1, no padding, one group): its
    output is ``[N * H * W, C] @ [C, O]`` of the channels-last input, one GEMM with no im2col.
    Most layers of MobileNetV3-small and EfficientNet-B0 are 1x1 (the expansions, projections
    and squeeze-and-excite FCs), on 7x7 to 28x28 or a single position, where the column path's
    views, reshapes and bias tiling cost more than the product (576 -> 144 channels at 1x1: 47-84
    us through the columns, 21 us here, 8-15 us for the bare GEMM; docs/benchmarks-log.md
    "small CNNs").

    Example:
        >>> from burn_ndarray.ops.conv import pointwise
        >>> pointwise((96, 576, 1, 1), (1, 1), (0, 0), 1), pointwise((16, 3, 3, 3), (1, 1), (1, 1), 1)
        (True, False)
    """
    one_by_one = tuple(weight_shape[2:]) == (1, 1)
    return one_by_one and tuple(stride) == (1, 1) and tuple(padding) == (0, 0) and groups == 1


def conv2d(
    x: Array, weight: Array, bias: Array | None, stride: Pair, padding: Pair, dilation: Pair, groups: int
) -> Array:
    """NHWC inside: ``[N * OH * OW, O]`` = columns ``@`` weight^T, one GEMM per group; returned as
    an ``[N, O, OH, OW]`` view of channels-last memory, which the next pooling / ReLU / conv
    keep and consume without a transpose copy."""
    ph, pw = padding
    return conv2d_sides(x, weight, bias, stride, (ph, ph, pw, pw), dilation, groups, NONE)


def _epilogue(out: np.ndarray, bias: np.ndarray | None, act: int) -> None:
    """`kernels.conv.epilogue` (numba is there: `ConvOps.conv2d_fused` asks for an activation only
    then)."""
    compiled = kernels.load("conv")
    assert compiled is not None
    compiled.epilogue(out, bias, act)


def conv2d_sides(
    x: Array, weight: Array, bias: Array | None, stride: Pair, sides: Quad, dilation: Pair, groups: int,
    act: int,
) -> Array:  # fmt: skip
    """`conv2d` with per-side padding ``sides`` ``(top, bottom, left, right)``, the input read with
    bounds (never padded by a copy on the compiled paths), and the activation code `act`
    (`burn_ndarray.kernels.conv.activate`; needs numba unless NONE) applied with the bias in one
    pass over each fresh output row, or inside the direct grouped kernels."""
    if x.dtype in LOW or weight.dtype in LOW:
        out_dtype = np.result_type(x, weight)
        x, weight, bias = _float32(x, weight, bias)
        return to_dtype(conv2d_sides(x, weight, bias, stride, sides, dilation, groups, act), out_dtype)
    n, c, h, w = x.shape
    o, cg, kh, kw = weight.shape
    check_groups("conv2d", x, weight, c, cg * groups, o, groups)
    dtype = work_dtype(x, weight) if bias is None else work_dtype(x, weight, bias)
    top, bottom, left, right = sides
    oh = max(0, axis_out_size(h + top + bottom, kh, stride[0], 0, dilation[0]))  # 0: an empty result
    ow = max(0, axis_out_size(w + left + right, kw, stride[1], 0, dilation[1]))
    padding = (top, left)  # what the readers need: where the first window starts
    symmetric = top == bottom and left == right
    if symmetric and dtype == np.float32 and winograd.applies(x, weight.shape, stride, padding, dilation,
                                                              groups):
        out = winograd.conv(_nhwc(x), weight, bias, padding)
        if act != NONE and out.size:
            out = np.ascontiguousarray(out)  # the epilogue works in place on its rows
            _epilogue(out.reshape(-1, o), None, act)
        return out.transpose(0, 3, 1, 2)
    if grouped.applies(dtype, groups, cg, n * o * oh * ow):
        out = grouped.conv(_nhwc(x.astype(dtype, copy=False)), weight, bias, stride, padding, dilation,
                           (oh, ow), act)  # fmt: skip
        return out.transpose(0, 3, 1, 2).astype(np.result_type(x, weight), copy=False)
    if not any(sides) and pointwise(weight.shape, stride, padding, groups):
        # A 1x1 convolution is a GEMM on the channels-last input as it is: no columns to build.
        rows = _nhwc(x.astype(dtype, copy=False)).reshape(n * h * w, c)
        out = blocked.product(rows, weight.astype(dtype, copy=False).reshape(o, c).T)
    else:
        x_nhwc = x.astype(dtype, copy=False).transpose(0, 2, 3, 1)
        after = (bottom, right)
        cols = _columns(x_nhwc, padding, (kh, kw), (oh, ow), stride, dilation, groups, after)
        out = _ungroup(gemm(cols, _weight_matrix(weight, groups, dtype).transpose(0, 2, 1)))
    if act != NONE and out.size:
        _epilogue(out, None if bias is None else bias.astype(dtype, copy=False), act)
    elif bias is not None and out.size:
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
    if weight.dtype in LOW or output_grad.dtype in LOW:
        # Only x's shape and dtype matter here: a float32 stand-in of no memory, not a widened copy.
        stand_in = np.broadcast_to(np.float32(0), x.shape)
        weight, output_grad = _float32(weight, output_grad)
        grad = conv2d_x_backward(stand_in, weight, output_grad, stride, padding, dilation, groups)
        return to_dtype(grad, x.dtype)
    n, c, h, w = x.shape
    o, cg, kh, kw = weight.shape
    _, _, oh, ow = output_grad.shape
    dtype = work_dtype(weight, output_grad)
    if dtype == np.float32 and max(padding) <= 2:  # the gradient is padded by 2 - padding
        if winograd.applies(x, weight.shape, stride, padding, dilation, groups):
            grad = winograd.x_grad(_nhwc(output_grad), weight, padding).transpose(0, 3, 1, 2)
            return grad.astype(x.dtype, copy=False)
    if grouped.applies(dtype, groups, cg, output_grad.size):
        grad = grouped.x_grad(
            _nhwc(output_grad.astype(dtype, copy=False)), weight, (h, w, c), stride, padding, dilation
        )
        return grad.transpose(0, 3, 1, 2).astype(x.dtype, copy=False)
    grads = _by_group(_nhwc(output_grad.astype(dtype, copy=False)).reshape(n * oh * ow, o), groups)
    # One [O/G, C/G] matrix per tap and group: the product lands as [G, KH*KW, N*L, C/G], so each
    # tap's columns are one contiguous slab for the col2im below (one GEMM into [N*L, taps, C/G]
    # is faster, but the col2im's strided reads cost more than it saves).
    wt = weight.astype(dtype, copy=False).reshape(groups, o // groups, cg, kh * kw).transpose(0, 3, 1, 2)
    cols = blocked.stacked(grads[:, None], np.ascontiguousarray(wt))
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
    if dtype == np.float32 and winograd.applies(inp, (o, c, *kernel), stride, padding, dilation, groups):
        return winograd.weight_grad(_nhwc(inp), _nhwc(out_grad), padding)
    if grouped.applies(dtype, groups, c // groups, out_grad.size):
        x, grads = _nhwc(inp.astype(dtype, copy=False)), _nhwc(out_grad.astype(dtype, copy=False))
        return grouped.weight_grad(x, grads, kernel, c // groups, stride, padding, dilation)
    x_nhwc = inp.astype(dtype, copy=False).transpose(0, 2, 3, 1)
    cols = _columns(x_nhwc, padding, kernel, (oh, ow), stride, dilation, groups)
    grads = _by_group(_nhwc(out_grad.astype(dtype, copy=False)).reshape(n * oh * ow, o), groups)
    # The transposed operands cost nothing: 2-D matmul hands BLAS a transpose flag. With fewer
    # taps than output channels (a first layer: C = 1), OpenBLAS takes the product the other way
    # round in half the time, to the same bits (docs/benchmarks-log.md, burn-ndarray measurements).
    if cols.shape[2] < grads.shape[2]:
        grad = gemm(cols.transpose(0, 2, 1), grads).transpose(0, 2, 1)
    else:
        grad = gemm(grads.transpose(0, 2, 1), cols)
    grad = grad.reshape(o, *kernel, c // groups)
    return np.ascontiguousarray(grad.transpose(0, 3, 1, 2))


def conv2d_weight_backward(
    x: Array, weight: Array, output_grad: Array, stride: Pair, padding: Pair, dilation: Pair, groups: int
) -> Array:
    if x.dtype in LOW or output_grad.dtype in LOW:
        x, output_grad = _float32(x, output_grad)
    grad = weight_grad(x, output_grad, weight.shape[2:], stride, padding, dilation, groups)
    return to_dtype(grad, weight.dtype)


def _pad3d(x: np.ndarray, padding: Triple) -> np.ndarray:
    if not any(padding):
        return x
    return np.pad(x, ((0, 0), (0, 0), *((p, p) for p in padding)))


def _windows3d(
    xp: np.ndarray, kernel: tuple[int, ...], out: tuple[int, ...], stride: Triple, dilation: Triple
) -> np.ndarray:
    """Read-only view ``[N, C, KD, KH, KW, OD, OH, OW]`` of the windows of the padded `xp`."""
    sn, sc, sd, sh, sw = xp.strides
    return as_strided(  # type: ignore[no-any-return]
        xp,
        shape=(*xp.shape[:2], *kernel, *out),
        strides=(sn, sc, sd * dilation[0], sh * dilation[1], sw * dilation[2],
                 sd * stride[0], sh * stride[1], sw * stride[2]),
        writeable=False,
    )


def _out3d(
    size: tuple[int, ...], kernel: tuple[int, ...], stride: Triple, padding: Triple, dilation: Triple
) -> tuple[int, int, int]:
    d, h, w = ((n + 2 * p - dl * (k - 1) - 1) // s + 1
               for n, k, s, p, dl in zip(size, kernel, stride, padding, dilation, strict=True))
    return (d, h, w)


def _conv3d_groups(
    x: np.ndarray, weight: np.ndarray, stride: Triple, padding: Triple, dilation: Triple, groups: int,
    dtype: np.dtype,
) -> np.ndarray:  # fmt: skip
    """``[N, O, *out]``: per group, weight ``[O/G, C/G, *K]`` contracted with the windows."""
    n, c = x.shape[:2]
    o, cg = weight.shape[:2]
    kernel = weight.shape[2:]
    out = _out3d(x.shape[2:], kernel, stride, padding, dilation)
    win = _windows3d(_pad3d(x.astype(dtype, copy=False), padding), kernel, out, stride, dilation)
    w = weight.astype(dtype, copy=False)
    og = o // groups
    result = np.empty((o, n, *out), dtype=dtype)
    for g in range(groups):
        result[g * og : (g + 1) * og] = np.tensordot(
            w[g * og : (g + 1) * og], win[:, g * cg : (g + 1) * cg], axes=([1, 2, 3, 4], [1, 2, 3, 4])
        )
    return result.transpose(1, 0, 2, 3, 4)  # a view: primitives may be views


def _col2im3d(
    grad: np.ndarray, weight: np.ndarray, full: tuple[int, ...], stride: Triple, dilation: Triple,
    groups: int, dtype: np.dtype,
) -> np.ndarray:  # fmt: skip
    """The adjoint of `_conv3d_groups` before cropping: ``[N, C, *full]`` from ``grad [N, O, *out]``."""
    n, o = grad.shape[:2]
    cg = weight.shape[1]
    kd, kh, kw = weight.shape[2:]
    od, oh, ow = grad.shape[2:]
    og = o // groups
    g_ = grad.astype(dtype, copy=False)
    w = weight.astype(dtype, copy=False)
    plane = np.zeros((n, cg * groups, *full), dtype=dtype)
    sd, sh, sw = stride
    for g in range(groups):
        # [C/G, KD, KH, KW, N, OD, OH, OW]: every tap's contribution, one GEMM.
        cols = np.tensordot(w[g * og : (g + 1) * og], g_[:, g * og : (g + 1) * og], axes=([0], [1]))
        target = plane[:, g * cg : (g + 1) * cg]
        for i in range(kd):
            d0 = i * dilation[0]
            for j in range(kh):
                h0 = j * dilation[1]
                for k in range(kw):
                    w0 = k * dilation[2]
                    target[:, :, d0 : d0 + sd * (od - 1) + 1 : sd, h0 : h0 + sh * (oh - 1) + 1 : sh,
                           w0 : w0 + sw * (ow - 1) + 1 : sw] += cols[:, i, j, k].transpose(1, 0, 2, 3, 4)
    return plane


def _weight_grad3d(
    inp: np.ndarray, out_grad: np.ndarray, kernel: tuple[int, ...], stride: Triple, padding: Triple,
    dilation: Triple, groups: int, dtype: np.dtype,
) -> np.ndarray:  # fmt: skip
    """``dW [O, C/G, *K] = sum over n, l of out_grad[n, o, l] * window(inp)[n, c, k, l]``."""
    c = inp.shape[1]
    o = out_grad.shape[1]
    cg, og = c // groups, o // groups
    padded = _pad3d(inp.astype(dtype, copy=False), padding)
    win = _windows3d(padded, kernel, out_grad.shape[2:], stride, dilation)
    dy = out_grad.astype(dtype, copy=False)
    grad = np.empty((o, cg, *kernel), dtype=dtype)
    for g in range(groups):
        grad[g * og : (g + 1) * og] = np.tensordot(
            dy[:, g * og : (g + 1) * og], win[:, g * cg : (g + 1) * cg], axes=([0, 2, 3, 4], [0, 5, 6, 7])
        )
    return grad


def _crop3d(plane: np.ndarray, start: Triple, size: tuple[int, ...]) -> np.ndarray:
    return plane[:, :, start[0] : start[0] + size[0], start[1] : start[1] + size[1],
                 start[2] : start[2] + size[2]]


def conv3d(x: Array, weight: Array, bias: Array | None, stride: Triple, padding: Triple, dilation: Triple,
           groups: int) -> Array:
    dtype = work_dtype(x, weight) if bias is None else work_dtype(x, weight, bias)
    out = _conv3d_groups(x, weight, stride, padding, dilation, groups, dtype)
    if bias is not None:
        out = out + bias.astype(dtype, copy=False).reshape(-1, 1, 1, 1)
    return out.astype(np.result_type(x, weight), copy=False)


def conv3d_x_backward(x: Array, weight: Array, output_grad: Array, stride: Triple, padding: Triple,
                      dilation: Triple, groups: int) -> Array:
    size = x.shape[2:]
    full = tuple(n + 2 * p for n, p in zip(size, padding, strict=True))
    plane = _col2im3d(output_grad, weight, full, stride, dilation, groups, work_dtype(weight, output_grad))
    return _crop3d(plane, padding, size).astype(x.dtype, copy=False)


def conv3d_weight_backward(x: Array, weight: Array, output_grad: Array, stride: Triple, padding: Triple,
                           dilation: Triple, groups: int) -> Array:
    grad = _weight_grad3d(x, output_grad, weight.shape[2:], stride, padding, dilation, groups,
                          work_dtype(x, output_grad))
    return grad.astype(weight.dtype, copy=False)


def conv_transpose3d(x: Array, weight: Array, bias: Array | None, stride: Triple, padding: Triple,
                     padding_out: Triple, dilation: Triple, groups: int) -> Array:
    dtype = work_dtype(x, weight) if bias is None else work_dtype(x, weight, bias)
    kernel = weight.shape[2:]
    full = tuple(
        (n - 1) * s + d * (k - 1) + 1 + po
        for n, k, s, d, po in zip(x.shape[2:], kernel, stride, dilation, padding_out, strict=True)
    )
    plane = _col2im3d(x, weight, full, stride, dilation, groups, dtype)
    out = _crop3d(plane, padding, tuple(f - 2 * p for f, p in zip(full, padding, strict=True)))
    if bias is not None:
        out = out + bias.astype(dtype, copy=False).reshape(-1, 1, 1, 1)
    return out.astype(np.result_type(x, weight), copy=False)


def conv_transpose3d_x_backward(x: Array, weight: Array, output_grad: Array, stride: Triple, padding: Triple,
                                padding_out: Triple, dilation: Triple, groups: int) -> Array:
    # The adjoint of a transposed convolution is the convolution with the same weight.
    dtype = work_dtype(weight, output_grad)
    grad = _conv3d_groups(output_grad, weight, stride, padding, dilation, groups, dtype)
    return _crop3d(grad, (0, 0, 0), x.shape[2:]).astype(x.dtype, copy=False)


def conv_transpose3d_weight_backward(x: Array, weight: Array, output_grad: Array, stride: Triple,
                                     padding: Triple, padding_out: Triple, dilation: Triple,
                                     groups: int) -> Array:
    # The convolution's weight gradient with the roles of input and output gradient swapped.
    grad = _weight_grad3d(output_grad, x, weight.shape[2:], stride, padding, dilation, groups,
                          work_dtype(x, output_grad))
    return grad.astype(weight.dtype, copy=False)


def unfold4d(x: Array, kernel_size: Pair, stride: Pair, padding: Pair, dilation: Pair) -> Array:
    n, c, h, w = x.shape
    out = out_size("unfold4d", (h, w), kernel_size, stride, padding, dilation)
    win = windows(pad(np.asarray(x), padding, 0.0), kernel_size, out, stride, dilation)
    return win.reshape(n, c * kernel_size[0] * kernel_size[1], out[0] * out[1])  # the one copy


def fold4d(
    cols: Array, output_size: Pair, kernel_size: Pair, stride: Pair, padding: Pair, dilation: Pair
) -> Array:
    n, ck, length = cols.shape
    kh, kw = kernel_size
    oh, ow = out_size("fold4d", output_size, kernel_size, stride, padding, dilation)
    if ck % (kh * kw) or length != oh * ow:
        raise ShapeError(
            f"fold4d: columns {(n, ck, length)} do not match kernel {kernel_size} and output size "
            f"{output_size} (expected [N, C * {kh * kw}, {oh * ow}])"
        )
    c = ck // (kh * kw)
    blocks = cols.astype(work_dtype(cols), copy=False).reshape(n, c, kh, kw, oh, ow)
    h, w = output_size
    plane = col2im(blocks, (h + 2 * padding[0], w + 2 * padding[1]), stride, dilation)
    plane = plane[:, :, padding[0] : padding[0] + h, padding[1] : padding[1] + w]
    return plane.astype(cols.dtype, copy=False)


def deform_conv2d(
    self: Any, x: Array, offset: Array, weight: Array, mask: Array | None, bias: Array | None, stride: Pair,
    padding: Pair, dilation: Pair, weight_groups: int, offset_groups: int,
) -> Array:
    n, c_in, h, w = x.shape
    c_out, c_in_wg, kh, kw = weight.shape
    oh, ow = out_size("deform_conv2d", (h, w), (kh, kw), stride, padding, dilation)
    _check("deform_conv2d", self, x, offset, weight, mask, bias, (oh, ow), weight_groups, offset_groups)
    g, k, length = offset_groups, kh * kw, oh * ow
    cpg = c_in // g
    arrays = [a for a in (x, offset, weight, mask, bias) if a is not None]
    dtype = work_dtype(*arrays)

    # Sampling positions [N, G, K, L] per axis: the regular taps plus the offsets.
    pairs = offset.astype(dtype, copy=False).reshape(n, g, k, 2, length)
    grid_h, grid_w = _grid((kh, kw), stride, padding, dilation, (oh, ow))
    pos_h = pairs[:, :, :, 0] + grid_h.astype(dtype)
    pos_w = pairs[:, :, :, 1] + grid_w.astype(dtype)
    low_h, low_w = np.floor(pos_h), np.floor(pos_w)
    frac_h, frac_w = pos_h - low_h, pos_w - low_w

    # Corner indices into the input padded by one zero pixel: clamped into that border, so a
    # corner outside the image reads 0 (torchvision's rule).
    hp, wp = h + 2, w + 2
    rows = [(np.clip(low_h + s, -1.0, float(h)) + 1.0).astype(np.intp) for s in (0.0, 1.0)]
    cols = [(np.clip(low_w + s, -1.0, float(w)) + 1.0).astype(np.intp) for s in (0.0, 1.0)]
    weights_h, weights_w = (1.0 - frac_h, frac_h), (1.0 - frac_w, frac_w)
    padded = np.zeros((n, c_in, hp, wp), dtype)
    padded[:, :, 1 : h + 1, 1 : w + 1] = x
    flat = padded.reshape(n, g, cpg, hp * wp)
    modulation = None if mask is None else mask.astype(dtype, copy=False).reshape(n, g, k, length)
    sampled = np.zeros((n, g, cpg, k * length), dtype)
    for i in (0, 1):
        for j in (0, 1):
            index = (rows[i] * wp + cols[j]).reshape(n, g, 1, k * length)
            read = np.take_along_axis(flat, index, axis=3)  # [N, G, cpg, K * L]
            corner = weights_h[i] * weights_w[j]
            if modulation is not None:
                corner *= modulation
            read *= corner.reshape(n, g, 1, k * length)
            sampled += read

    # im2col layout (c, kh, kw) per weight group, then one batched matmul.
    columns = sampled.reshape(n, weight_groups, c_in_wg * k, length)
    wm = weight.astype(dtype, copy=False).reshape(weight_groups, c_out // weight_groups, c_in_wg * k)
    out = np.matmul(wm, columns).reshape(n, c_out, oh, ow)
    if bias is not None:
        out += bias.astype(dtype, copy=False).reshape(1, c_out, 1, 1)
    return out.astype(np.result_type(x, weight), copy=False)


class ConvOps(XpConvOps):
    """The conv ops of `burn_ndarray.NdArray`."""

    # -- convolution: NHWC, one 2-D GEMM per group (NumPy's stacked matmul is slower here) -----
    _conv2d = conv2d = staticmethod(conv2d)

    def conv2d_fused(
        self, x: Array, weight: Array, bias: Array | None, stride: Pair, padding: Quad, dilation: Pair,
        groups: int, activation: str,
    ) -> Array:
        """`conv2d_sides`: the input read with bounds whatever the padding, the activation applied
        in the output pass (without numba: the convolution, then the activation family's ops)."""
        act = CONV_ACTIVATIONS.index(check_activation("conv2d_fused", activation))
        if act == NONE or kernels.load("conv") is not None:
            return conv2d_sides(x, weight, bias, stride, padding, dilation, groups, act)
        out = conv2d_sides(x, weight, bias, stride, padding, dilation, groups, NONE)
        return conv_activation(self, activation, out)  # type: ignore[arg-type]
    conv2d_x_backward = staticmethod(conv2d_x_backward)
    conv2d_weight_backward = staticmethod(conv2d_weight_backward)
    _conv_weight_grad = staticmethod(weight_grad)
    _conv_gemm = staticmethod(gemm)
    # 3-D: one GEMM per group over a window view.
    conv3d = staticmethod(conv3d)
    conv3d_x_backward = staticmethod(conv3d_x_backward)
    conv3d_weight_backward = staticmethod(conv3d_weight_backward)
    conv_transpose3d = staticmethod(conv_transpose3d)
    conv_transpose3d_x_backward = staticmethod(conv_transpose3d_x_backward)
    conv_transpose3d_weight_backward = staticmethod(conv_transpose3d_weight_backward)
    # -- im2col / col2im and the deformable convolution ---------------------------------------
    unfold4d = staticmethod(unfold4d)
    fold4d = staticmethod(fold4d)
    deform_conv2d = deform_conv2d
