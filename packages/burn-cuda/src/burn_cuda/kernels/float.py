"""Kernels of the float ops: erf (CuPy has no erf ufunc)."""

from __future__ import annotations

import cupy as cp

erf = cp.ElementwiseKernel("T x", "T y", "y = erf(x)", "burn_erf")
