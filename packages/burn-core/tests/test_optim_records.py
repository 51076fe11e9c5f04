"""Optimizer and scheduler state as records: any Python value in a SimpleOptimizer's state
round-trips through every recorder, and every optimizer resumes bit-identically from its record."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import burn
from burn import Tensor
from burn.module import Module, Param
from burn.optim import (
    AdaGradConfig,
    AdamConfig,
    AdamWConfig,
    AdanConfig,
    GradientClippingConfig,
    GradientsParams,
    LionConfig,
    MomentumConfig,
    MuonConfig,
    OptimizerAdaptor,
    RmsPropConfig,
    SgdConfig,
    SimpleOptimizer,
    WeightDecayConfig,
)
from burn.optim import lr_scheduler as ls
from burn.record import ALL_RECORDERS, KeepPrecisionSettings, Recorder

nd = pytest.importorskip("burn_ndarray", reason="burn-ndarray is not installed")


class Matrices(Module):
    first: Param
    second: Param


class Chatty(SimpleOptimizer[dict[str, Any]]):
    """SGD whose state also keeps non-tensor bookkeeping: ints, floats, strings, lists, dicts,
    tuples, None and bools next to tensors (an int tensor too)."""

    def step(self, lr, tensor, grad, state):  # noqa: ANN001, ANN201
        count = 0 if state is None else state["count"]
        history = [] if state is None else list(state["history"])
        history.append(round(lr, 6))
        new_state = {
            "count": count + 1,
            "note": f"stepped {count + 1} times",
            "history": history,
            "meta": {"shape": list(tensor.shape), "dtype": str(tensor.dtype), "nested": {"ok": True}},
            "pair": (count, "x"),
            "nothing": None,
            "flag": count % 2 == 0,
            "big": 2**62 + count,
            "ratio": 1.0 / 3.0,
            "sum_grad": grad if state is None else state["sum_grad"] + grad,
            "steps_tensor": Tensor.full((1,), count + 1, device=tensor.device, kind=burn.Int),
        }
        return tensor - grad * lr, new_state


def _model(B) -> Matrices:  # noqa: N803
    rng = np.random.default_rng(0)
    return Matrices(
        Param.from_tensor(Tensor.from_data(rng.normal(size=(3, 2)).astype(np.float32), backend=B)),
        Param.from_tensor(Tensor.from_data(rng.normal(size=(2, 2)).astype(np.float32), backend=B)),
    )


def _grads(B, model: Matrices, step: int) -> GradientsParams:  # noqa: N803
    rng = np.random.default_rng(100 + step)
    grads = GradientsParams()
    for _, param in model.named_params():
        g = rng.normal(size=param.shape).astype(np.float32) + 0.1 * param.val().to_numpy()
        grads.register(param.id, Tensor.from_data(g, backend=B))
    return grads


def _round_trip(recorder: Recorder, record: Any, tmp_path: Path, name: str) -> Any:
    if type(recorder).__name__.endswith("BytesRecorder"):
        return recorder.load(recorder.record(record))
    path = recorder.record(record, tmp_path / name)
    assert Path(path).exists()
    return recorder.load(path)


def _plain(value: Any) -> Any:
    """Tensors (live or loaded) as NumPy arrays, for comparing states."""
    if isinstance(value, Tensor):
        return ("tensor", value.dtype, value.to_numpy().tolist())
    if isinstance(value, burn.TensorData):
        return ("tensor", value.dtype, value.array.tolist())
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    return value


@pytest.mark.parametrize("recorder_cls", ALL_RECORDERS, ids=lambda c: c.__name__)
def test_custom_state_with_python_values_round_trips(recorder_cls: type[Recorder], tmp_path: Path) -> None:
    B = nd.NdArray()
    model = _model(B)
    optimizer = OptimizerAdaptor(Chatty())
    for step in range(3):
        model = optimizer.step(0.1 * (step + 1), model, _grads(B, model, step))
    record = optimizer.to_record()
    # KeepPrecisionSettings: every tensor in its own dtype (the default would save the int64
    # tensor as int32), so the loaded record equals the saved one exactly.
    loaded = _round_trip(recorder_cls(KeepPrecisionSettings()), record, tmp_path, "optimizer")
    assert _plain(loaded) == _plain(record)
    state = next(iter(loaded.values()))
    assert state["pair"] == (2, "x") and isinstance(state["pair"], tuple)
    assert state["big"] == 2**62 + 2 and state["ratio"] == 1.0 / 3.0 and state["nothing"] is None
    # ... and the optimizer continues from it exactly as the original does.
    resumed = OptimizerAdaptor(Chatty()).load_record(loaded)
    grads_a, grads_b = _grads(B, model, 9), _grads(B, model, 9)
    expected = optimizer.step(0.5, model, grads_a)
    got = resumed.step(0.5, model, grads_b)
    for (_, p), (_, q) in zip(expected.named_params(), got.named_params(), strict=True):
        np.testing.assert_array_equal(p.val().to_numpy(), q.val().to_numpy())
    assert _plain(resumed.to_record()) == _plain(optimizer.to_record())
    assert resumed.states[model.first.id]["steps_tensor"].kind is burn.Int


OPTIMIZERS = {
    "sgd": SgdConfig(momentum=MomentumConfig(0.9, 0.1, True), weight_decay=WeightDecayConfig(0.01)),
    "adam": AdamConfig(amsgrad=True, gradient_clipping=GradientClippingConfig.norm(1.0)),
    "adamw": AdamWConfig(amsgrad=True, weight_decay=0.05),
    "adagrad": AdaGradConfig(lr_decay=0.1),
    "rmsprop": RmsPropConfig(centered=True, momentum=0.5),
    "adan": AdanConfig(weight_decay=0.02),
    "lion": LionConfig(weight_decay=0.1),
    "muon": MuonConfig(weight_decay=WeightDecayConfig(0.1)),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_every_optimizer_resumes_bit_identically_from_its_record(name: str) -> None:
    B = nd.NdArray()
    config = OPTIMIZERS[name]
    original = config.init()
    model = _model(B)
    for step in range(3):
        model = original.step(0.01, model, _grads(B, model, step))
    recorder = ALL_RECORDERS[0](KeepPrecisionSettings())
    resumed = config.init().load_record(recorder.load(recorder.record(original.to_record())))
    a = b = model
    for step in range(3, 6):
        a = original.step(0.01, a, _grads(B, a, step))
        b = resumed.step(0.01, b, _grads(B, b, step))
    moved = False
    for (_, p), (_, q), (_, r) in zip(a.named_params(), b.named_params(), model.named_params(), strict=True):
        np.testing.assert_array_equal(p.val().to_numpy(), q.val().to_numpy())
        moved |= not np.array_equal(p.val().to_numpy(), r.val().to_numpy())
    assert moved
    assert _plain(resumed.to_record()) == _plain(original.to_record())


def test_a_fresh_optimizer_differs_from_a_resumed_one() -> None:
    """Guard for the test above: without its state, Adam takes a different step."""
    B = nd.NdArray()
    original, model = AdamConfig().init(), _model(B)
    for step in range(3):
        model = original.step(0.01, model, _grads(B, model, step))
    a = original.step(0.01, model, _grads(B, model, 3))
    b = AdamConfig().init().step(0.01, model, _grads(B, model, 3))
    assert not np.array_equal(a.first.val().to_numpy(), b.first.val().to_numpy())


def _scheduler() -> ls.LrScheduler:
    return ls.ComposedLrScheduler(
        [
            ls.SequentialLrScheduler(
                [
                    ls.LinearLrSchedulerConfig(1e-3, 1e-2, 3).init(),
                    ls.CosineAnnealingLrSchedulerConfig(1e-2, 4).init(),
                ],
                [3],
            ),
            ls.ExponentialLrSchedulerConfig(1.0, 0.9).init(),
            ls.NoamLrSchedulerConfig(1.0, warmup_steps=2, model_size=4).init(),
            ls.StepLrSchedulerConfig(1.0, 2, 0.5).init(),
            0.7,
        ],
        reduction="prod",
    )


@pytest.mark.parametrize("recorder_cls", ALL_RECORDERS, ids=lambda c: c.__name__)
def test_scheduler_records_round_trip_through_every_recorder(
    recorder_cls: type[Recorder], tmp_path: Path
) -> None:
    scheduler, reference = _scheduler(), _scheduler()
    for _ in range(5):
        assert scheduler.step() == reference.step()
    loaded = _round_trip(recorder_cls(), scheduler.to_record(), tmp_path, "scheduler")
    resumed = _scheduler().load_record(loaded)
    assert [resumed.step() for _ in range(10)] == [reference.step() for _ in range(10)]  # exactly
