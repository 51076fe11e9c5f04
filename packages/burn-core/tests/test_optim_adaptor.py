"""The OptimizerAdaptor around the update rules: which params are optimized (several optimizers
on disjoint submodules, no-grad params), params of several dtypes in one model, gradient clipping,
gradient accumulation, and state handling (one per ParamId, moved and typed on resume)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import burn
from burn import Tensor
from burn.module import Module, Param
from burn.optim import (
    AdamConfig,
    GradientClippingConfig,
    GradientsAccumulator,
    GradientsParams,
    MomentumConfig,
    SgdConfig,
)
from burn.optim.adam import Adam
from burn.optim.sgd import Sgd

nd = pytest.importorskip("burn_ndarray", reason="burn-ndarray is not installed")


class Affine(Module):
    weight: Param
    bias: Param

    def forward(self, x: Tensor) -> Tensor:
        return x @ self.weight.val() + self.bias.val()


class TwoPart(Module):
    a: Affine
    b: Affine


def affine(B, d_in: int, d_out: int, seed: int, dtype=None) -> Affine:  # noqa: N803, ANN001
    rng = np.random.default_rng(seed)
    w = Tensor.from_data(rng.normal(size=(d_in, d_out)), backend=B, dtype=dtype)
    b = Tensor.from_data(rng.normal(size=(d_out,)), backend=B, dtype=dtype)
    return Affine(Param.from_tensor(w), Param.from_tensor(b))


@pytest.fixture(scope="module")
def AD():  # noqa: N802
    ad = pytest.importorskip("burn_autodiff", reason="burn-autodiff is not installed")
    return ad.Autodiff(nd.NdArray())


# -- what gets optimized ----------------------------------------------------------------------------
def test_two_optimizers_on_disjoint_submodules_mixed_dtypes(AD) -> None:  # noqa: N803
    """`a` is float32 and trained with Adam, `b` is float64 and trained with SGD+momentum; each
    param and each state tensor keeps its own dtype, and each matches a NumPy reference."""
    model = TwoPart(affine(AD, 3, 2, 0, burn.float32), affine(AD, 2, 1, 1, burn.float64))
    x = np.random.default_rng(2).normal(size=(4, 3))
    adam, sgd = AdamConfig().init(), SgdConfig(momentum=MomentumConfig(0.9, 0.0, False)).init()
    ref = {n: p.val().to_numpy().copy() for n, p in model.named_params()}
    ref_state: dict = {}
    for _step in range(3):
        x32 = Tensor.from_data(x.astype(np.float32), backend=AD)
        h = model.a(x32)  # float32
        out = model.b(h.cast(burn.float64))  # float64
        loss = (out * out).sum()
        grads = loss.backward()
        grads_a = GradientsParams.from_module(grads, model.a)
        grads_b = GradientsParams.from_module(grads, model.b)
        assert len(grads_a) == 2 and len(grads_b) == 2
        assert {p.id for p in model.a.params()} == set(grads_a)
        g = {n: p.val().grad(grads) for n, p in model.named_params()}
        assert all(v is None for v in g.values())  # from_module took them out of `grads`
        # NumPy reference of the same two updates, with the gradients burn computed.
        expected = {}
        for name, param in model.named_params():
            grad = (grads_a if name.startswith("a.") else grads_b).get(param.id).to_numpy()
            assert grad.dtype == ref[name].dtype
            if name.startswith("a."):
                expected[name] = _adam_numpy(ref[name], grad, ref_state.setdefault(name, {}), lr=0.01)
            else:
                v = ref_state.get(name)
                v = grad if v is None else 0.9 * v + grad
                ref_state[name] = v
                expected[name] = ref[name] - 0.1 * v
        model = adam.step(0.01, model, grads_a)
        model = sgd.step(0.1, model, grads_b)
        for name, param in model.named_params():
            value = param.val()
            assert value.is_require_grad()  # re-wrapped as a graph leaf
            assert value.dtype == (burn.float32 if name.startswith("a.") else burn.float64), name
            np.testing.assert_allclose(
                value.to_numpy(), expected[name], rtol=2e-6 if name.startswith("a.") else 1e-12
            )
            ref[name] = value.to_numpy().copy()
    # One state per param, each in its param's dtype; Adam's only for `a`, SGD's only for `b`.
    assert set(adam.states) == {p.id for p in model.a.params()}
    assert set(sgd.states) == {p.id for p in model.b.params()}
    for state in adam.states.values():
        assert state["time"] == 3
        assert state["moment_1"].dtype == burn.float32 and state["moment_2"].dtype == burn.float32
        assert not state["moment_1"].backend.ad_enabled  # the update ran on inner tensors
    for state in sgd.states.values():
        assert state["velocity"].dtype == burn.float64


def _adam_numpy(p: np.ndarray, g: np.ndarray, state: dict, lr: float) -> np.ndarray:
    t = state.get("t", 0) + 1
    m = 0.9 * state.get("m", 0.0) + 0.1 * g
    v = 0.999 * state.get("v", 0.0) + 0.001 * g * g
    state.update(t=t, m=m, v=v)
    return p - lr * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-5)


def test_params_without_gradient_are_left_alone(AD) -> None:  # noqa: N803
    model = TwoPart(affine(AD, 2, 2, 0), affine(AD, 2, 2, 1))
    model = TwoPart(model.a, model.b.no_grad())  # b frozen
    x = Tensor.from_data(np.ones((1, 2), np.float32), backend=AD)
    grads = GradientsParams.from_grads(model.b(model.a(x)).sum().backward(), model)
    assert {p.id for p in model.a.params()} == set(grads)
    optimizer = SgdConfig().init()
    new = optimizer.step(0.1, model, grads)
    assert new.b.weight is model.b.weight and new.b.bias is model.b.bias
    assert not new.b.weight.val().is_require_grad()
    assert not np.array_equal(new.a.weight.val().to_numpy(), model.a.weight.val().to_numpy())
    assert len(grads) == 0  # the step consumed the gradients it used


def test_gradients_built_on_the_autodiff_backend_are_not_copied(AD, monkeypatch) -> None:  # noqa: N803
    """A gradient given as an autodiff tensor is used through its inner tensor: no round trip
    through the host (a 25M-param Adam step took 23.6 ms that way instead of 15)."""
    import burn.optim.base as base

    model = affine(AD, 3, 2, 0)
    rng = np.random.default_rng(5)
    w_grad, b_grad = rng.normal(size=(3, 2)).astype(np.float32), rng.normal(size=(2,)).astype(np.float32)
    on_inner = GradientsParams({
        model.weight.id: Tensor.from_data(w_grad, backend=AD.inner),
        model.bias.id: Tensor.from_data(b_grad, backend=AD.inner),
    })
    want = AdamConfig().init().step(0.1, model, on_inner)

    def no_copy(*args: object, **kwargs: object) -> None:
        raise AssertionError("the gradient went through _state_to_device")

    monkeypatch.setattr(base, "_state_to_device", no_copy)
    on_autodiff = GradientsParams({
        model.weight.id: Tensor.from_data(w_grad, backend=AD),
        model.bias.id: Tensor.from_data(b_grad, backend=AD),
    })
    got = AdamConfig().init().step(0.1, model, on_autodiff)
    for name in ("weight", "bias"):
        new = getattr(got, name).val()
        assert new.backend is AD and new.is_require_grad()
        np.testing.assert_array_equal(new.to_numpy(), getattr(want, name).val().to_numpy())


def test_step_on_a_plain_backend_and_grad_dtype_follows_the_param() -> None:
    B = nd.NdArray()
    layer = affine(B, 2, 2, 0)  # float32
    grads = GradientsParams()
    grads.register(layer.weight.id, Tensor.from_data(np.ones((2, 2)), backend=B, dtype=burn.float64))
    new = SgdConfig().init().step(0.5, layer, grads)
    assert new.weight.val().dtype == burn.float32  # a float64 gradient does not promote the param
    np.testing.assert_allclose(new.weight.val().to_numpy(), layer.weight.val().to_numpy() - 0.5, rtol=1e-6)
    assert new.bias is layer.bias


# -- gradient clipping ------------------------------------------------------------------------------
def _grads(B, values: dict) -> tuple[Module, GradientsParams]:  # noqa: N803
    rng = np.random.default_rng(0)
    model = Affine(
        Param.from_tensor(Tensor.from_data(rng.normal(size=values["weight"].shape), backend=B)),
        Param.from_tensor(Tensor.from_data(rng.normal(size=values["bias"].shape), backend=B)),
    )
    grads = GradientsParams()
    for name, g in values.items():
        grads.register(getattr(model, name).id, Tensor.from_data(g, backend=B))
    return model, grads


def _applied_grads(config, values: dict) -> dict:  # noqa: ANN001
    """The gradients SGD(lr=1) applied: param before - param after."""
    B = nd.NdArray(float_dtype="float64")
    model, grads = _grads(B, values)
    new = SgdConfig(gradient_clipping=config).init().step(1.0, model, grads)
    return {
        n: model_p.val().to_numpy() - getattr(new, n).val().to_numpy() for n, model_p in model.named_params()
    }


GRADS = {"weight": np.array([[3.0, -4.0], [0.5, 12.0]]), "bias": np.array([0.3, -0.4])}


def test_clip_by_value() -> None:
    applied = _applied_grads(GradientClippingConfig.value(1.0), GRADS)
    np.testing.assert_allclose(applied["weight"], [[1.0, -1.0], [0.5, 1.0]], atol=1e-12)
    np.testing.assert_allclose(applied["bias"], [0.3, -0.4], atol=1e-12)


def test_clip_by_norm_per_param() -> None:
    applied = _applied_grads(GradientClippingConfig.norm(2.0), GRADS)
    w = GRADS["weight"]
    norm = float(np.linalg.norm(w))  # 13.0...: scaled to norm 2
    np.testing.assert_allclose(applied["weight"], w * 2.0 / (norm + 1e-6), rtol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(applied["weight"]), 2.0, rtol=1e-6)
    np.testing.assert_allclose(applied["bias"], GRADS["bias"], rtol=1e-14)  # norm 0.5: untouched
    bias = Tensor.from_data(GRADS["bias"], backend=nd.NdArray(float_dtype="float64"))
    clipped = GradientClippingConfig.norm(2.0).init().clip(bias)
    assert clipped.shape == (2,)
    np.testing.assert_array_equal(clipped.to_numpy(), GRADS["bias"])  # bit for bit


def test_clip_by_global_norm_matches_torch() -> None:
    torch = pytest.importorskip("torch", reason="torch is not installed")
    applied = _applied_grads(GradientClippingConfig.global_norm(5.0), GRADS)
    tensors = [torch.tensor(GRADS["weight"]), torch.tensor(GRADS["bias"])]
    params = [torch.zeros_like(t, requires_grad=True) for t in tensors]
    for p, t in zip(params, tensors, strict=True):
        p.grad = t.clone()
    torch.nn.utils.clip_grad_norm_(params, 5.0)
    np.testing.assert_allclose(applied["weight"], params[0].grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(applied["bias"], params[1].grad.numpy(), rtol=1e-12)
    total = math.sqrt(sum(float(np.sum(v * v)) for v in applied.values()))
    assert abs(total - 5.0) < 1e-5


def test_global_norm_below_threshold_is_untouched() -> None:
    B = nd.NdArray(float_dtype="float64")
    _, grads = _grads(B, GRADS)
    before = {i: g.to_numpy() for i, g in grads.items()}
    # the factor clamps to exactly 1.0 on the device (no host read decides): the same bits
    for i, g in GradientClippingConfig.global_norm(100.0).init().clip_global(grads).items():
        np.testing.assert_array_equal(g.to_numpy(), before[i])
    applied = _applied_grads(GradientClippingConfig.global_norm(100.0), GRADS)
    for name, g in GRADS.items():
        np.testing.assert_allclose(applied[name], g, rtol=1e-14)


def test_clipping_config_rejects_non_positive_threshold() -> None:
    with pytest.raises(ValueError, match="positive"):
        GradientClippingConfig.norm(0.0)


# -- accumulation -----------------------------------------------------------------------------------
def test_gradients_accumulator_sums_micro_batches(AD) -> None:  # noqa: N803
    model = affine(AD, 3, 2, 0)
    x = np.random.default_rng(1).normal(size=(6, 3)).astype(np.float32)

    def grads_of(rows: slice) -> GradientsParams:
        out = model(Tensor.from_data(x[rows], backend=AD))
        return GradientsParams.from_grads((out * out).sum().backward(), model)

    acc = GradientsAccumulator()
    for rows in (slice(0, 2), slice(2, 5), slice(5, 6)):
        acc.accumulate(grads_of(rows))
    summed = acc.grads()
    full = grads_of(slice(0, 6))
    assert set(summed) == set(full) == {model.weight.id, model.bias.id}
    for pid in full:
        np.testing.assert_allclose(summed.get(pid).to_numpy(), full.get(pid).to_numpy(), rtol=1e-5)
    assert len(acc.grads()) == 0  # handed over and reset


# -- state handling ---------------------------------------------------------------------------------
def test_loaded_state_takes_each_params_device_and_dtype() -> None:
    """A record saved at full precision (float32) resumes a float64 param with float64 state; the
    state of a float32 param stays float32; an int in the state stays an int."""
    B = nd.NdArray()
    w64 = Param.from_tensor(Tensor.from_data(np.ones((2, 2)), backend=B, dtype=burn.float64))
    w32 = Param.from_tensor(Tensor.from_data(np.ones((2,), np.float32), backend=B))
    model = Affine(w64, w32)
    optimizer = AdamConfig().init()
    grads = GradientsParams()
    grads.register(w64.id, Tensor.from_data(np.full((2, 2), 0.5), backend=B, dtype=burn.float64))
    grads.register(w32.id, Tensor.from_data(np.full((2,), 0.5, np.float32), backend=B))
    model = optimizer.step(0.1, model, grads)
    from burn.record import FullPrecisionSettings, NamedMpkBytesRecorder

    recorder = NamedMpkBytesRecorder(FullPrecisionSettings())
    loaded = recorder.load(recorder.record(optimizer.to_record()))
    assert loaded[str(w64.id)]["moment_1"].dtype == burn.float32  # saved at full precision
    other_backend = nd.NdArray()  # resume on another backend instance: states go through the host

    def move(_path: str, param: Param) -> Param:
        value = param.val()
        return Param(
            param.id, Tensor.from_data(value.to_data(), backend=other_backend, dtype=value.dtype), True
        )

    model = model.map(move)
    resumed = AdamConfig().init().load_record(loaded)
    grads = GradientsParams()
    grads.register(w64.id, Tensor.from_data(np.full((2, 2), 0.5), backend=other_backend, dtype=burn.float64))
    grads.register(w32.id, Tensor.from_data(np.full((2,), 0.5, np.float32), backend=other_backend))
    model = resumed.step(0.1, model, grads)
    s64, s32 = resumed.states[w64.id], resumed.states[w32.id]
    assert s64["moment_1"].dtype == burn.float64 and s64["moment_2"].dtype == burn.float64
    assert s32["moment_1"].dtype == burn.float32
    assert s64["moment_1"].backend is other_backend and s64["time"] == 2 and isinstance(s64["time"], int)
    assert model.weight.val().dtype == burn.float64


def test_simple_optimizer_receives_inner_tensors_and_previous_state(AD) -> None:  # noqa: N803
    seen = []

    class Spy(Sgd):
        def step(self, lr, tensor, grad, state):  # noqa: ANN001, ANN202
            seen.append((tensor.backend.ad_enabled, grad.backend.ad_enabled, state))
            return tensor - grad * lr, {"calls": 1 if state is None else state["calls"] + 1}

    from burn.optim import OptimizerAdaptor

    optimizer = OptimizerAdaptor(Spy(None, None))
    model = affine(AD, 2, 1, 0)
    for _ in range(2):
        out = model(Tensor.from_data(np.ones((1, 2), np.float32), backend=AD))
        model = optimizer.step(0.1, model, GradientsParams.from_grads(out.sum().backward(), model))
    assert [s[:2] for s in seen] == [(False, False)] * 4
    assert [s[2] for s in seen] == [None, None, {"calls": 1}, {"calls": 1}]
    assert optimizer.to_record() == {str(model.weight.id): {"calls": 2}, str(model.bias.id): {"calls": 2}}


def test_adam_direct_step_matches_formula() -> None:
    B = nd.NdArray(float_dtype="float64")
    adam = Adam(0.9, 0.999, 1e-8, False, None)
    p, g = np.array([1.0, -2.0]), np.array([0.5, 0.25])
    new, state = adam.step(0.1, Tensor.from_data(p, backend=B), Tensor.from_data(g, backend=B), None)
    # t = 1: m_hat = g, v_hat = g^2, so the step is lr * g / (|g| + eps)
    np.testing.assert_allclose(new.to_numpy(), p - 0.1 * g / (np.abs(g) + 1e-8), rtol=1e-14)
    assert state["time"] == 1
