"""How each burn dtype is stored and computed in OpenCL C, and the promotion rule of binary ops."""

from __future__ import annotations

import numpy as np

from burn.foundations.dtype import DType

# Storage type of each dtype in device buffers. float16 is stored as `half` and read and written
# with vload_half/vstore_half, which are core OpenCL (no cl_khr_fp16 needed); bool is one byte 0/1.
STORAGE: dict[DType, str] = {
    DType.F64: "double",
    DType.F32: "float",
    DType.F16: "half",
    DType.I64: "long",
    DType.I32: "int",
    DType.I16: "short",
    DType.I8: "char",
    DType.U8: "uchar",
    DType.BOOL: "uchar",
}

# Type values are computed in (float16 in float; everything else in itself).
COMPUTE: dict[DType, str] = {**STORAGE, DType.F16: "float"}

# NumPy type of a scalar kernel argument in the compute type.
SCALAR_NP: dict[str, type] = {
    "double": np.float64,
    "float": np.float32,
    "long": np.int64,
    "int": np.int32,
    "short": np.int16,
    "char": np.int8,
    "uchar": np.uint8,
}

# Rank used by `wider`: floats beat ints beat bool; within a kind, more bytes win.
_RANK = {
    DType.BOOL: 0,
    DType.U8: 1,
    DType.I8: 1,
    DType.I16: 2,
    DType.I32: 3,
    DType.I64: 4,
    DType.F16: 10,
    DType.BF16: 10,
    DType.F32: 11,
    DType.F64: 12,
}


def wider(a: DType, b: DType) -> DType:
    """The dtype a binary op on `a` and `b` returns: the wider one.

    Example:
        >>> wider(DType.F32, DType.F64), wider(DType.U8, DType.I8)
        (burn.float64, burn.int16)
    """
    if a is b:
        return a
    ra, rb = _RANK[a], _RANK[b]
    if ra == rb:
        # uint8 vs int8 (or float16 vs bfloat16): the next size up holds both.
        return DType.I16 if a.is_int else DType.F32
    return a if ra > rb else b


def load(dtype: DType, ptr: str, index: str) -> str:
    """C expression reading element `index` of buffer `ptr` as its compute type."""
    if dtype is DType.F16:
        return f"vload_half({index}, {ptr})"
    return f"{ptr}[{index}]"


def store(dtype: DType, ptr: str, index: str, value: str) -> str:
    """C statement writing `value` (already in the compute type) to element `index`."""
    if dtype is DType.F16:
        return f"vstore_half_rte({value}, {index}, {ptr});"
    return f"{ptr}[{index}] = {value};"


def is_double(*dtypes: DType) -> bool:
    return DType.F64 in dtypes


def build_options(*dtypes: DType) -> tuple[str, ...]:
    """Build options for a program using `dtypes`: float literals stay single precision unless
    the program computes in double (devices without fp64 reject double literals)."""
    return () if is_double(*dtypes) else ("-cl-single-precision-constant",)


# pocl 3.0 compiles OpenCL builtins (fabs, sqrt, isnan, min, mul_hi, ...) to out-of-line calls
# of its kernel library, and one call in a kernel stops pocl from vectorizing it across
# work-items (objdump of the compiled .so: `call _Z8_cl_fabsf`, no ymm register). The b_*
# helpers compute the same values with clang builtins, which inline as LLVM intrinsics and
# vectorize (vandps, vsqrtps, vroundps, vmaxps + NaN blend). Transcendentals (exp, log, erf,
# tanh, ...) stay pocl's: a clang builtin would only swap pocl's call for libm's and change the
# last bits of results. Except float `exp` and `tanh`, the two that GELU, softmax, sigmoid and the
# RNN cells spend their time in: pocl's cost ~50 ns (tanh) and ~15-20 ns (exp) an element against
# ~0.3 for an add. b_exp reduces x by k*ln2 (Cody-Waite, ln2 split so k*ln2_hi is exact), takes
# e^r from its degree-7 Taylor polynomial (|r| <= ln2/2: truncation ~5e-9) and scales by 2^k in two
# halves (so 2^k for k = 128 or a subnormal result need no special case); b_tanh(x) is e / (e + 2)
# with e = expm1(2|x|), from the same reduction with expm1(r) as a polynomial (relative accuracy
# near 0, where 1 - 2 / (e^2x + 1) would cancel), and |x| capped at 10 (tanh is 1.0f from 9.1).
# Measured against float64 over [-12, 12], 3M random and 0.5M tiny inputs: b_exp within 0.91 ulp,
# b_tanh within 2.2 ulp (pocl's: 0.95 and 1.03), NaN, +-inf, -0 and subnormals as C's; the
# tolerance table's float32 rtol (1e-5) is ~80 ulp. Both are plain arithmetic, so a kernel calling
# them vectorizes: 3.5M elements in 2.4-3 ms (exp) and 3 ms (tanh) against 48-68 and 94-190 ms
# for pocl's (load 3-5, `/tmp`-style single-kernel loop, best of 5). The macros route
# every `exp(` and `tanh(` of the programs (one-op kernels, fused kernels, FLOAT_HELPERS) to them;
# the double overloads, defined before them, call the driver's (pocl names its builtins by object
# macros, ``#define exp _cl_exp``, which the #undef drops after that).
#
# GUARD(i, n) is the bounds check of 1-D kernels. pocl runs a work-group as a loop vectorized
# across work-items; a plain `if (i >= n) return;` makes every load and store of that loop masked
# (vmaskmovps, which AVX2 CPUs run several times slower). Testing the group first makes the check
# uniform for every group but the last, so LLVM unswitches it and full groups run unmasked: an
# elementwise add of 16M floats went from 30 ms to 10 ms on pocl 3.0. GUARD_AXIS is the same check
# along NDRange axis k.
PRELUDE = r"""
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#define GUARD(i, n) if ((long)(get_group_id(0) + 1) * (long)get_local_size(0) > (n) && (i) >= (n)) return
#define GUARD_AXIS(k, i, n) \
  if ((long)(get_group_id(k) + 1) * (long)get_local_size(k) > (n) && (i) >= (n)) return
#define B_OVL __attribute__((overloadable, always_inline)) inline
B_OVL float b_fabs(float x) { return __builtin_fabsf(x); }
B_OVL float b_sqrt(float x) { return __builtin_sqrtf(x); }
B_OVL float b_rint(float x) { return __builtin_rintf(x); }
B_OVL float b_floor(float x) { return __builtin_floorf(x); }
B_OVL float b_ceil(float x) { return __builtin_ceilf(x); }
B_OVL float b_fmax(float x, float y) { return __builtin_fmaxf(x, y); }
B_OVL float b_fmin(float x, float y) { return __builtin_fminf(x, y); }
#ifdef cl_khr_fp64
B_OVL double b_fabs(double x) { return __builtin_fabs(x); }
B_OVL double b_sqrt(double x) { return __builtin_sqrt(x); }
B_OVL double b_rint(double x) { return __builtin_rint(x); }
B_OVL double b_floor(double x) { return __builtin_floor(x); }
B_OVL double b_ceil(double x) { return __builtin_ceil(x); }
B_OVL double b_fmax(double x, double y) { return __builtin_fmax(x, y); }
B_OVL double b_fmin(double x, double y) { return __builtin_fmin(x, y); }
#endif
#define b_isnan(x) __builtin_isnan(x)
#define b_isinf(x) __builtin_isinf(x)
B_OVL long b_lmin(long a, long b) { return a < b ? a : b; }
B_OVL long b_lmax(long a, long b) { return a > b ? a : b; }
B_OVL uint b_mul_hi(uint a, uint b) { return (uint)(((ulong)a * (ulong)b) >> 32); }
B_OVL float b_exp(float x) {
  float c = __builtin_fminf(__builtin_fmaxf(x, -104.0f), 89.0f);
  float k = __builtin_rintf(c * 1.44269504088896341f);
  float r = (c - k * 0.693145751953125f) - k * 1.42860682030941723212e-6f;
  float p = 1.0f + r * (1.0f + r * (0.5f + r * (0.16666666666666666f + r * (0.041666666666666664f
            + r * (0.008333333333333333f + r * (0.001388888888888889f + r * 0.0001984126984126984f))))));
  int n = (int)k;
  int h = n >> 1;
  float y = p * as_float((h + 127) << 23) * as_float((n - h + 127) << 23);
  return __builtin_isnan(x) ? x : y;
}
B_OVL float b_tanh(float x) {
  float t = 2.0f * __builtin_fminf(__builtin_fabsf(x), 10.0f);
  float k = __builtin_rintf(t * 1.44269504088896341f);
  float r = (t - k * 0.693145751953125f) - k * 1.42860682030941723212e-6f;
  float p = r + r * r * (0.5f + r * (0.16666666666666666f + r * (0.041666666666666664f
            + r * (0.008333333333333333f + r * (0.001388888888888889f + r * (0.0001984126984126984f
            + r * 0.0000248015873015873f))))));
  float s = as_float(((int)k + 127) << 23);
  float e = s * p + (s - 1.0f);
  float y = e / (e + 2.0f);
  return __builtin_isnan(x) ? x : __builtin_copysignf(y, x);
}
#ifdef cl_khr_fp64
B_OVL double b_exp(double x) { return exp(x); }
B_OVL double b_tanh(double x) { return tanh(x); }
#endif
#undef exp
#undef tanh
#define exp(x) b_exp(x)
#define tanh(x) b_tanh(x)
"""
