"""The fused optimizer ops (`burn.backend.ops.optim`): the documented update against a float64
NumPy reference and against the default op on the same backend; operands the caller keeps are
never written."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.backend.ops.optim import OptimOps
from burn.foundations.data import TensorData
from burn.foundations.dtype import DType
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


# SGD with momentum: (momentum, dampening, nesterov, weight_decay, lr), and RMSProp:
# (alpha, epsilon, centered, momentum, weight_decay, lr); each option on in some case.
SGD_CASES = {"momentum": (0.9, 0.1, False, None, 0.01), "nesterov-decay": (0.8, 0.0, True, 0.05, 0.01)}
RMSPROP_CASES = {
    "plain": (0.9, 1e-5, False, 0.0, None, 0.01),
    "momentum": (0.9, 1e-5, False, 0.9, None, 0.01),
    "centered-momentum-decay": (0.9, 1e-5, True, 0.8, 0.05, 0.01),
}


def sgd_reference(
    param: np.ndarray, grad: np.ndarray, velocity: np.ndarray | None, case: tuple[Any, ...]
) -> tuple[np.ndarray, np.ndarray]:
    momentum, dampening, nesterov, weight_decay, lr = case
    g = grad if weight_decay is None else grad + weight_decay * param
    v = g if velocity is None else momentum * velocity + (1 - dampening) * g
    update = g + momentum * v if nesterov else v
    return param - lr * update, v


def rmsprop_reference(
    param: np.ndarray, grad: np.ndarray, states: tuple[np.ndarray | None, ...], case: tuple[Any, ...]
) -> list[np.ndarray | None]:
    square_avg, grad_avg, buffer = states
    alpha, epsilon, centered, momentum, weight_decay, lr = case
    g = grad if weight_decay is None else grad + weight_decay * param
    s = (1 - alpha) * g * g + (0.0 if square_avg is None else alpha * square_avg)
    a = (1 - alpha) * g + (0.0 if grad_avg is None else alpha * grad_avg) if centered else None
    update = g / (np.sqrt(s if a is None else s - a * a) + epsilon)
    b = None
    if momentum > 0:
        b = update = update if buffer is None else momentum * buffer + update
    return [param - lr * update, s, a, b]


def rmsprop_operands(rng: np.random.Generator, shape: tuple[int, ...]) -> list[np.ndarray]:
    """param, grad, square_avg, grad_avg, momentum_buffer: the averages such that the centered
    ``s - a * a`` stays well above zero (no cancellation to blow up the rounding)."""
    param, grad, _, buffer = operands(rng, shape)
    return [param, grad, rng.uniform(1.0, 2.0, size=shape), rng.uniform(-0.2, 0.2, size=shape), buffer]


def check_against(backend: Any, dtype: DType, got: Any, expected: Any, names: list[str], terms: int) -> None:
    rtol, atol = tolerance(dtype, terms)
    for name, g, want in zip(names, got, expected, strict=True):
        if want is None:
            assert g is None, f"{name}: None expected"
            continue
        assert backend.float_get_dtype(g) == dtype, name
        assert tuple(backend.float_shape(g)) == want.shape, name
        np.testing.assert_allclose(host(backend, g), want, rtol=rtol, atol=atol, err_msg=name)


@covers("float_sgd_momentum_step")
@pytest.mark.parametrize("case", SGD_CASES)
@pytest.mark.parametrize("first", [True, False], ids=["first-step", "later-step"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_sgd_momentum_step(
    backend: Any, float_dtype: DType, shape: tuple[int, ...], first: bool, case: str, rng: Any
) -> None:
    param, grad, v, _ = (x.astype(float_dtype.numpy).astype(np.float64) for x in operands(rng, shape))
    velocity = None if first else prim(backend, v, float_dtype)
    expected = sgd_reference(param, grad, None if first else v, SGD_CASES[case])
    out = backend.float_sgd_momentum_step(
        prim(backend, param, float_dtype), prim(backend, grad, float_dtype), velocity, *SGD_CASES[case]
    )
    del velocity  # handed over: the op may have written into it
    check_against(backend, float_dtype, out, expected, ["param", "velocity"], 8)


@covers("float_rmsprop_step")
@pytest.mark.parametrize("case", RMSPROP_CASES)
@pytest.mark.parametrize("first", [True, False], ids=["first-step", "later-step"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_rmsprop_step(
    backend: Any, float_dtype: DType, shape: tuple[int, ...], first: bool, case: str, rng: Any
) -> None:
    values = [x.astype(float_dtype.numpy).astype(np.float64) for x in rmsprop_operands(rng, shape)]
    param, grad, *state_values = values
    states = [None if first else prim(backend, x, float_dtype) for x in state_values]
    expected = rmsprop_reference(
        param, grad, (None,) * 3 if first else tuple(state_values), RMSPROP_CASES[case]
    )
    out = backend.float_rmsprop_step(
        prim(backend, param, float_dtype), prim(backend, grad, float_dtype), *states, *RMSPROP_CASES[case]
    )
    del states  # handed over: the op may have written into them
    names = ["param", "square_avg", "grad_avg", "momentum_buffer"]
    check_against(backend, float_dtype, out, expected, names, 8)


@covers("float_sgd_momentum_step", "float_rmsprop_step")
@pytest.mark.parametrize("first", [True, False], ids=["first-step", "later-step"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_sgd_and_rmsprop_steps_agree_with_the_default_ops(
    backend: Any, float_dtype: DType, shape: tuple[int, ...], first: bool, rng: Any
) -> None:
    values = rmsprop_operands(rng, shape)
    rtol, atol = tolerance(float_dtype, 2)  # an override may round differently (e.g. one FMA)

    def sgd(op: Any, case: tuple[Any, ...]) -> list[np.ndarray]:
        param, grad, velocity = (prim(backend, x, float_dtype) for x in values[:3])
        return [host(backend, p) for p in op(param, grad, None if first else velocity, *case)]

    def rmsprop(op: Any, case: tuple[Any, ...]) -> list[np.ndarray | None]:
        param, grad, *states = (prim(backend, x, float_dtype) for x in values)
        out = op(param, grad, *(None if first else s for s in states), *case)
        return [None if p is None else host(backend, p) for p in out]

    for case in SGD_CASES.values():
        fused = sgd(backend.float_sgd_momentum_step, case)
        default = sgd(lambda *args: OptimOps.float_sgd_momentum_step(backend, *args), case)
        for got, want in zip(fused, default, strict=True):
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=str(case))
    for rms_case in RMSPROP_CASES.values():
        fused_r = rmsprop(backend.float_rmsprop_step, rms_case)
        default_r = rmsprop(lambda *args: OptimOps.float_rmsprop_step(backend, *args), rms_case)
        for got_r, want_r in zip(fused_r, default_r, strict=True):
            assert (got_r is None) == (want_r is None), str(rms_case)
            if got_r is not None and want_r is not None:
                np.testing.assert_allclose(got_r, want_r, rtol=rtol, atol=atol, err_msg=str(rms_case))


@covers("float_sgd_momentum_step", "float_rmsprop_step")
def test_sgd_and_rmsprop_read_what_the_caller_keeps(backend: Any, float_dtype: DType, rng: Any) -> None:
    values = [x.astype(float_dtype.numpy) for x in rmsprop_operands(rng, (128, 130))]
    # Held by a list besides the locals passed, as a tensor holds its primitive: still needed.
    kept = [prim(backend, x, float_dtype) for x in values]
    param, grad, square_avg, grad_avg, buffer = kept
    backend.float_sgd_momentum_step(param, grad, square_avg, *SGD_CASES["nesterov-decay"])
    backend.float_rmsprop_step(
        param, grad, square_avg, grad_avg, buffer, *RMSPROP_CASES["centered-momentum-decay"]
    )
    names = ["param", "grad", "square_avg", "grad_avg", "momentum_buffer"]
    for name, p, x in zip(names, kept, values, strict=True):
        np.testing.assert_array_equal(host(backend, p), x.astype(np.float64), err_msg=name)


@covers("float_sgd_momentum_step", "float_rmsprop_step")
@pytest.mark.parametrize("optimizer", ["sgd", "rmsprop"])
def test_sgd_and_rmsprop_match_their_unfused_updates_and_keep_records(
    backend: Any, optimizer: str, rng: Any
) -> None:
    """Through `OptimizerAdaptor`, four steps with every option on: the values of the update
    written with tensor ops (the optimizers' code before the fused ops), and records taken
    between the steps never change, though the state may be updated in place."""
    from burn import Tensor, optim
    from burn.module import Module, Param

    class Weights(Module):
        w: Param

    start = rng.standard_normal((128, 130))
    grads = [Tensor.from_data(rng.standard_normal((128, 130)), backend=backend) for _ in range(4)]
    decay = optim.WeightDecayConfig(0.05)
    if optimizer == "sgd":
        config: Any = optim.SgdConfig(
            momentum=optim.MomentumConfig(0.8, 0.1, nesterov=True), weight_decay=decay
        )
    else:
        config = optim.RmsPropConfig(alpha=0.9, momentum=0.8, centered=True, weight_decay=decay)
    model = Weights(Param.from_tensor(Tensor.from_data(start, backend=backend)))
    optimizer_ = config.init()
    records = []
    for grad in grads:
        model = optimizer_.step(0.01, model, optim.GradientsParams({model.w.id: grad}))
        record = optimizer_.to_record()
        (state,) = record.values()
        records.append((record, {k: v.to_numpy().copy() for k, v in state.items()}))
    # The same update with tensor ops: Burn's formulas, as the optimizers computed them before.
    tensor = Tensor.from_data(start, backend=backend)
    damped, c = 1.0 - 0.1, 1.0 - 0.9  # the scalars as the optimizers derive them
    unfused: dict[str, Any] = {}
    for grad in grads:
        g = grad + tensor * 0.05
        if optimizer == "sgd":
            v = unfused.get("velocity")
            v = g if v is None else v * 0.8 + g * damped
            unfused["velocity"] = v
            tensor = tensor - (g + v * 0.8) * 0.01
        else:
            s, a, b = (unfused.get(k) for k in ("square_avg", "grad_avg", "momentum_buffer"))
            s = g * g * c if s is None else s * 0.9 + g * g * c
            a = g * c if a is None else a * 0.9 + g * c
            u = g / ((s - a * a).sqrt() + 1e-5)
            b = u if b is None else b * 0.8 + u
            unfused.update(square_avg=s, grad_avg=a, momentum_buffer=b)
            tensor = tensor - b * 0.01
    rtol, atol = tolerance(model.w.val().dtype, 2)
    np.testing.assert_allclose(model.w.val().to_numpy(), tensor.to_numpy(), rtol=rtol, atol=atol)
    for record, saved in records:
        (state,) = record.values()
        assert state.keys() == saved.keys()
        for key, value in saved.items():
            np.testing.assert_array_equal(state[key].to_numpy(), value, err_msg=key)
