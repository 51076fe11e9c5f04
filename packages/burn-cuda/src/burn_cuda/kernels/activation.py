"""Kernels of the activation ops: one fused kernel each."""

from __future__ import annotations

import cupy as cp

_SQRT1_2 = "0.70710678118654752440"
_INV_SQRT_2PI = "0.39894228040143267794"

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
