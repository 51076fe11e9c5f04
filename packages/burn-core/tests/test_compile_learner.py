"""Learner(compile=True): each batch's forward and backward pass runs through burn.compile.grad,
and the trained params are bitwise those of compile=False on autodiff(ndarray), for an MLP and a
CNN, with Adam and SGD + momentum, gradient clipping and gradient accumulation; steps that cannot
be traced run eagerly with one warning and still train the same."""

from __future__ import annotations

import io
import warnings
from typing import Any

import numpy as np
import pytest

from burn.train import AccuracyMetric, ArrayDataset, DataLoader, Learner, LossMetric, StepOutput

nd = pytest.importorskip("burn_ndarray", reason="burn-ndarray is not installed")
ad = pytest.importorskip("burn_autodiff", reason="burn-autodiff is not installed")

import burn  # noqa: E402
from burn import activation, nn, optim  # noqa: E402
from burn.capture.compiler import CompileWarning  # noqa: E402
from burn.module import Module  # noqa: E402

B = burn.backend("autodiff(ndarray)")
DEV = B.default_device()


class Mlp(Module):
    hidden: nn.Linear
    out: nn.Linear

    def forward(self, x: Any) -> Any:
        return self.out(activation.relu(self.hidden(x)))


class Cnn(Module):
    conv: nn.Conv2d
    pool: nn.MaxPool2d
    out: nn.Linear

    def forward(self, x: Any) -> Any:
        h = self.pool(activation.relu(self.conv(x)))
        return self.out(h.flatten(1, 3))


class NormNet(Module):
    """Batch norm in training replaces its running statistics: such a step runs eagerly. The
    dropout checks that the eager run draws what the trace drew (as a step without compile)."""

    hidden: nn.Linear
    norm: nn.BatchNorm
    drop: nn.Dropout
    out: nn.Linear

    def forward(self, x: Any) -> Any:
        return self.out(self.drop(self.norm(self.hidden(x))))


def _mlp() -> Module:
    return Mlp(nn.LinearConfig(6, 16).init(DEV), nn.LinearConfig(16, 3).init(DEV))


def _cnn() -> Module:
    conv = nn.Conv2dConfig((1, 4), (3, 3), padding=(1, 1)).init(DEV)
    pool = nn.MaxPool2dConfig((2, 2), strides=(2, 2)).init()
    return Cnn(conv, pool, nn.LinearConfig(4 * 3 * 3, 3).init(DEV))


def _norm_net() -> Module:
    hidden, out = nn.LinearConfig(6, 8).init(DEV), nn.LinearConfig(8, 3).init(DEV)
    return NormNet(hidden, nn.BatchNormConfig(8).init(DEV), nn.DropoutConfig(0.3).init(), out)


MODELS = {"mlp": (_mlp, (6,)), "cnn": (_cnn, (1, 6, 6))}
OPTIMIZERS = {
    "adam": lambda clip: optim.AdamConfig(gradient_clipping=clip).init(),
    "sgd_momentum": lambda clip: optim.SgdConfig(
        momentum=optim.MomentumConfig(0.9), gradient_clipping=clip
    ).init(),
}


def step(model: Any, batch: Any) -> StepOutput:
    x, y = batch
    logits = model(x)
    return StepOutput(nn.CrossEntropyLoss()(logits, y), logits, y)


def _loader(shape: tuple[int, ...], n: int = 40, batch: int = 8) -> DataLoader:
    rng = np.random.default_rng(3)
    x = rng.normal(size=(n, *shape)).astype(np.float32)
    flat = x.reshape(n, -1)
    y = (flat[:, 0] > 0).astype(np.int64) + (flat[:, 1] > 0.5).astype(np.int64)
    return DataLoader(ArrayDataset(x, y), batch, shuffle=True, seed=2)


def _fit(make: Any, shape: tuple[int, ...], opt: Any, compile: bool, **kwargs: Any) -> tuple[Learner, Any]:  # noqa: A002
    B.seed(5)
    model = make()
    options: dict[str, Any] = {
        "lr": 0.05, "num_epochs": 2, "seed": 7, "progress": "none", "plot": False,
        "stream": io.StringIO(), "metrics": [LossMetric(), AccuracyMetric()],
    }
    options.update(kwargs)
    learner = Learner(model, opt, step, compile=compile, **options)
    return learner, learner.fit(_loader(shape))


def _params(model: Any) -> dict[str, np.ndarray]:
    return {path: p.val().to_numpy() for path, p in model.named_params()}


def _assert_same(got: Any, want: Any) -> None:
    a, b = _params(got), _params(want)
    assert a.keys() == b.keys()
    for path in a:
        np.testing.assert_array_equal(a[path], b[path], err_msg=f"param {path}: compiled vs eager")


@pytest.mark.parametrize("opt_name", list(OPTIMIZERS))
@pytest.mark.parametrize("model_name", list(MODELS))
@pytest.mark.parametrize(
    "options",
    [{}, {"clip": optim.GradientClippingConfig.norm(0.5)}, {"grad_accumulation": 3}],
    ids=["plain", "clip_norm", "accumulate3"],
)
def test_compiled_learner_trains_bitwise_like_eager(
    model_name: str, opt_name: str, options: dict[str, Any]
) -> None:
    make, shape = MODELS[model_name]
    clip = options.get("clip")
    extra = {k: v for k, v in options.items() if k != "clip"}
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileWarning)  # these steps must replay, not fall back
        compiled, got = _fit(make, shape, OPTIMIZERS[opt_name](clip), True, **extra)
    _, want = _fit(make, shape, OPTIMIZERS[opt_name](clip), False, **extra)
    _assert_same(got.model, want.model)
    for g, w in zip(got.history.steps, want.history.steps, strict=True):
        assert g == w, "the step metrics (loss, accuracy from the replayed outputs) must match"
    stats = compiled.compile_stats()
    assert stats is not None
    # 5 batches per epoch, 2 epochs. The first runs eagerly (the params' lazy initializers draw
    # in the forward's order); with groups of 3 the last group of 2 is a second signature (its
    # loss scale 1/2 differs from 1/3), so it traces once more.
    traces = 2 if extra.get("grad_accumulation") else 1
    assert stats["traces"] == traces and stats["replays"] == 9 - traces, stats
    assert stats["warmups"] == 1 and stats["fallbacks"] == 0 and stats["fallback_reasons"] == {}
    # One batch per step: every replay updated inside the program, per-param clipping included.
    # Groups of 3 (3 + 2 batches per epoch): the groups' last batches update inside the program
    # (adding the earlier batches' sum), but for the first group's (the eager step makes the
    # state) and the trace's: epoch 1's second group and both of epoch 2's.
    inside = 9 - traces if "grad_accumulation" not in extra else 3
    assert stats["program_updates"] == inside, stats


def test_compile_summary_is_printed_and_stats_are_none_without_compile() -> None:
    stream = io.StringIO()
    learner, _ = _fit(_mlp, (6,), optim.AdamConfig().init(), True, stream=stream)
    assert "compile: 1 trace(s), 8 replayed step(s), 0 eager step(s), 1 warmup step(s)" in stream.getvalue()
    assert "8 update(s) inside the program" in stream.getvalue()
    eager, _ = _fit(_mlp, (6,), optim.AdamConfig().init(), False)
    assert eager.compile_stats() is None


def test_a_step_with_batch_norm_training_runs_eagerly_with_one_warning() -> None:
    opt = optim.AdamConfig().init
    with pytest.warns(CompileWarning, match="replaces module state") as record:
        compiled, got = _fit(_norm_net, (6,), opt(), True)
    assert sum(issubclass(w.category, CompileWarning) for w in record) == 1
    _, want = _fit(_norm_net, (6,), opt(), False)
    _assert_same(got.model, want.model)  # the running statistics too: the eager runs updated them
    stats = compiled.compile_stats()
    assert stats is not None and stats["fallbacks"] == 9 and stats["replays"] == 0
    [(reason, calls)] = stats["fallback_reasons"].items()
    assert "running statistics" in reason and calls == 9


def test_a_step_reading_the_loss_on_the_host_runs_eagerly() -> None:
    def reading(model: Any, batch: Any) -> StepOutput:
        out = step(model, batch)
        assert out.loss.item() > 0  # a host read: the rest could depend on the value
        return out

    def fit(compile: bool) -> tuple[Learner, Any]:  # noqa: A002
        B.seed(5)
        learner = Learner(
            _mlp(), optim.AdamConfig().init(), reading, lr=0.05, num_epochs=1, seed=7,
            progress="none", plot=False, stream=io.StringIO(), compile=compile,
        )
        return learner, learner.fit(_loader((6,)))

    with pytest.warns(CompileWarning, match="reads a value back to the host"):
        compiled, got = fit(True)
    _, want = fit(False)
    _assert_same(got.model, want.model)
    stats = compiled.compile_stats()
    assert stats is not None and stats["fallbacks"] == 4 and stats["replays"] == 0


@pytest.mark.parametrize("every", [1, 2])
@pytest.mark.parametrize("precision", ["16-mixed", "bf16-mixed"])
def test_compiled_learner_with_mixed_precision_trains_like_eager(precision: str, every: int) -> None:
    """The steps run inside autocast (part of the signature); with "16-mixed" the loss scale is
    an argument of the compiled step, so each batch is scaled by the scaler's current value, as
    in the eager loop; with accumulation the scaler unscales the group's sum in the program."""
    opt = optim.AdamConfig().init
    compiled, got = _fit(_mlp, (6,), opt(), True, precision=precision, grad_accumulation=every)
    eager, want = _fit(_mlp, (6,), opt(), False, precision=precision, grad_accumulation=every)
    _assert_same(got.model, want.model)
    if compiled.grad_scaler is not None:  # the same verdicts, read once per step from the probe
        assert eager.grad_scaler is not None
        assert compiled.grad_scaler.to_record() == eager.grad_scaler.to_record()
    stats = compiled.compile_stats()
    assert stats is not None and stats["replays"] >= 1
    # the float32 update runs inside the program; with "16-mixed" the scaler's unscale, check
    # and skip too; with groups of 2 (2 + 2 + 1 batches per epoch) at the 6 groups' last batches
    # but for two traced ones (the first makes the state; the 1-batch group is a new signature)
    if every == 1:
        assert stats["program_updates"] == stats["replays"], stats
    else:
        assert stats["program_updates"] == 4, stats


def test_compile_must_be_a_bool() -> None:
    with pytest.raises(TypeError, match="compile must be a bool"):
        Learner(_mlp(), optim.AdamConfig().init(), step, compile="yes")  # type: ignore[arg-type]
