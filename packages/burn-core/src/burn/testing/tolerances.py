"""Tolerances per float dtype: the one table every conformance test takes its tolerances from.

A test states what its result went through — one rounding, a sum of `terms` rounded terms, or
`steps` dependent steps (an optimizer's updates, a training run) — and gets ``(rtol, atol)`` for
the dtype under test; no test writes a number of its own, so a float16 or bfloat16 backend is held
to what those dtypes can do, and float64 to far more than float32 could reach.

Example:
    >>> from burn.foundations.dtype import DType
    >>> tolerance(DType.F32)
    (1e-05, 1e-06)
    >>> tolerance(DType.F32, terms=8)
    (1e-05, 8e-06)
    >>> iterated_tolerance(DType.F16, steps=3)[0] > tolerance(DType.F16)[0]
    True
"""

from __future__ import annotations

from burn.foundations.dtype import DType

# Machine epsilon: the spacing of the dtype's values just above 1.
EPS: dict[DType, float] = {DType.F64: 2.0**-52, DType.F32: 2.0**-23, DType.F16: 2.0**-10, DType.BF16: 2.0**-7}

# (rtol, atol) for one rounding of a well-conditioned op: a few ulps of the dtype (float64's is far
# above its ulp, to admit other summation orders and libm implementations, and far below what a
# float32 computation could reach).
TOLERANCES: dict[DType, tuple[float, float]] = {
    DType.F64: (1e-9, 1e-12),
    DType.F32: (1e-5, 1e-6),
    DType.F16: (1e-2, 1e-3),
    DType.BF16: (4e-2, 1e-2),
}

# Relative error per dependent step of an iterated computation (an Adam step is ~10 rounded ops
# whose errors the division by sqrt(v) can amplify): 20 ulps, and float64's floor as above.
_STEP_RTOL: dict[DType, float] = {
    DType.F64: 1e-10,
    DType.F32: 20 * EPS[DType.F32],
    DType.F16: 20 * EPS[DType.F16],
    DType.BF16: 20 * EPS[DType.BF16],
}


def tolerance(dtype: DType, terms: int = 1) -> tuple[float, float]:
    """``(rtol, atol)`` for `dtype` when a result accumulates `terms` rounded terms."""
    rtol, atol = TOLERANCES[dtype]
    return rtol, atol * max(1, terms)


def iterated_tolerance(dtype: DType, steps: int) -> tuple[float, float]:
    """``(rtol, atol)`` for a value of order 1 after `steps` dependent steps (optimizer updates,
    a training run), each adding its rounding error to the last: grows linearly with `steps`."""
    rtol = max(_STEP_RTOL[dtype] * max(1, steps), TOLERANCES[dtype][0])
    return rtol, rtol


def quantized_linear_tolerance(x_step: float, weight_abs_sum: float, dtype: DType = DType.F32) -> float:
    """Absolute tolerance of one output of ``quantized_linear`` against the float product
    ``x @ dequantize(weight).T``, for a row of `x` quantized with step `x_step` (its scale) and
    the output's weight row with ``sum_k |w[k]| = weight_abs_sum`` (dequantized).

    Why: the integer sums are exact, so the result differs from the float product only by the
    activation's rounding, at most half a step per element: ``|err| <= x_step / 2 * sum_k |w[k]|``.
    That bound holds whichever way a backend breaks a rounding tie (its division may be off by an
    ulp, OpenCL's by 2.5), which an exact comparison would not survive. On top of it: the float
    rounding of the product and the two scalings (`tolerance` with ``terms=4``), and 1e-3 of the
    bound for the scale's own rounding (``max|x| / 127`` in float32).

    Example:
        >>> quantized_linear_tolerance(0.01, 3.0) > 0.015
        True
    """
    bound = 0.5 * x_step * weight_abs_sum
    return bound * (1 + 1e-3) + tolerance(dtype, terms=4)[1] * max(1.0, weight_abs_sum)
