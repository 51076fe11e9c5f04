"""burn.train.Learner: checkpoint rotation, early stopping, validation, logs and bit-identical resume."""

from __future__ import annotations

import io
from typing import Any

import numpy as np
import pytest

from burn.record import RecordError
from burn.train import (
    AccuracyMetric,
    ArrayDataset,
    Checkpointer,
    DataLoader,
    EarlyStopping,
    Learner,
    LearnerConfig,
    LearningRateMetric,
    LossMetric,
    StepOutput,
)

nd = pytest.importorskip("burn_ndarray", reason="burn-ndarray is not installed")
ad = pytest.importorskip("burn_autodiff", reason="burn-autodiff is not installed")

import burn  # noqa: E402
from burn import activation, nn, optim  # noqa: E402
from burn.module import Module  # noqa: E402


class Net(Module):
    hidden: nn.Linear
    dropout: nn.Dropout  # random: a resume must restore the backend's generator too
    out: nn.Linear

    def forward(self, x: Any) -> Any:
        return self.out(self.dropout(activation.relu(self.hidden(x))))


def backend() -> Any:
    return burn.backend("autodiff(ndarray)")


def make_net() -> Net:
    device = backend().default_device()
    return Net(
        nn.LinearConfig(4, 16).init(device), nn.DropoutConfig(0.2).init(), nn.LinearConfig(16, 3).init(device)
    )


def step(model: Any, batch: Any) -> StepOutput:
    x, y = batch
    logits = model(x)
    return StepOutput(nn.CrossEntropyLoss()(logits, y), logits, y)


def loaders() -> tuple[DataLoader, DataLoader]:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(96, 4)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int64) + (x[:, 1] > 0.5).astype(np.int64)
    return (
        DataLoader(ArrayDataset(x[:64], y[:64]), 16, shuffle=True, seed=1),
        DataLoader(ArrayDataset(x[64:], y[64:]), 16),
    )


def learner(directory: Any, num_epochs: int, **kwargs: Any) -> Learner:
    scheduler = optim.lr_scheduler.StepLrSchedulerConfig(0.05, 5, gamma=0.5).init()
    options: dict[str, Any] = {
        "lr": scheduler,
        "num_epochs": num_epochs,
        "metrics": [LossMetric(), AccuracyMetric(), LearningRateMetric()],
        "directory": directory,
        "seed": 7,
        "progress": "none",
        "plot": False,
        "stream": io.StringIO(),
    }
    options.update(kwargs)
    return Learner(make_net(), optim.AdamConfig().init(), step, **options)


def params(model: Any) -> dict[str, np.ndarray]:
    return {path: p.val().to_numpy() for path, p in model.named_params()}


def test_checkpointer_keeps_the_last_k(tmp_path) -> None:  # noqa: ANN001
    ckpt = Checkpointer(tmp_path, keep=2)
    assert ckpt.latest() is None
    for epoch in range(1, 5):
        ckpt.save(epoch, {"epoch": epoch, "step": epoch * 10, "model": {}, "optimizer": {}, "scheduler": {}})
    assert ckpt.epochs() == [3, 4] and ckpt.load()["step"] == 40 and ckpt.load(3)["epoch"] == 3
    (tmp_path / ".checkpoint-00005.mpk.x.tmp").write_bytes(b"half")  # a crashed save's temp file
    assert ckpt.latest() == 4
    with pytest.raises(FileNotFoundError, match="epoch 1"):
        ckpt.load(1)
    ckpt.recorder.record({"format": "something else"}, ckpt.path(9))
    with pytest.raises(RecordError, match="not a burn.train checkpoint"):
        ckpt.load()
    with pytest.raises(ValueError, match="keep must be a positive int"):
        Checkpointer(tmp_path, keep=0)


def test_fit_validates_logs_and_rotates_checkpoints(tmp_path) -> None:  # noqa: ANN001
    train, valid = loaders()
    result = learner(tmp_path, 3, keep_checkpoints=2).fit(train, valid)
    assert result.epoch == 3 and not result.stopped_early
    assert Checkpointer(tmp_path / "checkpoints").epochs() == [2, 3]
    assert result.checkpoint == tmp_path / "checkpoints" / "checkpoint-00003.mpk"
    assert result.files["csv"].read_text().splitlines()[0] == "epoch,split,loss,accuracy,lr"
    assert [row["split"] for row in result.history.epochs] == ["train", "valid"] * 3
    assert "lr" not in result.history.last("valid")  # validation runs without a learning rate
    assert len([s for s in result.history.steps if s["split"] == "train"]) == 3 * len(train)
    assert result.history.steps[-len(valid) - 1]["step"] == 3 * len(train)
    assert result.model.params()[0].val().backend.ad_enabled


def test_resume_is_bit_identical_to_an_uninterrupted_run(tmp_path) -> None:  # noqa: ANN001
    train, valid = loaders()
    stopper = EarlyStopping("loss", patience=5)
    full = learner(tmp_path / "full", 2, early_stopping=stopper).fit(train, valid)

    learner(tmp_path / "split", 1, early_stopping=EarlyStopping("loss", patience=5)).fit(train, valid)
    # Another process would start from scratch: reseeding proves the generator state is restored.
    backend().seed(12345)
    stream = io.StringIO()
    stopper2 = EarlyStopping("loss", patience=5)
    resumed = learner(tmp_path / "split", 2, early_stopping=stopper2, stream=stream).fit(
        train, valid, resume=True
    )
    assert "resuming from" in stream.getvalue() and "epoch 1" in stream.getvalue()
    assert resumed.epoch == 2
    a, b = params(full.model), params(resumed.model)
    assert list(a) == list(b)
    for path in a:
        np.testing.assert_array_equal(a[path], b[path], err_msg=path)
    assert resumed.history.epochs == full.history.epochs
    assert resumed.history.steps == full.history.steps
    assert (stopper2.best, stopper2.best_epoch) == (stopper.best, stopper.best_epoch)


def test_resume_needs_a_checkpoint(tmp_path) -> None:  # noqa: ANN001
    train, _ = loaders()
    with pytest.raises(FileNotFoundError, match="no checkpoint to resume from"):
        learner(tmp_path, 1).fit(train, resume=True)
    with pytest.raises(ValueError, match="needs the Learner's directory"):
        learner(None, 1).fit(train, resume=True)


def test_early_stopping_rule() -> None:
    stop = EarlyStopping("accuracy", mode="max", patience=2, min_delta=0.01)
    seen = [stop.update(e, {"accuracy": v}) for e, v in enumerate([0.5, 0.7, 0.705, 0.71, 0.9], start=1)]
    assert seen == [False, False, False, True, False] and stop.best == 0.9 and stop.bad_epochs == 0
    restored = EarlyStopping("accuracy", mode="max").load_record(stop.to_record())
    assert (restored.best, restored.best_epoch) == (0.9, 5)
    with pytest.raises(KeyError, match="watches valid 'loss'.*accuracy"):
        EarlyStopping("loss").update(1, {"accuracy": 1.0})
    with pytest.raises(RecordError, match="watches 'accuracy', not 'loss'"):
        EarlyStopping("loss").load_record(stop.to_record())
    with pytest.raises(ValueError, match="mode must be"):
        EarlyStopping(mode="up")
    with pytest.raises(ValueError, match="patience"):
        EarlyStopping(patience=0)


def test_fit_stops_early(tmp_path) -> None:  # noqa: ANN001
    train, valid = loaders()
    stream = io.StringIO()
    # A train loss that never improves by 10: stops after `patience` epochs past the first.
    stopper = EarlyStopping("loss", split="train", patience=2, min_delta=10.0)
    result = learner(tmp_path, 10, early_stopping=stopper, stream=stream).fit(train, valid)
    assert result.stopped_early and result.epoch == 3
    assert "early stopping after epoch 3" in stream.getvalue()
    assert Checkpointer(tmp_path / "checkpoints").latest() == 3


def test_learner_config_builds_a_learner(tmp_path) -> None:  # noqa: ANN001
    cfg = LearnerConfig(
        num_epochs=2, patience=1, stop_metric="accuracy", stop_mode="max", progress="none", plot=False,
        restore_best=True, grad_accumulation=3, checkpoint_every=5,
    )  # fmt: skip
    built = cfg.init(make_net(), optim.AdamConfig().init(), step, lr=0.01, directory=tmp_path)
    assert built.num_epochs == 2 and built.early_stopping is not None and built.early_stopping.mode == "max"
    assert built.early_stopping.restore_best and (built.grad_accumulation, built.checkpoint_every) == (3, 5)
    assert LearnerConfig.from_json(cfg.to_json()) == cfg


def test_bad_learner_input() -> None:
    net = make_net()
    adam = optim.AdamConfig().init()
    with pytest.raises(TypeError, match="has no autodiff"):
        Learner(net.valid(), adam, step)
    with pytest.raises(TypeError, match="optimizer must be"):
        Learner(net, "adam", step)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="num_epochs must be a positive int"):
        Learner(net, adam, step, num_epochs=0)
    with pytest.raises(TypeError, match="an LrScheduler or a learning rate"):
        Learner(net, adam, step, lr="fast")  # type: ignore[arg-type]
    train, _ = loaders()
    bad = Learner(net, adam, lambda model, batch: model(batch[0]), progress="none")
    with pytest.raises(TypeError, match="step_fn must return a burn.train.StepOutput, got Tensor"):
        bad.fit(train)
    with pytest.raises(TypeError, match="train must be a burn.train.DataLoader"):
        bad.fit([1, 2, 3])  # type: ignore[arg-type]
