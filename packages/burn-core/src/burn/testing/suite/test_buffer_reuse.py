"""The ``float_*_owned`` ops (Burn's ownership trick): the plain op's result, bit for bit, whether
or not the backend reuses an operand's buffer; operands not handed over are never written."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.foundations.data import TensorData
from burn.foundations.dtype import DType
from burn.testing import covers
from burn.testing.helpers import tolerance

BINARY = ["add", "sub", "mul", "div"]
UNARY = ["exp", "log", "sqrt", "neg", "tanh"]
# Large enough for a backend to bother reusing (NumPy: above 64 KiB), plus broadcasting and rank 0.
SHAPES = [(), (7,), (128, 130)]
OTHER = {(): (), (7,): (7,), (128, 130): (130,)}


def prim(backend: Any, values: np.ndarray, dtype: DType) -> Any:
    return backend.float_from_data(TensorData(values.astype(dtype.numpy)), backend.default_device())


def host(backend: Any, p: Any) -> np.ndarray:
    return np.array(backend.float_into_data(p).array)


def values(rng: Any, shape: tuple[int, ...]) -> np.ndarray:
    return rng.uniform(0.5, 2.0, size=shape)


@covers(*(f"float_{op}_owned" for op in BINARY))
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("op", BINARY)
def test_binary_owned(backend: Any, float_dtype: DType, op: str, shape: tuple[int, ...], rng: Any) -> None:
    x, y = values(rng, shape), values(rng, OTHER[shape])
    expected = host(
        backend, getattr(backend, f"float_{op}")(prim(backend, x, float_dtype), prim(backend, y, float_dtype))
    )
    owned = getattr(backend, f"float_{op}_owned")
    # An operand the caller keeps must have a holder besides the local passed (as a tensor does).
    keep = [prim(backend, x, float_dtype), prim(backend, y, float_dtype)]
    held_x, held_y = keep
    np.testing.assert_array_equal(host(backend, owned(prim(backend, x, float_dtype), held_y)), expected)
    np.testing.assert_array_equal(host(backend, owned(held_x, prim(backend, y, float_dtype))), expected)
    # operands the caller still holds keep their values
    np.testing.assert_array_equal(host(backend, held_y), y.astype(float_dtype.numpy))
    np.testing.assert_array_equal(host(backend, held_x), x.astype(float_dtype.numpy))


@covers(*(f"float_{op}_scalar_owned" for op in BINARY))
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("op", BINARY)
def test_scalar_owned(backend: Any, float_dtype: DType, op: str, shape: tuple[int, ...], rng: Any) -> None:
    x = values(rng, shape)
    expected = host(backend, getattr(backend, f"float_{op}_scalar")(prim(backend, x, float_dtype), 1.25))
    out = getattr(backend, f"float_{op}_scalar_owned")(prim(backend, x, float_dtype), 1.25)
    np.testing.assert_array_equal(host(backend, out), expected)
    assert backend.float_get_dtype(out) == float_dtype


@covers(*(f"float_{op}_owned" for op in UNARY))
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("op", UNARY)
def test_unary_owned(backend: Any, float_dtype: DType, op: str, shape: tuple[int, ...], rng: Any) -> None:
    x = values(rng, shape)
    expected = host(backend, getattr(backend, f"float_{op}")(prim(backend, x, float_dtype)))
    out = getattr(backend, f"float_{op}_owned")(prim(backend, x, float_dtype))
    np.testing.assert_array_equal(host(backend, out), expected)


@covers("float_exp_owned", "float_add_scalar_owned")
def test_tensor_chains_on_temporaries(backend: Any, float_dtype: DType, rng: Any) -> None:
    from burn import Tensor

    x = values(rng, (128, 130)).astype(float_dtype.numpy)
    t = Tensor.from_data(x, backend=backend, dtype=float_dtype)
    chained = t.mul(2.0).add(1.0).exp().to_numpy()  # method calls on temporaries: may reuse
    plain = (t * 2.0 + 1.0).exp().to_numpy()  # operators never reuse: the same ops, out of place
    np.testing.assert_array_equal(chained, plain)
    rtol, atol = tolerance(float_dtype, 3)
    want = np.exp(x.astype(np.float64) * 2.0 + 1.0)
    np.testing.assert_allclose(chained.astype(np.float64), want, rtol=rtol, atol=atol)
    np.testing.assert_array_equal(t.to_numpy(), x)
