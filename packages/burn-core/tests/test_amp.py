"""burn.amp: GradScaler's skipping, backoff and growth, and Learner(precision=...) training to
float32's accuracy and resuming bit-identically with the scaler's state."""

from __future__ import annotations

import io
from typing import Any

import numpy as np
import pytest

nd = pytest.importorskip("burn_ndarray", reason="burn-ndarray is not installed")
ad = pytest.importorskip("burn_autodiff", reason="burn-autodiff is not installed")

import burn  # noqa: E402
from burn import Tensor, activation, amp, nn, optim  # noqa: E402
from burn.module import Module  # noqa: E402
from burn.optim import GradientsParams  # noqa: E402
from burn.train import AccuracyMetric, ArrayDataset, DataLoader, Learner, LossMetric, StepOutput  # noqa: E402


def backend() -> Any:
    return burn.backend("autodiff(ndarray)")


class Net(Module):
    hidden: nn.Linear
    norm: nn.LayerNorm
    out: nn.Linear

    def forward(self, x: Any) -> Any:
        return self.out(activation.relu(self.norm(self.hidden(x))))


def make_net(width: int = 32) -> Net:
    device = backend().default_device()
    backend().seed(3)
    return Net(nn.LinearConfig(16, width).init(device), nn.LayerNormConfig(width).init(device),
               nn.LinearConfig(width, 4).init(device))


def step(model: Any, batch: Any) -> StepOutput:
    x, y = batch
    logits = model(x)
    return StepOutput(nn.CrossEntropyLoss()(logits, y), logits, y)


def loaders(n_train: int = 512, n_valid: int = 400) -> tuple[DataLoader, DataLoader]:
    """Four classes around four random centres in 16 dims, with noise that leaves a few percent of
    them ambiguous (a digits-like task: separable for an MLP, not trivially)."""
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(4, 16)).astype(np.float32)
    y = rng.integers(0, 4, n_train + n_valid)
    x = (centres[y] + 1.2 * rng.normal(size=(len(y), 16))).astype(np.float32)
    return (
        DataLoader(ArrayDataset(x[:n_train], y[:n_train]), 32, shuffle=True, seed=1),
        DataLoader(ArrayDataset(x[n_train:], y[n_train:]), 100),
    )


def learner(precision: str, num_epochs: int, directory: Any = None, **kwargs: Any) -> Learner:
    return Learner(make_net(), optim.AdamConfig().init(), step, lr=1e-2, num_epochs=num_epochs,
                   metrics=[LossMetric(), AccuracyMetric()], directory=directory, seed=7, progress="none",
                   plot=False, stream=io.StringIO(), precision=precision, **kwargs)


def params(model: Any) -> dict[str, np.ndarray]:
    return {path: p.val().to_numpy() for path, p in model.named_params()}


# -- GradScaler -----------------------------------------------------------------------------------
def _grads(model: Module, scale: float, poison: float | None = None) -> GradientsParams:
    """The gradients of a scaled loss of `model`; with `poison`, one entry of one gradient
    replaced by it (inf or NaN)."""
    x = Tensor.from_data(np.ones((2, 3), np.float32), device=backend().default_device())
    loss = model(x).sum() * scale
    grads = GradientsParams.from_grads(loss.backward(), model)
    if poison is not None:
        pid, g = next(iter(grads.items()))
        values = g.to_numpy().copy()
        values.flat[0] = poison
        grads.register(pid, Tensor.from_data(values, device=g.device))
    return grads


@pytest.mark.parametrize("poison", [float("inf"), float("-inf"), float("nan")])
def test_scaler_skips_non_finite_steps_and_backs_off(poison: float) -> None:
    model = nn.LinearConfig(3, 2).init(backend().default_device())
    before = params(model)
    scaler = amp.GradScaler(init_scale=1024.0, growth_interval=3)
    out = scaler.step(optim.SgdConfig().init(), model, _grads(model, 1024.0, poison), 0.1)
    assert scaler.found_inf
    for path, value in params(out).items():
        np.testing.assert_array_equal(value, before[path], err_msg=f"{path} changed by a skipped step")
    scaler.update()
    assert scaler.get_scale() == 512.0 and scaler.to_record() == {"scale": 512.0, "growth_tracker": 0}


def test_scaler_unscales_and_grows_after_the_interval() -> None:
    model = nn.LinearConfig(3, 2).init(backend().default_device())
    scaler = amp.GradScaler(init_scale=256.0, growth_factor=2.0, growth_interval=2)
    reference = {pid: g.to_numpy() for pid, g in _grads(model, 1.0).items()}
    grads = _grads(model, 256.0)
    assert scaler.unscale(grads) and scaler.unscale(grads)  # the second call does not divide again
    for pid, g in grads.items():
        np.testing.assert_allclose(g.to_numpy(), reference[pid], rtol=1e-6)
    scaler.update()
    assert scaler.to_record() == {"scale": 256.0, "growth_tracker": 1}
    model = scaler.step(optim.SgdConfig().init(), model, _grads(model, 256.0), 0.1)
    scaler.update()
    assert scaler.to_record() == {"scale": 512.0, "growth_tracker": 0}
    assert scaler.scale(Tensor.from_data([0.5])).tolist() == [256.0]
    disabled = amp.GradScaler(enabled=False)
    loss = Tensor.from_data([0.5])
    assert disabled.scale(loss) is loss and disabled.get_scale() == 1.0


def test_scaler_bad_input() -> None:
    with pytest.raises(ValueError, match="growth_factor"):
        amp.GradScaler(growth_factor=1.0)
    with pytest.raises(ValueError, match="backoff_factor"):
        amp.GradScaler(backoff_factor=1.5)
    with pytest.raises(ValueError, match="growth_interval"):
        amp.GradScaler(growth_interval=0)
    with pytest.raises(ValueError, match="init_scale"):
        amp.GradScaler(init_scale=float("inf"))
    with pytest.raises(TypeError, match="GradientsParams"):
        amp.GradScaler().unscale({})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="growth_tracker"):
        amp.GradScaler().load_record({"scale": 2.0})


# -- Learner(precision=...) -----------------------------------------------------------------------
def test_mixed_precisions_train_to_float32_accuracy() -> None:
    train, valid = loaders()
    accuracy, loss = {}, {}
    for precision in ("32", "bf16-mixed", "16-mixed"):
        result = learner(precision, 3).fit(train, valid)
        accuracy[precision] = result.history.last("valid")["accuracy"]
        loss[precision] = result.history.last("valid")["loss"]
        for path, p in result.model.named_params():
            assert p.val().dtype is burn.float32, f"{precision}: param {path} is {p.val().dtype}"
    assert accuracy["32"] > 0.9, accuracy
    for precision in ("bf16-mixed", "16-mixed"):
        # the same run as float32's to the bit would mean autocast never took effect
        assert loss[precision] != loss["32"], f"{precision} trained exactly as float32: {loss}"
        # 0.5 % of the 400 validation samples: two samples either way (0.9425 / 0.945 / 0.945
        # measured for bf16-mixed / 32 / 16-mixed)
        assert abs(accuracy[precision] - accuracy["32"]) <= 0.005 + 1e-9, accuracy


def test_16_mixed_resume_is_bit_identical(tmp_path) -> None:  # noqa: ANN001
    """A float16 run whose first scale overflows (skipped steps, backoff) and that grows again,
    split in two at an epoch's end: the same params and scaler state as the uninterrupted run."""
    train, valid = loaders(128, 100)

    def scaler() -> amp.GradScaler:
        return amp.GradScaler(init_scale=2.0**40, growth_interval=3)

    full_scaler = scaler()
    full = learner("16-mixed", 2, tmp_path / "full", grad_scaler=full_scaler).fit(train, valid)
    learner("16-mixed", 1, tmp_path / "split", grad_scaler=scaler()).fit(train, valid)
    backend().seed(12345)
    resumed_scaler = scaler()
    resumed = learner("16-mixed", 2, tmp_path / "split", grad_scaler=resumed_scaler).fit(
        train, valid, resume=True
    )
    assert full_scaler.get_scale() < 2.0**40, "the first scale should have overflowed float16"
    assert resumed_scaler.to_record() == full_scaler.to_record()
    a, b = params(full.model), params(resumed.model)
    for path in a:
        np.testing.assert_array_equal(a[path], b[path], err_msg=path)
    assert resumed.history.steps == full.history.steps


def test_learner_precision_bad_input() -> None:
    with pytest.raises(ValueError, match="precision must be one of"):
        learner("bf16", 1)
    with pytest.raises(ValueError, match="grad_scaler is for precision='16-mixed'"):
        learner("bf16-mixed", 1, grad_scaler=amp.GradScaler())
