"""burn.train.Learner: callbacks, gradient accumulation, step checkpoints and mid-epoch resume,
best checkpoints and restore-best."""

from __future__ import annotations

import io
from typing import Any

import numpy as np
import pytest

from burn.train import (
    ArrayDataset,
    BestCheckpoint,
    Callback,
    Checkpointer,
    DataLoader,
    EarlyStopping,
    Learner,
    LearningRateMetric,
    LossMetric,
    Metric,
    StepOutput,
    TrainState,
)

nd = pytest.importorskip("burn_ndarray", reason="burn-ndarray is not installed")
ad = pytest.importorskip("burn_autodiff", reason="burn-autodiff is not installed")

from test_train_learner import learner, loaders, make_net, params  # noqa: E402

import burn  # noqa: E402
from burn import nn, optim  # noqa: E402


def assert_same_params(a: Any, b: Any) -> None:
    pa, pb = params(a), params(b)
    assert list(pa) == list(pb)
    for path in pa:
        np.testing.assert_array_equal(pa[path], pb[path], err_msg=path)


class Recorder(Callback):
    def __init__(self) -> None:
        self.events: list[tuple[Any, ...]] = []
        self.step_metrics: list[dict[str, float]] = []
        self.valid_metrics: list[dict[str, float]] = []

    def on_fit_start(self, state: TrainState) -> None:
        self.events.append(("fit_start", state.epoch, state.step, state.resumed))

    def on_epoch_start(self, state: TrainState) -> None:
        self.events.append(("epoch_start", state.epoch, state.step))

    def on_step_end(self, state: TrainState) -> None:
        self.events.append(("step", state.epoch, state.step, state.iteration))
        self.step_metrics.append(dict(state.metrics))

    def on_validation_end(self, state: TrainState) -> None:
        self.events.append(("valid", state.epoch))
        self.valid_metrics.append(dict(state.metrics))

    def on_epoch_end(self, state: TrainState) -> None:
        self.events.append(("epoch_end", state.epoch, state.step))

    def on_checkpoint(self, state: TrainState) -> None:
        assert state.checkpoint is not None and state.checkpoint.is_file()
        self.events.append(("checkpoint", state.checkpoint.name))

    def on_fit_end(self, state: TrainState) -> None:
        self.events.append(("fit_end", state.epoch, state.step))


class StopAt(Callback):
    """Stops (or crashes) after optimizer step `step`."""

    def __init__(self, step: int, crash: bool = False) -> None:
        self.step, self.crash = step, crash

    def on_step_end(self, state: TrainState) -> None:
        if state.step == self.step:
            if self.crash:
                raise RuntimeError("power cut")
            state.stop = True


def test_events_come_in_order_with_their_state(tmp_path) -> None:  # noqa: ANN001
    train, valid = loaders()  # 4 training batches per epoch
    hook = Recorder()
    result = learner(tmp_path, 2, callbacks=[hook], checkpoint_every=3, keep_checkpoints=5).fit(train, valid)
    step_events = [("step", 1, s, s) for s in range(1, 5)]
    assert hook.events == [
        ("fit_start", 0, 0, False),
        ("epoch_start", 1, 0),
        *step_events[:3],
        ("checkpoint", "checkpoint-00001-000003.mpk"),  # every 3 steps, inside the epoch
        step_events[3],
        ("valid", 1),
        ("epoch_end", 1, 4),
        ("checkpoint", "checkpoint-00001.mpk"),
        ("epoch_start", 2, 4),
        ("step", 2, 5, 1),
        ("step", 2, 6, 2),
        ("checkpoint", "checkpoint-00002-000002.mpk"),
        ("step", 2, 7, 3),
        ("step", 2, 8, 4),
        ("valid", 2),
        ("epoch_end", 2, 8),
        ("checkpoint", "checkpoint-00002.mpk"),
        ("fit_end", 2, 8),
    ]
    train_steps = [s for s in result.history.steps if s["split"] == "train"]
    assert [m["loss"] for m in hook.step_metrics] == [s["loss"] for s in train_steps]
    valid_rows = [row for row in result.history.epochs if row["split"] == "valid"]
    expected = [{k: v for k, v in row.items() if k not in ("split", "epoch")} for row in valid_rows]
    assert hook.valid_metrics == expected
    assert len(hook.valid_metrics) == 2 and "loss" in hook.valid_metrics[0]
    assert Checkpointer(tmp_path / "checkpoints").checkpoints() == [(1, 3), (1, 0), (2, 2), (2, 0)]


def test_a_callback_stop_inside_an_epoch_checkpoints_and_resumes_exactly(tmp_path) -> None:  # noqa: ANN001
    train, valid = loaders()
    worst = BestCheckpoint("loss", mode="max")  # the worst epoch: the first, not one after the resume
    full = learner(tmp_path / "full", 3, callbacks=[worst]).fit(train, valid)

    stream = io.StringIO()
    hooks = [StopAt(6), BestCheckpoint("loss", mode="max")]
    stopped = learner(tmp_path / "split", 3, callbacks=hooks, stream=stream).fit(train, valid)
    assert stopped.stopped_early and stopped.epoch == 1
    assert "stopped by a callback after step 6 (epoch 2, batch 2)" in stream.getvalue()
    assert stopped.checkpoint == tmp_path / "split" / "checkpoints" / "checkpoint-00002-000002.mpk"
    saved = Checkpointer(tmp_path / "split" / "checkpoints").load()
    assert (saved["epoch"], saved["iteration"], saved["step"]) == (1, 2, 6)

    backend_reseed()
    stream = io.StringIO()
    hook, worst2 = Recorder(), BestCheckpoint("loss", mode="max")
    # Another list of callbacks: the saved BestCheckpoint state still finds its callback by class.
    resumed = learner(tmp_path / "split", 3, stream=stream, callbacks=[hook, worst2]).fit(
        train, valid, resume=True
    )
    assert worst.best_epoch == 1 and (worst2.best, worst2.best_epoch) == (worst.best, worst.best_epoch)
    assert "(epoch 2, batch 2, step 6)" in stream.getvalue()
    assert hook.events[:3] == [("fit_start", 1, 6, True), ("epoch_start", 2, 6), ("step", 2, 7, 3)]
    assert resumed.epoch == 3 and not resumed.stopped_early
    assert_same_params(full.model, resumed.model)
    assert resumed.history.epochs == full.history.epochs  # the epoch means include the batches before
    assert resumed.history.steps == full.history.steps


def backend_reseed() -> None:
    # Another process would start from scratch: reseeding proves the generator state is restored.
    burn.backend("autodiff(ndarray)").seed(12345)


@pytest.mark.parametrize(
    ("accumulation", "every", "crash_at", "newest"), [(1, 3, 7, (2, 2)), (2, 1, 4, (2, 2))]
)
def test_resume_after_a_crash_from_a_step_checkpoint_is_exact(
    tmp_path, accumulation: int, every: int, crash_at: int, newest: tuple[int, int]  # noqa: ANN001
) -> None:
    train, valid = loaders()
    options = {"grad_accumulation": accumulation, "checkpoint_every": every, "keep_checkpoints": 10}
    full = learner(tmp_path / "full", 3, **options).fit(train, valid)
    assert full.history.steps[-len(valid) - 1]["step"] == 3 * len(train) // accumulation

    with pytest.raises(RuntimeError, match="power cut"):
        learner(tmp_path / "split", 3, callbacks=[StopAt(crash_at, crash=True)], **options).fit(train, valid)
    assert Checkpointer(tmp_path / "split" / "checkpoints").newest() == newest
    if accumulation > 1:  # a mid-epoch resume needs the same grouping of batches
        with pytest.raises(ValueError, match="grad_accumulation=2"):
            learner(tmp_path / "split", 3, keep_checkpoints=10).fit(train, valid, resume=True)
    backend_reseed()
    resumed = learner(tmp_path / "split", 3, **options).fit(train, valid, resume=True)
    assert_same_params(full.model, resumed.model)
    assert resumed.history.epochs == full.history.epochs
    assert resumed.history.steps == full.history.steps



def linear_run(batch_size: int, accumulation: int, n: int = 40) -> Any:
    device = burn.backend("autodiff(ndarray)").default_device()
    rng = np.random.default_rng(3)
    x = rng.normal(size=(n, 3)).astype(np.float32)
    y = (x @ np.array([[1.0], [-2.0], [0.5]]) + 0.1).astype(np.float32)
    burn.backend("autodiff(ndarray)").seed(0)
    model = nn.LinearConfig(3, 1).init(device)

    def mse(model: Any, batch: Any) -> StepOutput:
        xb, yb = batch
        out = model(xb)
        return StepOutput(nn.MseLoss()(out, yb), out, yb)  # the output: metrics weigh by batch size

    loader = DataLoader(ArrayDataset(x, y), batch_size, shuffle=True, seed=2)
    run = Learner(
        model, optim.SgdConfig().init(), mse, lr=0.1, num_epochs=3, progress="none",
        grad_accumulation=accumulation, metrics=[LossMetric(), LearningRateMetric()],
    )  # fmt: skip
    return run.fit(loader)


def test_grad_accumulation_trains_like_one_big_batch() -> None:
    # 40 items: batches of 8 in groups of 2 (2, 2, then 1) are the batches of 16 (16, 16, then 8).
    big, accumulated, plain = linear_run(16, 1), linear_run(8, 2), linear_run(8, 1)
    a, b, c = params(big.model), params(accumulated.model), params(plain.model)
    for path in a:
        np.testing.assert_allclose(a[path], b[path], rtol=1e-5, atol=1e-6, err_msg=path)
    assert not np.allclose(a["weight"], c["weight"], rtol=1e-5, atol=1e-6)  # the comparison is sharp
    train_steps = [s for s in accumulated.history.steps if s["split"] == "train"]
    assert len(train_steps) == 15 and train_steps[-1]["step"] == 9  # 5 batches, 3 optimizer steps, per epoch
    assert [s["step"] for s in train_steps[:5]] == [0, 1, 1, 2, 3]
    big_loss = [row["loss"] for row in big.history.epochs]
    np.testing.assert_allclose([row["loss"] for row in accumulated.history.epochs], big_loss, rtol=1e-5)


class Scripted(Metric):
    """A validation metric whose value per epoch is given (set `epoch` from a callback)."""

    name = "score"

    def __init__(self, values: list[float]) -> None:
        self.values, self.epoch = values, 0

    def compute(self, output: StepOutput, lr: float | None) -> tuple[float, float] | None:
        return None if lr is not None else (self.values[self.epoch - 1], 1.0)


class Snapshots(Callback):
    def __init__(self, metric: Scripted) -> None:
        self.metric, self.models = metric, {}

    def on_epoch_start(self, state: TrainState) -> None:
        self.metric.epoch = state.epoch

    def on_epoch_end(self, state: TrainState) -> None:
        self.models[state.epoch] = state.model


SCORES = [3.0, 1.0, 2.0, 2.5, 0.5, 0.4]  # best at epoch 2; patience 2 stops after epoch 4


def scripted_learner(directory: Any, num_epochs: int, restore_best: bool = True) -> tuple[Learner, Snapshots]:
    metric = Scripted(SCORES)
    snaps = Snapshots(metric)
    stopper = EarlyStopping("score", patience=2, restore_best=restore_best)
    hooks = [snaps, BestCheckpoint("score"), BestCheckpoint("score", mode="max", name="best-max")]
    metrics = [LossMetric(), metric]
    run = learner(directory, num_epochs, metrics=metrics, early_stopping=stopper, callbacks=hooks)
    return run, snaps


def test_best_checkpoint_and_restore_best(tmp_path) -> None:  # noqa: ANN001
    train, valid = loaders()
    run, snaps = scripted_learner(tmp_path, 10)
    result = run.fit(train, valid)
    assert result.stopped_early and result.epoch == 4 and result.best_epoch == 2
    assert_same_params(result.model, snaps.models[2])
    assert not np.array_equal(params(result.model)["out.weight"], params(snaps.models[4])["out.weight"])
    assert "restoring the params of epoch 2" in run.stream.getvalue()  # type: ignore[union-attr]

    best_min, best_max = run.callbacks[1], run.callbacks[2]
    assert isinstance(best_min, BestCheckpoint) and isinstance(best_max, BestCheckpoint)
    assert (best_min.best, best_min.best_epoch, best_max.best, best_max.best_epoch) == (1.0, 2, 3.0, 1)
    assert best_min.model is snaps.models[2]
    ckpt = Checkpointer(tmp_path / "checkpoints")
    assert best_min.path == ckpt.best_path() and ckpt.best_path().is_file()
    assert best_max.path == ckpt.best_path("best-max")
    best_state = ckpt.read(ckpt.best_path())
    assert (best_state["epoch"], best_state["step"]) == (2, 8)
    assert_same_params(make_net().load_record(best_state["model"]), snaps.models[2])
    assert ckpt.read(best_max.path)["epoch"] == 1

    without = scripted_learner(tmp_path / "plain", 10, restore_best=False)[0].fit(train, valid)
    assert without.best_epoch is None
    assert_same_params(without.model, snaps.models[4])

    ckpt.clear()  # what a fresh run in the directory does: the best checkpoints go too
    assert not ckpt.best_path().exists() and not best_max.path.exists() and ckpt.checkpoints() == []
    with pytest.raises(ValueError, match="name must start with 'best'"):
        BestCheckpoint(name="../model")


def test_restore_best_survives_a_resume(tmp_path) -> None:  # noqa: ANN001
    train, valid = loaders()
    run, snaps = scripted_learner(tmp_path / "full", 10)
    full = run.fit(train, valid)

    scripted_learner(tmp_path / "split", 3)[0].fit(train, valid)  # epoch 3: past the best, not stopped
    backend_reseed()
    run2, snaps2 = scripted_learner(tmp_path / "split", 10)
    resumed = run2.fit(train, valid, resume=True)
    assert resumed.epoch == 4 and resumed.best_epoch == 2 and 2 not in snaps2.models
    assert_same_params(resumed.model, full.model)  # epoch 2's params, from the checkpoint
    best = run2.callbacks[1]
    assert isinstance(best, BestCheckpoint) and (best.best, best.best_epoch) == (1.0, 2)
    assert best.model is None and best.path == Checkpointer(tmp_path / "split" / "checkpoints").best_path()


def test_checkpointer_orders_mid_epoch_checkpoints(tmp_path) -> None:  # noqa: ANN001
    ckpt = Checkpointer(tmp_path, keep=3)
    base = {"step": 0, "model": {}, "optimizer": {}, "scheduler": {}}
    ckpt.save(1, {**base, "epoch": 1})
    ckpt.save(2, {**base, "epoch": 1, "iteration": 5}, iteration=5)
    ckpt.save(2, {**base, "epoch": 1, "iteration": 10}, iteration=10)
    assert ckpt.checkpoints() == [(1, 0), (2, 5), (2, 10)] and ckpt.newest() == (2, 10)
    assert ckpt.epochs() == [1] and ckpt.latest() == 1 and ckpt.load()["iteration"] == 10
    ckpt.save(2, {**base, "epoch": 2})
    assert ckpt.checkpoints() == [(2, 5), (2, 10), (2, 0)] and ckpt.load(2, 5)["iteration"] == 5
    ckpt.save_best({**base, "epoch": 2})
    assert ckpt.read(ckpt.best_path())["epoch"] == 2 and ckpt.best_path().name == "best.mpk"
    with pytest.raises(FileNotFoundError, match="no checkpoint at"):
        ckpt.read(tmp_path / "nothing.mpk")


def test_loader_batches_can_start_mid_epoch() -> None:
    loader = DataLoader(ArrayDataset(np.arange(10.0)), 3, shuffle=True, seed=4,
                        batcher=lambda items, device: [float(i) for i in items])  # fmt: skip
    every = list(loader.batches(epoch=2))
    assert list(loader.batches(epoch=2, start=2)) == every[2:] and len(every) == 4


def test_bad_hook_options() -> None:
    net, adam = make_net(), optim.AdamConfig().init()

    def step(model: Any, batch: Any) -> StepOutput:
        raise AssertionError("never called")

    with pytest.raises(ValueError, match="grad_accumulation must be a positive int"):
        Learner(net, adam, step, grad_accumulation=0)
    with pytest.raises(ValueError, match="checkpoint_every must be a positive int or None"):
        Learner(net, adam, step, checkpoint_every=True)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="callbacks must be burn.train.Callback"):
        Learner(net, adam, step, callbacks=[print])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="save_best needs the Learner's directory"):
        Learner(net, adam, step).save_best(TrainState(None, net, 1, 0))
