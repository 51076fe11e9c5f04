"""Edge shapes across op families: ranks 0 to 5, size-0 dims, non-contiguous inputs, a large tensor.

Non-contiguous inputs are made through the API (permute, slice with a step, flip, expand): a
backend whose primitives are views must still give the right values to every later op.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from burn.foundations.dtype import DType
from burn.testing import covers
from burn.testing.helpers import EPS, check_exact, check_float, check_indices, f64, make, rand_float, rand_int

RANK_SHAPES = [(), (3,), (2, 3), (2, 1, 3), (2, 3, 1, 2), (1, 2, 3, 1, 2), (2, 0, 3)]


@covers(
    "float_add",
    "float_exp",
    "float_mul_scalar",
    "float_sum",
    "float_reshape",
    "float_permute",
    "float_greater_elem",
    "int_add",
    "int_sum",
    "bool_not",
)
@pytest.mark.parametrize("shape", RANK_SHAPES, ids=str)
def test_every_rank(backend: Any, shape: tuple[int, ...], rng: Any) -> None:
    dtype = backend.float_dtype
    a, b = rand_float(rng, shape, dtype), rand_float(rng, shape, dtype)
    ta, tb = make(backend, a, dtype), make(backend, b, dtype)
    x, y = f64(a), f64(b)
    check_float(ta + tb, x + y, dtype, what="add")
    check_float((ta * 2.0).exp(), np.exp(2 * x), dtype, what="exp")
    check_float(ta.sum(), [x.sum()], dtype, terms=max(1, x.size), what="sum")
    check_float(ta.reshape((-1,)), x.reshape(-1), dtype, what="reshape")
    axes = tuple(reversed(range(len(shape))))
    check_float(ta.permute(axes), x.transpose(axes), dtype, what="permute")
    check_exact(ta > 0.0, x > 0, DType.BOOL, what="greater_elem")
    check_exact(~(ta > 0.0), ~(x > 0), DType.BOOL, what="bool_not")
    i = rand_int(rng, shape, backend.int_dtype)
    ti = make(backend, i, backend.int_dtype)
    check_exact(ti + ti, 2 * i, backend.int_dtype, what="int add")
    check_exact(ti.sum(), [i.sum()], backend.int_dtype, what="int sum")


@covers("float_sum_dim", "float_argmax", "float_cumsum", "float_flip", "float_slice", "float_cat")
@pytest.mark.parametrize("shape", [s for s in RANK_SHAPES if s], ids=str)
def test_every_rank_along_each_dim(backend: Any, shape: tuple[int, ...], rng: Any) -> None:
    from burn import Tensor

    dtype = backend.float_dtype
    a = rand_float(rng, shape, dtype)
    t = make(backend, a, dtype)
    x = f64(a)
    for d in range(len(shape)):
        check_float(
            t.sum_dim(d), x.sum(axis=d, keepdims=True), dtype, terms=max(1, shape[d]), what=f"sum_dim({d})"
        )
        check_float(t.cumsum(d), np.cumsum(x, axis=d), dtype, terms=max(1, shape[d]), what=f"cumsum({d})")
        check_float(t.flip((d,)), np.flip(x, d), dtype, what=f"flip({d})")
        check_float(Tensor.cat([t, t], d), np.concatenate([x, x], axis=d), dtype, what=f"cat dim {d}")
        if shape[d] > 0 and 0 not in shape:
            check_indices(t.argmax(d), np.argmax(x, axis=d, keepdims=True), backend, what=f"argmax({d})")
        ranges: list[Any] = [None] * len(shape)
        ranges[d] = (0, max(0, shape[d] - 1))
        check_float(
            t.slice(ranges),
            x[tuple(slice(0, r[1]) if r else slice(None) for r in ranges)],
            dtype,
            what=f"slice on dim {d}",
        )


# Ways to get a non-contiguous tensor: (name, tensor transform, NumPy transform, input shape)
VIEWS: list[tuple[str, Callable[[Any], Any], Callable[[np.ndarray], np.ndarray], tuple[int, ...]]] = [
    ("transpose", lambda t: t.swap_dims(0, 1), lambda x: x.swapaxes(0, 1), (4, 6)),
    ("permute3", lambda t: t.permute((2, 0, 1)), lambda x: x.transpose(2, 0, 1)[:, :, :], (3, 4, 5)),
    ("step-slice", lambda t: t.slice([slice(0, 8, 2), slice(1, 6, 2)]), lambda x: x[0:8:2, 1:6:2], (8, 6)),
    ("flip", lambda t: t.flip((0, 1)), lambda x: x[::-1, ::-1], (4, 5)),
    ("expand", lambda t: t.expand((4, 3, 5)), lambda x: np.broadcast_to(x, (4, 3, 5)), (3, 1)),
    ("narrow", lambda t: t.slice([None, (1, 4)]), lambda x: x[:, 1:4], (5, 6)),
]


def _apply_float(t: Any, x: np.ndarray, backend: Any, dtype: DType) -> None:
    from burn import Tensor

    last = x.shape[-1]
    check_float(t, x, dtype, what="values of the view")
    check_float(t + 1.0, x + 1.0, dtype, what="add_scalar")
    check_float(t * t, x * x, dtype, what="mul")
    check_float(t.exp(), np.exp(x), dtype, what="exp")
    check_float(t.reshape((-1,)), x.reshape(-1), dtype, what="reshape of a view")
    check_float(t.sum_dim(0), x.sum(axis=0, keepdims=True), dtype, terms=x.shape[0], what="sum_dim")
    check_float(t.cumsum(x.ndim - 1), np.cumsum(x, axis=-1), dtype, terms=last, what="cumsum")
    check_float(t.matmul(t.swap_dims(-1, -2)), x @ np.swapaxes(x, -1, -2), dtype, terms=last, what="matmul")
    check_float(Tensor.cat([t, t], 0), np.concatenate([x, x]), dtype, what="cat")
    check_float(t.sort(-1), np.sort(x, axis=-1), dtype, what="sort")
    idx = np.zeros(x.shape, dtype=np.int64)
    check_float(
        t.gather(x.ndim - 1, make(backend, idx, backend.int_dtype)),
        np.take_along_axis(x, idx, -1),
        dtype,
        what="gather",
    )
    check_float(t.select(0, make(backend, [0, 0], backend.int_dtype)), x[[0, 0]], dtype, what="select")
    check_float(
        t.slice_assign([(0, 1)], make(backend, np.zeros((1, *x.shape[1:])), dtype)),
        np.concatenate([np.zeros((1, *x.shape[1:])), x[1:]]),
        dtype,
        what="slice_assign",
    )
    check_float(t.mask_fill(t > 0.0, 0.0), np.where(x > 0, 0.0, x), dtype, what="mask_fill")
    assert np.array_equal(np.asarray(t.to_numpy(), dtype=np.float64), x), "to_numpy of a view"


@covers(
    "float_permute",
    "float_slice",
    "float_flip",
    "float_expand",
    "float_swap_dims",
    "float_add_scalar",
    "float_mul",
    "float_exp",
    "float_reshape",
    "float_sum_dim",
    "float_cumsum",
    "float_matmul",
    "float_cat",
    "float_sort",
    "float_gather",
    "float_select",
    "float_slice_assign",
    "float_mask_fill",
    "float_into_data",
)
@pytest.mark.parametrize(("name", "view", "np_view", "shape"), VIEWS, ids=[v[0] for v in VIEWS])
def test_non_contiguous_float_inputs(
    backend: Any, float_dtype: DType, name: str, view: Any, np_view: Any, shape: Any, rng: Any
) -> None:
    a = rand_float(rng, shape, float_dtype)
    t = view(make(backend, a, float_dtype))
    _apply_float(t, f64(np_view(a)), backend, float_dtype)


@covers(
    "int_permute",
    "int_slice",
    "int_flip",
    "int_expand",
    "int_reshape",
    "int_add",
    "int_sum_dim",
    "int_cat",
    "int_into_data",
    "bool_permute",
    "bool_slice",
    "bool_flip",
    "bool_expand",
    "bool_reshape",
    "bool_into_data",
    "int_into_float",
    "bool_into_int",
)
@pytest.mark.parametrize(("name", "view", "np_view", "shape"), VIEWS, ids=[v[0] for v in VIEWS])
def test_non_contiguous_int_and_bool_inputs(
    backend: Any, name: str, view: Any, np_view: Any, shape: Any, rng: Any
) -> None:
    from burn import Tensor

    int_dtype = backend.int_dtype
    i = rand_int(rng, shape, int_dtype)
    t = view(make(backend, i, int_dtype))
    x = np_view(i)
    check_exact(t, x, int_dtype, what="int view")
    check_exact(t + t, 2 * x, int_dtype, what="int add")
    check_exact(t.reshape((-1,)), x.reshape(-1), int_dtype, what="int reshape of a view")
    check_exact(t.sum_dim(0), x.sum(axis=0, keepdims=True), int_dtype, what="int sum_dim")
    check_exact(Tensor.cat([t, t], 1), np.concatenate([x, x], 1), int_dtype, what="int cat")
    check_exact(t.float(), x.astype(np.float64), backend.float_dtype, what="int view -> float")
    b = view(make(backend, i > 0, DType.BOOL))
    check_exact(b, x > 0, DType.BOOL, what="bool view")
    check_exact(b.reshape((-1,)), (x > 0).reshape(-1), DType.BOOL, what="bool reshape of a view")
    check_exact(b.int(), (x > 0).astype(np.int64), int_dtype, what="bool view -> int")


LARGE = 1 << 20  # ~1e6 elements


@covers(
    "float_add",
    "float_exp",
    "float_sum",
    "float_sum_dim",
    "float_mul_scalar",
    "float_max",
    "float_argmax",
    "int_sum_dim",
    "float_into_int",
)
def test_large_tensor(backend: Any, rng: Any) -> None:
    dtype = backend.float_dtype
    a = rand_float(rng, (LARGE,), dtype, -1, 1)
    b = rand_float(rng, (LARGE,), dtype, -1, 1)
    ta, tb = make(backend, a, dtype), make(backend, b, dtype)
    x, y = f64(a), f64(b)
    check_float(ta + tb, x + y, dtype, what="add")
    check_float((ta * 0.5).exp(), np.exp(0.5 * x), dtype, what="exp")
    # Summation order is free: allow n * eps absolute error (naive sequential sums stay inside;
    # pairwise or blocked ones by far).
    check_float(ta.sum(), [x.sum()], dtype, rtol=0.0, atol=LARGE * EPS[dtype], what="sum of 2**20 values")
    m = ta.reshape((1024, 1024))
    check_float(
        m.sum_dim(1), x.reshape(1024, 1024).sum(axis=1, keepdims=True), dtype, terms=1024, what="sum_dim"
    )
    check_float(ta.max(), [x.max()], dtype, what="max")
    check_indices(ta.argmax(0), [np.argmax(x)], backend, what="argmax")
    ints = (ta * 100.0).int()
    # The product is rounded in the tensor's dtype before truncation, as the backend does.
    scaled = np.trunc(f64(a * np.asarray(100.0, dtype=a.dtype))).astype(np.int64).reshape(1024, 1024)
    check_exact(
        ints.reshape((1024, 1024)).sum_dim(0),
        scaled.sum(axis=0, keepdims=True),
        backend.int_dtype,
        what="int sum_dim",
    )
