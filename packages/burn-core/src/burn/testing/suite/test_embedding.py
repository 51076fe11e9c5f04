"""The embedding op and its backward helper (the gradient of the table, rows accumulated).

The forward op goes through `burn.tensor.module`; the backward helper has no Tensor method and is
called on the backend's primitives directly.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.foundations.dtype import DType
from burn.testing import covers
from burn.testing.helpers import check_float, float_inputs, make, prim, tensor_module, wrap_float


@covers("embedding")
@pytest.mark.parametrize("idx_shape", [(5,), (2, 3), (2, 0)], ids=str)
def test_embedding(backend: Any, float_dtype: DType, idx_shape: Any, rng: Any) -> None:
    ((w, tw),) = float_inputs(backend, rng, float_dtype, (10, 4))
    idx = rng.integers(0, 10, size=idx_shape)
    out = tensor_module().embedding(tw, make(backend, idx, backend.int_dtype))
    check_float(out, w[idx], float_dtype, what="embedding")


@covers("embedding_backward")
def test_embedding_backward_helper(backend: Any, float_dtype: DType, rng: Any) -> None:
    ((w, tw),) = float_inputs(backend, rng, float_dtype, (6, 3))
    idx = np.array([[0, 5, 5], [2, 0, 5]])
    ((g, tg),) = float_inputs(backend, rng, float_dtype, (2, 3, 3))
    dw = backend.embedding_backward(prim(tw), prim(tg), prim(make(backend, idx, backend.int_dtype)))
    expected = np.zeros((6, 3))
    np.add.at(expected, idx.reshape(-1), g.reshape(-1, 3))
    check_float(wrap_float(backend, dw), expected, float_dtype, terms=3, what="embedding_backward")
