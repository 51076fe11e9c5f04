"""Masks broadcast: `mask_fill` and `mask_where` with a mask (or value) of another shape.

A mask of lower rank, with size-1 dims in any position, or 0-d, broadcasts against the tensor
(NumPy's rules); for `mask_where` the three operands broadcast together, and the result has their
broadcast shape even where the tensor is the smaller one. An implementation that indexes the mask
by the flat position modulo its size (a common kernel shortcut) gets only leading size-1 dims
right; these shapes tell it apart.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.foundations.dtype import DType
from burn.testing import covers
from burn.testing.helpers import check_exact, make, rand_any, rand_bool

TENSOR = (2, 3, 4)
# lower rank, size-1 dims trailing / in the middle / leading, 0-d, rank 1 of size 1
FILL_MASKS = [(4,), (3, 1), (2, 1, 1), (2, 1, 4), (1, 3, 1), (), (1,)]

# (tensor, mask, value): each operand in turn is the one that sets a dim
WHERE_SHAPES = [
    ((2, 3, 4), (3, 1), (4,)),
    ((2, 3, 4), (2, 1, 1), (1, 3, 1)),
    ((3, 1), (3, 4), ()),
    ((4,), (2, 1, 1), (3, 1)),
    ((1, 4), (), (3, 1)),
]


def _mask(rng: Any, shape: tuple[int, ...]) -> np.ndarray:
    mask = np.array(rand_bool(rng, shape))
    if mask.size > 1:  # both values present, whatever the draw
        mask.flat[0], mask.flat[1] = True, False
    return mask


@covers("float_mask_fill", "int_mask_fill")
def test_mask_fill_broadcasts_the_mask(backend: Any, numeric_dtype: DType, rng: Any) -> None:
    x = rand_any(rng, TENSOR, numeric_dtype)
    value = 1.5 if numeric_dtype.is_float else 7
    t = make(backend, x, numeric_dtype)
    for mask_shape in FILL_MASKS:
        for mask in (_mask(rng, mask_shape), np.ones(mask_shape, bool), np.zeros(mask_shape, bool)):
            out = t.mask_fill(make(backend, mask, DType.BOOL), value)
            expected = np.where(mask, np.asarray(value).astype(x.dtype), x)
            check_exact(out, expected, numeric_dtype, what=f"mask_fill, tensor {TENSOR}, mask {mask_shape}")


@covers("float_mask_where", "int_mask_where", "bool_mask_where")
@pytest.mark.parametrize(("shape", "mask_shape", "value_shape"), WHERE_SHAPES, ids=str)
def test_mask_where_broadcasts_all_three(
    backend: Any, any_dtype: DType, shape: Any, mask_shape: Any, value_shape: Any, rng: Any
) -> None:
    x = rand_any(rng, shape, any_dtype)
    value = rand_any(rng, value_shape, any_dtype)
    mask = _mask(rng, mask_shape)
    out = make(backend, x, any_dtype).mask_where(
        make(backend, mask, DType.BOOL), make(backend, value, any_dtype)
    )
    what = f"mask_where, tensor {shape}, mask {mask_shape}, value {value_shape}"
    check_exact(out, np.where(mask, value, x), any_dtype, what=what)
