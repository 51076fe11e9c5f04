"""An int8 x int8 -> int32 GEMM for x86 CPUs with AVX2: ``sums[i, j] = sum_p a[i, p] * w[j, p]``
with the activations ``a [m, k]`` in [-127, 127] and the weight ``w [n, k]`` any int8, packed once
(`pack_weight`) into the micro-kernel's panel layout.

The micro-kernel is LLVM IR emitted through numba's `intrinsic` (numba 0.68 / LLVM do not form
``vpmaddubsw`` from a loop; docs/benchmarks-log.md): per step of 4 input features it loads 16
weight columns' 4 bytes (two 32-byte vectors), broadcasts each of up to 4 activation rows' 4
bytes, and forms 4 x 16 int32 sums in 8 vector registers with

- ``vpmaddubsw(|w|, sign(a, w))``: 16 lanes of ``|w0| * a0' + |w1| * a1'`` (u8 x s8 pairs, summed in
  int16 with saturation), where ``a' = vpsignb(a, w)`` is ``a``, ``-a`` or 0 as ``w`` is positive,
  negative or 0, so ``|w| * a' = w * a``;
- ``vpmaddwd(that, 1)``: adjacent int16 lanes summed in int32, so each int32 lane holds 4 products;
- ``vpaddd`` into the accumulator.

Exactness: ``|w| <= 128`` (u8 holds |-128|) and ``|a'| <= 127``, so a pair is at most
``2 * 128 * 127 = 32512 < 2^15``: the int16 sums never saturate, whatever int8 weight (PyTorch's
qint8 may hold -128) and any activation the contract's rounding gives (clamped to [-127, 127]).
The int32 sums are exact up to ``k * 128 * 127 < 2^31`` (`MAX_K`). FBGEMM (PyTorch's x86 int8
backend) feeds ``vpmaddubsw`` unsigned activations (uint8 with a zero point, corrected through
the weight's column sums) and avoids the saturation by keeping them to 7 bits (``reduce_range``),
which would change burn's rounding; the sign trick keeps the contract's symmetric 8-bit
activations at one extra ``vpsignb``.

Blocking: the weight is packed as panels of 16 columns, each ``[steps, 16, 4]`` bytes (``steps =
ceil(k / 4)``, zeros past `k` and past `n`). For each block of `MC_ROWS` activation rows and each
block of `KC_STEPS` steps, the driver runs every panel over the block's row tiles: the panel's
block (48 KiB at most) stays in L2 next to the activation block (192 KiB at most), and each
tile's sums are loaded and stored once per k block. Threads split the panels
(`burn_ndarray.kernels.jit.bounds`), so each sum is the same serial code's at any thread count.
On a CPU without AVX2 (`HAS_AVX2`, llvmlite's host features) callers keep their portable path.
"""

from __future__ import annotations

from typing import Any

import llvmlite.binding as llvm_binding
import numpy as np
from llvmlite import ir
from numba import prange, types
from numba.core import cgutils
from numba.extending import intrinsic

from burn_ndarray.kernels.jit import bounds, jit, jit_parallel

Array = Any
# Whether this machine's CPU runs the kernel (numba compiles for the host CPU).
HAS_AVX2 = bool(llvm_binding.get_host_cpu_features().get("avx2", False))
# Columns a panel holds (two vectors of 8 int32 lanes) and input features a step sums.
PANEL = 16
STEP = 4
# Steps of a k block: 192 steps = 768 features (a 48 KiB panel block, in L2), so a BERT / GPT-2
# Linear of 768 inputs writes its sums once; 64 steps measured no faster (docs/guides/precision.md).
KC_STEPS = 192
# Rows of a block of activations (with its sums) the panels run over before the next block.
MC_ROWS = 256
# Rows of a register tile.
TILE_ROWS = 4
# The most input features whose int32 sums are exact (|w| <= 128, |a| <= 127).
MAX_K = (2**31 - 1) // (128 * 127)

_i8, _i16, _i32, _i1 = ir.IntType(8), ir.IntType(16), ir.IntType(32), ir.IntType(1)
_v32i8, _v16i16, _v8i32 = ir.VectorType(_i8, 32), ir.VectorType(_i16, 16), ir.VectorType(_i32, 8)


def _declare(module: ir.Module, name: str, ret: ir.Type, *params: ir.Type) -> ir.Function:
    return cgutils.get_or_insert_function(module, ir.FunctionType(ret, params), name)


def _tile_codegen(rows: int) -> Any:
    """The code generator of a ``rows x 16`` micro-kernel (see the module's docstring)."""

    def codegen(context: Any, builder: ir.IRBuilder, signature: Any, args: Any) -> None:
        a, a_off, lda, b, b_off, steps, c, c_off, ldc = args
        aty, bty, cty = signature.args[0], signature.args[3], signature.args[6]
        a_ptr = context.make_array(aty)(context, builder, a).data
        b_ptr = builder.bitcast(context.make_array(bty)(context, builder, b).data, _i8.as_pointer())
        c_ptr = context.make_array(cty)(context, builder, c).data
        module = builder.module
        sign = _declare(module, "llvm.x86.avx2.psign.b", _v32i8, _v32i8, _v32i8)
        absb = _declare(module, "llvm.abs.v32i8", _v32i8, _v32i8, _i1)
        maddubs = _declare(module, "llvm.x86.avx2.pmadd.ub.sw", _v16i16, _v32i8, _v32i8)
        maddwd = _declare(module, "llvm.x86.avx2.pmadd.wd", _v8i32, _v16i16, _v16i16)
        ones = ir.Constant(_v16i16, [1] * 16)
        zero8 = ir.Constant(ir.VectorType(_i32, 8), [0] * 8)

        def vec_ptr(base: Any, offset: Any, ty: ir.Type) -> Any:
            return builder.bitcast(builder.gep(base, [offset]), ty.as_pointer())

        # Accumulators: loaded from c (the caller zeroes it), kept in allocas that LLVM promotes.
        accs = []
        for r in range(rows):
            row_off = builder.add(c_off, builder.mul(lda.type(r), ldc))
            for h in range(2):
                slot = cgutils.alloca_once(builder, _v8i32)
                p = vec_ptr(c_ptr, builder.add(row_off, row_off.type(8 * h)), _v8i32)
                builder.store(builder.load(p, align=4), slot)
                accs.append((slot, p))
        a_rows = [builder.add(a_off, builder.mul(lda.type(r), lda)) for r in range(rows)]
        with cgutils.for_range(builder, steps) as loop:
            t = loop.index
            b_at = builder.add(b_off, builder.mul(t, t.type(PANEL * STEP)))
            wv = [
                builder.load(vec_ptr(b_ptr, builder.add(b_at, b_at.type(32 * h)), _v32i8), align=1)
                for h in range(2)
            ]
            wabs = [builder.call(absb, [v, _i1(0)]) for v in wv]
            for r in range(rows):
                word = builder.load(
                    vec_ptr(a_ptr, builder.add(a_rows[r], builder.mul(t, t.type(STEP))), _i32), align=1
                )
                bcast = builder.shuffle_vector(
                    builder.insert_element(ir.Constant(_v8i32, ir.Undefined), word, _i32(0)),
                    ir.Constant(_v8i32, ir.Undefined),
                    zero8,
                )
                av = builder.bitcast(bcast, _v32i8)
                for h in range(2):
                    pairs = builder.call(maddubs, [wabs[h], builder.call(sign, [av, wv[h]])])
                    quads = builder.call(maddwd, [pairs, ones])
                    slot = accs[2 * r + h][0]
                    builder.store(builder.add(builder.load(slot), quads), slot)
        for slot, p in accs:
            builder.store(builder.load(slot), p, align=4)

    return codegen


def _make_tile(rows: int) -> Any:
    @intrinsic
    def tile(
        typingctx: Any,
        a: Any,
        a_off: Any,
        lda: Any,
        b: Any,
        b_off: Any,
        steps: Any,
        c: Any,
        c_off: Any,
        ldc: Any,
    ) -> Any:
        sig = types.void(a, a_off, lda, b, b_off, steps, c, c_off, ldc)
        return sig, _tile_codegen(rows)

    return tile


_tile1, _tile2, _tile3, _tile4 = (_make_tile(r) for r in range(1, 5))


def pack_weight(w: Array) -> Array:
    """The int8 ``w [n, k]`` as the kernel's panels: uint8 bytes ``[panels, steps, 16, 4]``
    (zeros past `n` and `k`), flat. Done once per weight (the caller keeps it).

    Example:
        >>> import numpy as np
        >>> w = np.arange(6, dtype=np.int8).reshape(2, 3)
        >>> pack_weight(w).shape  # one panel of 16 columns, one step of 4 features
        (64,)
        >>> a = np.array([[1, -1, 2, 0]], np.int8)  # k padded to 4 with a zero
        >>> sums = np.zeros((1, 16), np.int32)
        >>> gemm_range(0, 1, a, pack_weight(w), sums) if HAS_AVX2 else None
        >>> sums[0, :2].tolist() if HAS_AVX2 else (a[:, :3] @ w.T.astype(np.int32))[0].tolist()
        [3, 9]
    """
    n, k = w.shape
    panels, steps = -(-n // PANEL), -(-k // STEP)
    padded = np.zeros((panels * PANEL, steps * STEP), np.int8)
    padded[:n, :k] = w
    return (
        np.ascontiguousarray(padded.reshape(panels, PANEL, steps, STEP).transpose(0, 2, 1, 3))
        .view(np.uint8)
        .reshape(-1)
    )


@jit
def gemm_range(lo: int, hi: int, a: Array, packed: Array, sums: Array) -> None:
    """``sums[:, 16 lo : 16 hi]`` (int32, zeroed by the caller) for the panels `lo` to `hi`: ``a``
    is int8 ``[m, 4 steps]`` (zeros past k), ``sums`` int32 ``[m, 16 panels]``."""
    m, lda = a.shape
    steps = lda // STEP
    ldc = sums.shape[1]
    for r0 in range(0, m, MC_ROWS):
        r1 = min(m, r0 + MC_ROWS)
        full = r1 - (r1 - r0) % TILE_ROWS
        for p0 in range(0, steps, KC_STEPS):
            block = min(KC_STEPS, steps - p0)
            for j in range(lo, hi):
                b_off = (j * steps + p0) * (PANEL * STEP)
                for i in range(r0, full, TILE_ROWS):
                    _tile4(a, i * lda + p0 * STEP, lda, packed, b_off, block, sums, i * ldc + j * PANEL, ldc)
                rest = r1 - full
                a_off, c_off = full * lda + p0 * STEP, full * ldc + j * PANEL
                if rest == 3:
                    _tile3(a, a_off, lda, packed, b_off, block, sums, c_off, ldc)
                elif rest == 2:
                    _tile2(a, a_off, lda, packed, b_off, block, sums, c_off, ldc)
                elif rest == 1:
                    _tile1(a, a_off, lda, packed, b_off, block, sums, c_off, ldc)


@jit_parallel
def gemm(parts: int, a: Array, packed: Array, sums: Array) -> None:
    """`gemm_range` over every panel, chunks of panels on the pool."""
    panels = sums.shape[1] // PANEL
    for c in prange(parts):
        lo, hi = bounds(panels, c, parts)
        gemm_range(lo, hi, a, packed, sums)
