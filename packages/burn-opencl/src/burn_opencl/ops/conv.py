"""Convolution ops of the contract (`burn.backend.ops.conv`) on `CLTensor` primitives: im2col +
GEMM, and col2im for the input gradients (`burn_opencl.kernels.conv`). 1-D convolutions are 2-D
ones over ``[N, C, 1, L]``; the rest are burn-core's defaults."""

from __future__ import annotations

from burn.backend.xp.windows import out_size
from burn.errors import ShapeError
from burn_opencl import layout
from burn_opencl.kernels import conv as cv
from burn_opencl.kernels import elementwise as ew
from burn_opencl.kernels import reduce as rd
from burn_opencl.ops.module_common import P, Pair, from2d, reshaped, swap_last, to2d
from burn_opencl.ops.tensor_common import matmul

_run = ew.run
_OPS = ew.OPS


def _add_bias(out: P, bias: P | None) -> P:
    if bias is None:
        return out
    channels = bias.shape[0]
    shape = (1, channels) + (1,) * (len(out.shape) - 2)
    return _run(_OPS["float_add"], (out, reshaped(bias, shape)))


class OpenCLConvOps:
    """The convolution ops of `burn_opencl.OpenCL`."""

    def _cols(self, x: P, grid: Pair, kernel: Pair, stride: Pair, padding: Pair, dilation: Pair) -> P:
        N, C, H, W = x.shape
        if kernel == (1, 1) and stride == (1, 1) and padding == (0, 0):
            return layout.contiguous(x)  # im2col of a 1x1 kernel is the input itself
        return cv.im2col(x, grid, kernel, stride, padding, dilation)

    def conv2d(
        self, x: P, weight: P, bias: P | None, stride: Pair, padding: Pair, dilation: Pair, groups: int
    ) -> P:
        N, C, H, W = x.shape
        Cout, Cg, KH, KW = weight.shape
        if C != Cg * groups or Cout % groups:
            raise ShapeError(
                f"conv2d: input {x.shape}, weight {weight.shape} and groups={groups} do not match"
            )
        OH = out_size(H, KH, stride[0], padding[0], dilation[0])
        OW = out_size(W, KW, stride[1], padding[1], dilation[1])
        if OH <= 0 or OW <= 0:
            raise ShapeError(f"conv2d: kernel {weight.shape[2:]} does not fit the padded input {x.shape}")
        g = groups
        cols = reshaped(
            self._cols(x, (OH, OW), (KH, KW), stride, padding, dilation), (N, g, Cg * KH * KW, OH * OW)
        )
        w = reshaped(weight, (1, g, Cout // g, Cg * KH * KW))
        out = reshaped(matmul(w, cols), (N, Cout, OH, OW))
        return _add_bias(out, bias)

    def conv2d_x_backward(
        self, x: P, weight: P, output_grad: P, stride: Pair, padding: Pair, dilation: Pair, groups: int
    ) -> P:
        N, C, H, W = x.shape
        Cout, Cg, KH, KW = weight.shape
        OH, OW = output_grad.shape[2:]
        g = groups
        w = swap_last(reshaped(weight, (1, g, Cout // g, Cg * KH * KW)))
        cols = matmul(w, reshaped(output_grad, (N, g, Cout // g, OH * OW)))
        return cv.col2im(
            reshaped(cols, (N, C, KH, KW, OH, OW)), (N, C, H, W), (KH, KW), stride, padding, dilation
        )

    def conv2d_weight_backward(
        self, x: P, weight: P, output_grad: P, stride: Pair, padding: Pair, dilation: Pair, groups: int
    ) -> P:
        N, C, H, W = x.shape
        Cout, Cg, KH, KW = weight.shape
        OH, OW = output_grad.shape[2:]
        g = groups
        cols = reshaped(
            self._cols(x, (OH, OW), (KH, KW), stride, padding, dilation), (N, g, Cg * KH * KW, OH * OW)
        )
        per_sample = matmul(reshaped(output_grad, (N, g, Cout // g, OH * OW)), swap_last(cols))
        total = rd.reduce_dim("sum", per_sample, 0)[0] if N > 1 else per_sample
        return reshaped(total, weight.shape)

    def conv1d(
        self, x: P, weight: P, bias: P | None, stride: int, padding: int, dilation: int, groups: int
    ) -> P:
        w = reshaped(weight, (weight.shape[0], weight.shape[1], 1, weight.shape[2]))
        return from2d(self.conv2d(to2d(x), w, bias, (1, stride), (0, padding), (1, dilation), groups))

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
        w = swap_last(reshaped(weight, (1, g, Cin // g, Cog * KH * KW)))
        cols = matmul(w, reshaped(x, (N, g, Cin // g, H * W)))
        out = cv.col2im(
            reshaped(cols, (N, Cout, KH, KW, H, W)), (N, Cout, OH, OW), (KH, KW), stride, padding, dilation
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
        cols = cv.im2col(output_grad, (H, W), (KH, KW), stride, padding, dilation)
        cols = reshaped(cols, (N, g, Cog * KH * KW, H * W))
        per_sample = matmul(reshaped(x, (N, g, Cin // g, H * W)), swap_last(cols))
        total = rd.reduce_dim("sum", per_sample, 0)[0] if N > 1 else per_sample
        return reshaped(total, weight.shape)
