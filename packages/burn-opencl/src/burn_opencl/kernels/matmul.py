"""Batched matrix products: three kernels for three regimes.

* ``naive``: one work-item per output, any strides; for small products, where one launch beats
  the packing launches of the others.
* ``tiled``: the classic GPU kernel: each work-group stages TK x TS tiles of A and B in local
  memory and each work-item accumulates a WPT x WPT block in registers. Any strides, no packing.
* ``packed``: for CPU devices (pocl), where local memory is just cache and barriers split the
  work-item loops: A is packed transposed (``[K, M]``, rows padded to RM) and B padded to NB
  columns, then each work-item keeps an RM x NB block in vector registers (float16/double8 FMAs).
  On a 2-core AVX-512 CPU this reaches NumPy's OpenBLAS speed at 1024x1024.

``BURN_OPENCL_GEMM=naive|tiled|packed`` forces one (tests use it to cover all three).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from burn.tensor.dtype import DType
from burn_opencl.dtypes import COMPUTE, STORAGE, build_options, load
from burn_opencl.kernels import elementwise as ew
from burn_opencl.kernels.common import I64, LOCAL, broadcast_shape, collapse, global_size, new
from burn_opencl.tensor import CLTensor

if TYPE_CHECKING:
    from burn_opencl.runtime import Runtime

RM = 8  # rows of the packed kernel's register block
TS, TK, WG = 32, 16, 16  # tiled kernel: tile edge, k-step, work-group edge
SMALL = 32 * 32 * 32  # products up to this many multiply-adds use the naive kernel


def _naive_source(ad: DType, bd: DType, t: str) -> str:
    return f"""
#define T {t}
__kernel void mm(__global const {STORAGE[ad]}* A, __global const {STORAGE[bd]}* B, __global T* C,
                 long n, long M, long N, long K, long a_off, long a_bs, long a_sm, long a_sk,
                 long b_off, long b_bs, long b_sk, long b_sn) {{
  long w = get_global_id(0);
  if (w >= n) return;
  long j = w % N; long r = w / N; long i = r % M; long bb = r / M;
  long pa = a_off + bb * a_bs + i * a_sm, pb = b_off + bb * b_bs + j * b_sn;
  T acc = (T)0;
  for (long k = 0; k < K; k++)
    acc += (T){load(ad, "A", "pa + k * a_sk")} * (T){load(bd, "B", "pb + k * b_sk")};
  C[w] = acc;
}}"""


def _tiled_source(ad: DType, bd: DType, t: str) -> str:
    wpt = TS // WG
    return f"""
#define T {t}
#define TS {TS}
#define TK {TK}
#define WG {WG}
#define WPT {wpt}
__kernel __attribute__((reqd_work_group_size(WG, WG, 1)))
void mm(__global const {STORAGE[ad]}* A, __global const {STORAGE[bd]}* B, __global T* C,
        long M, long N, long K, long a_off, long a_bs, long a_sm, long a_sk,
        long b_off, long b_bs, long b_sk, long b_sn) {{
  int tx = get_local_id(0), ty = get_local_id(1);
  long j0 = get_group_id(0) * TS, i0 = get_group_id(1) * TS, bb = get_global_id(2);
  __local T As[TK][TS + 1];
  __local T Bs[TK][TS + 1];
  T acc[WPT][WPT];
  for (int p = 0; p < WPT; p++) for (int q = 0; q < WPT; q++) acc[p][q] = (T)0;
  long pa = a_off + bb * a_bs, pb = b_off + bb * b_bs;
  for (long k0 = 0; k0 < K; k0 += TK) {{
    for (int e = ty * WG + tx; e < TK * TS; e += WG * WG) {{
      int kk = e / TS, ii = e % TS;
      long gk = k0 + kk, gi = i0 + ii, gj = j0 + ii;
      As[kk][ii] = (gi < M && gk < K) ? (T){load(ad, "A", "pa + gi * a_sm + gk * a_sk")} : (T)0;
      Bs[kk][ii] = (gj < N && gk < K) ? (T){load(bd, "B", "pb + gk * b_sk + gj * b_sn")} : (T)0;
    }}
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int kk = 0; kk < TK; kk++) {{
      T av[WPT], bv[WPT];
      for (int p = 0; p < WPT; p++) av[p] = As[kk][ty + p * WG];
      for (int q = 0; q < WPT; q++) bv[q] = Bs[kk][tx + q * WG];
      for (int p = 0; p < WPT; p++) for (int q = 0; q < WPT; q++) acc[p][q] = fma(av[p], bv[q], acc[p][q]);
    }}
    barrier(CLK_LOCAL_MEM_FENCE);
  }}
  __global T* c = C + bb * M * N;
  for (int p = 0; p < WPT; p++) for (int q = 0; q < WPT; q++) {{
    long i = i0 + ty + p * WG, j = j0 + tx + q * WG;
    if (i < M && j < N) c[i * N + j] = acc[p][q];
  }}
}}"""


def _packed_source(ad: DType, bd: DType, t: str) -> str:
    v = 16 if t == "float" else 8
    nb = 2 * v
    tv = f"{t}{v}"
    rows0 = "\n    ".join(
        f"{{ T a = ap[{r}]; acc0[{r}] = fma(({tv})a, b0, acc0[{r}]); "
        f"acc1[{r}] = fma(({tv})a, b1, acc1[{r}]); }}"
        for r in range(RM)
    )
    return f"""
#define T {t}
#define RM {RM}
#define V {v}
#define NB {nb}
__kernel void pack_a(__global T* o, __global const {STORAGE[ad]}* A, long n, long M, long K, long Mp,
                     long a_off, long a_bs, long a_sm, long a_sk) {{
  long w = get_global_id(0);
  if (w >= n) return;
  long m = w % Mp; long r = w / Mp; long k = r % K; long bb = r / K;
  o[w] = m < M ? (T){load(ad, "A", "a_off + bb * a_bs + m * a_sm + k * a_sk")} : (T)0;
}}
__kernel void pack_b(__global T* o, __global const {STORAGE[bd]}* B, long n, long N, long K, long Np,
                     long b_off, long b_bs, long b_sk, long b_sn) {{
  long w = get_global_id(0);
  if (w >= n) return;
  long j = w % Np; long r = w / Np; long k = r % K; long bb = r / K;
  o[w] = j < N ? (T){load(bd, "B", "b_off + bb * b_bs + k * b_sk + j * b_sn")} : (T)0;
}}
__kernel void mm(__global const T* AT, __global const T* B, __global T* C, long M, long N, long K, long Mp,
                 long ldb, long b_off, long a_bs, long b_bs) {{
  long j0 = get_global_id(0) * NB, i0 = get_global_id(1) * RM, bb = get_global_id(2);
  __global const T* ap = AT + bb * a_bs + i0;
  __global const T* bp = B + b_off + bb * b_bs + j0;
  {tv} acc0[RM], acc1[RM];
  for (int r = 0; r < RM; r++) {{ acc0[r] = ({tv})0; acc1[r] = ({tv})0; }}
  for (long k = 0; k < K; k++) {{
    {tv} b0 = vload{v}(0, bp);
    {tv} b1 = vload{v}(0, bp + V);
    {rows0}
    ap += Mp;
    bp += ldb;
  }}
  __global T* c = C + bb * M * N;
  if (i0 + RM <= M && j0 + NB <= N) {{
    for (int r = 0; r < RM; r++) {{
      vstore{v}(acc0[r], 0, c + (i0 + r) * N + j0);
      vstore{v}(acc1[r], 0, c + (i0 + r) * N + j0 + V);
    }}
  }} else {{
    T tmp[NB];
    for (int r = 0; r < RM; r++) {{
      if (i0 + r >= M) break;
      vstore{v}(acc0[r], 0, tmp);
      vstore{v}(acc1[r], 0, tmp + V);
      for (int j = 0; j < NB && j0 + j < N; j++) c[(i0 + r) * N + j0 + j] = tmp[j];
    }}
  }}
}}"""


def _batch(a: CLTensor, b: CLTensor) -> tuple[tuple[int, ...], CLTensor, CLTensor, int, int, int]:
    """Broadcast batch dims; returns (batch shape, a, b, count, a's and b's batch strides).

    When the batch dims cannot be walked with one stride per operand, the operand is copied
    contiguous with its broadcast batch dims expanded.
    """
    abatch, bbatch = a.shape[:-2], b.shape[:-2]
    batch = broadcast_shape("matmul", [abatch, bbatch]) if abatch != bbatch else abatch
    count = 1
    for s in batch:
        count *= s

    def strides_of(t: CLTensor) -> tuple[int, ...]:
        off = len(batch) - (len(t.shape) - 2)
        out = [0] * len(batch)
        for d, size in enumerate(t.shape[:-2]):
            if size != 1:
                out[off + d] = t.strides[d]
        return tuple(out)

    sa, sb = strides_of(a), strides_of(b)
    dims, (ca, cb) = collapse(batch, [sa, sb])
    if len(dims) <= 1:
        return batch, a, b, count, (ca[0] if dims else 0), (cb[0] if dims else 0)
    # Rare: batch dims that no single stride walks. Materialize both with the full batch.
    a2 = _expand_copy(a, batch + a.shape[-2:])
    b2 = _expand_copy(b, batch + b.shape[-2:])
    return batch, a2, b2, count, a2.shape[-1] * a2.shape[-2], b2.shape[-1] * b2.shape[-2]


def _expand_copy(t: CLTensor, shape: tuple[int, ...]) -> CLTensor:
    off = len(shape) - len(t.shape)
    strides = [0] * len(shape)
    for d, size in enumerate(t.shape):
        if size != 1:
            strides[off + d] = t.strides[d]
    return ew.run(ew.CAST, [t.view(shape, tuple(strides), t.offset)], t.dtype)


def _mode(rt: Runtime, macs: int) -> str:
    forced = os.environ.get("BURN_OPENCL_GEMM")
    if forced in ("naive", "tiled", "packed"):
        return forced
    if macs <= SMALL:
        return "naive"
    return "packed" if rt.is_cpu else "tiled"


def matmul(a: CLTensor, b: CLTensor, out_dtype: DType) -> CLTensor:
    """``a @ b`` over the last two dims with broadcast batch dims, in `out_dtype` (float32/64).

    float16 inputs are computed in float32 by the caller.
    """
    rt = a.rt
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(
            f"matmul: shapes {a.shape} and {b.shape} do not match ({a.shape[-1]} != {b.shape[-2]})"
        )
    M, K, N = a.shape[-2], a.shape[-1], b.shape[-1]
    batch, a, b, nb, a_bs, b_bs = _batch(a, b)
    out = new(rt, batch + (M, N), out_dtype, "the result of matmul")
    if out.n == 0:
        return out
    if K == 0:
        return ew.run(ew.FILL, [], out_dtype, (0.0,), compute=out_dtype, out=out, shape=out.shape, rt=rt)
    t = COMPUTE[out_dtype]
    opts = build_options(a.dtype, b.dtype, out_dtype)
    a_sm, a_sk = a.strides[-2], a.strides[-1]
    b_sk, b_sn = b.strides[-2], b.strides[-1]
    mode = _mode(rt, nb * M * N * K)
    if mode == "naive":
        key = ("mm_naive", a.dtype, b.dtype, t)
        kernel = rt.kernel(
            key, "mm", lambda: _naive_source(a.dtype, b.dtype, t), opts, [None] * 3 + [I64] * 12
        )
        n = out.n
        rt.launch(
            kernel,
            global_size(n),
            (LOCAL,),
            a.buf,
            b.buf,
            out.buf,
            n,
            M,
            N,
            K,
            a.offset,
            a_bs,
            a_sm,
            a_sk,
            b.offset,
            b_bs,
            b_sk,
            b_sn,
        )
        return out
    if mode == "tiled":
        key = ("mm_tiled", a.dtype, b.dtype, t)
        kernel = rt.kernel(
            key, "mm", lambda: _tiled_source(a.dtype, b.dtype, t), opts, [None] * 3 + [I64] * 11
        )
        grid = (((N + TS - 1) // TS) * WG, ((M + TS - 1) // TS) * WG, nb)
        rt.launch(
            kernel,
            grid,
            (WG, WG, 1),
            a.buf,
            b.buf,
            out.buf,
            M,
            N,
            K,
            a.offset,
            a_bs,
            a_sm,
            a_sk,
            b.offset,
            b_bs,
            b_sk,
            b_sn,
        )
        return out
    key = ("mm_packed", a.dtype, b.dtype, t)
    kernels = rt.build(
        key,
        ("pack_a", "pack_b", "mm"),
        lambda: _packed_source(a.dtype, b.dtype, t),
        opts,
        lambda name: [None, None] + [I64] * 8 if name.startswith("pack") else [None] * 3 + [I64] * 8,
    )
    v = 16 if t == "float" else 8
    nbw = 2 * v
    Mp = (M + RM - 1) // RM * RM
    Np = (N + nbw - 1) // nbw * nbw
    na = nb if a_bs else 1
    at = new(rt, (na, K, Mp), out_dtype, "packed matmul operand")
    n = at.n
    rt.launch(
        kernels["pack_a"], global_size(n), (LOCAL,), at.buf, a.buf, n, M, K, Mp, a.offset, a_bs, a_sm, a_sk
    )
    if b.dtype is out_dtype and b_sn == 1 and N % nbw == 0:
        bp, ldb, b_off = b.buf, b_sk, b.offset
    else:
        nbb = nb if b_bs else 1
        packed = new(rt, (nbb, K, Np), out_dtype, "packed matmul operand")
        n = packed.n
        rt.launch(
            kernels["pack_b"],
            global_size(n),
            (LOCAL,),
            packed.buf,
            b.buf,
            n,
            N,
            K,
            Np,
            b.offset,
            b_bs,
            b_sk,
            b_sn,
        )
        bp, ldb, b_off, b_bs = packed.buf, Np, 0, (K * Np if b_bs else 0)
    rt.launch(
        kernels["mm"],
        (Np // nbw, Mp // RM, nb),
        (1, 1, 1),
        at.buf,
        bp,
        out.buf,
        M,
        N,
        K,
        Mp,
        ldb,
        b_off,
        K * Mp if a_bs else 0,
        b_bs,
    )
    return out
