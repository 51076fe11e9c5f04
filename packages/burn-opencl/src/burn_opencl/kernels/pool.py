"""Kernels of the pooling ops: max pooling (with the index of each maximum) and average pooling,
and their gradients.

Backward kernels are gathers, not scatters: one work-item per input element sums the outputs
whose window covers it, so no atomics are needed and results are deterministic.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from burn.backend.xp.windows import out_size
from burn.foundations.dtype import DType
from burn_opencl.dtypes import COMPUTE, STORAGE, build_options, load, store
from burn_opencl.kernels.common import I64, IMAGE_PARAMS, LOCAL, WINDOW_PARAMS, global_size, new, window_args
from burn_opencl.tensor import CLTensor

if TYPE_CHECKING:
    from burn_opencl.runtime import Runtime


def _pool_source(xd: DType, idd: DType) -> str:
    t = COMPUTE[xd]
    ninf = "-INFINITY"
    return f"""
__kernel void max_pool(__global {STORAGE[xd]}* o, __global {STORAGE[idd]}* oi,
                       __global const {STORAGE[xd]}* x,
                       long n, long C, long H, long W, long OH, long OW, {WINDOW_PARAMS}, {IMAGE_PARAMS}) {{
  long i = get_global_id(0);
  GUARD(i, n);
  long ow = i % OW; long r = i / OW; long oh = r % OH; r /= OH; long c = r % C; long b = r / C;
  {t} best = ({t}){ninf}; long at = -1;
  long base = x_off + b * x_sn + c * x_sc;
  for (long kh = 0; kh < KH; kh++) {{
    long h = oh * sh - ph + kh * dh;
    if (h < 0 || h >= H) continue;
    for (long kw = 0; kw < KW; kw++) {{
      long w = ow * sw - pw + kw * dw;
      if (w < 0 || w >= W) continue;
      {t} v = ({t}){load(xd, "x", "base + h * x_sh + w * x_sw")};
      if (at < 0 || v > best || (b_isnan(v) && !b_isnan(best))) {{ best = v; at = h * W + w; }}
    }}
  }}
  {store(xd, "o", "i", "best")}
  oi[i] = ({COMPUTE[idd]})(at < 0 ? 0 : at);
}}
__kernel void max_pool_back(__global {STORAGE[xd]}* o, __global const {STORAGE[xd]}* g,
                            __global const {STORAGE[idd]}* gi,
                            long n, long C, long H, long W, long OH, long OW, {WINDOW_PARAMS}) {{
  long i = get_global_id(0);
  GUARD(i, n);
  long w = i % W; long r = i / W; long h = r % H; r /= H; long c = r % C; long b = r / C;
  long plane = (b * C + c) * OH * OW; long me = h * W + w;
  {t} acc = ({t})0;
  for (long kh = 0; kh < KH; kh++) {{
    long th = h + ph - kh * dh;
    if (th < 0 || th % sh) continue;
    long oh = th / sh;
    if (oh >= OH) continue;
    for (long kw = 0; kw < KW; kw++) {{
      long tw = w + pw - kw * dw;
      if (tw < 0 || tw % sw) continue;
      long ow = tw / sw;
      if (ow >= OW) continue;
      long p = plane + oh * OW + ow;
      if ((long)gi[p] == me) acc += ({t}){load(xd, "g", "p")};
    }}
  }}
  {store(xd, "o", "i", "acc")}
}}
inline long avg_count(long oh, long ow, long H, long W, long KH, long KW, long sh, long sw, long ph, long pw,
                      int pad) {{
  if (pad) return KH * KW;
  long h0 = b_lmax(oh * sh - ph, 0L), h1 = b_lmin(oh * sh - ph + KH, H);
  long w0 = b_lmax(ow * sw - pw, 0L), w1 = b_lmin(ow * sw - pw + KW, W);
  return (h1 - h0) * (w1 - w0);
}}
__kernel void avg_pool(__global {STORAGE[xd]}* o, __global const {STORAGE[xd]}* x,
                       long n, long C, long H, long W,
                       long OH, long OW, {WINDOW_PARAMS}, int pad, {IMAGE_PARAMS}) {{
  long i = get_global_id(0);
  GUARD(i, n);
  long ow = i % OW; long r = i / OW; long oh = r % OH; r /= OH; long c = r % C; long b = r / C;
  long base = x_off + b * x_sn + c * x_sc;
  {t} acc = ({t})0;
  for (long kh = 0; kh < KH; kh++) {{
    long h = oh * sh - ph + kh;
    if (h < 0 || h >= H) continue;
    for (long kw = 0; kw < KW; kw++) {{
      long w = ow * sw - pw + kw;
      if (w < 0 || w >= W) continue;
      acc += ({t}){load(xd, "x", "base + h * x_sh + w * x_sw")};
    }}
  }}
  {store(xd, "o", "i", f"acc / ({t})avg_count(oh, ow, H, W, KH, KW, sh, sw, ph, pw, pad)")}
}}
__kernel void avg_pool_back(__global {STORAGE[xd]}* o, __global const {STORAGE[xd]}* g,
                            long n, long C, long H, long W, long OH, long OW, {WINDOW_PARAMS}, int pad,
                            long g_off, long g_sn, long g_sc, long g_sh, long g_sw) {{
  long i = get_global_id(0);
  GUARD(i, n);
  long w = i % W; long r = i / W; long h = r % H; r /= H; long c = r % C; long b = r / C;
  long base = g_off + b * g_sn + c * g_sc;
  {t} acc = ({t})0;
  for (long kh = 0; kh < KH; kh++) {{
    long th = h + ph - kh;
    if (th < 0 || th % sh) continue;
    long oh = th / sh;
    if (oh >= OH) continue;
    for (long kw = 0; kw < KW; kw++) {{
      long tw = w + pw - kw;
      if (tw < 0 || tw % sw) continue;
      long ow = tw / sw;
      if (ow >= OW) continue;
      acc += ({t}){load(xd, "g", "base + oh * g_sh + ow * g_sw")}
             / ({t})avg_count(oh, ow, H, W, KH, KW, sh, sw, ph, pw, pad);
    }}
  }}
  {store(xd, "o", "i", "acc")}
}}"""


def _kernels(rt: Runtime, xd: DType, idd: DType) -> dict[str, Any]:
    import numpy as np

    def types(name: str) -> list:
        # buffers; n, C, H, W, OH, OW; the 8 window numbers; then avg's flag and an image's 5 numbers
        if name == "max_pool":
            return [None] * 3 + [I64] * 6 + [I64] * 8 + [I64] * 5
        if name == "max_pool_back":
            return [None] * 3 + [I64] * 6 + [I64] * 8
        return [None] * 2 + [I64] * 6 + [I64] * 8 + [np.int32] + [I64] * 5

    return rt.build(
        ("pool", xd, idd),
        ("max_pool", "max_pool_back", "avg_pool", "avg_pool_back"),
        lambda: _pool_source(xd, idd),
        build_options(xd),
        types,
    )


def max_pool2d(
    x: CLTensor,
    kernel: tuple[int, int],
    stride: tuple[int, int],
    padding: tuple[int, int],
    dilation: tuple[int, int],
    idx_dtype: DType,
) -> tuple[CLTensor, CLTensor]:
    rt = x.rt
    N, C, H, W = x.shape
    OH = out_size(H, kernel[0], stride[0], padding[0], dilation[0])
    OW = out_size(W, kernel[1], stride[1], padding[1], dilation[1])
    if OH <= 0 or OW <= 0:
        raise ValueError(
            f"max_pool2d: kernel {kernel} with padding {padding} does not fit the input {x.shape}"
        )
    out = new(rt, (N, C, OH, OW), x.dtype, "the result of max_pool2d")
    out_i = new(rt, (N, C, OH, OW), idx_dtype, "the indices of max_pool2d")
    if out.n:
        rt.launch(
            _kernels(rt, x.dtype, idx_dtype)["max_pool"],
            global_size(out.n),
            (LOCAL,),
            out.buf,
            out_i.buf,
            x.buf,
            out.n,
            C,
            H,
            W,
            OH,
            OW,
            *window_args(kernel, stride, padding, dilation),
            x.offset,
            *x.strides,
        )
    return out, out_i


def max_pool2d_backward(
    x_shape: tuple[int, ...],
    grad: CLTensor,
    indices: CLTensor,
    kernel: tuple[int, int],
    stride: tuple[int, int],
    padding: tuple[int, int],
    dilation: tuple[int, int],
) -> CLTensor:
    """`grad` (contiguous) summed at `indices` (contiguous) into an input-shaped tensor."""
    rt = grad.rt
    N, C, H, W = x_shape
    out = new(rt, tuple(x_shape), grad.dtype, "the gradient of max_pool2d")
    if out.n:
        rt.launch(
            _kernels(rt, grad.dtype, indices.dtype)["max_pool_back"],
            global_size(out.n),
            (LOCAL,),
            out.buf,
            grad.buf,
            indices.buf,
            out.n,
            C,
            H,
            W,
            grad.shape[2],
            grad.shape[3],
            *window_args(kernel, stride, padding, dilation),
        )
    return out


def avg_pool2d(
    x: CLTensor,
    kernel: tuple[int, int],
    stride: tuple[int, int],
    padding: tuple[int, int],
    count_include_pad: bool,
    idx_dtype: DType,
) -> CLTensor:
    rt = x.rt
    N, C, H, W = x.shape
    OH = out_size(H, kernel[0], stride[0], padding[0], 1)
    OW = out_size(W, kernel[1], stride[1], padding[1], 1)
    if OH <= 0 or OW <= 0:
        raise ValueError(
            f"avg_pool2d: kernel {kernel} with padding {padding} does not fit the input {x.shape}"
        )
    out = new(rt, (N, C, OH, OW), x.dtype, "the result of avg_pool2d")
    if out.n:
        rt.launch(
            _kernels(rt, x.dtype, idx_dtype)["avg_pool"],
            global_size(out.n),
            (LOCAL,),
            out.buf,
            x.buf,
            out.n,
            C,
            H,
            W,
            OH,
            OW,
            *window_args(kernel, stride, padding, (1, 1)),
            int(count_include_pad),
            x.offset,
            *x.strides,
        )
    return out


def avg_pool2d_backward(
    x_shape: tuple[int, ...],
    grad: CLTensor,
    kernel: tuple[int, int],
    stride: tuple[int, int],
    padding: tuple[int, int],
    count_include_pad: bool,
    idx_dtype: DType,
) -> CLTensor:
    rt = grad.rt
    N, C, H, W = x_shape
    out = new(rt, tuple(x_shape), grad.dtype, "the gradient of avg_pool2d")
    if out.n:
        rt.launch(
            _kernels(rt, grad.dtype, idx_dtype)["avg_pool_back"],
            global_size(out.n),
            (LOCAL,),
            out.buf,
            grad.buf,
            out.n,
            C,
            H,
            W,
            grad.shape[2],
            grad.shape[3],
            *window_args(kernel, stride, padding, (1, 1)),
            int(count_include_pad),
            grad.offset,
            *grad.strides,
        )
    return out
