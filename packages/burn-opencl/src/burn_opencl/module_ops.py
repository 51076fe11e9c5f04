"""Module and activation ops: convolutions through im2col + GEMM, direct pooling kernels, and
separable linear maps (interpolation, adaptive pooling) applied as two small matrix products."""

from __future__ import annotations

from typing import Any

import numpy as np

from burn.backend.ops.sampling import SamplingOps as _CoreSamplingOps
from burn.errors import ShapeError
from burn.foundations.dtype import DType
from burn_opencl import layout
from burn_opencl.dtypes import wider
from burn_opencl.kernels import elementwise as ew
from burn_opencl.kernels import index as ix
from burn_opencl.kernels import matmul as mm
from burn_opencl.kernels import nn
from burn_opencl.kernels import reduce as rd
from burn_opencl.tensor import CLTensor

P = CLTensor
Pair = tuple[int, int]
_run = ew.run
_OPS, _OWN = ew.OPS, ew.OWN


def _mm(a: P, b: P) -> P:
    """Matrix product in the wider dtype (float16 computed in float32)."""
    out = wider(a.dtype, b.dtype)
    compute = DType.F32 if out is DType.F16 else out
    return layout.cast(mm.matmul(layout.cast(a, compute), layout.cast(b, compute), compute), out)


def _swap_last(t: P) -> P:
    """View with the last two dims swapped (matmul reads any strides)."""
    s = t.strides
    return t.view(t.shape[:-2] + (t.shape[-1], t.shape[-2]), s[:-2] + (s[-1], s[-2]), t.offset)


def _as(t: P, shape: tuple[int, ...]) -> P:
    """`t` reshaped (copied only when it is not contiguous)."""
    return layout.reshape(t, shape)


def _add_bias(out: P, bias: P | None) -> P:
    if bias is None:
        return out
    channels = bias.shape[0]
    shape = (1, channels) + (1,) * (len(out.shape) - 2)
    return _run(_OPS["float_add"], (out, _as(bias, shape)))


def _to2d(x: P) -> P:
    """``[N, C, L]`` as ``[N, C, 1, L]``."""
    return _as(x, (x.shape[0], x.shape[1], 1, x.shape[2]))


def _from2d(x: P) -> P:
    return _as(x, (x.shape[0], x.shape[1], x.shape[3]))


class ModuleOps:
    """Module and activation ops on `CLTensor` primitives (mixed into `burn_opencl.OpenCL`)."""

    int_dtype: DType
    _matrix_cache: dict[Any, P]

    # -- convolution ------------------------------------------------------------------------------
    def _cols(self, x: P, grid: Pair, kernel: Pair, stride: Pair, padding: Pair, dilation: Pair) -> P:
        N, C, H, W = x.shape
        if kernel == (1, 1) and stride == (1, 1) and padding == (0, 0):
            return layout.contiguous(x)  # im2col of a 1x1 kernel is the input itself
        return nn.im2col(x, grid, kernel, stride, padding, dilation)

    def conv2d(
        self, x: P, weight: P, bias: P | None, stride: Pair, padding: Pair, dilation: Pair, groups: int
    ) -> P:
        N, C, H, W = x.shape
        Cout, Cg, KH, KW = weight.shape
        if C != Cg * groups or Cout % groups:
            raise ShapeError(
                f"conv2d: input {x.shape}, weight {weight.shape} and groups={groups} do not match"
            )
        OH = nn.out_size(H, KH, stride[0], padding[0], dilation[0])
        OW = nn.out_size(W, KW, stride[1], padding[1], dilation[1])
        if OH <= 0 or OW <= 0:
            raise ShapeError(f"conv2d: kernel {weight.shape[2:]} does not fit the padded input {x.shape}")
        g = groups
        cols = _as(
            self._cols(x, (OH, OW), (KH, KW), stride, padding, dilation), (N, g, Cg * KH * KW, OH * OW)
        )
        w = _as(weight, (1, g, Cout // g, Cg * KH * KW))
        out = _as(_mm(w, cols), (N, Cout, OH, OW))
        return _add_bias(out, bias)

    def conv2d_x_backward(
        self, x: P, weight: P, output_grad: P, stride: Pair, padding: Pair, dilation: Pair, groups: int
    ) -> P:
        N, C, H, W = x.shape
        Cout, Cg, KH, KW = weight.shape
        OH, OW = output_grad.shape[2:]
        g = groups
        w = _swap_last(_as(weight, (1, g, Cout // g, Cg * KH * KW)))
        cols = _mm(w, _as(output_grad, (N, g, Cout // g, OH * OW)))
        return nn.col2im(_as(cols, (N, C, KH, KW, OH, OW)), (N, C, H, W), (KH, KW), stride, padding, dilation)

    def conv2d_weight_backward(
        self, x: P, weight: P, output_grad: P, stride: Pair, padding: Pair, dilation: Pair, groups: int
    ) -> P:
        N, C, H, W = x.shape
        Cout, Cg, KH, KW = weight.shape
        OH, OW = output_grad.shape[2:]
        g = groups
        cols = _as(
            self._cols(x, (OH, OW), (KH, KW), stride, padding, dilation), (N, g, Cg * KH * KW, OH * OW)
        )
        per_sample = _mm(_as(output_grad, (N, g, Cout // g, OH * OW)), _swap_last(cols))
        total = rd.reduce_dim("sum", per_sample, 0)[0] if N > 1 else per_sample
        return _as(total, weight.shape)

    def conv1d(
        self, x: P, weight: P, bias: P | None, stride: int, padding: int, dilation: int, groups: int
    ) -> P:
        w = _as(weight, (weight.shape[0], weight.shape[1], 1, weight.shape[2]))
        return _from2d(self.conv2d(_to2d(x), w, bias, (1, stride), (0, padding), (1, dilation), groups))

    def conv_transpose2d(
        self,
        x: P,
        weight: P,
        bias: P | None,
        stride: Pair,
        padding: Pair,
        padding_out: Pair,
        dilation: Pair,
        groups: int,
    ) -> P:
        N, Cin, H, W = x.shape
        _, Cog, KH, KW = weight.shape
        g = groups
        if Cin % g or weight.shape[0] != Cin:
            raise ShapeError(
                f"conv_transpose2d: input {x.shape}, weight {weight.shape} and groups={g} do not match"
            )
        Cout = Cog * g
        OH = (H - 1) * stride[0] - 2 * padding[0] + dilation[0] * (KH - 1) + padding_out[0] + 1
        OW = (W - 1) * stride[1] - 2 * padding[1] + dilation[1] * (KW - 1) + padding_out[1] + 1
        w = _swap_last(_as(weight, (1, g, Cin // g, Cog * KH * KW)))
        cols = _mm(w, _as(x, (N, g, Cin // g, H * W)))
        out = nn.col2im(
            _as(cols, (N, Cout, KH, KW, H, W)), (N, Cout, OH, OW), (KH, KW), stride, padding, dilation
        )
        return _add_bias(out, bias)

    def conv_transpose2d_x_backward(
        self,
        x: P,
        weight: P,
        output_grad: P,
        stride: Pair,
        padding: Pair,
        padding_out: Pair,
        dilation: Pair,
        groups: int,
    ) -> P:
        return self.conv2d(output_grad, weight, None, stride, padding, dilation, groups)

    def conv_transpose2d_weight_backward(
        self,
        x: P,
        weight: P,
        output_grad: P,
        stride: Pair,
        padding: Pair,
        padding_out: Pair,
        dilation: Pair,
        groups: int,
    ) -> P:
        N, Cin, H, W = x.shape
        _, Cog, KH, KW = weight.shape
        g = groups
        cols = nn.im2col(output_grad, (H, W), (KH, KW), stride, padding, dilation)
        cols = _as(cols, (N, g, Cog * KH * KW, H * W))
        per_sample = _mm(_as(x, (N, g, Cin // g, H * W)), _swap_last(cols))
        total = rd.reduce_dim("sum", per_sample, 0)[0] if N > 1 else per_sample
        return _as(total, weight.shape)

    # -- pooling ----------------------------------------------------------------------------------
    def max_pool2d(self, x: P, kernel_size: Pair, stride: Pair, padding: Pair, dilation: Pair) -> P:
        return nn.max_pool2d(x, kernel_size, stride, padding, dilation, self.int_dtype)[0]

    def max_pool2d_with_indices(
        self, x: P, kernel_size: Pair, stride: Pair, padding: Pair, dilation: Pair
    ) -> tuple[P, P]:
        return nn.max_pool2d(x, kernel_size, stride, padding, dilation, self.int_dtype)

    def max_pool2d_with_indices_backward(
        self, x: P, kernel_size: Pair, stride: Pair, padding: Pair, dilation: Pair, output_grad: P, indices: P
    ) -> P:
        return nn.max_pool2d_backward(
            x.shape,
            layout.contiguous(output_grad),
            layout.contiguous(indices),
            kernel_size,
            stride,
            padding,
            dilation,
        )

    def avg_pool2d(self, x: P, kernel_size: Pair, stride: Pair, padding: Pair, count_include_pad: bool) -> P:
        return nn.avg_pool2d(x, kernel_size, stride, padding, count_include_pad, self.int_dtype)

    def avg_pool2d_backward(
        self, x: P, output_grad: P, kernel_size: Pair, stride: Pair, padding: Pair, count_include_pad: bool
    ) -> P:
        return nn.avg_pool2d_backward(
            x.shape, output_grad, kernel_size, stride, padding, count_include_pad, self.int_dtype
        )

    def max_pool1d(self, x: P, kernel_size: int, stride: int, padding: int, dilation: int) -> P:
        return _from2d(self.max_pool2d(_to2d(x), (1, kernel_size), (1, stride), (0, padding), (1, dilation)))

    def max_pool1d_with_indices(
        self, x: P, kernel_size: int, stride: int, padding: int, dilation: int
    ) -> tuple[P, P]:
        out, idx = self.max_pool2d_with_indices(
            _to2d(x), (1, kernel_size), (1, stride), (0, padding), (1, dilation)
        )
        return _from2d(out), _from2d(idx)

    def avg_pool1d(self, x: P, kernel_size: int, stride: int, padding: int, count_include_pad: bool) -> P:
        return _from2d(
            self.avg_pool2d(_to2d(x), (1, kernel_size), (1, stride), (0, padding), count_include_pad)
        )

    # -- separable linear maps: out = Mh @ x @ Mw^T, backward = Mh^T @ g @ Mw --------------------
    def _matrix(self, kind: str, size_in: int, size_out: int, dtype: DType, rt: Any, *extra: Any) -> P:
        key = (kind, size_in, size_out, dtype, rt.device, extra)
        found = self._matrix_cache.get(key)
        if found is None:
            m = np.zeros((size_out, size_in), np.float64)
            if kind == "adaptive":
                for i in range(size_out):
                    start, end = (i * size_in) // size_out, -(-((i + 1) * size_in) // size_out)
                    m[i, start:end] = 1.0 / (end - start)
            elif kind == "nearest":
                for i in range(size_out):
                    m[i, min((i * size_in) // size_out, size_in - 1)] = 1.0
            else:
                (align_corners,) = extra
                for i in range(size_out):
                    if align_corners:
                        src = i * (size_in - 1) / (size_out - 1) if size_out > 1 else 0.0
                    else:
                        src = max((i + 0.5) * size_in / size_out - 0.5, 0.0)
                    lo = min(int(np.floor(src)), size_in - 1)
                    hi = min(lo + 1, size_in - 1)
                    frac = src - lo
                    m[i, lo] += 1.0 - frac
                    m[i, hi] += frac
            found = layout.from_numpy(rt, m.astype(dtype.numpy), dtype)
            if len(self._matrix_cache) > 256:
                self._matrix_cache.clear()
            self._matrix_cache[key] = found
        return found

    def _separable(self, x: P, out_hw: Pair, kind: str, backward: bool, *extra: Any) -> P:
        """Apply (or, when `backward`, transpose-apply) the separable map on the last two dims."""
        dtype = DType.F32 if x.dtype is DType.F16 else x.dtype
        if backward:
            (H, W), (OH, OW) = out_hw, x.shape[2:]
        else:
            (H, W), (OH, OW) = x.shape[2:], out_hw
        mh = self._matrix(kind, H, OH, dtype, x.rt, *extra)
        mw = self._matrix(kind, W, OW, dtype, x.rt, *extra)
        if backward:
            out = _mm(_mm(_swap_last(mh), x), mw)
        else:
            out = _mm(_mm(mh, x), _swap_last(mw))
        return layout.cast(out, x.dtype)  # float16 went through float32 matrices

    def adaptive_avg_pool2d(self, x: P, output_size: Pair) -> P:
        return self._separable(x, tuple(output_size), "adaptive", False)  # type: ignore[arg-type]

    def adaptive_avg_pool2d_backward(self, x: P, output_grad: P) -> P:
        return self._separable(output_grad, (x.shape[2], x.shape[3]), "adaptive", True)

    def adaptive_avg_pool1d(self, x: P, output_size: int) -> P:
        return _from2d(self.adaptive_avg_pool2d(_to2d(x), (1, output_size)))

    def interpolate(self, x: P, output_size: Pair, mode: Any, align_corners: bool) -> P:
        if mode not in ("nearest", "bilinear"):
            # bicubic, nearest-exact: burn-core's default (separable selects), which also
            # rejects unknown modes by name.
            return _CoreSamplingOps.interpolate(self, x, output_size, mode, align_corners)  # type: ignore[arg-type]
        extra = () if mode == "nearest" else (bool(align_corners),)
        return self._separable(x, tuple(output_size), mode, False, *extra)  # type: ignore[arg-type]

    def interpolate_backward(
        self, x: P, output_grad: P, output_size: Pair, mode: Any, align_corners: bool
    ) -> P:
        if mode not in ("nearest", "bilinear"):
            return _CoreSamplingOps.interpolate_backward(
                self, x, output_grad, output_size, mode, align_corners  # type: ignore[arg-type]
            )
        extra = () if mode == "nearest" else (bool(align_corners),)
        return self._separable(output_grad, (x.shape[2], x.shape[3]), mode, True, *extra)

    # -- embedding --------------------------------------------------------------------------------
    def embedding(self, weights: P, indices: P) -> P:
        flat = _as(indices, (indices.n,))
        return _as(ix.select(weights, 0, flat), indices.shape + (weights.shape[1],))

    def embedding_backward(self, weights: P, output_grad: P, indices: P) -> P:
        zeros = _run(
            ew.FILL,
            [],
            output_grad.dtype,
            (0.0,),
            compute=output_grad.dtype,
            shape=weights.shape,
            rt=weights.rt,
        )
        flat = _as(indices, (indices.n,))
        return ix.select_add(zeros, 0, flat, _as(output_grad, (indices.n, weights.shape[1])))

    # -- activations ------------------------------------------------------------------------------
    def relu(self, x: P) -> P:
        return _run(_OPS["relu"], (x,))

    def relu_backward(self, output: P, grad: P) -> P:
        return _run(_OPS["relu_backward"], (output, grad))

    def leaky_relu(self, x: P, negative_slope: float) -> P:
        return _run(_OPS["leaky_relu"], (x,), None, (negative_slope,))

    def gelu(self, x: P) -> P:
        return _run(_OPS["gelu"], (x,))

    def gelu_backward(self, x: P, grad: P) -> P:
        return _run(_OPS["gelu_backward"], (x, grad))

    def sigmoid(self, x: P) -> P:
        return _run(_OPS["sigmoid"], (x,))

    def sigmoid_backward(self, output: P, grad: P) -> P:
        return _run(_OPS["sigmoid_backward"], (output, grad))

    def log_sigmoid(self, x: P) -> P:
        return _run(_OPS["log_sigmoid"], (x,))

    def silu(self, x: P) -> P:
        return _run(_OPS["silu"], (x,))

    def softplus(self, x: P, beta: float) -> P:
        return _run(_OPS["softplus"], (x,), None, (beta,))

    def hard_sigmoid(self, x: P, alpha: float, beta: float) -> P:
        return _run(_OPS["hard_sigmoid"], (x,), None, (alpha, beta))

    def softmax(self, x: P, dim: int) -> P:
        e = _run(_OWN["exp_sub"], (x, rd.reduce_dim("max", x, dim)[0]))
        return _run(_OPS["float_div"], (e, rd.reduce_dim("sum", e, dim)[0]))

    def log_softmax(self, x: P, dim: int) -> P:
        m = rd.reduce_dim("max", x, dim)[0]
        s = rd.reduce_dim("sum", _run(_OWN["exp_sub"], (x, m)), dim)[0]
        return _run(ew.LOG_SOFTMAX_OUT, (x, m, s))
