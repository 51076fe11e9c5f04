"""3-D convolutions, transposed convolutions and their gradients: one GEMM per group over a
window view (im2col).

The window view of the padded input ``[N, C/G, KD, KH, KW, OD, OH, OW]`` is an `as_strided` view;
`np.tensordot` contracts it with the weight, copying it once into the column matrix it hands to
BLAS (the im2col copy), so each op is one GEMM per group. Three kernels serve six ops, as in 2-D:
the transposed convolution is the input gradient of the convolution (`_col2im` of the weight times
the output gradient), its input gradient is the convolution, and its weight gradient is the
convolution's with input and output gradient swapped.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from burn_ndarray._windows import work_dtype

Array = Any
Triple = tuple[int, int, int]


def _pad(x: np.ndarray, padding: Triple) -> np.ndarray:
    if not any(padding):
        return x
    return np.pad(x, ((0, 0), (0, 0), *((p, p) for p in padding)))


def _windows(xp: np.ndarray, kernel: tuple[int, ...], out: tuple[int, ...], stride: Triple,
             dilation: Triple) -> np.ndarray:
    """Read-only view ``[N, C, KD, KH, KW, OD, OH, OW]`` of the windows of the padded `xp`."""
    sn, sc, sd, sh, sw = xp.strides
    return as_strided(  # type: ignore[no-any-return]
        xp,
        shape=(*xp.shape[:2], *kernel, *out),
        strides=(sn, sc, sd * dilation[0], sh * dilation[1], sw * dilation[2],
                 sd * stride[0], sh * stride[1], sw * stride[2]),
        writeable=False,
    )


def _out(size: tuple[int, ...], kernel: tuple[int, ...], stride: Triple, padding: Triple,
         dilation: Triple) -> tuple[int, int, int]:
    d, h, w = ((n + 2 * p - dl * (k - 1) - 1) // s + 1
               for n, k, s, p, dl in zip(size, kernel, stride, padding, dilation, strict=True))
    return (d, h, w)


def _conv(x: np.ndarray, weight: np.ndarray, stride: Triple, padding: Triple, dilation: Triple,
          groups: int, dtype: np.dtype) -> np.ndarray:
    """``[N, O, *out]``: per group, weight ``[O/G, C/G, *K]`` contracted with the windows."""
    n, c = x.shape[:2]
    o, cg = weight.shape[:2]
    kernel = weight.shape[2:]
    out = _out(x.shape[2:], kernel, stride, padding, dilation)
    win = _windows(_pad(x.astype(dtype, copy=False), padding), kernel, out, stride, dilation)
    w = weight.astype(dtype, copy=False)
    og = o // groups
    result = np.empty((o, n, *out), dtype=dtype)
    for g in range(groups):
        result[g * og : (g + 1) * og] = np.tensordot(
            w[g * og : (g + 1) * og], win[:, g * cg : (g + 1) * cg], axes=([1, 2, 3, 4], [1, 2, 3, 4])
        )
    return result.transpose(1, 0, 2, 3, 4)  # a view: primitives may be views


def _col2im(grad: np.ndarray, weight: np.ndarray, full: tuple[int, ...], stride: Triple, dilation: Triple,
            groups: int, dtype: np.dtype) -> np.ndarray:
    """The adjoint of `_conv` before cropping: ``[N, C, *full]`` from ``grad [N, O, *out]``."""
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


def _weight_grad(inp: np.ndarray, out_grad: np.ndarray, kernel: tuple[int, ...], stride: Triple,
                 padding: Triple, dilation: Triple, groups: int, dtype: np.dtype) -> np.ndarray:
    """``dW [O, C/G, *K] = sum over n, l of out_grad[n, o, l] * window(inp)[n, c, k, l]``."""
    c = inp.shape[1]
    o = out_grad.shape[1]
    cg, og = c // groups, o // groups
    win = _windows(_pad(inp.astype(dtype, copy=False), padding), kernel, out_grad.shape[2:], stride, dilation)
    dy = out_grad.astype(dtype, copy=False)
    grad = np.empty((o, cg, *kernel), dtype=dtype)
    for g in range(groups):
        grad[g * og : (g + 1) * og] = np.tensordot(
            dy[:, g * og : (g + 1) * og], win[:, g * cg : (g + 1) * cg], axes=([0, 2, 3, 4], [0, 5, 6, 7])
        )
    return grad


def _crop(plane: np.ndarray, start: Triple, size: tuple[int, ...]) -> np.ndarray:
    return plane[:, :, start[0] : start[0] + size[0], start[1] : start[1] + size[1],
                 start[2] : start[2] + size[2]]


def conv3d(x: Array, weight: Array, bias: Array | None, stride: Triple, padding: Triple, dilation: Triple,
           groups: int) -> Array:
    dtype = work_dtype(x, weight) if bias is None else work_dtype(x, weight, bias)
    out = _conv(x, weight, stride, padding, dilation, groups, dtype)
    if bias is not None:
        out = out + bias.astype(dtype, copy=False).reshape(-1, 1, 1, 1)
    return out.astype(np.result_type(x, weight), copy=False)


def conv3d_x_backward(x: Array, weight: Array, output_grad: Array, stride: Triple, padding: Triple,
                      dilation: Triple, groups: int) -> Array:
    size = x.shape[2:]
    full = tuple(n + 2 * p for n, p in zip(size, padding, strict=True))
    plane = _col2im(output_grad, weight, full, stride, dilation, groups, work_dtype(weight, output_grad))
    return _crop(plane, padding, size).astype(x.dtype, copy=False)


def conv3d_weight_backward(x: Array, weight: Array, output_grad: Array, stride: Triple, padding: Triple,
                           dilation: Triple, groups: int) -> Array:
    grad = _weight_grad(x, output_grad, weight.shape[2:], stride, padding, dilation, groups,
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
    plane = _col2im(x, weight, full, stride, dilation, groups, dtype)
    out = _crop(plane, padding, tuple(f - 2 * p for f, p in zip(full, padding, strict=True)))
    if bias is not None:
        out = out + bias.astype(dtype, copy=False).reshape(-1, 1, 1, 1)
    return out.astype(np.result_type(x, weight), copy=False)


def conv_transpose3d_x_backward(x: Array, weight: Array, output_grad: Array, stride: Triple, padding: Triple,
                                padding_out: Triple, dilation: Triple, groups: int) -> Array:
    # The adjoint of a transposed convolution is the convolution with the same weight.
    grad = _conv(output_grad, weight, stride, padding, dilation, groups, work_dtype(weight, output_grad))
    return _crop(grad, (0, 0, 0), x.shape[2:]).astype(x.dtype, copy=False)


def conv_transpose3d_weight_backward(x: Array, weight: Array, output_grad: Array, stride: Triple,
                                     padding: Triple, padding_out: Triple, dilation: Triple,
                                     groups: int) -> Array:
    # The convolution's weight gradient with the roles of input and output gradient swapped.
    grad = _weight_grad(output_grad, x, weight.shape[2:], stride, padding, dilation, groups,
                        work_dtype(x, output_grad))
    return grad.astype(weight.dtype, copy=False)
