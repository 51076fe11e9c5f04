"""Exact resume: train N steps, save the model, the optimizer(s) and the scheduler with the
recorders, load them in a fresh Python process and train M more steps: the parameters and the
optimizer state are bit-identical to N + M uninterrupted steps (ndarray backend, float32)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from burn import Tensor, activation, nn, optim
from burn.module import Module
from burn.optim import lr_scheduler as ls
from burn.record import NamedMpkFileRecorder, NamedMpkGzFileRecorder, PrettyJsonFileRecorder

nd = pytest.importorskip("burn_ndarray", reason="burn-ndarray is not installed")
ad = pytest.importorskip("burn_autodiff", reason="burn-autodiff is not installed")

N_STEPS, M_STEPS = 5, 4
MODEL_RECORDER = NamedMpkFileRecorder()
OPTIM_RECORDER = NamedMpkGzFileRecorder()
SCHED_RECORDER = PrettyJsonFileRecorder()


class Mlp(Module):
    hidden: nn.Linear
    out: nn.Linear

    def forward(self, x: Tensor) -> Tensor:
        return self.out(activation.relu(self.hidden(x)))


def backend() -> Any:
    return ad.Autodiff(nd.NdArray())


def build_model(B: Any, bias: bool) -> Mlp:  # noqa: N803
    B.seed(7)
    device = B.default_device()
    return Mlp(nn.LinearConfig(3, 8, bias=bias).init(device), nn.LinearConfig(8, 2, bias=bias).init(device))


# name -> (bias, optimizer configs: one for the whole model or one per submodule, scheduler)
VARIANTS: dict[str, Any] = {
    "adamw-clip-warmup-cosine": (
        True,
        {
            "": optim.AdamWConfig(
                amsgrad=True, gradient_clipping=optim.GradientClippingConfig.global_norm(0.5)
            )
        },
        lambda: ls.SequentialLrSchedulerConfig(
            [ls.LinearLrSchedulerConfig(1e-3, 2e-2, 3), ls.CosineAnnealingLrSchedulerConfig(2e-2, 4)], [3]
        ).init(),
    ),
    "two-optimizers-step": (
        True,
        {
            "hidden": optim.AdamConfig(weight_decay=optim.WeightDecayConfig(1e-3)),
            "out": optim.SgdConfig(momentum=optim.MomentumConfig(0.9, 0.1, False)),
        },
        lambda: ls.StepLrSchedulerConfig(0.05, 3, 0.5).init(),
    ),
    "rmsprop-exponential": (
        True,
        {"": optim.RmsPropConfig(centered=True, gradient_clipping=optim.GradientClippingConfig.norm(1.0))},
        lambda: ls.ExponentialLrSchedulerConfig(0.01, 0.9).init(),
    ),
    "adan-noam": (
        True,
        {"": optim.AdanConfig(weight_decay=0.02)},
        lambda: ls.NoamLrSchedulerConfig(0.5, 3, 8).init(),
    ),
    "lion-composed": (
        True,
        {"": optim.LionConfig(weight_decay=0.1)},
        lambda: ls.ComposedLrSchedulerConfig([1e-3, ls.LinearLrSchedulerConfig(1.0, 0.5, 6)]).init(),
    ),
    "adagrad-constant": (True, {"": optim.AdaGradConfig(lr_decay=0.1)}, lambda: ls.ConstantLr(0.05)),
    "muon-linear": (
        False,
        {"": optim.MuonConfig()},
        lambda: ls.LinearLrSchedulerConfig(0.02, 0.01, 5).init(),
    ),
}


def batch(B: Any, step: int) -> tuple[Tensor, Tensor]:  # noqa: N803
    rng = np.random.default_rng(1000 + step)  # the data of a step depends only on the step
    x = rng.normal(size=(6, 3)).astype(np.float32)
    y = np.stack([np.sin(x[:, 0]) + x[:, 1], x[:, 2] * x[:, 0]], axis=1).astype(np.float32)
    return Tensor.from_data(x, backend=B), Tensor.from_data(y, backend=B)


def train(B: Any, model: Mlp, optimizers: dict, scheduler: ls.LrScheduler, steps: range) -> Mlp:  # noqa: N803
    loss_fn = nn.MseLoss()
    for step in steps:
        x, y = batch(B, step)
        grads = loss_fn(model(x), y).backward()
        lr = scheduler.step()
        for path, optimizer in optimizers.items():
            part = getattr(model, path) if path else model
            model = optimizer.step(lr, model, optim.GradientsParams.from_module(grads, part))
    return model


def fresh(name: str, B: Any) -> tuple[Mlp, dict, ls.LrScheduler]:  # noqa: N803
    bias, configs, make_scheduler = VARIANTS[name]
    return build_model(B, bias), {k: c.init() for k, c in configs.items()}, make_scheduler()


def save(directory: Path, model: Mlp, optimizers: dict, scheduler: ls.LrScheduler) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    model.save_file(directory / "model", MODEL_RECORDER)
    for path, optimizer in optimizers.items():
        OPTIM_RECORDER.record(optimizer.to_record(), directory / f"optim-{path or 'all'}")
    SCHED_RECORDER.record(scheduler.to_record(), directory / "scheduler")


def resume_main(root: str) -> None:
    """Run in a fresh process: load every variant saved after N steps, train M more, save again."""
    B = backend()
    for name in VARIANTS:
        directory = Path(root) / name
        model, optimizers, scheduler = fresh(name, B)  # freshly built: initializers run, then replaced
        model = model.load_file(directory / "model", MODEL_RECORDER)
        for path, optimizer in optimizers.items():
            optimizer.load_record(OPTIM_RECORDER.load(directory / f"optim-{path or 'all'}"))
        scheduler.load_record(SCHED_RECORDER.load(directory / "scheduler"))
        model = train(B, model, optimizers, scheduler, range(N_STEPS, N_STEPS + M_STEPS))
        save(directory / "resumed", model, optimizers, scheduler)


def by_path(record: dict, model: Module) -> dict:
    paths = {str(param.id): path for path, param in model.named_params()}
    return {paths[key]: state for key, state in record.items()}


def _plain(value: Any) -> Any:
    if isinstance(value, Tensor):
        data = value.to_data()
        return (data.dtype, data.array.shape, data.array.tobytes())
    if hasattr(value, "array") and hasattr(value, "dtype"):  # TensorData
        return (value.dtype, value.array.shape, np.ascontiguousarray(value.array).tobytes())
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_plain(v) for v in value)
    return value


def test_resume_in_a_fresh_process_is_bit_identical(tmp_path: Path) -> None:
    B = backend()
    uninterrupted = {}
    for name in VARIANTS:
        model, optimizers, scheduler = fresh(name, B)
        full = train(B, model, optimizers, scheduler, range(N_STEPS + M_STEPS))
        uninterrupted[name] = (full, optimizers, scheduler)

        model, optimizers, scheduler = fresh(name, B)
        model = train(B, model, optimizers, scheduler, range(N_STEPS))
        save(tmp_path / name, model, optimizers, scheduler)

    tests_dir = str(Path(__file__).resolve().parent)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([tests_dir, *sys.path]))
    code = f"from test_optim_resume import resume_main; resume_main({str(tmp_path)!r})"
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]

    for name, (full, optimizers, scheduler) in uninterrupted.items():
        directory = tmp_path / name / "resumed"
        resumed = fresh(name, B)[0].load_file(directory / "model", MODEL_RECORDER)
        for (path, p), (_, q) in zip(full.named_params(), resumed.named_params(), strict=True):
            a, b = p.val().to_numpy(), q.val().to_numpy()
            assert a.dtype == b.dtype == np.float32
            assert np.array_equal(a, b), f"{name}: {path} differs after resuming"
        for path, optimizer in optimizers.items():
            # ParamIds are random per model built: compare the states by param path.
            saved = by_path(OPTIM_RECORDER.load(directory / f"optim-{path or 'all'}"), resumed)
            assert saved and _plain(saved) == _plain(by_path(optimizer.to_record(), full)), name
        assert SCHED_RECORDER.load(directory / "scheduler") == scheduler.to_record()
        # Guard: the resumed run did train (its params differ from those saved after N steps).
        after_n = fresh(name, B)[0].load_file(tmp_path / name / "model", MODEL_RECORDER)
        assert not np.array_equal(after_n.hidden.weight.val().to_numpy(), full.hidden.weight.val().to_numpy())
