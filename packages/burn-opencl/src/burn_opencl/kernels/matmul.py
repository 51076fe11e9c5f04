"""Batched matrix products: three kernels for three regimes.

* ``naive``: one work-item per output, any strides; for small products, where one launch beats
  the packing launches of the others.
* ``tiled``: the classic GPU kernel: each work-group stages TK x TS tiles of A and B in local
  memory and each work-item accumulates a WPT x WPT block in registers. Any strides, no packing.
* ``packed``: for CPU devices (pocl), where local memory is just cache and barriers split the
  work-item loops: A is packed into row panels (``[K][RM]`` each) and B into column panels
  (``[K][NB]``), zero-padded, so that each work-item streams two contiguous panels while it keeps an
  RM x NB block of C in vector registers. The block is sized from the device's preferred vector
  width (see `block_for`): 6 x 16 floats for AVX2. On a 2-core AVX2 EPYC this runs at 100-150
  GFLOP/s per core when the machine is idle, near the FMA peak, against 6.8 before the rewrite.

``BURN_OPENCL_GEMM=naive|tiled|packed`` forces one (tests use it to cover all three).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from burn.foundations.dtype import DType
from burn_opencl.dtypes import COMPUTE, STORAGE, build_options, load
from burn_opencl.kernels import elementwise as ew
from burn_opencl.kernels.common import I64, LOCAL, broadcast_shape, collapse, global_size, new
from burn_opencl.tensor import CLTensor

if TYPE_CHECKING:
    from burn_opencl.runtime import Runtime

L2_BYTES = 256 * 1024  # B panels kept hot per core: half of a 512 KiB L2, all of a 256 KiB one
PACK_WG = 64  # work-group size of the packing kernels (their global size is padded to it)
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


@dataclass(frozen=True)
class Block:
    """Register block of the packed kernel: each work-item keeps RM x (NV * V) outputs in RM * NV
    vectors of V lanes, plus NV vectors of B and one broadcast of A, all in registers."""

    rm: int
    nv: int
    v: int

    @property
    def nb(self) -> int:
        return self.nv * self.v


_BLOCKS: dict[tuple[Any, str], Block] = {}


def _is_pocl(device: Any) -> bool:
    try:
        return "Portable Computing Language" in str(device.platform.name)
    except Exception:  # a fake or a driver that does not answer
        return False


def _packed_kernels(
    rt: Runtime, a_dtype: Any, b_dtype: Any, t: str, opts: Any
) -> tuple[Block, dict[str, Any]]:
    """The packed GEMM's kernels for `block_for`'s block; where the driver cannot build that block's
    vectors, the 256-bit block. (pocl 3.0 on an AVX-512 CPU prefers 16-float vectors, but its
    compiler targets the CPU without avx512f: the build 'succeeds' with ABI warnings and the
    program has no kernels, so clCreateKernel answers INVALID_KERNEL_NAME.)"""
    import pyopencl as cl

    from burn_opencl.runtime import KernelBuildError

    def build(blk: Block) -> dict[str, Any]:
        return rt.build(
            ("mm_packed", a_dtype, b_dtype, t, blk),
            ("pack_a", "pack_b", "mm"),
            lambda: _packed_source(a_dtype, b_dtype, t, blk),
            opts,
            lambda name: [None, None] + [I64] * 6 if name.startswith("pack") else [None] * 3 + [I64] * 8,
        )

    blk = block_for(rt, t)
    try:
        return blk, build(blk)
    except (cl.Error, KernelBuildError):
        size = 8 if t == "double" else 4
        if blk.v * size <= 32 or os.environ.get("BURN_OPENCL_GEMM_BLOCK"):
            raise
    narrow = Block(6, 2, 32 // size)
    _BLOCKS[(rt.cl_device, t)] = narrow
    return narrow, build(narrow)


def block_for(rt: Runtime, t: str) -> Block:
    """The register block for compute type `t` on `rt`'s device, from its preferred vector width.

    The block must fit the vector register file or the accumulators spill: 16 registers for
    128/256-bit SIMD (SSE, AVX2): 6 x 2 vectors (12 accumulators + 2 B + 1 A); with 512-bit vectors
    (AVX-512, 32 registers) 8 x 2. ``BURN_OPENCL_GEMM_BLOCK=RMxNVxV`` overrides it (for tuning).
    """
    forced = os.environ.get("BURN_OPENCL_GEMM_BLOCK")
    if forced:
        try:
            rm, nv, v = (int(x) for x in forced.lower().split("x"))
            if rm > 0 and nv > 0 and v in (1, 2, 4, 8, 16):
                return Block(rm, nv, v)
        except ValueError:
            pass
        raise ValueError(f"BURN_OPENCL_GEMM_BLOCK={forced!r}: expected RMxNVxV such as 6x2x8")
    key = (rt.cl_device, t)
    found = _BLOCKS.get(key)
    if found is None:
        size = 8 if t == "double" else 4
        try:
            pref = int(getattr(rt.cl_device, f"preferred_vector_width_{t}"))
        except Exception:  # a driver that does not answer: assume 256-bit vectors
            pref = 0
        # Clamp to 128..512-bit vectors: a device answering 1 still has SIMD units LLVM can use.
        v = min(max(pref or 32 // size, 16 // size), 64 // size)
        if _is_pocl(rt.cl_device):
            # pocl's binary distribution compiles kernels without avx512f even where the CPU has
            # it and the device prefers 16 floats: 512-bit kernels then fail to build, or build
            # and abort at run time (seen with pocl 3.0 on an AVX-512 EPYC). 256 bits at most.
            v = min(v, 32 // size)
        found = Block(8, 2, v) if v * size >= 64 else Block(6, 2, v)
        _BLOCKS[key] = found
    return found


def _packed_source(ad: DType, bd: DType, t: str, blk: Block) -> str:
    # Plain ``+=``/``*`` and pointer loads, not fma()/vload: pocl 3.0's kernel library leaves those
    # builtins as out-of-line calls, which cost ~10x in this loop; FP_CONTRACT (on by default in
    # OpenCL C) still fuses the multiply-add into one FMA instruction.
    rm, nv, v = blk.rm, blk.nv, blk.v
    tv = f"{t}{v}" if v > 1 else t
    accs = [[f"c{r}_{c}" for c in range(nv)] for r in range(rm)]
    decl = " ".join(f"{tv} {a} = ({tv})0;" for row in accs for a in row)
    loadb = " ".join(f"{tv} b{c} = bp[{c}];" for c in range(nv))
    rows = "\n    ".join(
        f"{{ {tv} a = ({tv})ap[{r}]; " + " ".join(f"{accs[r][c]} += a * b{c};" for c in range(nv)) + " }"
        for r in range(rm)
    )

    def put(r: int, c: int, dst: str) -> str:
        return f"vstore{v}({accs[r][c]}, 0, {dst});" if v > 1 else f"*({dst}) = {accs[r][c]};"

    full = "\n    ".join(put(r, c, f"c + {r} * N + {c * v}") for r in range(rm) for c in range(nv))
    edge = "\n    ".join(
        f"if (i0 + {r} < M) {{ "
        + " ".join(put(r, c, f"tmp + {c * v}") for c in range(nv))
        + f" for (int j = 0; j < NB && j0 + j < N; j++) c[{r} * N + j] = tmp[j]; }}"
        for r in range(rm)
    )
    return f"""
#define T {t}
#define TV {tv}
#define RM {rm}
#define NB {blk.nb}
// A as row panels [batch][Mp / RM][K][RM] (zero rows past M), one work-item per (k, panel).
__kernel void pack_a(__global T* o, __global const {STORAGE[ad]}* A, long M, long K,
                     long a_off, long a_bs, long a_sm, long a_sk) {{
  long k = get_global_id(0);
  if (k >= K) return;
  long p = get_global_id(1), bb = get_global_id(2);
  __global T* d = o + ((bb * (long)get_global_size(1) + p) * K + k) * RM;
  long base = a_off + bb * a_bs + k * a_sk;
  for (int r = 0; r < RM; r++) {{
    long m = p * RM + r;
    d[r] = m < M ? (T){load(ad, "A", "base + m * a_sm")} : (T)0;
  }}
}}
// B as column panels [batch][Np / NB][K][NB] (zero columns past N), one work-item per (k, panel).
__kernel void pack_b(__global T* o, __global const {STORAGE[bd]}* B, long N, long K,
                     long b_off, long b_bs, long b_sk, long b_sn) {{
  long k = get_global_id(0);
  if (k >= K) return;
  long p = get_global_id(1), bb = get_global_id(2);
  __global T* d = o + ((bb * (long)get_global_size(1) + p) * K + k) * NB;
  __global const {STORAGE[bd]}* src = B + b_off + bb * b_bs + k * b_sk + p * NB * b_sn;
  if (b_sn == 1 && (p + 1) * NB <= N) {{  // the common case: a unit-stride copy LLVM vectorizes
    for (int j = 0; j < NB; j++) d[j] = (T){load(bd, "src", "j")};
  }} else {{
    for (int j = 0; j < NB; j++) d[j] = p * NB + j < N ? (T){load(bd, "src", "j * b_sn")} : (T)0;
  }}
}}
// One work-item per RM x NB block of C; both panels are read contiguously, one k per step.
// Blocks are numbered so that JB column panels of B (sized to stay in L2) are reused by every
// row panel of A before moving on: work-items run in id order, so B is read from memory once.
__kernel void mm(__global const T* AP, __global const T* BP, __global T* C, long M, long N, long K,
                 long a_bs, long b_bs, long nI, long nJ, long JB) {{
  long t = get_global_id(0), bb = get_global_id(1);
  long jb = t / (nI * JB), rest = t - jb * nI * JB;
  long width = min(JB, nJ - jb * JB);
  long ip = rest / width, jp = jb * JB + rest % width;
  __global const T* ap = AP + bb * a_bs + ip * K * RM;
  __global const TV* bp = (__global const TV*)(BP + bb * b_bs + jp * K * NB);
  long i0 = ip * RM, j0 = jp * NB;
  {decl}
  for (long k = 0; k < K; k++) {{
    {loadb}
    {rows}
    ap += RM;
    bp += {nv};
  }}
  __global T* c = C + bb * M * N + i0 * N + j0;
  if (i0 + RM <= M && j0 + NB <= N) {{
    {full}
  }} else {{
    T tmp[NB];
    {edge}
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
    blk, kernels = _packed_kernels(rt, a.dtype, b.dtype, t, opts)
    Mp = (M + blk.rm - 1) // blk.rm * blk.rm
    Np = (N + blk.nb - 1) // blk.nb * blk.nb
    nI, nJ = Mp // blk.rm, Np // blk.nb
    # B panels per L2-sized group (see the mm kernel): at 2048^2 this took 55 to 84 GFLOP/s.
    jb = max(1, min(nJ, L2_BYTES // (K * blk.nb * (8 if t == "double" else 4))))
    Kp = (K + PACK_WG - 1) // PACK_WG * PACK_WG
    na = nb if a_bs else 1
    ap = new(rt, (na, Mp, K), out_dtype, "packed matmul operand")
    rt.launch(
        kernels["pack_a"],
        (Kp, Mp // blk.rm, na),
        (PACK_WG, 1, 1),
        ap.buf,
        a.buf,
        M,
        K,
        a.offset,
        a_bs,
        a_sm,
        a_sk,
    )
    nbb = nb if b_bs else 1
    bp = new(rt, (nbb, Np, K), out_dtype, "packed matmul operand")
    rt.launch(
        kernels["pack_b"],
        (Kp, Np // blk.nb, nbb),
        (PACK_WG, 1, 1),
        bp.buf,
        b.buf,
        N,
        K,
        b.offset,
        b_bs,
        b_sk,
        b_sn,
    )
    rt.launch(
        kernels["mm"],
        (nI * nJ, nb),
        (1, 1),
        ap.buf,
        bp.buf,
        out.buf,
        M,
        N,
        K,
        Mp * K if a_bs else 0,
        Np * K if b_bs else 0,
        nI,
        nJ,
        jb,
    )
    return out
