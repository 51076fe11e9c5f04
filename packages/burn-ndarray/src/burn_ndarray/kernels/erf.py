"""A vectorized error function (NumPy has none), accurate to float64 precision.

Two polynomial pieces, fitted by ``tools/fit_erf.py`` against mpmath (Chebyshev least squares,
evaluated by Horner in a variable mapped onto [-1, 1]):

- ``|x| < 2``: ``erf(x) = x * P(s)`` with ``s = x**2 / 2 - 1``;
- ``2 <= |x| < 6``: ``erfc(|x|) = exp(-x**2) * Q(s)`` with ``u = 1 / |x|`` and ``s = 6u - 2``;
- ``|x| >= 6``: ``erf(x) = ±1`` (``erfc(6) < 2.2e-17``, below float64's half-ulp of 1).

float64 uses the full fits (max relative error of each piece ~1.3e-15); float32 and narrower use
truncated fits evaluated in float32 (~1e-8 before rounding), which is about twice as fast. Tiny
arrays (per-op overhead dominates) call `math.erf` per element instead. The tests measure the
result against ``math.erf``.

NumPy code, no numba: the float family's ``float_erf`` and the NumPy GELU call `erf`, and the
compiled GELU (`activation`) evaluates the same float32 fits per element.
"""

from __future__ import annotations

import math

import numpy as np

from burn_ndarray.runtime.dtypes import F64

SMALL_SIZE = 64
"""Up to this many elements, `math.erf` per element beats ~40 whole-array NumPy calls."""

# max relative error 1.33e-15, degree 18
_SMALL_64 = (
    -1.5029153422636511e-12,
    -2.2543730133954767e-12,
    2.420191992578092e-11,
    -1.3832432013628088e-10,
    1.119256981693112e-09,
    -8.621550632236201e-09,
    6.121270475334359e-08,
    -4.045049906880888e-07,
    2.475790993064434e-06,
    -1.394627676191878e-05,
    7.180101265164332e-05,
    -0.0003351435323679365,
    0.0014050914227976274,
    -0.005234875836385705,
    0.017128344571883385,
    -0.04866277744913666,
    0.1194791386098529,
    -0.261111860931246,
    0.6749332360396546,
)
# max relative error 7.91e-10, degree 10
_SMALL_32 = (
    2.665988683672244e-06,
    -1.5101699903730755e-05,
    7.158454609166471e-05,
    -0.0003339735949314411,
    0.0014052043164797837,
    -0.0052353908814449365,
    0.017128318020305802,
    -0.04866268513261138,
    0.1194791408909851,
    -0.26111186555858396,
    0.6749332360079197,
)
# max relative error 8.86e-16, degree 16
_LARGE_64 = (
    -1.836711117705236e-12,
    7.31671431858966e-12,
    -9.634889388645329e-12,
    -5.010156622855946e-11,
    4.471108908191565e-10,
    -1.7954866500781185e-09,
    2.709741028852531e-09,
    1.7853877933320706e-08,
    -1.6579840924518222e-07,
    6.468490612835492e-07,
    -9.9830251693335e-08,
    -1.7340700428850906e-05,
    0.00012459325308185692,
    -0.0002321579200145292,
    -0.005039359895669183,
    0.08155839001075935,
    0.17900115118138993,
)
# max relative error 1.37e-08, degree 7
_LARGE_32 = (
    6.806634228491875e-07,
    -4.2231448849668334e-07,
    -1.7364451800247163e-05,
    0.00012479275508826083,
    -0.00023215154745854263,
    -0.005039399582011236,
    0.08155838954298687,
    0.17900115241746334,
)


def _horner(coeffs: tuple[float, ...], s: np.ndarray) -> np.ndarray:
    acc = s * coeffs[0]  # the one allocation: acc is our own temporary, updated in place
    for c in coeffs[1:-1]:
        acc += c
        acc *= s
    acc += coeffs[-1]
    return acc


def erf(x: np.ndarray) -> np.ndarray:
    """``erf(x)`` elementwise, in float64 for float64 input and in float32 otherwise.

    Example:
        >>> import math
        >>> float(erf(np.array([0.5]))[0]) == math.erf(0.5)
        True
    """
    x = np.asarray(x)
    shape = x.shape
    if x.size <= SMALL_SIZE:
        work = F64 if x.dtype == F64 else np.dtype(np.float32)
        values = np.fromiter(map(math.erf, x.ravel().tolist()), dtype=F64, count=x.size)
        return values.astype(work, copy=False).reshape(shape)
    x = x.reshape(-1)  # flat (a copy only for non-contiguous input): the tail is patched by position
    small: tuple[float, ...]
    large: tuple[float, ...]
    if x.dtype == F64:
        small, large, work = _SMALL_64, _LARGE_64, F64
    else:
        small, large, work = _SMALL_32, _LARGE_32, np.dtype(np.float32)
        x = x.astype(work, copy=False)
    ax = np.abs(x)
    # Clamping t keeps the polynomial finite on elements that the large piece overwrites (NaN
    # passes through np.minimum, so NaN inputs give NaN without a separate pass).
    t = np.minimum(ax, 2.0)
    t *= t
    t *= 0.5
    t -= 1.0
    out = _horner(small, t)
    out *= x
    # The tail piece runs only on the elements that need it (few, for typical activations).
    tail = np.flatnonzero(ax >= 2.0)
    if tail.size:
        xt = np.minimum(ax.take(tail), 6.0)  # erf is ±1 from 6 on; keeps inf out of the sums
        # exp(-x*x) split as exp(-h*h) * exp(-(x-h)(x+h)) with h = x rounded down to 1/16: h*h is
        # exact, which keeps the full relative precision of exp(-x*x) for large x (Cody's trick).
        h = np.floor(xt * 16.0) / 16.0
        e = np.exp(-h * h) * np.exp(-(xt - h) * (xt + h))
        value = 1.0 - e * _horner(large, 6.0 / xt - 2.0)
        value[xt >= 6.0] = 1.0
        out[tail] = np.copysign(value, x.take(tail))
    return out.reshape(shape)
