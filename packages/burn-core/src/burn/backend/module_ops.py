"""Module ops of the backend contract (Burn's ``ModuleOps``): convolution, pooling, embedding,
interpolation, and the backward helpers the autodiff decorator calls.

All are defaults written here only in terms of other contract ops (float/int ops and other module
ops), so a backend with only the required ops has them; backends override them to be faster. They
loop over kernel positions (one strided slice each) and never over pixels, batch items or
channels; index and weight tables that depend only on sizes are built on the host (`_tables`).

Layouts are PyTorch's and Burn's: inputs ``[N, C, H, W]`` (``[N, C, L]`` in 1-D), conv weights
``[C_out, C_in / groups, KH, KW]``, transposed-conv weights ``[C_in, C_out / groups, KH, KW]``.
Tuples are ``(height, width)``. Max-pool indices are int primitives holding the flat index
``h * W + w`` into each input plane (as PyTorch returns them).

Preconditions: the Tensor layer (`burn.tensor.module`) checks these before it calls a module op,
so a backend may rely on them and need not check again (a direct caller must honour them):

- inputs have the rank of their layout, weights and bias the shapes that go with it, and both
  channel counts of a convolution are divisible by `groups`;
- `kernel_size`, `stride`, `dilation`, `groups` and adaptive pooling's `output_size` are >= 1;
  `padding` and `padding_out` are >= 0;
- pooling padding is at most half the kernel, ``padding <= kernel_size // 2`` per axis (so every
  window holds at least one input element: a max pool never returns the -inf of its padding);
- transposed convolution: ``padding_out < max(stride, dilation)`` per axis;
- no output is empty: every convolution and pooling output size is >= 1, and adaptive pooling
  gets an input with non-empty spatial dims.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from burn.backend._tables import (
    Kind,
    Table,
    adjoint_table,
    avg_pool_counts,
    float_table,
    int_table,
    max_pool_index,
    nearest_index,
    resample_table,
)
from burn.backend._windows import crop2d, fold, out_size, pad2d, unfold, window_slices
from burn.backend.contract import default
from burn.errors import ShapeError

if TYPE_CHECKING:
    from burn.backend.base import Backend

P = Any
Pair = tuple[int, int]
InterpolateMode = Literal["nearest", "nearest-exact", "bilinear", "bicubic"]
# Each interpolation mode's per-axis resampling table kind (`_tables`).
_INTERPOLATE_KINDS: dict[str, Kind] = {
    "nearest": "nearest", "nearest-exact": "nearest_exact", "bilinear": "linear", "bicubic": "cubic",
}


class ModuleOps:
    """Module ops; every one has a default.

    Each body starts with ``b: Backend = self``: it costs nothing at run time and lets type
    checkers see the other op families (float, int...) that the defaults are written with.
    """

    @default
    def conv1d(
        self, x: P, weight: P, bias: P | None, stride: int, padding: int, dilation: int, groups: int
    ) -> P:
        """``x [N, C_in, L]``, ``weight [C_out, C_in/groups, K]`` -> ``[N, C_out, L_out]``."""
        b: Backend = self  # type: ignore[assignment]
        # A 1-D convolution is a 2-D one over planes of height 1.
        n, c, length = b.float_shape(x)
        c_out, c_in_g, k = b.float_shape(weight)
        out = b.conv2d(
            b.float_reshape(x, (n, c, 1, length)), b.float_reshape(weight, (c_out, c_in_g, 1, k)),
            bias, (1, stride), (0, padding), (1, dilation), groups,
        )
        return b.float_reshape(out, (n, c_out, b.float_shape(out)[3]))

    @default
    def conv2d(
        self, x: P, weight: P, bias: P | None, stride: Pair, padding: Pair, dilation: Pair, groups: int
    ) -> P:
        """``x [N, C_in, H, W]``, ``weight [C_out, C_in/groups, KH, KW]``, ``bias [C_out]`` or None."""
        b: Backend = self  # type: ignore[assignment]
        n, c_in, h, w = b.float_shape(x)
        c_out, c_in_g, kh, kw = b.float_shape(weight)
        _check_groups("conv2d", (n, c_in, h, w), b.float_shape(weight), c_in, c_in_g * groups, c_out, groups)
        oh, ow = out_size("conv2d", (h, w), (kh, kw), stride, padding, dilation)
        # im2col, then one (batched over N and groups) matmul: the K = c_in_g*KH*KW axis is laid
        # out (ci, kh, kw), exactly as the weight flattens.
        cols = unfold(b, pad2d(b, x, padding, 0.0), (kh, kw), stride, dilation, (oh, ow))
        cols = b.float_reshape(cols, (n, groups, c_in_g * kh * kw, oh * ow))
        wm = b.float_reshape(weight, (groups, c_out // groups, c_in_g * kh * kw))
        out = b.float_reshape(b.float_matmul(wm, cols), (n, c_out, oh, ow))
        if bias is not None:
            out = b.float_add(out, b.float_reshape(bias, (1, c_out, 1, 1)))
        return out

    @default
    def conv2d_x_backward(
        self, x: P, weight: P, output_grad: P, stride: Pair, padding: Pair, dilation: Pair, groups: int
    ) -> P:
        """Gradient of conv2d with respect to `x` (same shape as `x`)."""
        b: Backend = self  # type: ignore[assignment]
        # conv_transpose2d is the adjoint of conv2d with the same weight, stride, padding, dilation
        # and groups; padding_out restores the rows/columns that conv2d's floor division dropped.
        h, w = b.float_shape(x)[2:]
        _, _, kh, kw = b.float_shape(weight)
        oh, ow = b.float_shape(output_grad)[2:]
        padding_out = (
            h - ((oh - 1) * stride[0] - 2 * padding[0] + dilation[0] * (kh - 1) + 1),
            w - ((ow - 1) * stride[1] - 2 * padding[1] + dilation[1] * (kw - 1) + 1),
        )
        return b.conv_transpose2d(
            output_grad, weight, None, stride, padding, padding_out, dilation, groups
        )

    @default
    def conv2d_weight_backward(
        self, x: P, weight: P, output_grad: P, stride: Pair, padding: Pair, dilation: Pair, groups: int
    ) -> P:
        """Gradient of conv2d with respect to `weight` (same shape as `weight`)."""
        b: Backend = self  # type: ignore[assignment]
        # dW[co, (ci, kh, kw)] = sum over n and output pixels of dy[n, co, p] * cols[n, (ci, kh, kw), p]:
        # the im2col of conv2d, contracted with dy per group, summed over the batch.
        n = b.float_shape(x)[0]
        c_out, c_in_g, kh, kw = b.float_shape(weight)
        oh, ow = b.float_shape(output_grad)[2:]
        cols = unfold(b, pad2d(b, x, padding, 0.0), (kh, kw), stride, dilation, (oh, ow))
        cols = b.float_reshape(cols, (n, groups, c_in_g * kh * kw, oh * ow))
        dy = b.float_reshape(output_grad, (n, groups, c_out // groups, oh * ow))
        grad = b.float_sum_dim(b.float_matmul(dy, b.float_swap_dims(cols, 2, 3)), 0)
        return b.float_reshape(grad, (c_out, c_in_g, kh, kw))

    @default
    def conv_transpose2d(
        self, x: P, weight: P, bias: P | None, stride: Pair, padding: Pair, padding_out: Pair,
        dilation: Pair, groups: int,
    ) -> P:
        """``x [N, C_in, H, W]``, ``weight [C_in, C_out/groups, KH, KW]`` -> ``[N, C_out, H_out, W_out]``
        with ``H_out = (H-1)*stride - 2*padding + dilation*(KH-1) + padding_out + 1``."""
        b: Backend = self  # type: ignore[assignment]
        n, c_in, h, w = b.float_shape(x)
        c_in_w, c_out_g, kh, kw = b.float_shape(weight)
        _check_groups("conv_transpose2d", (n, c_in, h, w), (c_in_w, c_out_g, kh, kw), c_in, c_in_w, c_in,
                      groups)
        c_in_g, c_out = c_in // groups, c_out_g * groups
        oh = (h - 1) * stride[0] - 2 * padding[0] + dilation[0] * (kh - 1) + padding_out[0] + 1
        ow = (w - 1) * stride[1] - 2 * padding[1] + dilation[1] * (kw - 1) + padding_out[1] + 1
        if oh <= 0 or ow <= 0:
            raise ShapeError(
                f"conv_transpose2d: input {(n, c_in, h, w)} with kernel {(kh, kw)}, stride {stride}, "
                f"padding {padding}, padding_out {padding_out}, dilation {dilation} gives an empty output"
            )
        # One matmul gives every input pixel's contribution per kernel position
        # (cols[n, (co, kh, kw), (h, w)]); col2im then sums them into the output.
        wm = b.float_swap_dims(b.float_reshape(weight, (groups, c_in_g, c_out_g * kh * kw)), 1, 2)
        cols = b.float_matmul(wm, b.float_reshape(x, (n, groups, c_in_g, h * w)))
        cols = b.float_reshape(cols, (n, c_out, kh * kw, h, w))
        everything = (slice(0, n), slice(0, c_out))
        inner = (slice(0, h), slice(0, w))
        parts = [
            b.float_reshape(b.float_slice(cols, (*everything, slice(k, k + 1), *inner)), (n, c_out, h, w))
            for k in range(kh * kw)
        ]
        full = (n, c_out, oh + 2 * padding[0], ow + 2 * padding[1])
        out = crop2d(b, fold(b, parts, full, (kh, kw), stride, dilation, cols), padding, (oh, ow))
        if bias is not None:
            out = b.float_add(out, b.float_reshape(bias, (1, c_out, 1, 1)))
        return out

    @default
    def conv_transpose2d_x_backward(
        self, x: P, weight: P, output_grad: P, stride: Pair, padding: Pair, padding_out: Pair,
        dilation: Pair, groups: int,
    ) -> P:
        b: Backend = self  # type: ignore[assignment]
        # conv2d with the same weight and options is the adjoint of conv_transpose2d (the transposed
        # weight layout [C_in, C_out/groups, KH, KW] is conv2d's layout with the roles swapped).
        h, w = b.float_shape(x)[2:]
        grad = b.conv2d(output_grad, weight, None, stride, padding, dilation, groups)
        # padding_out >= stride adds rows that no input pixel reached; they are cropped here.
        return crop2d(b, grad, (0, 0), (h, w))

    @default
    def conv_transpose2d_weight_backward(
        self, x: P, weight: P, output_grad: P, stride: Pair, padding: Pair, padding_out: Pair,
        dilation: Pair, groups: int,
    ) -> P:
        b: Backend = self  # type: ignore[assignment]
        # dW[ci, (co, kh, kw)] = sum over n and input pixels of x[n, ci, p] * cols[n, (co, kh, kw), p],
        # where cols is the im2col of the zero-padded output_grad read with conv_transpose2d's
        # stride and dilation at each input pixel.
        n, c_in, h, w = b.float_shape(x)
        _, c_out_g, kh, kw = b.float_shape(weight)
        c_in_g = c_in // groups
        cols = unfold(b, pad2d(b, output_grad, padding, 0.0), (kh, kw), stride, dilation, (h, w))
        cols = b.float_reshape(cols, (n, groups, c_out_g * kh * kw, h * w))
        xm = b.float_reshape(x, (n, groups, c_in_g, h * w))
        grad = b.float_sum_dim(b.float_matmul(xm, b.float_swap_dims(cols, 2, 3)), 0)
        return b.float_reshape(grad, (c_in, c_out_g, kh, kw))

    @default
    def max_pool2d(self, x: P, kernel_size: Pair, stride: Pair, padding: Pair, dilation: Pair) -> P:
        """Padding counts as -inf."""
        b: Backend = self  # type: ignore[assignment]
        n, c, h, w = b.float_shape(x)
        out = out_size("max_pool2d", (h, w), kernel_size, stride, padding, dilation)
        cols = unfold(b, pad2d(b, x, padding, float("-inf")), kernel_size, stride, dilation, out)
        return b.float_reshape(b.float_max_dim(cols, 2), (n, c, *out))

    @default
    def max_pool2d_with_indices(
        self, x: P, kernel_size: Pair, stride: Pair, padding: Pair, dilation: Pair
    ) -> tuple[P, P]:
        """Output and int indices (flat ``h * W + w`` into each unpadded input plane)."""
        b: Backend = self  # type: ignore[assignment]
        n, c, h, w = b.float_shape(x)
        out = out_size("max_pool2d_with_indices", (h, w), kernel_size, stride, padding, dilation)
        cols = unfold(b, pad2d(b, x, padding, float("-inf")), kernel_size, stride, dilation, out)
        k = b.float_argmax(cols, 2)  # [N, C, 1, OH, OW]: first maximum in kernel order, as PyTorch
        values = b.float_reshape(b.float_gather(2, cols, k), (n, c, *out))
        # Kernel position -> flat input index, through a (cached, so hashable) host table of the
        # window geometry.
        geometry = (tuple(kernel_size), tuple(stride), tuple(padding), tuple(dilation))
        table = max_pool_index((h, w), *geometry, out)
        table = b.int_expand(
            int_table(b, table.reshape(1, 1, *table.shape), b.float_device(x)), b.float_shape(cols)
        )
        indices = b.int_reshape(b.int_gather(2, table, k), (n, c, *out))
        return values, indices

    @default
    def max_pool2d_with_indices_backward(
        self, x: P, kernel_size: Pair, stride: Pair, padding: Pair, dilation: Pair, output_grad: P, indices: P
    ) -> P:
        """Gradient with respect to `x`: `output_grad` scattered (summed) at `indices`."""
        b: Backend = self  # type: ignore[assignment]
        n, c, h, w = b.float_shape(x)
        oh, ow = b.float_shape(output_grad)[2:]
        grad = b.float_zeros((n, c, h * w), b.float_device(output_grad), b.float_get_dtype(output_grad))
        grad = b.float_scatter_add(
            2, grad, b.int_reshape(indices, (n, c, oh * ow)), b.float_reshape(output_grad, (n, c, oh * ow))
        )
        return b.float_reshape(grad, (n, c, h, w))

    @default
    def avg_pool2d(self, x: P, kernel_size: Pair, stride: Pair, padding: Pair, count_include_pad: bool) -> P:
        b: Backend = self  # type: ignore[assignment]
        h, w = b.float_shape(x)[2:]
        out = out_size("avg_pool2d", (h, w), kernel_size, stride, padding, (1, 1))
        parts = window_slices(b, pad2d(b, x, padding, 0.0), kernel_size, stride, (1, 1), out)
        total = parts[0]
        for part in parts[1:]:
            total = b.float_add(total, part)
        return _divide_by_window(b, total, (h, w), kernel_size, stride, padding, count_include_pad)

    @default
    def avg_pool2d_backward(
        self, x: P, output_grad: P, kernel_size: Pair, stride: Pair, padding: Pair, count_include_pad: bool
    ) -> P:
        b: Backend = self  # type: ignore[assignment]
        # Each window spreads its output gradient evenly over the elements it averaged; fold
        # (col2im) sums the spread over overlapping windows, then the padding is cropped off.
        n, c, h, w = b.float_shape(x)
        share = _divide_by_window(b, output_grad, (h, w), kernel_size, stride, padding, count_include_pad)
        parts = [share] * (kernel_size[0] * kernel_size[1])
        full = (n, c, h + 2 * padding[0], w + 2 * padding[1])
        return crop2d(b, fold(b, parts, full, kernel_size, stride, (1, 1), share), padding, (h, w))

    @default
    def adaptive_avg_pool2d(self, x: P, output_size: Pair) -> P:
        """PyTorch's bins: ``start = floor(i*H/out)``, ``end = ceil((i+1)*H/out)``."""
        b: Backend = self  # type: ignore[assignment]
        # Averages are separable: pool the rows, then the columns (each weight is 1/len of its bin).
        return _adaptive_avg_dim(b, _adaptive_avg_dim(b, x, 2, output_size[0]), 3, output_size[1])

    @default
    def adaptive_avg_pool2d_backward(self, x: P, output_grad: P) -> P:
        b: Backend = self  # type: ignore[assignment]
        h, w = b.float_shape(x)[2:]
        grad = _adaptive_avg_dim_backward(b, output_grad, 3, w)
        return _adaptive_avg_dim_backward(b, grad, 2, h)

    @default
    def max_pool1d(self, x: P, kernel_size: int, stride: int, padding: int, dilation: int) -> P:
        b: Backend = self  # type: ignore[assignment]
        n, c, length = b.float_shape(x)
        out = b.max_pool2d(
            b.float_reshape(x, (n, c, 1, length)), (1, kernel_size), (1, stride), (0, padding), (1, dilation)
        )
        return b.float_reshape(out, (n, c, b.float_shape(out)[3]))

    @default
    def max_pool1d_with_indices(
        self, x: P, kernel_size: int, stride: int, padding: int, dilation: int
    ) -> tuple[P, P]:
        b: Backend = self  # type: ignore[assignment]
        # With planes of height 1 the flat index h * W + w is just the position along L.
        n, c, length = b.float_shape(x)
        values, indices = b.max_pool2d_with_indices(
            b.float_reshape(x, (n, c, 1, length)), (1, kernel_size), (1, stride), (0, padding), (1, dilation)
        )
        out = b.float_shape(values)[3]
        return b.float_reshape(values, (n, c, out)), b.int_reshape(indices, (n, c, out))

    @default
    def avg_pool1d(self, x: P, kernel_size: int, stride: int, padding: int, count_include_pad: bool) -> P:
        b: Backend = self  # type: ignore[assignment]
        n, c, length = b.float_shape(x)
        x2 = b.float_reshape(x, (n, c, 1, length))
        out = b.avg_pool2d(x2, (1, kernel_size), (1, stride), (0, padding), count_include_pad)
        return b.float_reshape(out, (n, c, b.float_shape(out)[3]))

    @default
    def adaptive_avg_pool1d(self, x: P, output_size: int) -> P:
        b: Backend = self  # type: ignore[assignment]
        return _adaptive_avg_dim(b, x, 2, output_size)

    @default
    def embedding(self, weights: P, indices: P) -> P:
        """``weights [V, D]``, int ``indices [...]`` -> ``[..., D]``."""
        b: Backend = self  # type: ignore[assignment]
        index_shape = b.int_shape(indices)
        rows = b.float_select(weights, 0, b.int_reshape(indices, (-1,)))
        return b.float_reshape(rows, (*index_shape, b.float_shape(weights)[1]))

    @default
    def embedding_backward(self, weights: P, output_grad: P, indices: P) -> P:
        """Gradient with respect to `weights`: rows of `output_grad` summed at `indices`."""
        b: Backend = self  # type: ignore[assignment]
        vocab, dim = b.float_shape(weights)
        grad = b.float_zeros((vocab, dim), b.float_device(output_grad), b.float_get_dtype(output_grad))
        return b.float_select_add(
            grad, 0, b.int_reshape(indices, (-1,)), b.float_reshape(output_grad, (-1, dim))
        )

    @default
    def interpolate(self, x: P, output_size: Pair, mode: InterpolateMode, align_corners: bool) -> P:
        """Resize ``[N, C, H, W]`` to `output_size`. Nearest uses ``floor(i * H_in / H_out)``
        (PyTorch's ``nearest``), nearest-exact ``floor((i + 0.5) * H_in / H_out)`` (PyTorch's
        ``nearest-exact``); bilinear and bicubic (Keys' kernel with ``a = -0.75``, replicated
        borders, as PyTorch) follow PyTorch's ``align_corners`` semantics.

        As in PyTorch, the nearest scale ``H_in / H_out`` is a float32, which moves a few indices
        for some sizes (26 -> 22 picks row 12 for output 11, not 13)."""
        b: Backend = self  # type: ignore[assignment]
        kind = _INTERPOLATE_KINDS.get(mode)
        if kind is None:
            expected = tuple(_INTERPOLATE_KINDS)
            raise ValueError(f"interpolate: unknown mode {mode!r}; expected one of {expected}")
        h, w = b.float_shape(x)[2:]
        axes = ((2, h, output_size[0]), (3, w, output_size[1]))
        if kind == "nearest":
            # One source row/column per output one: a select per resized axis.
            device = b.float_device(x)
            for dim, size, out in axes:
                if out != size:
                    x = b.float_select(x, dim, int_table(b, nearest_index(size, out), device))
            return x
        # Separable: blend source rows, then source columns (equal sizes are the identity under
        # both corner conventions, for every kind).
        for dim, size, out in axes:
            if out != size:
                x = _resample(b, x, dim, resample_table(kind, size, out, align_corners))
        return x

    @default
    def interpolate_backward(
        self, x: P, output_grad: P, output_size: Pair, mode: InterpolateMode, align_corners: bool
    ) -> P:
        b: Backend = self  # type: ignore[assignment]
        kind = _INTERPOLATE_KINDS.get(mode)
        if kind is None:
            raise ValueError(
                f"interpolate_backward: unknown mode {mode!r}; expected one of {tuple(_INTERPOLATE_KINDS)}"
            )
        h, w = b.float_shape(x)[2:]
        corners = align_corners and kind in ("linear", "cubic")
        # Transposed tables gather every output a source fed: a select and a sum, no scatter-add.
        grad = output_grad
        for dim, size, out in ((3, w, output_size[1]), (2, h, output_size[0])):
            if out != size:
                grad = _resample(b, grad, dim, adjoint_table(kind, size, out, corners))
        return grad


def _check_groups(op: str, x_shape: tuple[int, ...], w_shape: tuple[int, ...], channels: int,
                  expected: int, divisible: int, groups: int) -> None:
    if groups < 1 or channels != expected or divisible % groups or channels % groups:
        raise ShapeError(
            f"{op}: input {x_shape} and weight {w_shape} do not match with groups={groups}"
        )


def _divide_by_window(b: Backend, t: P, size: Pair, kernel: Pair, stride: Pair, padding: Pair,
                      count_include_pad: bool) -> P:
    """`t` ``[N, C, OH, OW]`` divided by each window's element count (padding counted or not)."""
    if count_include_pad or (padding[0] == 0 and padding[1] == 0):
        return b.float_div_scalar(t, float(kernel[0] * kernel[1]))
    counts = avg_pool_counts(size, tuple(kernel), tuple(stride), tuple(padding), b.float_shape(t)[2:])
    counts_p = float_table(b, counts.reshape(1, 1, *counts.shape), b.float_device(t), b.float_get_dtype(t))
    return b.float_div(t, counts_p)


def _resample(b: Backend, x: P, dim: int, table: Table) -> P:
    """Apply a resampling `table` along `dim`."""
    index, weight, width = table
    shape = b.float_shape(x)
    head, tail = shape[:dim], shape[dim + 1:]
    rows = weight.shape[0]
    device, dtype = b.float_device(x), b.float_get_dtype(x)
    column_shape = (1,) * dim + (rows,) + (1,) * len(tail)
    if width <= _NARROW:
        # Narrow tables (bilinear: 2 taps): one select per tap, weighted and added. Cheaper than a
        # reduction over a tiny axis, which is slow on many backends.
        taps = index.reshape(rows, width)
        out = None
        for k in range(width):
            term = b.float_mul(
                b.float_select(x, dim, int_table(b, taps[:, k], device)),
                float_table(b, weight[:, k].reshape(column_shape), device, dtype),
            )
            out = term if out is None else b.float_add(out, term)
        return out
    # Wide tables (adaptive bins): one select of every tap, one multiply, one sum.
    picked = b.float_reshape(b.float_select(x, dim, int_table(b, index, device)), (*head, rows, width, *tail))
    weight_p = float_table(b, weight.reshape((1,) * dim + (rows, width) + (1,) * len(tail)), device, dtype)
    return b.float_reshape(b.float_sum_dim(b.float_mul(picked, weight_p), dim + 1), (*head, rows, *tail))


_NARROW = 4  # tables up to this width are applied tap by tap (see `_resample`)


def _adaptive_avg_dim(b: Backend, x: P, dim: int, out: int) -> P:
    """PyTorch's adaptive average pooling of `x` along `dim` to `out` bins."""
    shape = b.float_shape(x)
    size = shape[dim]
    if out == size:
        return x
    if size % out == 0:
        # Equal bins: a reshape and a sum, no gather.
        head, tail, width = shape[:dim], shape[dim + 1:], size // out
        sums = b.float_sum_dim(b.float_reshape(x, (*head, out, width, *tail)), dim + 1)
        return b.float_reshape(b.float_div_scalar(sums, float(width)), (*head, out, *tail))
    return _resample(b, x, dim, resample_table("adaptive", size, out))


def _adaptive_avg_dim_backward(b: Backend, grad: P, dim: int, size: int) -> P:
    """The adjoint of `_adaptive_avg_dim`: `grad` spread back over `size` samples along `dim`."""
    shape = b.float_shape(grad)
    out = shape[dim]
    if out == size:
        return grad
    if size % out == 0:
        head, tail, width = shape[:dim], shape[dim + 1:], size // out
        spread = b.float_expand(b.float_reshape(grad, (*head, out, 1, *tail)), (*head, out, width, *tail))
        return b.float_div_scalar(b.float_reshape(spread, (*head, size, *tail)), float(width))
    return _resample(b, grad, dim, adjoint_table("adaptive", size, out))
