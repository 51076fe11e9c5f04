"""The float family (`burn.backend.ops.float`) on NumPy arrays: the shared bodies
(`burn.backend.xp.float`) plus what NumPy does its own way (`FloatOps`), and the threaded paths
of large tensors in front of them (`ThreadedFloatOps`).

Ops that map 1:1 onto a ufunc are the ufunc itself, bound as a class attribute: ufuncs are not
descriptors, so ``self.float_add(a, b)`` *is* ``np.add(a, b)`` with no Python frame in between.
Scalar ops pass the Python scalar straight to NumPy, whose NEP 50 rules keep the tensor's dtype,
except for bfloat16, which ml_dtypes would widen to float32: there the scalar is typed first.
float16 and bfloat16 reductions and matmul run in float32 (NumPy has no BLAS or accumulating
kernels for them) and cast back. The defaults in burn-core compose the math ops from others (a
Newton-refined ``atan``, a log-step scan); NumPy has every one of them as a single kernel.

The ``float_*_owned`` ops write into an operand handed over to them when `runtime.ownership`
proves nothing else sees it (level 2 of `burn.foundations.ownership`); otherwise they are the
plain op.

Threaded paths: element-wise arithmetic and sums along a dim by compiled kernels on numba's TBB
pool when it runs (`burn_ndarray.kernels.float`), else on NumPy chunks (and the serial row kernel)
on the Python pool; ``exp``, ``log``, ``sqrt`` and ``tanh`` on NumPy chunks on the Python pool
(NumPy's SIMD loops are not numba's: other bits). Small tensors keep the single-threaded path at
the cost of one size check: the ops whose threaded path only helps with several threads
(`UFUNC_OPS`) are bound to the plain ufunc itself while the count is 1 (`_bind`). The thresholds
are `burn_ndarray.runtime.split`'s. Element-wise results are the same bits as the single-threaded
ops at any thread count.

bfloat16: ml_dtypes' element-wise loops take one value at a time (about 2.7 ns a value for an
add, 0.2 for float32). Large bfloat16 arithmetic (both operands bfloat16, or one with a scalar)
runs float32's loop on the widened values and rounds once (`burn_ndarray.ops.rounding`): ml_dtypes
computes each value in float32 and rounds it, so the bits are the same. The arithmetic ops keep
their wrappers at one thread too once a tensor was first cast to bfloat16 (an autocast step's
casts): a process that never uses bfloat16 keeps the bare ufuncs.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from burn.backend.device import Device
from burn.backend.xp.float import FLOAT_SCALAR_UFUNCS, FLOAT_UFUNCS, XpFloatOps
from burn.backend.xp.tensor_common import bind_ufuncs
from burn.foundations.distribution import Bernoulli, Distribution, Normal, Uniform
from burn.foundations.dtype import DType
from burn_ndarray import kernels
from burn_ndarray.kernels import ADD, DIV, MUL, SUB
from burn_ndarray.kernels.erf import erf
from burn_ndarray.ops import kinds, reductions
from burn_ndarray.ops.kinds import KindOps
from burn_ndarray.ops.reductions import MAX_SIZE as GEMV_SUM_MAX_SIZE
from burn_ndarray.ops.reductions import gemv_sum
from burn_ndarray.ops.rounding import COMPILED_MIN_SIZE as ROUNDED_MIN_SIZE
from burn_ndarray.ops.rounding import add_row, to_dtype
from burn_ndarray.runtime import gemm, split, tbb, threads
from burn_ndarray.runtime.busy import follow as follow_load
from burn_ndarray.runtime.dtypes import BF16, BF16_SCALAR, F32, F64, LOW, NP_OF
from burn_ndarray.runtime.ownership import OWNED, exclusive

Array = Any
_rc = sys.getrefcount
_ndarray = np.ndarray
_add_reduce = np.add.reduce

# ``x^T @ g`` with fewer rows than columns runs as ``(g^T @ x)^T`` from this many elements of x^T
# (`float_matmul`), which OpenBLAS takes faster on every such shape measured; shapes with more rows
# than columns lose, and keep the plain product (docs/benchmarks-log.md, burn-ndarray measurements).
TRANSPOSED_LHS_MIN_SIZE = 1 << 13
# ``g @ W^T`` (an input gradient: W^T a transposed view of a C-order weight) with at most this many rows
# runs as ``(W @ g^T)^T``, copied back to C order, from `TRANSPOSED_RHS_MIN_WORK` multiply-adds: faster up
# to 32 rows, even at 64, slower from 128 and on the smallest products (docs/benchmarks-log.md, burn-ndarray
# measurements).
TRANSPOSED_RHS_MAX_ROWS = 32
TRANSPOSED_RHS_MIN_WORK = 1 << 19
TRANSPOSED_RHS_MIN_SIZE = TRANSPOSED_RHS_MIN_WORK // TRANSPOSED_RHS_MAX_ROWS  # of W: below, too little work


def _swapped_product(lhs: Any, rhs: Any) -> Any:
    """``lhs @ rhs`` (2-D, float32/float64) as the transposed product of the transposed operands
    where OpenBLAS is faster that way (see the thresholds above), else None."""
    rows = lhs.shape[0]
    if lhs.size >= TRANSPOSED_LHS_MIN_SIZE and rows < rhs.shape[1]:
        if lhs.strides[0] < lhs.strides[1] and rhs.flags.c_contiguous:
            # x^T @ g (a weight gradient) with fewer rows than columns: OpenBLAS is faster on
            # (g^T @ x)^T, the result then in F order.
            return rhs.T.dot(lhs.T).T
    if (
        rows <= TRANSPOSED_RHS_MAX_ROWS
        and rows * rhs.size >= TRANSPOSED_RHS_MIN_WORK
        and rhs.strides[0] < rhs.strides[1]
        and rhs.flags.f_contiguous
        and lhs.flags.c_contiguous
    ):
        # g @ W^T with few rows: OpenBLAS is faster on (W @ g^T)^T; back to C order.
        return np.ascontiguousarray(rhs.T.dot(lhs.T).T)
    return None


def _rows_product(rows: Any, matrix: Any) -> Any:
    """``rows @ matrix`` of two 2-D operands: split between threads by `gemm.matmul` where it
    applies (NumPy's BLAS on one thread while other processes hold the cores), else one GEMM.
    Products below `gemm.MIN_MACS` go straight to BLAS: neither look pays on them (per-op cost)."""
    if rows.size * matrix.shape[1] < gemm.MIN_MACS:
        return rows.dot(matrix)
    follow_load()
    product = gemm.matmul(rows, matrix)
    return rows.dot(matrix) if product is None else product


def _blas_matmul(lhs: Any, rhs: Any) -> Any:
    """``lhs @ rhs`` for two float32 or two float64 operands, through BLAS's 2-D GEMM where it can.

    ndarray.dot reaches the same BLAS GEMM as np.matmul for 2-D operands, without the gufunc
    dispatch that costs a few microseconds per call on small matrices."""
    if rhs.ndim == 2:
        if lhs.ndim == 2:
            # Two size checks on the way for small products (the per-op overhead).
            if lhs.size >= TRANSPOSED_LHS_MIN_SIZE or rhs.size >= TRANSPOSED_RHS_MIN_SIZE:
                # NumPy's BLAS on one thread while other processes hold the cores (`runtime.busy`):
                # looked at from the large products only, off the small ones' per-op cost.
                follow_load()
                swapped = _swapped_product(lhs, rhs)
                if swapped is not None:
                    return swapped
                # Several threads: blocks handed out one at a time on TBB's pool, which a
                # stalled thread cannot hold up as it holds up OpenBLAS's fixed shares.
                split_product = gemm.matmul(lhs, rhs)
                if split_product is not None:
                    return split_product
            return lhs.dot(rhs)
        if lhs.ndim > 2 and lhs.size:
            # [..., M, K] @ [K, N] (a Linear on a sequence): one GEMM over all the rows, which
            # BLAS threads well, instead of NumPy's one small GEMM per matrix
            # (docs/benchmarks-log.md, burn-ndarray measurements).
            rows = lhs.reshape(-1, lhs.shape[-1])  # a copy only if lhs is not foldable
            return _rows_product(rows, rhs).reshape(*lhs.shape[:-1], rhs.shape[1])
    elif lhs.ndim >= rhs.ndim and lhs.size and math.prod(rhs.shape[:-2]) == 1:
        # [..., M, K] @ [1, .., 1, K, N] (a matrix broadcast over a batch at equal rank, as ONNX
        # import gives GPT-2's tied LM head): the same one GEMM over all the rows. np.matmul
        # runs one GEMM per matrix there, 2-3x slower on [8, 128, 256] @ [1, 256, 50257]
        # (docs/benchmarks-log.md, training steps).
        rows = lhs.reshape(-1, lhs.shape[-1])
        matrix = rhs.reshape(rhs.shape[-2:])  # a view: only unit dims dropped
        return _rows_product(rows, matrix).reshape(*lhs.shape[:-1], rhs.shape[-1])
    return np.matmul(lhs, rhs)


# Comparisons with a scalar too are bare ufuncs: NumPy takes the Python scalar itself (NEP 50).
@bind_ufuncs(np, FLOAT_UFUNCS | FLOAT_SCALAR_UFUNCS)
class FloatOps(KindOps, XpFloatOps):
    """The ``float_*`` ops of `burn_ndarray.NdArray`."""

    rng: np.random.Generator
    # Bound to NumPy's ufuncs (`bind_ufuncs`), or to the threaded wrappers (`ThreadedFloatOps`).
    float_add: Any
    float_sub: Any
    float_mul: Any
    float_div: Any
    float_exp: Any
    float_log: Any
    float_sqrt: Any
    float_neg: Any
    float_tanh: Any

    # -- random: NumPy's generator ------------------------------------------------------------
    def float_random(
        self, shape: tuple[int, ...], distribution: Distribution, device: Device, dtype: DType
    ) -> Array:
        target = NP_OF[dtype]
        work = F64 if target is F64 else F32  # the generator draws float32 natively: half the work
        rng = self.rng
        if isinstance(distribution, Uniform):
            low, high = distribution.low, distribution.high
            values = rng.random(shape, dtype=work)
            values *= high - low
            values += low
            values = values.astype(target, copy=False)
            if high > low:
                # Rounding (scaling, or the cast to a narrower type) may land on `high`: keep [low, high).
                np.minimum(values, np.nextafter(target.type(high), target.type(low)), out=values)
            return values
        if isinstance(distribution, Normal):
            values = rng.standard_normal(shape, dtype=work)
            values *= distribution.std
            values += distribution.mean
            return values.astype(target, copy=False)
        if isinstance(distribution, Bernoulli):
            return (rng.random(shape) < distribution.prob).astype(target)
        raise TypeError(f"float_random: unknown distribution {distribution!r}")

    # -- matmul: BLAS has no float16/bfloat16, and 2-D GEMM skips the gufunc dispatch ------------
    def float_matmul(self, lhs: Array, rhs: Array) -> Array:
        dtype = lhs.dtype
        if rhs.dtype is dtype and (dtype is F32 or dtype is F64):
            return _blas_matmul(lhs, rhs)
        if dtype in LOW or rhs.dtype in LOW:
            # NumPy has no float16/bfloat16 GEMM: the operands (already rounded to their dtype)
            # widen exactly to float32 (float64 beside a float64 operand), the tuned product
            # runs, and its result is rounded once to the low dtype. Numerically what a GPU's
            # half GEMM with float32 accumulation gives, at float32's speed; an autocast matmul
            # (`burn.tensor.autocast`) lands here. Casts with order K keep a transposed view's
            # layout, so `_blas_matmul` still hands BLAS a transpose flag.
            out_dtype = np.result_type(dtype, rhs.dtype)
            work = np.promote_types(out_dtype, F32)
            product = _blas_matmul(lhs.astype(work, copy=False), rhs.astype(work, copy=False))
            return to_dtype(product, out_dtype)
        return np.matmul(lhs, rhs)

    # -- scalars: NEP 50 keeps the dtype for a Python scalar, so only bfloat16's is typed --------
    # (typing every scalar, as the shared ops do, costs a per-op share: docs/benchmarks-log.md, burn-ndarray
    # measurements)
    def float_add_scalar(self, lhs: Array, rhs: float) -> Array:
        if lhs.dtype is BF16:
            return _bfloat16_scalar(np.add, lhs, rhs)
        return lhs + rhs

    def float_sub_scalar(self, lhs: Array, rhs: float) -> Array:
        if lhs.dtype is BF16:
            return _bfloat16_scalar(np.subtract, lhs, rhs)
        return lhs - rhs

    def float_mul_scalar(self, lhs: Array, rhs: float) -> Array:
        if lhs.dtype is BF16:
            return _bfloat16_scalar(np.multiply, lhs, rhs)
        return lhs * rhs

    def float_div_scalar(self, lhs: Array, rhs: float) -> Array:
        if lhs.dtype is BF16:
            return _bfloat16_scalar(np.true_divide, lhs, rhs)
        return lhs / rhs

    def float_cast(self, tensor: Array, dtype: DType) -> Array:
        target = NP_OF[dtype]
        if target is BF16:
            bfloat16_in_use()
        return to_dtype(tensor, target)

    def float_remainder_scalar(self, lhs: Array, rhs: float) -> Array:
        return np.remainder(lhs, BF16_SCALAR(rhs) if lhs.dtype is BF16 else rhs)

    def float_clamp_min(self, tensor: Array, min: float) -> Array:
        return np.maximum(tensor, BF16_SCALAR(min) if tensor.dtype is BF16 else min)

    def float_clamp_max(self, tensor: Array, max: float) -> Array:
        return np.minimum(tensor, BF16_SCALAR(max) if tensor.dtype is BF16 else max)

    def float_clamp(self, tensor: Array, min: float, max: float) -> Array:
        if tensor.dtype is BF16:
            return np.minimum(np.maximum(tensor, BF16_SCALAR(min)), BF16_SCALAR(max))
        return np.clip(tensor, min, max)

    # -- erf: NumPy has none (`kernels.erf`, vectorized) ---------------------------------------
    def float_erf(self, tensor: Array) -> Array:
        return erf(tensor).astype(tensor.dtype, copy=False)

    # -- trigonometric and hyperbolic functions, rounding toward zero --------------------------
    float_tan = np.tan
    float_sinh = np.sinh
    float_cosh = np.cosh
    float_asin = np.arcsin
    float_acos = np.arccos
    float_atan = np.arctan
    float_atan2 = np.arctan2
    float_asinh = np.arcsinh
    float_acosh = np.arccosh
    float_atanh = np.arctanh
    float_trunc = np.trunc
    float_fmod = np.fmod  # the dividend's sign, like C

    def float_fmod_scalar(self, lhs: Array, rhs: float) -> Array:
        return np.fmod(lhs, BF16_SCALAR(rhs) if lhs.dtype is BF16 else rhs)

    # -- cumulative ops -----------------------------------------------------------------------
    def float_cumprod(self, tensor: Array, dim: int) -> Array:
        if tensor.dtype in LOW:  # accumulate in float32, as the other reductions do
            return np.cumprod(tensor, axis=dim, dtype=F32).astype(tensor.dtype)
        return np.cumprod(tensor, axis=dim)

    def float_cummax(self, tensor: Array, dim: int) -> Array:
        return np.maximum.accumulate(tensor, axis=dim)

    def float_cummin(self, tensor: Array, dim: int) -> Array:
        return np.minimum.accumulate(tensor, axis=dim)

    # -- kind-generic bodies (`kinds`) --------------------------------------------------------
    float_into_data = kinds.into_data
    float_device = kinds.device
    float_to_device = kinds.to_device
    float_scatter_add = kinds.scatter_add
    float_select_add = kinds.select_add
    float_unfold = kinds.unfold
    float_gather_nd = kinds.gather_nd
    float_scatter_nd = kinds.scatter_nd
    float_scatter_assign = kinds.scatter_assign
    float_select_assign = kinds.select_assign
    float_cross = kinds.cross

    # -- the ``*_owned`` ops: in place on an operand `runtime.ownership` proves is this call's ---
    # Each op checks the counts inline: a helper taking the array would add its own references.
    def float_add_owned(self, lhs: Array, rhs: Array) -> Array:
        if _rc(lhs) == OWNED and exclusive(lhs, rhs):
            return np.add(lhs, rhs, out=lhs)
        if _rc(rhs) == OWNED and exclusive(rhs, lhs):
            return np.add(lhs, rhs, out=rhs)
        return self.float_add(lhs, rhs)

    def float_sub_owned(self, lhs: Array, rhs: Array) -> Array:
        if _rc(lhs) == OWNED and exclusive(lhs, rhs):
            return np.subtract(lhs, rhs, out=lhs)
        if _rc(rhs) == OWNED and exclusive(rhs, lhs):
            return np.subtract(lhs, rhs, out=rhs)
        return self.float_sub(lhs, rhs)

    def float_mul_owned(self, lhs: Array, rhs: Array) -> Array:
        if _rc(lhs) == OWNED and exclusive(lhs, rhs):
            return np.multiply(lhs, rhs, out=lhs)
        if _rc(rhs) == OWNED and exclusive(rhs, lhs):
            return np.multiply(lhs, rhs, out=rhs)
        return self.float_mul(lhs, rhs)

    def float_div_owned(self, lhs: Array, rhs: Array) -> Array:
        if _rc(lhs) == OWNED and exclusive(lhs, rhs):
            return np.true_divide(lhs, rhs, out=lhs)
        if _rc(rhs) == OWNED and exclusive(rhs, lhs):
            return np.true_divide(lhs, rhs, out=rhs)
        return self.float_div(lhs, rhs)

    # Scalar ops: float32/float64 only, where NEP 50 keeps the array's dtype for a Python scalar
    # (the plain ops type the scalar only for bfloat16).
    def float_add_scalar_owned(self, lhs: Array, rhs: float) -> Array:
        if _rc(lhs) == OWNED and exclusive(lhs, None):
            return np.add(lhs, rhs, out=lhs)
        return self.float_add_scalar(lhs, rhs)

    def float_sub_scalar_owned(self, lhs: Array, rhs: float) -> Array:
        if _rc(lhs) == OWNED and exclusive(lhs, None):
            return np.subtract(lhs, rhs, out=lhs)
        return self.float_sub_scalar(lhs, rhs)

    def float_mul_scalar_owned(self, lhs: Array, rhs: float) -> Array:
        if _rc(lhs) == OWNED and exclusive(lhs, None):
            return np.multiply(lhs, rhs, out=lhs)
        return self.float_mul_scalar(lhs, rhs)

    def float_div_scalar_owned(self, lhs: Array, rhs: float) -> Array:
        if _rc(lhs) == OWNED and exclusive(lhs, None):
            return np.true_divide(lhs, rhs, out=lhs)
        return self.float_div_scalar(lhs, rhs)

    def float_exp_owned(self, tensor: Array) -> Array:
        if _rc(tensor) == OWNED and exclusive(tensor, None):
            return np.exp(tensor, out=tensor)
        return self.float_exp(tensor)

    def float_log_owned(self, tensor: Array) -> Array:
        if _rc(tensor) == OWNED and exclusive(tensor, None):
            return np.log(tensor, out=tensor)
        return self.float_log(tensor)

    def float_sqrt_owned(self, tensor: Array) -> Array:
        if _rc(tensor) == OWNED and exclusive(tensor, None):
            return np.sqrt(tensor, out=tensor)
        return self.float_sqrt(tensor)

    def float_neg_owned(self, tensor: Array) -> Array:
        if _rc(tensor) == OWNED and exclusive(tensor, None):
            return np.negative(tensor, out=tensor)
        return self.float_neg(tensor)

    def float_tanh_owned(self, tensor: Array) -> Array:
        if _rc(tensor) == OWNED and exclusive(tensor, None):
            return np.tanh(tensor, out=tensor)
        return self.float_tanh(tensor)


# The size from which `_threaded_binary` is tried: the native pool's until it proves missing.
_binary_min_size = 2 * split.NATIVE_UFUNC_PER_THREAD


def _binary(ufunc: np.ufunc, code: int) -> Callable[[Any, Array, Array], Array]:
    def op(self: Any, lhs: Array, rhs: Array) -> Array:
        # One size check on the way to the ufunc for small operands (the per-op overhead).
        if lhs.size >= ROUNDED_MIN_SIZE:
            if lhs.dtype is BF16 and rhs.dtype is BF16:
                return _bfloat16_binary(ufunc, code, lhs, rhs)
            if lhs.size >= _binary_min_size or rhs.size >= _binary_min_size:
                out = _threaded_binary(ufunc, code, lhs, rhs)
                if out is not None:
                    return out
        elif rhs.size >= _binary_min_size:  # a small lhs broadcast against a large rhs
            out = _threaded_binary(ufunc, code, lhs, rhs)
            if out is not None:
                return out
        return ufunc(lhs, rhs)

    op.__name__ = op.__qualname__ = f"threaded_{ufunc.__name__}"
    return op


def _bfloat16_binary(ufunc: np.ufunc, code: int, lhs: Array, rhs: Array) -> Array:
    """``ufunc(lhs, rhs)`` of two bfloat16 arrays, `lhs` large: NumPy's float32 loop on the
    widened values, rounded once; ml_dtypes' bits (see the module docstring). The float32 loop is
    NumPy's own, not the threaded kernels: only it takes the NaN of a NaN-NaN pair as ml_dtypes
    does (below); the widening and the rounding are most of the time anyway."""
    if lhs.__class__ is not _ndarray or rhs.__class__ is not _ndarray:
        return ufunc(lhs, rhs)
    if code == ADD:  # a bias row: one fused pass, not widen, add and round (1.4-2.8x less time)
        out = add_row(lhs, rhs)
        if out is not None:
            return out
    first, second = lhs.astype(F32), rhs.astype(F32)
    if code == ADD or code == MUL:
        # ml_dtypes' compiled add and multiply return the second operand's NaN when both are NaN
        # (NumPy's float32 loops the first): swapped, the sign of such a NaN is ml_dtypes' too.
        first, second = second, first
    into_first = np.broadcast(first, second).shape == first.shape  # C-fast, unlike broadcast_shapes
    return to_dtype(ufunc(first, second, out=first) if into_first else ufunc(first, second), BF16)


def _threaded_binary(ufunc: np.ufunc, code: int, lhs: Array, rhs: Array) -> Array | None:
    """``ufunc(lhs, rhs)`` split between threads (float32/float64 arrays of one dtype), or None
    for the plain ufunc."""
    if lhs.__class__ is not _ndarray or rhs.__class__ is not _ndarray:
        return None
    dtype = lhs.dtype
    if rhs.dtype is not dtype or (dtype is not F32 and dtype is not F64):
        return None
    if lhs.shape == rhs.shape:  # the common case, checked first: no broadcast to work out
        shape, size = lhs.shape, lhs.size
        native = _native_kernels()
        if native is not None:
            parts = split.native_parts(size, split.NATIVE_UFUNC_PER_THREAD)
            if parts > 1 and lhs.flags.c_contiguous and rhs.flags.c_contiguous:
                out = np.empty(shape, dtype)
                tbb.launch(native.binary_flat, parts, code, lhs.reshape(-1), rhs.reshape(-1), out.reshape(-1))
                return out
            if parts > 1 and lhs.strides == rhs.strides:
                # One layout that fills a block of memory (the channels-last conv outputs, a swish's
                # x * sigmoid(x)): the flat pass in memory order, the result in that layout as
                # NumPy's ufunc gives it. A C-ordered result of such operands (the chunk path
                # below) took EfficientNet-B0's [8, 96, 112, 112] product from 5 to 70 ms.
                flat_lhs = split.flat_in_memory_order(lhs)
                if flat_lhs is not None:
                    out = np.empty_like(lhs)
                    flat_rhs, flat_out = rhs.ravel(order="K"), out.ravel(order="K")
                    tbb.launch(native.binary_flat, parts, code, flat_lhs, flat_rhs, flat_out)
                    return out
    else:
        shape = np.broadcast_shapes(lhs.shape, rhs.shape)
        size = math.prod(shape)
        if _native_kernels() is not None:
            result = _native_binary(code, lhs, rhs, shape, size)
            if result is not None:
                return result
    if _native_kernels() is None:  # the Python pool only: smaller ops skip this function from now on
        global _binary_min_size
        _binary_min_size = 2 * split.UFUNC_PER_THREAD
    chunks = split.chunks(shape, size, split.UFUNC_PER_THREAD)
    if chunks is None:
        return None
    # the result in the layout of an operand of its shape, as the ufunc would give it
    like = lhs if lhs.shape == shape else rhs if rhs.shape == shape else None
    out = np.empty(shape, dtype) if like is None else np.empty_like(like)
    ndim, rows = len(shape), shape[0]

    def task(chunk: slice) -> None:
        ufunc(split.share(lhs, chunk, ndim, rows), split.share(rhs, chunk, ndim, rows), out=out[chunk])

    threads.run(task, chunks)
    return out


_native: ModuleType | None = None


def _native_kernels() -> ModuleType | None:
    """`burn_ndarray.kernels.float` once the TBB pool runs (`tbb.ready`), else None."""
    global _native
    if _native is None and tbb.ready():
        _native = kernels.load("float")
    return _native


def _native_binary(code: int, lhs: Array, rhs: Array, shape: tuple[int, ...], size: int) -> Array | None:
    """The op by `burn_ndarray.kernels.float` when one operand has the broadcast result's shape
    and fills one block of memory (C order, or a permutation of it such as a channels-last conv
    output: the result takes that layout), and the other, seen in that memory order as
    ``(rows, last dim)``, has one value or row for all rows, for each row, or for each group of
    rows sharing the leading indices (a squeeze-excitation scale ``[B, C, 1, 1]`` times a
    channels-last ``[B, C, H, W]``); None otherwise."""
    parts = split.native_parts(size, split.NATIVE_UFUNC_PER_THREAD)
    if parts < 2:
        return None
    native: Any = _native
    full, other = lhs, rhs
    if lhs.shape != shape:  # the broadcast one on the left: only commutative ops swap
        if code != ADD and code != MUL:
            return None
        full, other = rhs, lhs
    if full.shape != shape:
        return None
    ndim = len(shape)
    padded = (1,) * (ndim - other.ndim) + other.shape
    if not full.flags.c_contiguous and split.flat_in_memory_order(full) is None:
        return None
    out = np.empty_like(full)  # full's layout, as the ufunc gives it
    out_view = out
    if not full.flags.c_contiguous:
        # the axes in memory order, outermost first: every operand seen C-ordered in it
        order = sorted(range(ndim), key=lambda d: -full.strides[d])
        full, out_view = full.transpose(order), out.transpose(order)
        other = other.reshape(padded).transpose(order)
        shape = full.shape
        padded = other.shape
    if not other.flags.c_contiguous or not out_view.flags.c_contiguous:
        return None
    columns = shape[-1]
    rows = size // columns
    if padded[-1] != 1 and padded[-1] != columns:
        return None
    lead = 0  # the leading dims `other` has in full: one of its rows per group of rows
    while lead < ndim - 1 and padded[lead] == shape[lead]:
        lead += 1
    if any(d != 1 for d in padded[lead:-1]) or rows < 2:
        return None
    groups = math.prod(shape[:lead])
    parts = min(parts, rows)  # chunks of whole rows
    out2d, full2d = out_view.reshape(rows, columns), full.reshape(rows, columns)
    tbb.launch(native.binary_rows, parts, code, full2d, other.reshape(groups, -1), out2d)
    return out


def _unary(ufunc: np.ufunc) -> Callable[[Any, Array], Array]:
    def op(self: Any, tensor: Array) -> Array:
        if tensor.size >= 2 * split.TRANSCENDENTAL_PER_THREAD and tensor.__class__ is _ndarray:
            dtype = tensor.dtype
            chunks = split.chunks(tensor.shape, tensor.size, split.TRANSCENDENTAL_PER_THREAD)
            if chunks is not None and (dtype is F32 or dtype is F64):
                out = np.empty(tensor.shape, dtype)
                threads.run(lambda chunk: ufunc(tensor[chunk], out=out[chunk]), chunks)
                return out
        return ufunc(tensor)

    op.__name__ = op.__qualname__ = f"threaded_{ufunc.__name__}"
    return op


# Ops that are a bare ufunc on the single-threaded path: bound to it at one thread (`_bind`).
UFUNC_OPS: dict[str, Callable[..., Array]] = {
    "float_add": _binary(np.add, ADD),
    "float_sub": _binary(np.subtract, SUB),
    "float_mul": _binary(np.multiply, MUL),
    "float_div": _binary(np.true_divide, DIV),
    "float_exp": _unary(np.exp),
    "float_log": _unary(np.log),
    "float_sqrt": _unary(np.sqrt),
    "float_tanh": _unary(np.tanh),
}


def _bfloat16_scalar(op: Any, lhs: Array, rhs: float) -> Array:
    """``op(lhs, rhs)`` for a bfloat16 `lhs`: ml_dtypes' loop (one value at a time) on small
    arrays; on large ones float32's loop and one compiled rounding, the same bits (ml_dtypes
    computes each value in float32 with the scalar rounded to bfloat16, then rounds)."""
    scalar = BF16_SCALAR(rhs)
    if lhs.size < ROUNDED_MIN_SIZE:
        return op(lhs, scalar)
    wide, wide_scalar = lhs.astype(F32), F32.type(scalar)
    if op is np.add or op is np.multiply:  # a NaN-NaN pair gives ml_dtypes' NaN (`_bfloat16_binary`)
        return to_dtype(op(wide_scalar, wide, out=wide), BF16)
    return to_dtype(op(wide, wide_scalar, out=wide), BF16)


_single: Any = FloatOps
"""The single-threaded ops that `ThreadedFloatOps` falls back to, called with the backend."""


class ThreadedFloatOps:
    """The float ops' threaded paths, first in `burn_ndarray.NdArray`'s bases; each falls back to
    the single-threaded op (`FloatOps`, next in the MRO) for small or unusual operands, after one
    size check (the per-op overhead on tiny tensors stays that of the single-threaded op)."""

    # -- reductions ---------------------------------------------------------------------------
    def float_sum_dim(self, tensor: Array, dim: int) -> Array:
        dtype = tensor.dtype
        if dtype is F32 or dtype is F64:
            size = tensor.size
            if size < GEMV_SUM_MAX_SIZE:
                if tensor.__class__ is _ndarray:
                    sums = gemv_sum(tensor, dim, dtype)
                    if sums is not None:
                        return sums
            elif size >= reductions.ROW_SUM_MIN_SIZE:
                sums = reductions.compiled_sum(tensor, dim)
                if sums is not None:
                    return sums
            return _add_reduce(tensor, dim, keepdims=True)  # what ndarray.sum calls, without its frame
        if dtype is BF16 and tensor.size >= reductions.ROW_SUM_MIN_SIZE:
            # widened exactly, summed by the float32 path (compiled and threaded), rounded once
            sums = ThreadedFloatOps.float_sum_dim(self, tensor.astype(F32), dim)
            return to_dtype(sums, BF16)
        return _single.float_sum_dim(self, tensor, dim)

    def float_mean_dim(self, tensor: Array, dim: int) -> Array:
        size = tensor.size
        if size < GEMV_SUM_MAX_SIZE:
            dtype = tensor.dtype
            if tensor.__class__ is _ndarray and (dtype is F32 or dtype is F64):
                sums = gemv_sum(tensor, dim, dtype)
                if sums is not None:
                    sums /= tensor.shape[dim]
                    return sums
        elif size >= reductions.ROW_SUM_MIN_SIZE:
            sums = reductions.compiled_sum(tensor, dim)
            if sums is not None:
                sums /= tensor.shape[dim]
                return sums
        return _single.float_mean_dim(self, tensor, dim)


_HALF_AWARE = ("float_add", "float_sub", "float_mul", "float_div")
_bfloat16_seen = False  # set by the first cast to bfloat16: the arithmetic keeps its wrappers


def _bind(count: int) -> None:
    """At one thread the ufunc ops are the bare ufuncs again (no Python frame), except the
    arithmetic once bfloat16 is in use (`_bfloat16_seen`); otherwise the threaded wrappers."""
    for name, threaded in UFUNC_OPS.items():
        if count > 1 or (_bfloat16_seen and name in _HALF_AWARE):
            setattr(ThreadedFloatOps, name, threaded)
        elif name in ThreadedFloatOps.__dict__:
            delattr(ThreadedFloatOps, name)


def bfloat16_in_use() -> None:
    """Keep the bfloat16-aware arithmetic wrappers bound from now on (called on the first cast to
    bfloat16; each later call is one global read)."""
    global _bfloat16_seen
    if not _bfloat16_seen:
        _bfloat16_seen = True
        _bind(threads.get_num_threads())


_bind(threads.get_num_threads())
threads._listeners.append(_bind)
