"""Cases past the shortcuts backends take: sizes above a small-input path, ranks where a 2-D
routine no longer applies, reductions over size-1 and size-0 middle dims, scalar divisors 0 and 1,
distributions and kinds the common tests skip.

Each case here is one that mutation testing (docs/guides/conformance-mutation.md) found the rest
of the suite never reached: a backend could break it and still pass.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.foundations.distribution import Bernoulli, Normal
from burn.foundations.dtype import DType
from burn.testing import covers
from burn.testing.helpers import (
    check_bool,
    check_exact,
    check_float,
    f64,
    host,
    make,
    rand_any,
    rand_bool,
    rand_float,
    rand_int,
    wrap_float,
)
from burn.testing.suite.test_activation import ACTIVATIONS, _act


@covers(*{c.op for c in ACTIVATIONS})
def test_activations_on_a_large_tensor(backend: Any, float_dtype: DType, rng: Any) -> None:
    # 40 x 130 = 5200 elements: past any per-element Python path for small inputs
    x = rand_float(rng, (40, 130), float_dtype, -4, 4)
    t = make(backend, x, float_dtype)
    for case in ACTIVATIONS:
        check_float(
            case.call(_act(), t), case.ref(f64(x)), float_dtype, terms=4, what=f"{case.op} on (40, 130)"
        )


@covers("float_mask_where", "int_mask_where", "bool_mask_where", "float_mask_fill", "int_mask_fill")
def test_masks_on_a_large_tensor(backend: Any, any_dtype: DType, rng: Any) -> None:
    # 48 x 48 = 2304 elements: past a small-input path (a select through bit masks, say), with a
    # mask and a value that broadcast
    x = rand_any(rng, (48, 48), any_dtype)
    value = rand_any(rng, (48,), any_dtype)
    mask = rand_bool(rng, (48, 1)) ^ rand_bool(rng, (48, 48))
    t, m = make(backend, x, any_dtype), make(backend, mask, DType.BOOL)
    out = t.mask_where(m, make(backend, value, any_dtype))
    check_exact(out, np.where(mask, value, x), any_dtype, what="mask_where on (48, 48)")
    # the mask is larger than the tensor and the value together: the output takes its shape
    small, row = rand_any(rng, (1, 48), any_dtype), rand_any(rng, (1, 48), any_dtype)
    out = make(backend, small, any_dtype).mask_where(m, make(backend, row, any_dtype))
    check_exact(out, np.where(mask, row, small), any_dtype, what="mask_where, tensor (1, 48), mask (48, 48)")
    if any_dtype is not DType.BOOL:
        fill = 1.5 if any_dtype.is_float else 7
        want = np.where(mask, np.asarray(fill).astype(x.dtype), x)
        check_exact(t.mask_fill(m, fill), want, any_dtype, what="mask_fill on (48, 48)")


# (lhs, rhs): a 2-D operand against a batch on either side, and batch dims that broadcast
MATMUL_SHAPES = [
    ((3, 4), (2, 4, 5)),
    ((2, 3, 4), (4, 5)),
    ((1, 3, 4), (2, 4, 5)),
    ((2, 1, 3, 4), (3, 4, 2)),
    ((2, 3, 4), (1, 4, 5)),
    ((2, 2, 3, 4), (1, 1, 4, 5)),
]


@covers("float_matmul")
@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
def test_matmul_broadcasts_batch_dims(backend: Any, float_dtype: DType, shapes: Any, rng: Any) -> None:
    a = rand_float(rng, shapes[0], float_dtype, -1, 1)
    b = rand_float(rng, shapes[1], float_dtype, -1, 1)
    out = make(backend, a, float_dtype).matmul(make(backend, b, float_dtype))
    check_float(
        out, np.matmul(f64(a), f64(b)), float_dtype, terms=4, what=f"matmul {shapes[0]} @ {shapes[1]}"
    )


@covers("float_mean_dim", "float_sum_dim", "float_prod_dim", "int_mean_dim", "int_sum_dim")
def test_reductions_over_size_one_and_empty_middle_dims(backend: Any, float_dtype: DType, rng: Any) -> None:
    x = rand_float(rng, (3, 1, 4), float_dtype)
    t = make(backend, x, float_dtype)
    check_float(t.mean_dim(1), f64(x), float_dtype, what="mean_dim over a size-1 dim")
    check_float(t.sum_dim(1), f64(x), float_dtype, what="sum_dim over a size-1 dim")
    check_float(t.prod_dim(1), f64(x), float_dtype, what="prod_dim over a size-1 dim")
    empty = make(backend, np.zeros((2, 0, 3)), float_dtype)
    check_float(empty.mean_dim(1), np.full((2, 1, 3), np.nan), float_dtype, what="mean_dim over a size-0 dim")
    check_float(empty.sum_dim(1), np.zeros((2, 1, 3)), float_dtype, what="sum_dim over a size-0 dim")
    check_float(empty.prod_dim(1), np.ones((2, 1, 3)), float_dtype, what="prod_dim over a size-0 dim")
    xi = rand_int(rng, (3, 1, 4), backend.int_dtype, 0, 9)
    ti = make(backend, xi, backend.int_dtype)
    check_exact(ti.mean_dim(1), xi, backend.int_dtype, what="int mean_dim over a size-1 dim")
    check_exact(ti.sum_dim(1), xi, backend.int_dtype, what="int sum_dim over a size-1 dim")


@covers("int_div_scalar", "int_remainder_scalar")
def test_int_scalar_division_by_one_and_by_zero(backend: Any, int_dtype: DType, rng: Any) -> None:
    x = rand_int(rng, (3, 5), int_dtype)
    t = make(backend, x, int_dtype)
    check_exact(t / 1, x, int_dtype, what="x / 1")
    check_exact(t % 1, np.zeros_like(x), int_dtype, what="x % 1")
    # the contract (burn.backend.ops.int): division and remainder by zero give 0, never raise
    check_exact(t / 0, np.zeros_like(x), int_dtype, what="x / 0")
    check_exact(t % 0, np.zeros_like(x), int_dtype, what="x % 0")


@covers("int_random")
def test_int_random_normal_and_bernoulli_kinds(backend: Any, int_dtype: DType) -> None:
    from burn import Int, Tensor

    n = 20_000
    backend.seed(17)
    mean, std = (20.0, 3.0) if int_dtype is DType.U8 else (-2.0, 3.0)
    t = Tensor.random((n,), Normal(mean, std), dtype=int_dtype, kind=Int, backend=backend)
    data = t.to_data()
    assert t.dtype is int_dtype and data.dtype is int_dtype, f"int normal: {t.dtype} / {data.dtype}"
    x = data.array.astype(np.float64)
    assert np.all(x == np.rint(x))
    # rounding to integers adds variance 1/12
    assert abs(x.mean() - mean) < 6 * std / np.sqrt(n), f"mean {x.mean()}, expected {mean}"
    assert abs(x.std() - np.sqrt(std**2 + 1 / 12)) < 6 * std / np.sqrt(2 * n), f"std {x.std()}"
    b = Tensor.random((n,), Bernoulli(0.5), dtype=int_dtype, kind=Int, backend=backend)
    assert b.to_data().dtype is int_dtype, f"int bernoulli: to_data() gives {b.to_data().dtype}"


@covers("float_random")
def test_float64_random_values_have_float64_resolution(backend: Any) -> None:
    from burn import Tensor
    from burn.foundations.distribution import Uniform

    if not backend.capabilities.supports(DType.F64):
        pytest.skip(f"capability dtype:float64 not declared by backend {backend.name!r}")
    backend.seed(3)
    for dist in (Uniform(0.0, 1.0), Normal(0.0, 1.0)):
        x = host(Tensor.random((1000,), dist, dtype=DType.F64, backend=backend))
        # draws made in float32 and widened take at most 2**24 values in [0, 1): all of them would
        # survive a round trip through float32, where float64 draws essentially never do
        assert np.mean(x == x.astype(np.float32)) < 0.5, f"float64 {dist!r} draws have float32 resolution"


@covers("embedding_backward")
def test_embedding_backward_with_unused_rows(backend: Any, rng: Any) -> None:
    dtype = backend.float_dtype
    w = make(backend, rand_float(rng, (7, 3), dtype), dtype)
    idx = np.array([[0, 2], [2, 1]])  # rows 3 to 6 get no gradient
    g = rand_float(rng, (2, 2, 3), dtype)
    dw = backend.embedding_backward(
        w._p, make(backend, g, dtype)._p, make(backend, idx, backend.int_dtype)._p
    )
    expected = np.zeros((7, 3))
    np.add.at(expected, idx.reshape(-1), f64(g).reshape(-1, 3))
    check_float(wrap_float(backend, dw), expected, dtype, terms=2, what="embedding_backward")


@covers("bool_zeros", "bool_ones", "bool_full", "bool_empty")
def test_bool_creation_ops_give_bool_primitives(backend: Any) -> None:
    # The ops themselves, on primitives: the Tensor layer may build Bool tensors another way.
    from burn import Bool
    from burn.tensor._base import wrap

    device = backend.default_device()
    made = {
        "bool_zeros": (backend.bool_zeros((2, 3), device), np.zeros((2, 3), bool)),
        "bool_ones": (backend.bool_ones((2, 3), device), np.ones((2, 3), bool)),
        "bool_full(True)": (backend.bool_full((2, 3), True, device), np.ones((2, 3), bool)),
        "bool_full(False)": (backend.bool_full((2, 3), False, device), np.zeros((2, 3), bool)),
    }
    mask = make(backend, np.array([[True, False, True], [False, True, False]]), DType.BOOL)
    for name, (p, want) in made.items():
        t = wrap(p, backend, Bool)
        check_bool(t, want, what=name)  # checks that to_data() gives bool too
        check_bool(t.bool_and(mask), want & host(mask), what=f"{name} & mask")
        check_bool(t.bool_not(), ~want, what=f"not {name}")
    empty = wrap(backend.bool_empty((2, 3), device), backend, Bool)
    assert empty.dtype is DType.BOOL and empty.to_data().dtype is DType.BOOL, "bool_empty"
    assert tuple(empty.shape) == (2, 3), f"bool_empty: shape {empty.shape}"
