"""Kernels of the int ops: floor division and remainder."""

from __future__ import annotations

import cupy as cp

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
