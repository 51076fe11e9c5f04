"""Module ops of the backend contract in 3-D, and the 1-D/3-D transposed convolutions.

Every op here is a `@default` written only with other contract ops, like those of
`burn.backend.module_ops`: a backend with the required ops has them all, and overrides one only to
be faster. The windows are handled by rank-generic helpers (``*_nd`` below): each kernel position
is one strided slice of the padded input, so the defaults loop over kernel positions only.

Layouts are PyTorch's and Burn's: inputs ``[N, C, D, H, W]``, conv weights
``[C_out, C_in / groups, KD, KH, KW]``, transposed-conv weights ``[C_in, C_out / groups, KD, KH, KW]``
(``[C_in, C_out / groups, K]`` in 1-D). Triples are ``(depth, height, width)``. Max-pool indices
are int primitives holding the flat index ``d * H * W + h * W + w`` into each input volume.

Preconditions (checked by `burn.tensor.module`, not here): pool padding at most half the kernel
on each axis; ``padding_out < max(stride, dilation)`` on each axis of a transposed convolution;
groups dividing both channel counts.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from burn.backend._tables import _first_valid, float_table, int_table
from burn.backend.contract import default
from burn.backend.module_ops import _adaptive_avg_dim, _adaptive_avg_dim_backward, _check_groups
from burn.errors import ShapeError

if TYPE_CHECKING:
    from burn.backend.base import Backend

P = Any
Triple = tuple[int, int, int]
Dims = tuple[int, ...]

__all__ = ["ModuleOps3d", "crop_nd", "out_size_nd", "pad_nd"]


# -- rank-generic window helpers ---------------------------------------------------------------
def out_size_nd(op: str, size: Dims, kernel: Dims, stride: Dims, padding: Dims, dilation: Dims) -> Dims:
    """Output size of a strided window op (floor mode); errors name the op and the sizes."""
    out = tuple(
        (n + 2 * p - d * (k - 1) - 1) // s + 1
        for n, k, s, p, d in zip(size, kernel, stride, padding, dilation, strict=True)
    )
    if any(o <= 0 for o in out):
        raise ShapeError(
            f"{op}: input size {size} with kernel {kernel}, stride {stride}, padding {padding}, "
            f"dilation {dilation} gives an empty output {out}"
        )
    return out


def pad_nd(b: Backend, x: P, low: Dims, high: Dims, value: float) -> P:
    """`x` ``[N, C, *spatial]`` with ``low[i]`` / ``high[i]`` elements of `value` before / after
    spatial axis ``i`` (x itself when there is no padding)."""
    if not any(low) and not any(high):
        return x
    n, c, *size = b.float_shape(x)
    full = (n, c, *(s + lo + hi for s, lo, hi in zip(size, low, high, strict=True)))
    buf = b.float_full(full, value, b.float_device(x), b.float_get_dtype(x))
    inner = tuple(slice(lo, lo + s) for s, lo in zip(size, low, strict=True))
    return b.float_slice_assign(buf, (slice(0, n), slice(0, c), *inner), x)


def crop_nd(b: Backend, x: P, start: Dims, size: Dims) -> P:
    """The ``size`` region of `x` ``[N, C, *spatial]`` starting at `start` (x when it is all of it)."""
    n, c, *whole = b.float_shape(x)
    if not any(start) and tuple(size) == tuple(whole):
        return x
    inner = tuple(slice(s0, s0 + s) for s0, s in zip(start, size, strict=True))
    return b.float_slice(x, (slice(0, n), slice(0, c), *inner))


def _regions(
    n: int, c: int, kernel: Dims, stride: Dims, dilation: Dims, out: Dims
) -> list[tuple[slice, ...]]:
    """The strided region read by each kernel position (row-major over the kernel axes)."""
    axes = [
        [slice(i * d, i * d + (o - 1) * s + 1, s) for i in range(k)]
        for k, s, d, o in zip(kernel, stride, dilation, out, strict=True)
    ]
    return [(slice(0, n), slice(0, c), *pick) for pick in itertools.product(*axes)]


def unfold_nd(b: Backend, xp: P, kernel: Dims, stride: Dims, dilation: Dims, out: Dims) -> P:
    """im2col: ``[N, C, prod(kernel), *out]`` with every window of the (already padded) `xp`."""
    n, c = b.float_shape(xp)[:2]
    shape = (n, c, 1, *out)
    regions = _regions(n, c, kernel, stride, dilation, out)
    parts = [b.float_reshape(b.float_slice(xp, r), shape) for r in regions]
    return parts[0] if len(parts) == 1 else b.float_cat(parts, 2)


def fold_nd(b: Backend, parts: Sequence[P], full: Dims, kernel: Dims, stride: Dims, dilation: Dims,
            like: P) -> P:
    """col2im, the adjoint of the window slices: a zeros `full` buffer (dtype and device of `like`)
    with each ``[N, C, *out]`` part summed into its kernel position's strided region."""
    n, c, *_ = full
    out = tuple(b.float_shape(parts[0])[2:])
    buf = b.float_zeros(tuple(full), b.float_device(like), b.float_get_dtype(like))
    # Regions that overlap no earlier one (e.g. stride >= kernel) are assigned without the
    # read-add: tracked on a host grid of the buffer's spatial shape.
    touched = np.zeros(tuple(full[2:]), dtype=bool)
    for part, region in zip(parts, _regions(n, c, kernel, stride, dilation, out), strict=True):
        spatial = region[2:]
        if touched[spatial].any():
            part = b.float_add(b.float_slice(buf, region), part)
        touched[spatial] = True
        buf = b.float_slice_assign(buf, region, part)
    return buf


def _bias(b: Backend, out: P, bias: P | None) -> P:
    if bias is None:
        return out
    shape = b.float_shape(out)
    return b.float_add(out, b.float_reshape(bias, (1, shape[1], *(1,) * (len(shape) - 2))))


# -- rank-generic convolutions -----------------------------------------------------------------
def conv_nd(b: Backend, op: str, x: P, weight: P, bias: P | None, stride: Dims, padding: Dims,
            dilation: Dims, groups: int) -> P:
    """Convolution of any spatial rank: im2col, then one (batched over N and groups) matmul."""
    n, c_in, *size = b.float_shape(x)
    c_out, c_in_g, *kernel = b.float_shape(weight)
    _check_groups(op, tuple(b.float_shape(x)), tuple(b.float_shape(weight)), c_in, c_in_g * groups, c_out,
                  groups)
    out = out_size_nd(op, tuple(size), tuple(kernel), stride, padding, dilation)
    taps = c_in_g * math.prod(kernel)
    # The K axis of the columns is laid out (ci, *kernel), exactly as the weight flattens.
    cols = unfold_nd(b, pad_nd(b, x, padding, padding, 0.0), tuple(kernel), stride, dilation, out)
    cols = b.float_reshape(cols, (n, groups, taps, math.prod(out)))
    wm = b.float_reshape(weight, (groups, c_out // groups, taps))
    return _bias(b, b.float_reshape(b.float_matmul(wm, cols), (n, c_out, *out)), bias)


def conv_nd_x_backward(b: Backend, x: P, weight: P, output_grad: P, stride: Dims, padding: Dims,
                       dilation: Dims, groups: int) -> P:
    """Gradient of `conv_nd` with respect to `x`: the transposed convolution with the same weight,
    with ``padding_out`` restoring what the forward's floor division dropped."""
    size = b.float_shape(x)[2:]
    kernel = b.float_shape(weight)[2:]
    out = b.float_shape(output_grad)[2:]
    padding_out = tuple(
        n - ((o - 1) * s - 2 * p + d * (k - 1) + 1)
        for n, o, k, s, p, d in zip(size, out, kernel, stride, padding, dilation, strict=True)
    )
    return conv_transpose_nd(b, "conv_x_backward", output_grad, weight, None, stride, padding, padding_out,
                             dilation, groups)


def conv_nd_weight_backward(b: Backend, x: P, weight: P, output_grad: P, stride: Dims, padding: Dims,
                            dilation: Dims, groups: int) -> P:
    """Gradient of `conv_nd` with respect to `weight`: output gradient times the forward's
    columns, per group, summed over the batch."""
    n = b.float_shape(x)[0]
    c_out, c_in_g, *kernel = b.float_shape(weight)
    out = tuple(b.float_shape(output_grad)[2:])
    taps = c_in_g * math.prod(kernel)
    cols = unfold_nd(b, pad_nd(b, x, padding, padding, 0.0), tuple(kernel), stride, dilation, out)
    cols = b.float_reshape(cols, (n, groups, taps, math.prod(out)))
    dy = b.float_reshape(output_grad, (n, groups, c_out // groups, math.prod(out)))
    grad = b.float_sum_dim(b.float_matmul(dy, b.float_swap_dims(cols, 2, 3)), 0)
    return b.float_reshape(grad, (c_out, c_in_g, *kernel))


def conv_transpose_nd(b: Backend, op: str, x: P, weight: P, bias: P | None, stride: Dims, padding: Dims,
                      padding_out: Dims, dilation: Dims, groups: int) -> P:
    """Transposed convolution of any spatial rank: one matmul gives every input element's
    contribution per kernel position, col2im sums them into the output."""
    n, c_in, *size = b.float_shape(x)
    c_in_w, c_out_g, *kernel = b.float_shape(weight)
    _check_groups(op, tuple(b.float_shape(x)), tuple(b.float_shape(weight)), c_in, c_in_w, c_in, groups)
    c_in_g, c_out = c_in // groups, c_out_g * groups
    out = tuple(
        (h - 1) * s - 2 * p + d * (k - 1) + po + 1
        for h, k, s, p, po, d in zip(size, kernel, stride, padding, padding_out, dilation, strict=True)
    )
    if any(o <= 0 for o in out):
        raise ShapeError(
            f"{op}: input {(n, c_in, *size)} with kernel {tuple(kernel)}, stride {stride}, padding "
            f"{padding}, padding_out {padding_out}, dilation {dilation} gives an empty output {out}"
        )
    taps = math.prod(kernel)
    wm = b.float_swap_dims(b.float_reshape(weight, (groups, c_in_g, c_out_g * taps)), 1, 2)
    cols = b.float_matmul(wm, b.float_reshape(x, (n, groups, c_in_g, math.prod(size))))
    cols = b.float_reshape(cols, (n, c_out, taps, *size))
    head = (slice(0, n), slice(0, c_out))
    inner = tuple(slice(0, s) for s in size)
    parts = [
        b.float_reshape(b.float_slice(cols, (*head, slice(k, k + 1), *inner)), (n, c_out, *size))
        for k in range(taps)
    ]
    full = (n, c_out, *(o + 2 * p for o, p in zip(out, padding, strict=True)))
    folded = fold_nd(b, parts, full, tuple(kernel), stride, dilation, cols)
    return _bias(b, crop_nd(b, folded, padding, out), bias)


def conv_transpose_nd_x_backward(b: Backend, op: str, x: P, weight: P, output_grad: P, stride: Dims,
                                 padding: Dims, dilation: Dims, groups: int) -> P:
    """Gradient of `conv_transpose_nd` with respect to `x`: the convolution with the same weight
    (rows that ``padding_out >= stride`` added, which no input reached, are cropped)."""
    grad = conv_nd(b, op, output_grad, weight, None, stride, padding, dilation, groups)
    size = tuple(b.float_shape(x)[2:])
    return crop_nd(b, grad, (0,) * len(size), size)


def conv_transpose_nd_weight_backward(b: Backend, x: P, weight: P, output_grad: P, stride: Dims,
                                      padding: Dims, dilation: Dims, groups: int) -> P:
    """Gradient of `conv_transpose_nd` with respect to `weight`: the input times the im2col of the
    zero-padded output gradient read at each input element, per group, summed over the batch."""
    n, c_in, *size = b.float_shape(x)
    _, c_out_g, *kernel = b.float_shape(weight)
    c_in_g, length = c_in // groups, math.prod(size)
    cols = unfold_nd(b, pad_nd(b, output_grad, padding, padding, 0.0), tuple(kernel), stride, dilation,
                     tuple(size))
    cols = b.float_reshape(cols, (n, groups, c_out_g * math.prod(kernel), length))
    xm = b.float_reshape(x, (n, groups, c_in_g, length))
    grad = b.float_sum_dim(b.float_matmul(xm, b.float_swap_dims(cols, 2, 3)), 0)
    return b.float_reshape(grad, (c_in, c_out_g, *kernel))


# -- rank-generic pooling ----------------------------------------------------------------------
@functools.lru_cache(maxsize=256)
def max_pool_index_nd(size: Dims, kernel: Dims, stride: Dims, padding: Dims, dilation: Dims,
                      out: Dims) -> np.ndarray:
    """``[prod(kernel), *out]``: for each kernel position and output element, the flat index (row
    major over `size`) of the input element it reads. Positions in the padding name the window's
    first unpadded element along that axis (what PyTorch returns for an all -inf window)."""
    rank = len(size)
    flat = np.zeros((1,) * (2 * rank), dtype=np.int64)
    step = 1
    for axis in reversed(range(rank)):
        n, k, s, p, d, o = size[axis], kernel[axis], stride[axis], padding[axis], dilation[axis], out[axis]
        pos = _first_valid(np.arange(k)[:, None] * d + np.arange(o)[None, :] * s - p, n)  # [K, O]
        shape = [1] * (2 * rank)
        shape[axis], shape[rank + axis] = k, o
        flat = flat + pos.reshape(shape) * step
        step *= n
    table = flat.reshape(math.prod(kernel), *out)
    table.setflags(write=False)
    return table


def _window_counts(size: Dims, kernel: Dims, stride: Dims, padding: Dims, out: Dims) -> np.ndarray:
    """``[*out]``: how many unpadded input elements each pooling window covers."""
    counts = np.ones((), dtype=np.float64)
    for n, k, s, p, o in zip(size, kernel, stride, padding, out, strict=True):
        start = np.arange(o) * s - p
        axis = (np.minimum(start + k, n) - np.maximum(start, 0)).astype(np.float64)
        counts = np.multiply.outer(counts, axis)
    return counts


def _divide_by_window(b: Backend, t: P, size: Dims, kernel: Dims, stride: Dims, padding: Dims,
                      count_include_pad: bool) -> P:
    """`t` ``[N, C, *out]`` divided by each window's element count (padding counted or not)."""
    if count_include_pad or not any(padding):
        return b.float_div_scalar(t, float(math.prod(kernel)))
    out = tuple(b.float_shape(t)[2:])
    counts = _window_counts(size, kernel, stride, padding, out)
    table = float_table(b, counts.reshape(1, 1, *out), b.float_device(t), b.float_get_dtype(t))
    return b.float_div(t, table)


def max_pool_nd(b: Backend, op: str, x: P, kernel: Dims, stride: Dims, padding: Dims, dilation: Dims) -> P:
    """Max pooling of any spatial rank; padding counts as -inf."""
    n, c, *size = b.float_shape(x)
    out = out_size_nd(op, tuple(size), kernel, stride, padding, dilation)
    cols = unfold_nd(b, pad_nd(b, x, padding, padding, float("-inf")), kernel, stride, dilation, out)
    return b.float_reshape(b.float_max_dim(cols, 2), (n, c, *out))


def max_pool_nd_with_indices(b: Backend, op: str, x: P, kernel: Dims, stride: Dims, padding: Dims,
                             dilation: Dims) -> tuple[P, P]:
    """Values and int flat indices (row major in each unpadded input volume) of the first maximum."""
    n, c, *size = b.float_shape(x)
    out = out_size_nd(op, tuple(size), kernel, stride, padding, dilation)
    cols = unfold_nd(b, pad_nd(b, x, padding, padding, float("-inf")), kernel, stride, dilation, out)
    k = b.float_argmax(cols, 2)  # [N, C, 1, *out]: the first maximum in kernel order, as PyTorch
    values = b.float_reshape(b.float_gather(2, cols, k), (n, c, *out))
    table = max_pool_index_nd(tuple(size), tuple(kernel), tuple(stride), tuple(padding), tuple(dilation), out)
    table_p = b.int_expand(int_table(b, table.reshape(1, 1, *table.shape), b.float_device(x)),
                           b.float_shape(cols))
    return values, b.int_reshape(b.int_gather(2, table_p, k), (n, c, *out))


def max_pool_nd_backward(b: Backend, x: P, output_grad: P, indices: P) -> P:
    """`output_grad` scattered (summed) at the flat `indices` of each input volume."""
    n, c, *size = b.float_shape(x)
    length = math.prod(b.float_shape(output_grad)[2:])
    grad = b.float_zeros((n, c, math.prod(size)), b.float_device(output_grad), b.float_get_dtype(output_grad))
    grad = b.float_scatter_add(
        2, grad, b.int_reshape(indices, (n, c, length)), b.float_reshape(output_grad, (n, c, length))
    )
    return b.float_reshape(grad, (n, c, *size))


def avg_pool_nd(b: Backend, op: str, x: P, kernel: Dims, stride: Dims, padding: Dims,
                count_include_pad: bool) -> P:
    """Average pooling of any spatial rank (zero padding, counted in the divisor or not)."""
    n, c, *size = b.float_shape(x)
    ones = (1,) * len(size)
    out = out_size_nd(op, tuple(size), kernel, stride, padding, ones)
    xp = pad_nd(b, x, padding, padding, 0.0)
    parts = [b.float_slice(xp, r) for r in _regions(n, c, kernel, stride, ones, out)]
    total = parts[0]
    for part in parts[1:]:
        total = b.float_add(total, part)
    return _divide_by_window(b, total, tuple(size), kernel, stride, padding, count_include_pad)


def avg_pool_nd_backward(b: Backend, x: P, output_grad: P, kernel: Dims, stride: Dims, padding: Dims,
                         count_include_pad: bool) -> P:
    """Each window spreads its gradient evenly over what it averaged; col2im sums the spread."""
    n, c, *size = b.float_shape(x)
    share = _divide_by_window(b, output_grad, tuple(size), kernel, stride, padding, count_include_pad)
    full = (n, c, *(s + 2 * p for s, p in zip(size, padding, strict=True)))
    folded = fold_nd(b, [share] * math.prod(kernel), full, kernel, stride, (1,) * len(size), share)
    return crop_nd(b, folded, padding, tuple(size))


class ModuleOps3d:
    """3-D convolution and pooling, and 1-D/3-D transposed convolution; every one has a default.

    Each body starts with ``b: Backend = self`` (as in `burn.backend.module_ops.ModuleOps`).
    """

    @default
    def conv3d(
        self, x: P, weight: P, bias: P | None, stride: Triple, padding: Triple, dilation: Triple, groups: int
    ) -> P:
        """``x [N, C_in, D, H, W]``, ``weight [C_out, C_in/groups, KD, KH, KW]``, ``bias [C_out]`` or
        None -> ``[N, C_out, D_out, H_out, W_out]`` with
        ``D_out = (D + 2*padding - dilation*(KD-1) - 1) // stride + 1`` (same per axis)."""
        b: Backend = self  # type: ignore[assignment]
        return conv_nd(b, "conv3d", x, weight, bias, stride, padding, dilation, groups)

    @default
    def conv3d_x_backward(
        self, x: P, weight: P, output_grad: P, stride: Triple, padding: Triple, dilation: Triple, groups: int
    ) -> P:
        """Gradient of conv3d with respect to `x` (same shape as `x`)."""
        b: Backend = self  # type: ignore[assignment]
        return conv_nd_x_backward(b, x, weight, output_grad, stride, padding, dilation, groups)

    @default
    def conv3d_weight_backward(
        self, x: P, weight: P, output_grad: P, stride: Triple, padding: Triple, dilation: Triple, groups: int
    ) -> P:
        """Gradient of conv3d with respect to `weight` (same shape as `weight`)."""
        b: Backend = self  # type: ignore[assignment]
        return conv_nd_weight_backward(b, x, weight, output_grad, stride, padding, dilation, groups)

    @default
    def conv_transpose1d(
        self, x: P, weight: P, bias: P | None, stride: int, padding: int, padding_out: int, dilation: int,
        groups: int,
    ) -> P:
        """``x [N, C_in, L]``, ``weight [C_in, C_out/groups, K]`` -> ``[N, C_out, L_out]`` with
        ``L_out = (L-1)*stride - 2*padding + dilation*(K-1) + padding_out + 1``; requires
        ``padding_out < max(stride, dilation)``."""
        b: Backend = self  # type: ignore[assignment]
        # A 1-D transposed convolution is a 2-D one over planes of height 1.
        n, c, length = b.float_shape(x)
        c_in, c_out_g, k = b.float_shape(weight)
        out = b.conv_transpose2d(
            b.float_reshape(x, (n, c, 1, length)), b.float_reshape(weight, (c_in, c_out_g, 1, k)), bias,
            (1, stride), (0, padding), (0, padding_out), (1, dilation), groups,
        )
        return b.float_reshape(out, (n, c_out_g * groups, b.float_shape(out)[3]))

    @default
    def conv_transpose3d(
        self, x: P, weight: P, bias: P | None, stride: Triple, padding: Triple, padding_out: Triple,
        dilation: Triple, groups: int,
    ) -> P:
        """``x [N, C_in, D, H, W]``, ``weight [C_in, C_out/groups, KD, KH, KW]`` ->
        ``[N, C_out, D_out, H_out, W_out]`` with
        ``D_out = (D-1)*stride - 2*padding + dilation*(KD-1) + padding_out + 1`` (same per axis);
        requires ``padding_out < max(stride, dilation)`` on each axis."""
        b: Backend = self  # type: ignore[assignment]
        return conv_transpose_nd(b, "conv_transpose3d", x, weight, bias, stride, padding, padding_out,
                                 dilation, groups)

    @default
    def conv_transpose3d_x_backward(
        self, x: P, weight: P, output_grad: P, stride: Triple, padding: Triple, padding_out: Triple,
        dilation: Triple, groups: int,
    ) -> P:
        """Gradient of conv_transpose3d with respect to `x` (same shape as `x`)."""
        b: Backend = self  # type: ignore[assignment]
        return conv_transpose_nd_x_backward(b, "conv_transpose3d_x_backward", x, weight, output_grad, stride,
                                            padding, dilation, groups)

    @default
    def conv_transpose3d_weight_backward(
        self, x: P, weight: P, output_grad: P, stride: Triple, padding: Triple, padding_out: Triple,
        dilation: Triple, groups: int,
    ) -> P:
        """Gradient of conv_transpose3d with respect to `weight` (same shape as `weight`)."""
        b: Backend = self  # type: ignore[assignment]
        return conv_transpose_nd_weight_backward(b, x, weight, output_grad, stride, padding, dilation, groups)

    @default
    def max_pool3d(self, x: P, kernel_size: Triple, stride: Triple, padding: Triple, dilation: Triple) -> P:
        """Max pooling of ``[N, C, D, H, W]`` (floor mode); padding counts as -inf and is at most
        half the kernel on each axis."""
        b: Backend = self  # type: ignore[assignment]
        return max_pool_nd(b, "max_pool3d", x, kernel_size, stride, padding, dilation)

    @default
    def max_pool3d_with_indices(
        self, x: P, kernel_size: Triple, stride: Triple, padding: Triple, dilation: Triple
    ) -> tuple[P, P]:
        """Output and int indices (flat ``d * H * W + h * W + w`` into each unpadded input volume)."""
        b: Backend = self  # type: ignore[assignment]
        op = "max_pool3d_with_indices"
        return max_pool_nd_with_indices(b, op, x, kernel_size, stride, padding, dilation)

    @default
    def max_pool3d_with_indices_backward(
        self, x: P, kernel_size: Triple, stride: Triple, padding: Triple, dilation: Triple, output_grad: P,
        indices: P,
    ) -> P:
        """Gradient with respect to `x`: `output_grad` scattered (summed) at `indices`."""
        b: Backend = self  # type: ignore[assignment]
        return max_pool_nd_backward(b, x, output_grad, indices)

    @default
    def avg_pool3d(
        self, x: P, kernel_size: Triple, stride: Triple, padding: Triple, count_include_pad: bool
    ) -> P:
        """Average pooling of ``[N, C, D, H, W]`` (floor mode); with `count_include_pad` the zero
        padding counts in the divisor. Padding is at most half the kernel on each axis."""
        b: Backend = self  # type: ignore[assignment]
        return avg_pool_nd(b, "avg_pool3d", x, kernel_size, stride, padding, count_include_pad)

    @default
    def avg_pool3d_backward(
        self, x: P, output_grad: P, kernel_size: Triple, stride: Triple, padding: Triple,
        count_include_pad: bool,
    ) -> P:
        """Gradient of avg_pool3d with respect to `x`."""
        b: Backend = self  # type: ignore[assignment]
        return avg_pool_nd_backward(b, x, output_grad, kernel_size, stride, padding, count_include_pad)

    @default
    def adaptive_avg_pool3d(self, x: P, output_size: Triple) -> P:
        """PyTorch's bins per axis: ``start = floor(i*D/out)``, ``end = ceil((i+1)*D/out)``."""
        b: Backend = self  # type: ignore[assignment]
        # Averages are separable: pool depth, then rows, then columns.
        for dim, out in zip((2, 3, 4), output_size, strict=True):
            x = _adaptive_avg_dim(b, x, dim, out)
        return x

    @default
    def adaptive_avg_pool3d_backward(self, x: P, output_grad: P) -> P:
        """Gradient of adaptive_avg_pool3d with respect to `x`."""
        b: Backend = self  # type: ignore[assignment]
        size = b.float_shape(x)[2:]
        grad = output_grad
        for dim in (4, 3, 2):
            grad = _adaptive_avg_dim_backward(b, grad, dim, size[dim - 2])
        return grad
