"""Matrix products of int tensors (batch dims broadcast), exact in every declared int dtype."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.foundations.dtype import DType
from burn.testing import covers
from burn.testing.helpers import check_exact, make, rand_int


@covers("int_matmul")
@pytest.mark.parametrize(
    "shapes", [((2, 3), (3, 4)), ((2, 2, 3), (3, 2)), ((1, 2, 2, 3), (3, 1, 3, 2)), ((2, 0), (0, 3))], ids=str
)
def test_int_matmul(backend: Any, int_dtype: DType, shapes: Any, rng: Any) -> None:
    a = rand_int(rng, shapes[0], int_dtype, -3, 3)  # |sums| <= 27: in every dtype's range
    b = rand_int(rng, shapes[1], int_dtype, -3, 3)
    out = make(backend, a, int_dtype) @ make(backend, b, int_dtype)
    expected = np.matmul(a.astype(np.int64), b.astype(np.int64))
    check_exact(out, expected, int_dtype, what="int matmul")
    check_exact(make(backend, a, int_dtype).matmul(make(backend, b, int_dtype)), expected, int_dtype)


@covers("int_matmul")
def test_int_matmul_shape_errors(backend: Any) -> None:
    from burn.errors import ShapeError

    dtype = backend.int_dtype
    a = make(backend, np.ones((2, 3), dtype=np.int64), dtype)
    with pytest.raises(ShapeError, match="inner dims"):
        a @ a
    with pytest.raises(ShapeError, match="rank >= 2"):
        a @ make(backend, np.ones((3,), dtype=np.int64), dtype)
