"""burn.train metrics, history logs (CSV, JSON, PNG) and progress displays."""

from __future__ import annotations

import csv
import io
import json
import math

import numpy as np
import pytest

from burn.train import (
    AccuracyMetric,
    EpochAggregator,
    History,
    LearningRateMetric,
    LossMetric,
    StepOutput,
    make_progress,
    plot_history,
)
from burn.train.metrics import check_metrics


@pytest.fixture(scope="module")
def device():  # noqa: ANN201
    nd = pytest.importorskip("burn_ndarray", reason="burn-ndarray is not installed")
    return nd.NdArray().default_device()


def test_loss_accuracy_and_lr_per_step(device) -> None:  # noqa: ANN001
    import burn
    from burn import Tensor

    logits = Tensor.from_data(
        [[2.0, 0.1, 0.0], [0.0, 1.0, 3.0], [0.0, 5.0, 1.0], [1.0, 0.0, 0.0]], device=device
    )
    targets = Tensor.from_data([0, 2, 0, 0], device=device, kind=burn.Int)
    out = StepOutput(loss=Tensor.from_data([0.25], device=device), output=logits, targets=targets)
    assert LossMetric().compute(out, 0.1) == (0.25, 4.0)
    assert AccuracyMetric().compute(out, None) == (0.75, 4.0)
    assert LearningRateMetric().compute(out, 0.1) == (0.1, 1.0)
    assert LearningRateMetric().compute(out, None) is None  # validation has no learning rate
    with pytest.raises(ValueError, match="needs a StepOutput with output and targets"):
        AccuracyMetric().compute(StepOutput(loss=out.loss), None)
    assert StepOutput(loss=out.loss, batch_size=7).weight() == 7
    assert StepOutput(loss=out.loss).weight() == 1


def test_epoch_means_are_weighted_by_batch_size() -> None:
    agg = EpochAggregator()
    agg.add({"loss": (1.0, 32.0), "accuracy": (0.5, 32.0)})
    agg.add({"loss": (4.0, 8.0), "accuracy": (1.0, 8.0)})
    means = agg.means()
    assert means["loss"] == pytest.approx((32 + 32) / 40) and means["accuracy"] == pytest.approx(0.6)


def test_metric_list_is_checked() -> None:
    with pytest.raises(TypeError, match="burn.train.Metric"):
        check_metrics(["loss"])
    with pytest.raises(ValueError, match="two metrics are named 'loss'"):
        check_metrics([LossMetric(), LossMetric()])


def history() -> History:
    h = History()
    for epoch, (train, valid) in enumerate([(1.0, 1.2), (0.5, 0.9)], start=1):
        h.add_step("train", epoch, 1, epoch, {"loss": train, "lr": 0.1})
        h.add_epoch("train", epoch, {"loss": train, "lr": 0.1})
        h.add_epoch("valid", epoch, {"loss": valid, "accuracy": math.nan if epoch == 1 else 0.8})
    return h


def test_history_csv_and_json(tmp_path) -> None:  # noqa: ANN001
    h = history()
    assert h.series("loss", "valid") == [(1, 1.2), (2, 0.9)] and h.last("train") == {"loss": 0.5, "lr": 0.1}
    csv_path, json_path = h.write(tmp_path / "run")
    rows = list(csv.DictReader(io.StringIO(csv_path.read_text())))
    assert list(rows[0]) == ["epoch", "split", "loss", "lr", "accuracy"]
    assert [(r["epoch"], r["split"], r["loss"]) for r in rows] == [
        ("1", "train", "1.0"),
        ("1", "valid", "1.2"),
        ("2", "train", "0.5"),
        ("2", "valid", "0.9"),
    ]
    assert rows[0]["accuracy"] == "" and rows[3]["accuracy"] == "0.8"
    data = json.loads(json_path.read_text())  # strict JSON: NaN written as null
    assert data["epochs"][1]["accuracy"] is None and data["steps"][0]["step"] == 1
    back = History.from_json(json_path.read_text())
    assert back.series("loss", "train") == h.series("loss", "train") and len(back.steps) == 2
    with pytest.raises(ValueError, match="not a burn.train metrics history"):
        History.from_json("{}")


def test_plot_writes_a_png(tmp_path) -> None:  # noqa: ANN001
    pytest.importorskip("matplotlib", reason="matplotlib is not installed (burn-core[plot])")
    path = plot_history(history(), tmp_path / "metrics.png")
    assert path is not None and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ValueError, match="no epoch metrics"):
        plot_history(History(), tmp_path / "empty.png")


def test_plot_without_matplotlib_returns_none(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    import burn.train.plot as plot

    monkeypatch.setattr(plot, "matplotlib_available", lambda: False)
    assert plot.plot_history(history(), tmp_path / "metrics.png") is None
    assert not (tmp_path / "metrics.png").exists()


def test_progress_modes() -> None:
    stream = io.StringIO()  # not a terminal: plain lines
    progress = make_progress("auto", stream)
    assert type(progress).__name__ == "PlainProgress"
    progress.start("train", 1, 2, 10)
    progress.step({"loss": 1.0})
    progress.end("epoch 1/2 train  loss 1.0000")
    assert stream.getvalue() == "epoch 1/2 train  loss 1.0000\n"
    silent = make_progress("none", stream)
    silent.end("hidden")
    assert "hidden" not in stream.getvalue()
    with pytest.raises(ValueError, match="progress must be one of"):
        make_progress("fancy")


def test_bar_progress_writes_the_summary() -> None:
    pytest.importorskip("tqdm", reason="tqdm is not installed")
    stream = io.StringIO()
    bar = make_progress("bar", stream)
    bar.start("train", 1, 1, 3)
    for _ in range(3):
        bar.step({"loss": float(np.float32(0.5))})
    bar.end("epoch 1/1 train  loss 0.5000")
    assert "epoch 1/1 train  loss 0.5000" in stream.getvalue()


@pytest.mark.parametrize(
    "module",
    [
        "burn.train",
        "burn.data.dataset",
        "burn.data.loader",
        "burn.train.metrics",
        "burn.train.history",
        "burn.train.early_stopping",
        "burn.train.progress",
        "burn.train.config",
    ],
)
def test_docstring_examples(module: str) -> None:
    import doctest
    import importlib

    mod = importlib.import_module(module)
    result = doctest.testmod(mod)
    assert result.failed == 0 and result.attempted > 0
