"""What backward means, beyond each op's derivative: seeds, accumulation, missing gradients,
and the documented conventions at points where an op has no derivative (clamp boundaries,
ties, kinks), as PyTorch and Burn define them."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.testing import covers
from burn.testing.gradcheck import require_autodiff


def leaf(backend: Any, values: Any) -> Any:
    from burn import Tensor

    return Tensor.from_data(np.asarray(values, dtype=np.float64), backend=backend).require_grad()


def grad_of(x: Any, grads: Any) -> np.ndarray:
    g = x.grad(grads)
    assert g is not None, "expected a gradient"
    return g.to_numpy().astype(np.float64)


@pytest.fixture
def ad(backend: Any) -> Any:
    require_autodiff(backend)
    return backend


@covers("float_mul_scalar")
def test_non_scalar_root_is_seeded_with_ones(ad: Any) -> None:
    x = leaf(ad, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    grads = (x * 3.0).backward()
    np.testing.assert_array_equal(grad_of(x, grads), np.full((2, 3), 3.0))


@covers("float_add", "float_mul")
def test_a_tensor_used_twice_accumulates(ad: Any) -> None:
    x = leaf(ad, [1.0, -2.0, 0.5])
    y = x * x + x + x  # d/dx = 2x + 2
    np.testing.assert_allclose(grad_of(x, y.sum().backward()), [4.0, -2.0, 3.0])


@covers("float_add")
def test_gradient_is_a_tensor_of_the_inner_backend_with_the_input_shape_and_dtype(ad: Any) -> None:
    x = leaf(ad, [[1.0, 2.0]])
    b = leaf(ad, [3.0])
    grads = (x + b).backward()
    gx, gb = x.grad(grads), b.grad(grads)
    assert gx is not None and gb is not None
    assert gx.backend is ad.inner and gb.backend is ad.inner
    assert tuple(gx.shape) == (1, 2) and tuple(gb.shape) == (1,)
    assert gx.dtype is x.dtype
    np.testing.assert_array_equal(gb.to_numpy(), [2.0])


@covers("float_mul")
def test_tensors_outside_the_graph_have_no_gradient(ad: Any) -> None:
    from burn import Tensor

    x = leaf(ad, [1.0, 2.0])
    unused = leaf(ad, [5.0])
    constant = Tensor.from_data(np.array([3.0, 4.0]), backend=ad)
    grads = (x * constant).sum().backward()
    assert constant.grad(grads) is None
    assert unused.grad(grads) is None
    np.testing.assert_array_equal(grad_of(x, grads), [3.0, 4.0])


@covers("float_mul")
def test_grad_remove_takes_the_gradient_out(ad: Any) -> None:
    x = leaf(ad, [1.0, 2.0])
    grads = (x * x).sum().backward()
    g = x.grad_remove(grads)
    assert g is not None
    np.testing.assert_array_equal(g.to_numpy(), [2.0, 4.0])
    assert x.grad(grads) is None


@covers("float_clamp", "float_clamp_min", "float_clamp_max")
def test_clamp_passes_the_gradient_at_its_boundaries(ad: Any) -> None:
    # PyTorch's convention: the gradient flows where min <= x <= max, boundaries included.
    x = leaf(ad, [-2.0, -1.0, 0.0, 1.0, 2.0])
    np.testing.assert_array_equal(grad_of(x, x.clamp(-1.0, 1.0).sum().backward()), [0, 1, 1, 1, 0])
    np.testing.assert_array_equal(grad_of(x, x.clamp_min(-1.0).sum().backward()), [0, 1, 1, 1, 1])
    np.testing.assert_array_equal(grad_of(x, x.clamp_max(1.0).sum().backward()), [1, 1, 1, 1, 0])


@covers("float_max", "float_min", "float_max_dim", "float_min_dim")
def test_ties_route_the_gradient_to_the_first_extremum(ad: Any) -> None:
    x = leaf(ad, [[1.0, 3.0, 3.0], [2.0, 0.0, 0.0]])
    np.testing.assert_array_equal(grad_of(x, x.max().backward()), [[0, 1, 0], [0, 0, 0]])
    np.testing.assert_array_equal(grad_of(x, x.min().backward()), [[0, 0, 0], [0, 1, 0]])
    np.testing.assert_array_equal(grad_of(x, x.max_dim(1).sum().backward()), [[0, 1, 0], [1, 0, 0]])
    np.testing.assert_array_equal(grad_of(x, x.min_dim(1).sum().backward()), [[1, 0, 0], [0, 1, 0]])


@covers("relu", "leaky_relu", "float_abs")
def test_kinks_at_zero(ad: Any) -> None:
    from burn import activation

    x = leaf(ad, [-1.0, 0.0, 2.0])
    np.testing.assert_array_equal(grad_of(x, activation.relu(x).sum().backward()), [0, 0, 1])
    np.testing.assert_allclose(grad_of(x, activation.leaky_relu(x, 0.1).sum().backward()), [0.1, 0.1, 1])
    np.testing.assert_array_equal(grad_of(x, x.abs().sum().backward()), [-1, 0, 1])


@covers("float_powf")
def test_powf_at_zero_base(ad: Any) -> None:
    x = leaf(ad, [0.0, 2.0])
    y = leaf(ad, [2.0, 3.0])
    grads = x.powf(y).sum().backward()
    np.testing.assert_allclose(grad_of(x, grads), [0.0, 12.0])
    np.testing.assert_allclose(grad_of(y, grads), [0.0, 8.0 * np.log(2.0)])


@covers("float_prod", "float_prod_dim")
def test_prod_with_zeros(ad: Any) -> None:
    x = leaf(ad, [[0.0, 2.0, 3.0], [0.0, 0.0, 5.0]])
    np.testing.assert_array_equal(grad_of(x, x.prod_dim(1).sum().backward()), [[6, 0, 0], [0, 0, 0]])
    y = leaf(ad, [4.0, 0.0, 5.0])
    np.testing.assert_array_equal(grad_of(y, y.prod().backward()), [0, 20, 0])


@covers("float_round", "float_floor", "float_ceil", "float_sign")
def test_piecewise_constant_ops_have_zero_gradient(ad: Any) -> None:
    x = leaf(ad, [-1.5, 0.25, 2.5])
    for f in (lambda t: t.round(), lambda t: t.floor(), lambda t: t.ceil(), lambda t: t.sign()):
        np.testing.assert_array_equal(grad_of(x, (f(x) + x).sum().backward()), [1, 1, 1])
