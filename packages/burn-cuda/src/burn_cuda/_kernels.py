"""Fused CUDA kernels (`cupy.ElementwiseKernel`): one launch and one pass over memory where the
op would otherwise be several CuPy calls, each with its own temporary.

Float kernels are instantiated for float32 and float64 (``T``); float16 inputs go through float32
(see `_dtypes.work`). Kernels are compiled on first use and cached by CuPy, on disk too.
"""

from __future__ import annotations

import cupy as cp

_SQRT1_2 = "0.70710678118654752440"
_INV_SQRT_2PI = "0.39894228040143267794"

erf = cp.ElementwiseKernel("T x", "T y", "y = erf(x)", "burn_erf")

gelu = cp.ElementwiseKernel(
    "T x", "T y", f"y = x * (T)0.5 * ((T)1 + erf(x * (T){_SQRT1_2}))", "burn_gelu"
)

gelu_backward = cp.ElementwiseKernel(
    "T x, T g",
    "T y",
    f"""
    const T cdf = (T)0.5 * ((T)1 + erf(x * (T){_SQRT1_2}));
    const T pdf = exp((T)-0.5 * x * x) * (T){_INV_SQRT_2PI};
    y = g * (cdf + x * pdf);
    """,
    "burn_gelu_backward",
)

# exp(-|x|) never overflows; 1/(1+e) for x >= 0 and e/(1+e) below keep full relative precision.
_SIGMOID = "const T e = exp(-fabs(x)); const T p = (T)1 / ((T)1 + e); const T s = x < (T)0 ? e * p : p;"

sigmoid = cp.ElementwiseKernel("T x", "T y", f"{_SIGMOID} y = s;", "burn_sigmoid")

silu = cp.ElementwiseKernel("T x", "T y", f"{_SIGMOID} y = x * s;", "burn_silu")

sigmoid_backward = cp.ElementwiseKernel(
    "T o, T g", "T y", "y = g * (o * ((T)1 - o))", "burn_sigmoid_backward"
)

# log sigmoid(x) = min(x, 0) - log1p(exp(-|x|)); NaN propagates through the log1p term.
log_sigmoid = cp.ElementwiseKernel(
    "T x", "T y", "y = (x < (T)0 ? x : (T)0) - log1p(exp(-fabs(x)))", "burn_log_sigmoid"
)

softplus = cp.ElementwiseKernel(
    "T x, T beta",
    "T y",
    "const T z = x * beta; y = ((z > (T)0 ? z : (T)0) + log1p(exp(-fabs(z)))) / beta",
    "burn_softplus",
)

relu_backward = cp.ElementwiseKernel("T o, T g", "T y", "y = o > (T)0 ? g : (T)0", "burn_relu_backward")

leaky_relu = cp.ElementwiseKernel(
    "T x, T slope", "T y", "y = x >= (T)0 ? x : x * slope", "burn_leaky_relu"
)

# Integer floor division and remainder with the divisor's sign (Python's // and %); by zero both
# give 0, as the contract says (kernels cannot raise).
int_floor_div = cp.ElementwiseKernel(
    "T a, T b",
    "T q",
    """
    if (b == 0) { q = 0; }
    else {
        T t = a / b;
        if ((a % b != 0) && ((a < 0) != (b < 0))) { t -= 1; }
        q = t;
    }
    """,
    "burn_int_floor_div",
)

int_remainder = cp.ElementwiseKernel(
    "T a, T b",
    "T r",
    """
    if (b == 0) { r = 0; }
    else {
        T t = a % b;
        if (t != 0 && ((t < 0) != (b < 0))) { t += b; }
        r = t;
    }
    """,
    "burn_int_remainder",
)

# out[pos] += v for every element whose index along the scattered dim is in [0, size): repeated
# positions accumulate (atomics); out-of-range indices are skipped, never written out of bounds.
# T is float32, float64 or uint64 (ints add as two's complement 64-bit words, then wrap on the cast).
scatter_add = cp.ElementwiseKernel(
    "int64 pos, T v, int64 index, int64 size",
    "raw T out",
    "if (index >= 0 && index < size) { atomicAdd(&out[pos], v); }",
    "burn_scatter_add",
)

# Gather and scatter-add along `dim` where the index has the tensor's shape but for `dim`: with the
# tensor contiguous, element i of the index names row ``(o * X + index) * inner + in`` (o: the
# position before `dim`, in: after). One kernel instead of take_along_axis's or the flat positions'
# dozen array calls. Like CuPy's indexing, gather wraps an index into ``[0, X)``; scatter skips
# an index outside it (as `scatter_add`).
gather_along = cp.ElementwiseKernel(
    "raw T x, I index, int64 X, int64 J, int64 inner",
    "T y",
    """
    const long long in = i % inner;
    const long long o = i / inner / J;
    long long k = (long long)index % X;
    if (k < 0) k += X;
    y = x[(o * X + k) * inner + in];
    """,
    "burn_gather_along",
)

scatter_add_along = cp.ElementwiseKernel(
    "T v, I index, int64 X, int64 J, int64 inner",
    "raw T out",
    """
    const long long in = i % inner;
    const long long o = i / inner / J;
    const long long k = (long long)index;
    if (k >= 0 && k < X) { atomicAdd(&out[(o * X + k) * inner + in], v); }
    """,
    "burn_scatter_add_along",
)
