"""Kernels of the convolutions: im2col and col2im (convolutions go through GEMM).

col2im is a gather, not a scatter: one work-item per image element sums the column entries that
read it, so no atomics are needed and results are deterministic.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from burn.foundations.dtype import DType
from burn_opencl.dtypes import COMPUTE, STORAGE, build_options, load, store
from burn_opencl.kernels.common import I64, IMAGE_PARAMS, LOCAL, WINDOW_PARAMS, global_size, new, window_args
from burn_opencl.tensor import CLTensor

if TYPE_CHECKING:
    from burn_opencl.runtime import Runtime


def _im2col_source(xd: DType) -> str:
    t = COMPUTE[xd]
    return f"""
__kernel void im2col(__global {STORAGE[xd]}* o, __global const {STORAGE[xd]}* x,
                     long n, long C, long H, long W,
                     long GH, long GW, {WINDOW_PARAMS}, {IMAGE_PARAMS}) {{
  long i = get_global_id(0);
  GUARD(i, n);
  long gw = i % GW; long r = i / GW; long gh = r % GH; r /= GH;
  long kw = r % KW; r /= KW; long kh = r % KH; r /= KH; long c = r % C; long b = r / C;
  long h = gh * sh - ph + kh * dh, w = gw * sw - pw + kw * dw;
  {t} v = ({t})0;
  if (h >= 0 && h < H && w >= 0 && w < W)
    v = ({t}){load(xd, "x", "x_off + b * x_sn + c * x_sc + h * x_sh + w * x_sw")};
  {store(xd, "o", "i", "v")}
}}
__kernel void col2im(__global {STORAGE[xd]}* o, __global const {STORAGE[xd]}* cols,
                     long n, long C, long H, long W,
                     long GH, long GW, {WINDOW_PARAMS}) {{
  long i = get_global_id(0);
  GUARD(i, n);
  long w = i % W; long r = i / W; long h = r % H; r /= H; long c = r % C; long b = r / C;
  {t} acc = ({t})0;
  __global const {STORAGE[xd]}* base = cols + (b * C + c) * KH * KW * GH * GW;
  for (long kh = 0; kh < KH; kh++) {{
    long th = h + ph - kh * dh;
    if (th < 0 || th % sh) continue;
    long gh = th / sh;
    if (gh >= GH) continue;
    for (long kw = 0; kw < KW; kw++) {{
      long tw = w + pw - kw * dw;
      if (tw < 0 || tw % sw) continue;
      long gw = tw / sw;
      if (gw >= GW) continue;
      acc += ({t}){load(xd, "base", "((kh * KW + kw) * GH + gh) * GW + gw")};
    }}
  }}
  {store(xd, "o", "i", "acc")}
}}"""


def _kernels(rt: Runtime, xd: DType) -> dict[str, Any]:
    return rt.build(
        ("im2col", xd),
        ("im2col", "col2im"),
        lambda: _im2col_source(xd),
        build_options(xd),
        lambda name: [None, None] + [I64] * (19 if name == "im2col" else 14),
    )


def im2col(
    x: CLTensor,
    grid: tuple[int, int],
    kernel: tuple[int, int],
    stride: tuple[int, int],
    padding: tuple[int, int],
    dilation: tuple[int, int],
) -> CLTensor:
    """``[N, C, H, W]`` -> ``[N, C, KH, KW, GH, GW]``: the input pixel each kernel tap of each
    output position reads (0 in the padding)."""
    rt = x.rt
    N, C, H, W = x.shape
    out = new(rt, (N, C, kernel[0], kernel[1], grid[0], grid[1]), x.dtype, "im2col columns")
    if out.n:
        rt.launch(
            _kernels(rt, x.dtype)["im2col"],
            global_size(out.n),
            (LOCAL,),
            out.buf,
            x.buf,
            out.n,
            C,
            H,
            W,
            *grid,
            *window_args(kernel, stride, padding, dilation),
            x.offset,
            *x.strides,
        )
    return out


def col2im(
    cols: CLTensor,
    image: tuple[int, int, int, int],
    kernel: tuple[int, int],
    stride: tuple[int, int],
    padding: tuple[int, int],
    dilation: tuple[int, int],
) -> CLTensor:
    """Inverse scatter of `im2col`: each pixel of an image of shape `image` sums every column
    entry that reads it. `cols` is contiguous ``[N, C, KH, KW, GH, GW]``."""
    rt = cols.rt
    N, C, H, W = image
    out = new(rt, image, cols.dtype, "col2im image")
    if out.n:
        rt.launch(
            _kernels(rt, cols.dtype)["col2im"],
            global_size(out.n),
            (LOCAL,),
            out.buf,
            cols.buf,
            out.n,
            C,
            H,
            W,
            cols.shape[4],
            cols.shape[5],
            *window_args(kernel, stride, padding, dilation),
        )
    return out
