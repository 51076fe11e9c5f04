"""Regenerates the polynomial coefficients in ``src/burn_ndarray/kernels/erf.py`` (development tool).

Fits Chebyshev series by least squares on Chebyshev nodes against mpmath's erf/erfc (40 digits),
truncates them for the float32 variant, converts them to monomials in the mapped variable
``s in [-1, 1]`` for Horner evaluation, and prints the relative error of each piece.
Needs mpmath (``pip install mpmath``); run ``python tools/fit_erf.py``.
"""

from __future__ import annotations

from collections.abc import Callable

import mpmath  # type: ignore[import-untyped]
import numpy as np
from numpy.polynomial import chebyshev as cheb

mpmath.mp.dps = 40
NODES = 3000


def small(t: mpmath.mpf) -> mpmath.mpf:
    """erf(x) / x as a function of t = x**2."""
    if t == 0:
        return 2 / mpmath.sqrt(mpmath.pi)
    r = mpmath.sqrt(t)
    return mpmath.erf(r) / r


def large(u: mpmath.mpf) -> mpmath.mpf:
    """erfc(x) * exp(x**2) as a function of u = 1 / x."""
    x = 1 / u
    return mpmath.erfc(x) * mpmath.exp(x * x)


def fit(
    f: Callable[[mpmath.mpf], mpmath.mpf], lo: float, hi: float, degree: int, keep: float
) -> tuple[np.ndarray, float]:
    s = np.cos(np.pi * (np.arange(NODES) + 0.5) / NODES)
    y = np.array([float(f(mpmath.mpf((lo + hi) / 2 + (hi - lo) / 2 * v))) for v in s])
    coeffs = cheb.chebfit(s, y, degree)
    # Truncate where the tail cannot matter at the target accuracy (float32 variant).
    tail = np.cumsum(np.abs(coeffs[::-1]))[::-1]
    n = int(np.argmax(tail < keep)) if np.any(tail < keep) else len(coeffs)
    mono = cheb.cheb2poly(coeffs[: max(n, 1)])
    grid = np.linspace(-1, 1, 20001)
    ref = np.array([float(f(mpmath.mpf((lo + hi) / 2 + (hi - lo) / 2 * v))) for v in grid[::10]])
    approx = np.polynomial.polynomial.polyval(grid[::10], mono)
    return mono, float(np.max(np.abs(approx - ref) / np.abs(ref)))


if __name__ == "__main__":
    for name, f, lo, hi, deg in (("SMALL", small, 0.0, 4.0, 18), ("LARGE", large, 1 / 6, 1 / 2, 16)):
        for suffix, keep in (("64", 1e-17), ("32", 2e-9)):
            mono, err = fit(f, lo, hi, deg, keep)
            print(f"# max relative error {err:.2e}, degree {len(mono) - 1}")
            print(f"_{name}_{suffix} = (")
            for c in mono[::-1]:  # highest degree first, for Horner
                print(f"    {float(c)!r},")
            print(")")
