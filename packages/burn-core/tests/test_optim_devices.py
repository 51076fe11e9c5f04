"""The adaptor brings gradient and state onto each param's device: a model moved to another device
(or another backend) between steps keeps training with the same optimizer, and a state loaded
from a record lands where its param is. The ``minimal`` backend refuses to compute across its two
devices, so a tensor left behind fails the step."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import burn
from burn import Tensor
from burn.module import Module, Param
from burn.optim import AdamConfig, GradientsParams, MomentumConfig, RmsPropConfig, SgdConfig
from burn.record import FullPrecisionSettings, NamedMpkBytesRecorder

minimal_backend = pytest.importorskip("minimal_backend", reason="tests/minimal_backend.py is missing")

START = {"weight": np.linspace(-1.0, 1.0, 6).reshape(2, 3), "bias": np.array([0.5, -0.25, 2.0])}
GRADS = [{k: np.cos(v * (t + 1)) for k, v in START.items()} for t in range(5)]
CONFIGS = {
    "adam": AdamConfig(amsgrad=True),
    "sgd": SgdConfig(momentum=MomentumConfig(0.9, 0.1, True)),
    "rmsprop": RmsPropConfig(centered=True),
}


class Pair(Module):
    weight: Param
    bias: Param


def pair(device: Any) -> Pair:
    return Pair(
        *(
            Param.from_tensor(Tensor.from_data(START[k].astype(np.float32), device=device))
            for k in ("weight", "bias")
        )
    )


def grads_for(model: Pair, step: int, device: Any) -> GradientsParams:
    grads = GradientsParams()
    for name, param in model.named_params():
        grads.register(param.id, Tensor.from_data(GRADS[step][name].astype(np.float32), device=device))
    return grads


def state_devices(state: Any) -> set[str]:
    if isinstance(state, Tensor):
        return {str(state.device)}
    if isinstance(state, dict):
        return set().union(*(state_devices(v) for v in state.values()))
    return set()


def reference(config: Any) -> dict[str, np.ndarray]:
    """Five steps with everything on minimal:0."""
    dev0 = minimal_backend.Minimal().devices()[0]
    model, optimizer = pair(dev0), config.init()
    for step in range(5):
        model = optimizer.step(0.05, model, grads_for(model, step, dev0))
    return {name: p.val().to_numpy() for name, p in model.named_params()}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_model_moved_to_another_device_keeps_training_with_the_same_optimizer(name: str) -> None:
    dev0, dev1 = minimal_backend.Minimal().devices()
    model, optimizer = pair(dev0), CONFIGS[name].init()
    for step in range(2):
        model = optimizer.step(0.05, model, grads_for(model, step, dev0))
    assert set().union(*(state_devices(s) for s in optimizer.states.values())) == {"minimal:0"}
    model = model.to_device(dev1)
    for step in range(2, 5):  # gradients still arrive on minimal:0, the state lives there too
        model = optimizer.step(0.05, model, grads_for(model, step, dev0))
    assert {str(p.val().device) for _, p in model.named_params()} == {"minimal:1"}
    assert set().union(*(state_devices(s) for s in optimizer.states.values())) == {"minimal:1"}
    for param_name, expected in reference(CONFIGS[name]).items():
        np.testing.assert_array_equal(getattr(model, param_name).val().to_numpy(), expected)


def test_a_loaded_state_lands_on_its_params_device() -> None:
    dev0, dev1 = minimal_backend.Minimal().devices()
    model, optimizer = pair(dev0), CONFIGS["adam"].init()
    for step in range(2):
        model = optimizer.step(0.05, model, grads_for(model, step, dev0))
    recorder = NamedMpkBytesRecorder(FullPrecisionSettings())
    resumed = CONFIGS["adam"].init().load_record(recorder.load(recorder.record(optimizer.to_record())))
    model = model.to_device(dev1)
    for step in range(2, 5):
        model = resumed.step(0.05, model, grads_for(model, step, dev1))
    assert set().union(*(state_devices(s) for s in resumed.states.values())) == {"minimal:1"}
    for param_name, expected in reference(CONFIGS["adam"]).items():
        np.testing.assert_array_equal(getattr(model, param_name).val().to_numpy(), expected)


@pytest.mark.parametrize("other", ["opencl-if-available", "second-ndarray"])
def test_training_continues_on_another_backend(other: str) -> None:
    """Two Adam steps on ndarray, three more on opencl (when available) or on a second ndarray
    instance, whose device compares equal to the first's, with the same optimizer: the states
    cross backends through the host."""
    nd = pytest.importorskip("burn_ndarray", reason="burn-ndarray is not installed")
    first = nd.NdArray()
    rows = {r.name: r for r in burn.backends()}
    opencl = rows.get("opencl")
    use_opencl = other != "second-ndarray" and opencl is not None and opencl.status == "available"
    second = burn.backend("opencl") if use_opencl else nd.NdArray()
    model, optimizer = pair(first.default_device()), CONFIGS["adam"].init()
    for step in range(2):
        model = optimizer.step(0.05, model, grads_for(model, step, first.default_device()))
    model = model.map(
        lambda _p, param: param.with_value(
            Tensor.from_data(param.val().to_data(), device=second.default_device())
        )
    )
    for step in range(2, 5):
        model = optimizer.step(0.05, model, grads_for(model, step, second.default_device()))
    assert all(p.val().backend is second for _, p in model.named_params())
    assert all(
        t.backend is second for s in optimizer.states.values() for t in s.values() if isinstance(t, Tensor)
    )
    for param_name, expected in reference(CONFIGS["adam"]).items():
        np.testing.assert_allclose(
            getattr(model, param_name).val().to_numpy(), expected, rtol=1e-5, atol=1e-6
        )
