"""Stable sort along a dim: a bitonic network over (key, original index) pairs.

Every line is copied into a scratch row padded to a power of two. Comparing (key, index) pairs
makes every element distinct, so the network's result is the unique stable order (a bitonic
network is not stable by itself). NaNs count as larger than every number: last ascending, first
descending, as NumPy and PyTorch place them. Each network step is one launch over every line at
once, so many short lines sort as fast as one long one.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from burn.foundations.dtype import DType
from burn_opencl.dtypes import COMPUTE, STORAGE, build_options, load, store
from burn_opencl.kernels.common import I64, LOCAL, collapse, global_size, index_code, index_params, new
from burn_opencl.tensor import CLTensor


def _source(xd: DType, idx_dtype: DType, rank: int) -> str:
    t = COMPUTE[xd]
    isnan = "b_isnan" if xd.is_float else "0 &&"
    ops = ["x", "o", "oi"]
    params_ix = index_params(rank, ops)
    return f"""
#define T {t}
inline int before(T ka, long ia, T kb, long ib, long n, int desc) {{
  if (ia >= n || ib >= n) return ib >= n && (ia < n || ia < ib);
  int an = {isnan}(ka), bn = {isnan}(kb);
  if (an || bn) return (an && bn) ? ia < ib : (desc ? an : bn);
  if (ka == kb) return ia < ib;
  return desc ? ka > kb : ka < kb;
}}
__kernel void load_lines(__global T* K, __global long* I, __global const {STORAGE[xd]}* x, long total, long P,
                         long n, long x_off, long x_sd, long o_off,
                         long oi_off{", " + params_ix if rank else ""}) {{
  long g = get_global_id(0);
  GUARD(g, total);
  long line = g / P; long p = g - line * P;
  {index_code(rank, ops, flat="line")}
  K[g] = p < n ? (T){load(xd, "x", "x_i + p * x_sd")} : (T)0;
  I[g] = p;
}}
__kernel void sort_step(__global T* K, __global long* I, long pairs, long P, long k, long j, long n,
                        int desc) {{
  long g = get_global_id(0);
  GUARD(g, pairs);
  long half_ = P / 2; long line = g / half_; long t = g - line * half_;
  long lo = (t / j) * 2 * j + (t % j); long hi = lo + j;
  long a = line * P + lo, b = a + j;
  T ka = K[a], kb = K[b]; long ia = I[a], ib = I[b];
  int up = (lo & k) == 0;
  int swap = up ? before(kb, ib, ka, ia, n, desc) : before(ka, ia, kb, ib, n, desc);
  if (swap) {{ K[a] = kb; K[b] = ka; I[a] = ib; I[b] = ia; }}
}}
__kernel void store_lines(__global {STORAGE[xd]}* o, __global {STORAGE[idx_dtype]}* oi, __global const T* K,
                          __global const long* I, long total, long P, long n, long x_off, long x_sd,
                          long o_off,
                          long oi_off{", " + params_ix if rank else ""}) {{
  long g = get_global_id(0);
  GUARD(g, total);
  long line = g / n; long p = g - line * n;
  {index_code(rank, ops, flat="line")}
  {store(xd, "o", "o_i + p * x_sd", f"({COMPUTE[xd]})K[line * P + p]")}
  oi[oi_i + p * x_sd] = ({COMPUTE[idx_dtype]})I[line * P + p];
}}
"""


def sort_with_indices(x: CLTensor, dim: int, descending: bool, idx_dtype: DType) -> tuple[CLTensor, CLTensor]:
    """Stable sort of `x` along `dim`; returns the values and the original positions."""
    rt = x.rt
    out = new(rt, x.shape, x.dtype, "the result of sort")
    out_i = new(rt, x.shape, idx_dtype, "the indices of sort")
    n = x.shape[dim]
    if out.n == 0:
        return out, out_i
    P = 1
    while P < n:
        P *= 2
    others = [d for d in range(len(x.shape)) if d != dim]
    lines = out.n // n
    dims, (xs, os_, ois) = collapse(
        tuple(x.shape[d] for d in others),
        [
            tuple(x.strides[d] for d in others),
            tuple(out.strides[d] for d in others),
            tuple(out_i.strides[d] for d in others),
        ],
    )
    rank = len(dims)
    key = ("sort", x.dtype, idx_dtype, rank)
    ix = [*dims, *xs, *os_, *ois]
    arg_types: dict[str, list[Any]] = {
        "load_lines": [None] * 3 + [I64] * (7 + 4 * rank),
        "sort_step": [None, None] + [I64] * 5 + [np.int32],
        "store_lines": [None] * 4 + [I64] * (7 + 4 * rank),
    }
    kernels = rt.build(
        key,
        ("load_lines", "sort_step", "store_lines"),
        lambda: _source(x.dtype, idx_dtype, rank),
        build_options(x.dtype),
        arg_types.__getitem__,
    )
    t = COMPUTE[x.dtype]
    scratch_k = rt.alloc(lines * P * (8 if t in ("double", "long") else 4), "sort keys")
    scratch_i = rt.alloc(lines * P * 8, "sort indices")
    total = lines * P
    # The output strides along `dim` equal for out and out_i (both contiguous, same shape); x's
    # own stride is read through x_sd in load_lines only.
    rt.launch(
        kernels["load_lines"],
        global_size(total),
        (LOCAL,),
        scratch_k,
        scratch_i,
        x.buf,
        total,
        P,
        n,
        x.offset,
        x.strides[dim],
        0,
        0,
        *ix,
    )
    pairs = lines * (P // 2)
    desc = 1 if descending else 0
    k = 2
    while k <= P:
        j = k // 2
        while j >= 1:
            rt.launch(
                kernels["sort_step"],
                global_size(pairs),
                (LOCAL,),
                scratch_k,
                scratch_i,
                pairs,
                P,
                k,
                j,
                n,
                desc,
            )
            j //= 2
        k *= 2
    total_out = lines * n
    rt.launch(
        kernels["store_lines"],
        global_size(total_out),
        (LOCAL,),
        out.buf,
        out_i.buf,
        scratch_k,
        scratch_i,
        total_out,
        P,
        n,
        x.offset,
        out.strides[dim],
        0,
        0,
        *ix,
    )
    return out, out_i
