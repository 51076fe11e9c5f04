"""The fused optimizer ops (`burn.backend.optim_ops`): the documented update against a float64
NumPy reference and against the default op on the same backend; operands the caller keeps are
never written."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.backend.optim_ops import OptimOps
from burn.tensor.data import TensorData
from burn.tensor.dtype import DType
from burn.testing import covers
from burn.testing.helpers import tolerance

BETA_1, BETA_2, STEP_SIZE, EPSILON = 0.9, 0.999, 0.01, 1e-5
# Large enough for a backend to update the moments in place (NumPy: above 64 KiB), and small ones.
SHAPES = [(7,), (2, 3, 4), (128, 130)]


def prim(backend: Any, values: np.ndarray, dtype: DType) -> Any:
    return backend.float_from_data(TensorData(values.astype(dtype.numpy)), backend.default_device())


def host(backend: Any, p: Any) -> np.ndarray:
    return np.array(backend.float_into_data(p).array, dtype=np.float64)


def reference(
    param: np.ndarray, grad: np.ndarray, m: np.ndarray | None, v: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    new_m = grad * (1 - BETA_1) + (0.0 if m is None else m * BETA_1)
    new_v = grad * grad * (1 - BETA_2) + (0.0 if v is None else v * BETA_2)
    return param - new_m / (np.sqrt(new_v) + EPSILON) * STEP_SIZE, new_m, new_v


def operands(rng: np.random.Generator, shape: tuple[int, ...]) -> list[np.ndarray]:
    """param, grad, moment_1, moment_2 away from zero, so that ``grad * grad * (1 - beta_2)``
    stays a normal number in float16 (its rounding is then what the tolerance allows)."""
    param, grad, m = (
        rng.uniform(0.5, 2.0, size=shape) * rng.choice([-1.0, 1.0], size=shape) for _ in range(3)
    )
    return [param, grad, m, rng.uniform(0.1, 2.0, size=shape)]  # v >= 0, as a second moment is


@covers("float_adam_step")
@pytest.mark.parametrize("first", [True, False], ids=["first-step", "later-step"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_adam_step(backend: Any, float_dtype: DType, shape: tuple[int, ...], first: bool, rng: Any) -> None:
    param, grad, m, v = (x.astype(float_dtype.numpy).astype(np.float64) for x in operands(rng, shape))
    if first:
        m_in = v_in = None
        expected = reference(param, grad, None, None)
    else:
        m_in, v_in = prim(backend, m, float_dtype), prim(backend, v, float_dtype)
        expected = reference(param, grad, m, v)
    out = backend.float_adam_step(
        prim(backend, param, float_dtype), prim(backend, grad, float_dtype), m_in, v_in,
        BETA_1, BETA_2, STEP_SIZE, EPSILON,
    )  # fmt: skip
    del m_in, v_in  # handed over: the op may have written into them
    assert len(out) == 3
    rtol, atol = tolerance(float_dtype, 8)
    for name, got, want in zip(["param", "moment_1", "moment_2"], out, expected, strict=True):
        assert backend.float_get_dtype(got) == float_dtype, name
        assert tuple(backend.float_shape(got)) == shape, name
        np.testing.assert_allclose(host(backend, got), want, rtol=rtol, atol=atol, err_msg=name)


@covers("float_adam_step")
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_adam_step_agrees_with_the_default_op(
    backend: Any, float_dtype: DType, shape: tuple[int, ...], rng: Any
) -> None:
    values = operands(rng, shape)

    def run(op: Any) -> list[np.ndarray]:
        param, grad, m, v = (prim(backend, x, float_dtype) for x in values)
        return [host(backend, p) for p in op(param, grad, m, v, BETA_1, BETA_2, STEP_SIZE, EPSILON)]

    fused = run(backend.float_adam_step)
    default = run(lambda *args: OptimOps.float_adam_step(backend, *args))
    rtol, atol = tolerance(float_dtype, 2)  # an override may round differently (e.g. one FMA)
    for got, want in zip(fused, default, strict=True):
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


@covers("float_adam_step")
def test_adam_step_reads_what_the_caller_keeps(backend: Any, float_dtype: DType, rng: Any) -> None:
    values = [x.astype(float_dtype.numpy) for x in operands(rng, (128, 130))]
    # Held by a list besides the locals passed, as a tensor holds its primitive: still needed.
    kept = [prim(backend, x, float_dtype) for x in values]
    param, grad, moment_1, moment_2 = kept
    backend.float_adam_step(param, grad, moment_1, moment_2, BETA_1, BETA_2, STEP_SIZE, EPSILON)
    for name, p, x in zip(["param", "grad", "moment_1", "moment_2"], kept, values, strict=True):
        np.testing.assert_array_equal(host(backend, p), x.astype(np.float64), err_msg=name)


@covers("float_adam_step")
def test_adam_keeps_a_record_taken_before_a_step(backend: Any, rng: Any) -> None:
    """The optimizer may update its moments in place, but never those of a record the user holds."""
    from burn import Tensor, optim
    from burn.module import Module, Param

    class Weights(Module):
        w: Param

    model = Weights(Param.from_tensor(Tensor.from_data(rng.standard_normal((128, 130)), backend=backend)))
    grad = Tensor.from_data(rng.standard_normal((128, 130)), backend=backend)
    optimizer = optim.AdamConfig().init()
    steps = []
    for _ in range(4):
        model = optimizer.step(0.01, model, optim.GradientsParams({model.w.id: grad}))
        record = optimizer.to_record()
        (state,) = record.values()
        steps.append((record, state["moment_1"].to_numpy().copy(), state["moment_2"].to_numpy().copy()))
    for record, moment_1, moment_2 in steps:
        (state,) = record.values()
        np.testing.assert_array_equal(state["moment_1"].to_numpy(), moment_1)
        np.testing.assert_array_equal(state["moment_2"].to_numpy(), moment_2)
    assert len({float(m[0, 0]) for _, m, _ in steps}) == 4  # the moments did move
