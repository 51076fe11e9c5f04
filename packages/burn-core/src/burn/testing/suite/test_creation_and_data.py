"""Creating tensors (masks, eye and grids included) and moving their contents to and from the host
(`TensorData` round trips)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.foundations.data import TensorData
from burn.foundations.dtype import DType
from burn.foundations.kind import Kind
from burn.testing import covers
from burn.testing.helpers import check_bool, check_exact, check_indices, host, make, rand_any

ROUND_TRIP_SHAPES = [(), (0,), (1,), (5,), (3, 0, 2), (2, 3, 4), (1, 2, 1, 3, 2)]


@covers(
    "float_from_data",
    "float_into_data",
    "int_from_data",
    "int_into_data",
    "bool_from_data",
    "bool_into_data",
    "float_shape",
    "int_shape",
    "bool_shape",
    "float_get_dtype",
    "int_get_dtype",
)
@pytest.mark.parametrize("shape", ROUND_TRIP_SHAPES, ids=str)
def test_tensor_data_round_trip(backend: Any, any_dtype: DType, shape: Any, rng: Any) -> None:
    x = rand_any(rng, shape, any_dtype)
    data = TensorData(x, any_dtype)
    t = make(backend, x, any_dtype)
    assert t.kind is Kind.of(any_dtype)
    assert t.dtype is any_dtype, f"dtype {t.dtype}, expected {any_dtype}"
    assert t.shape == shape and t.dims == len(shape), f"shape {t.shape} / dims {t.dims}, expected {shape}"
    assert t.num_elements() == int(np.prod(shape))
    back = t.to_data()
    assert back == data, f"round trip changed the data: {back!r} vs {data!r}"
    assert TensorData.from_bytes(back.to_bytes(), back.shape, back.dtype) == data


@covers(
    "float_from_data", "float_into_data", "int_from_data", "int_into_data", "bool_from_data", "bool_into_data"
)
def test_host_views(backend: Any, any_dtype: DType, rng: Any) -> None:
    x = rand_any(rng, (2, 3), any_dtype)
    t = make(backend, x, any_dtype)
    np.testing.assert_array_equal(t.to_numpy(), x)
    assert t.to_numpy().dtype == x.dtype
    np.testing.assert_array_equal(np.asarray(t), x)
    assert t.tolist() == TensorData(x, any_dtype).to_list()
    assert t.into_data() == t.to_data()


@covers("float_into_data", "int_into_data", "bool_into_data")
def test_host_copies_are_independent(backend: Any, float_dtype: DType) -> None:
    source = np.array([1.0, 2.0, 3.0]).astype(float_dtype.numpy)
    t = make(backend, source, float_dtype)
    source[0] = 99  # the tensor must not alias the caller's array
    out = host(t)
    try:
        out[1] = 42  # nor may writing to the returned array change the tensor
    except ValueError:
        pass  # a read-only array is fine too
    check_exact(t, np.array([1.0, 2.0, 3.0]), float_dtype, what="tensor after host writes")


@covers("float_from_data", "int_from_data", "bool_from_data")
def test_from_data_infers_kind_and_backend_dtypes(backend: Any) -> None:
    from burn import Bool, Float, Int, Tensor

    cases = [
        ([[1.5, 2.0]], Float, backend.float_dtype, (1, 2)),
        ([1, 2, 3], Int, backend.int_dtype, (3,)),
        ([True, False], Bool, DType.BOOL, (2,)),
        (2.5, Float, backend.float_dtype, ()),
        (7, Int, backend.int_dtype, ()),
        (np.arange(4, dtype=np.float64).reshape(2, 2), Float, backend.float_dtype, (2, 2)),
        (TensorData([1, 2], DType.I64), Int, backend.int_dtype, (2,)),
    ]
    for value, kind, dtype, shape in cases:
        t = Tensor.from_data(value, backend=backend)
        assert (t.kind, t.dtype, t.shape) == (kind, dtype, shape), (
            f"from_data({value!r}): {t.kind} {t.dtype} {t.shape}"
        )
        np.testing.assert_array_equal(
            host(t), np.asarray(value.array if isinstance(value, TensorData) else value)
        )


@covers(
    "float_full",
    "int_full",
    "bool_full",
    "float_zeros",
    "int_zeros",
    "bool_zeros",
    "float_ones",
    "int_ones",
    "bool_ones",
)
@pytest.mark.parametrize("shape", [(), (0, 3), (2, 3), (1, 2, 1, 2, 1)], ids=str)
def test_full_zeros_ones(backend: Any, any_dtype: DType, shape: Any) -> None:
    from burn import Tensor

    kind = Kind.of(any_dtype)
    value = 2.5 if any_dtype.is_float else (7 if any_dtype.is_int else True)
    opts = {"dtype": any_dtype, "kind": kind, "backend": backend}
    check_exact(
        Tensor.full(shape, value, **opts),
        np.full(shape, value, dtype=any_dtype.numpy),
        any_dtype,
        what="full",
    )
    check_exact(Tensor.zeros(shape, **opts), np.zeros(shape, dtype=any_dtype.numpy), any_dtype, what="zeros")
    check_exact(Tensor.ones(shape, **opts), np.ones(shape, dtype=any_dtype.numpy), any_dtype, what="ones")


@covers("float_empty", "int_empty", "bool_empty")
@pytest.mark.parametrize("shape", [(), (0,), (4, 5)], ids=str)
def test_empty(backend: Any, any_dtype: DType, shape: Any) -> None:
    from burn import Tensor

    t = Tensor.empty(shape, dtype=any_dtype, kind=Kind.of(any_dtype), backend=backend)
    assert (t.kind, t.dtype, t.shape) == (Kind.of(any_dtype), any_dtype, shape)
    assert host(t).shape == shape  # contents are unspecified, but readable


@covers("float_full", "float_zeros", "float_ones", "int_zeros", "int_full", "bool_zeros", "bool_full")
def test_creation_defaults_and_like(backend: Any) -> None:
    from burn import Bool, Float, Int, Tensor

    f = Tensor.zeros((2, 3), backend=backend)
    assert (f.kind, f.dtype) == (Float, backend.float_dtype)
    i = Tensor.zeros((2,), kind=Int, backend=backend)
    assert (i.kind, i.dtype) == (Int, backend.int_dtype)
    b = Tensor.zeros((2,), kind=Bool, backend=backend)
    assert (b.kind, b.dtype) == (Bool, DType.BOOL)
    check_exact(f.ones_like(), np.ones((2, 3)), backend.float_dtype, what="ones_like")
    check_exact(i.full_like(4), np.full(2, 4), backend.int_dtype, what="int full_like")
    check_exact(f.full_like(-1.5).zeros_like(), np.zeros((2, 3)), backend.float_dtype, what="zeros_like")
    check_exact(b.ones_like(), np.ones(2, dtype=bool), DType.BOOL, what="bool ones_like")


@covers("int_arange")
@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ((5,), range(5)),
        ((2, 10, 3), range(2, 10, 3)),
        ((3, 3), range(0)),
        ((-4, 2), range(-4, 2)),
        ((0, 1), range(1)),
    ],
    ids=str,
)
def test_arange(backend: Any, args: Any, expected: range) -> None:
    from burn import Tensor

    check_exact(
        Tensor.arange(*args, backend=backend),
        np.array(list(expected), dtype=np.int64),
        backend.int_dtype,
        what=f"arange{args}",
    )


@covers("int_arange")
def test_arange_dtype(backend: Any, int_dtype: DType) -> None:
    from burn import Tensor

    check_exact(
        Tensor.arange(1, 6, dtype=int_dtype, backend=backend), np.arange(1, 6), int_dtype, what="arange"
    )


@covers("float_from_data", "int_from_data", "float_zeros")
def test_undeclared_dtypes_are_refused(backend: Any) -> None:
    from burn import Tensor
    from burn.errors import DTypeError

    undeclared = [d for d in DType if not backend.capabilities.supports(d)]
    if not undeclared:
        pytest.skip(f"backend {backend.name!r} declares every dtype")
    for dtype in undeclared:
        with pytest.raises(DTypeError, match=dtype.value):
            Tensor.from_data(np.zeros(2), dtype=dtype, backend=backend)
        with pytest.raises(DTypeError, match=dtype.value):
            Tensor.zeros((2,), dtype=dtype, kind=Kind.of(dtype), backend=backend)
        with pytest.raises(DTypeError, match=dtype.value):
            make(backend, np.zeros(2), backend.float_dtype).cast(dtype)


@covers("float_from_data", "int_from_data", "bool_from_data")
def test_rank0_host_data_stays_rank0(backend: Any, any_dtype: DType) -> None:
    from burn import Tensor

    value = 1.5 if any_dtype.is_float else (3 if any_dtype.is_int else True)
    # NumPy's ascontiguousarray turns rank 0 into shape (1,): every path must avoid it.
    for data in (value, np.array(value), np.array(value, dtype=np.float64), np.float64(value),
                 TensorData(np.array(value), any_dtype)):  # fmt: skip
        t = Tensor.from_data(data, dtype=any_dtype, backend=backend)
        assert t.shape == (), f"from_data({data!r}, dtype={any_dtype.value}) has shape {t.shape}"
        assert host(t).shape == () and t.item() == value


@covers("int_arange", "int_greater", "int_lower", "int_not_equal")
def test_masks_eye_and_grid(backend: Any) -> None:
    from burn import Bool, Int, Tensor

    i, j = np.indices((3, 4))
    for offset in (0, 1, -1):
        check_bool(Tensor.tril_mask((3, 4), offset, backend=backend), j - i > offset)
        check_bool(
            Tensor.triu_mask((2, 3, 4), offset, backend=backend), np.broadcast_to(j - i < offset, (2, 3, 4))
        )
        check_bool(Tensor.diag_mask((3, 4), offset, backend=backend), j - i != offset)
    check_exact(Tensor.eye(3, backend=backend), np.eye(3), backend.float_dtype)
    check_exact(Tensor.eye(2, 3, kind=Int, backend=backend), np.eye(2, 3), backend.int_dtype)
    check_bool(Tensor.eye(2, kind=Bool, backend=backend), np.eye(2, dtype=bool))
    check_indices(
        Tensor.cartesian_grid((2, 3), backend=backend), np.moveaxis(np.indices((2, 3)), 0, -1), backend
    )
    check_indices(Tensor.cartesian_grid((0, 2), backend=backend), np.zeros((0, 2, 2)), backend)
