"""Backends with one injected bug each: burn-ndarray's `NdArray` with an op overridden wrongly.

Each bug is one a real backend had or would plausibly have, and one the conformance suite once
let through; `test_conformance_mutants.py` runs the suite's tests on them and expects the new
tests to fail and the older ones (which missed the bug) to pass. A burn plugin (register it with
``--burn-plugin mutant_backends``) providing:

- ``mutant_promotion``: a 0-d operand loses its dtype in binary ops (PyTorch's rule), so
  ``float32[3] + float64[]`` is float32;
- ``mutant_sort``: an introsort, stable up to 16 elements along the dim and not beyond;
- ``mutant_mask``: `mask_fill` reads the mask at the flat index modulo its size (right only when
  the mask's size-1 dims lead), and `mask_where` writes into a copy of the tensor (the tensor
  never broadcasts up to the mask's or the value's shape).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

import burn.plugins as bp
from burn_ndarray import NdArray

Array = np.ndarray


def _zero_d_loses(op: Callable[[Any, Any], Any]) -> Callable[[Any, Any, Any], Any]:
    def call(self: Any, lhs: Any, rhs: Any) -> Any:
        lhs, rhs = np.asarray(lhs), np.asarray(rhs)
        if lhs.ndim == 0 and rhs.ndim:
            lhs = lhs.astype(rhs.dtype)
        elif rhs.ndim == 0 and lhs.ndim:
            rhs = rhs.astype(lhs.dtype)
        return op(lhs, rhs)

    return call


class PromotionMutant(NdArray):
    name: ClassVar[str] = "mutant_promotion"

    float_add = int_add = _zero_d_loses(np.add)
    float_sub = int_sub = _zero_d_loses(np.subtract)
    float_mul = int_mul = _zero_d_loses(np.multiply)
    float_div = _zero_d_loses(np.divide)
    int_div = _zero_d_loses(np.floor_divide)
    float_remainder = int_remainder = _zero_d_loses(np.remainder)
    float_powf = _zero_d_loses(np.power)
    float_equal = int_equal = _zero_d_loses(np.equal)
    float_not_equal = int_not_equal = _zero_d_loses(np.not_equal)
    float_greater = int_greater = _zero_d_loses(np.greater)
    float_greater_equal = int_greater_equal = _zero_d_loses(np.greater_equal)
    float_lower = int_lower = _zero_d_loses(np.less)
    float_lower_equal = int_lower_equal = _zero_d_loses(np.less_equal)


def _quick_argsort(tensor: Array, dim: int, descending: bool) -> Array:
    # Insertion sort (stable) up to 16 elements, quicksort above: the classic introsort, whose
    # instability only shows on long dims. (NumPy's own quicksort may be a SIMD sort, unstable
    # at any length: too easy a bug.)
    keys = tensor.astype(np.float64)  # negation below is exact, for every dtype (uint8 too)
    kind = "stable" if tensor.shape[dim] <= 16 else "quicksort"
    return np.argsort(-keys if descending else keys, axis=dim, kind=kind)


class SortMutant(NdArray):
    name: ClassVar[str] = "mutant_sort"

    def float_sort_with_indices(self, tensor: Array, dim: int, descending: bool) -> tuple[Array, Array]:
        order = _quick_argsort(tensor, dim, descending)
        return np.take_along_axis(tensor, order, axis=dim), order.astype(self._int_np)

    def float_sort(self, tensor: Array, dim: int, descending: bool) -> Array:
        return self.float_sort_with_indices(tensor, dim, descending)[0]

    def float_argsort(self, tensor: Array, dim: int, descending: bool) -> Array:
        return self.float_sort_with_indices(tensor, dim, descending)[1]

    int_sort_with_indices = float_sort_with_indices
    int_sort = float_sort
    int_argsort = float_argsort


class MaskMutant(NdArray):
    name: ClassVar[str] = "mutant_mask"

    def float_mask_fill(self, tensor: Array, mask: Array, value: Any) -> Array:
        flat_mask = np.asarray(mask).reshape(-1)
        picked = flat_mask[np.arange(tensor.size) % max(flat_mask.size, 1)].reshape(tensor.shape)
        return np.where(picked, tensor.dtype.type(value), tensor)

    int_mask_fill = float_mask_fill

    def float_mask_where(self, tensor: Array, mask: Array, value: Array) -> Array:
        out = np.array(tensor, copy=True)
        np.copyto(out, value, where=mask)
        return out

    int_mask_where = bool_mask_where = float_mask_where


MUTANTS: dict[str, type[NdArray]] = {cls.name: cls for cls in (PromotionMutant, SortMutant, MaskMutant)}


@bp.hookimpl
def burn_backends() -> list[bp.BackendSpec]:
    return [
        bp.BackendSpec(
            name, factory=cls, description="NdArray with an injected bug", package="burn-core tests"
        )
        for name, cls in MUTANTS.items()
    ]
