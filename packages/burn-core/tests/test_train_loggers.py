"""burn.train loggers: the Logger calls a Learner makes, CsvLogger, TensorBoard event files and MLflow
runs read back with their own readers, the ``burn.loggers`` plugin group, and errors naming the logger."""

from __future__ import annotations

import io
import sys
import types
from typing import Any

import numpy as np
import pytest

import burn.plugins as bp
from burn.errors import PluginError
from burn.plugins.specs import LoggerSpec
from burn.train import (
    AccuracyMetric,
    ArrayDataset,
    DataLoader,
    EarlyStopping,
    Learner,
    LearningRateMetric,
    Logger,
    LoggerError,
    LossMetric,
    MetricsRecord,
    RunInfo,
    StepOutput,
    create_logger,
    register_logger,
    unregister_logger,
)
from burn.train.loggers import CsvLogger, LoggerRegistry, MlflowLogger, TensorBoardLogger

nd = pytest.importorskip("burn_ndarray", reason="burn-ndarray is not installed")
ad = pytest.importorskip("burn_autodiff", reason="burn-autodiff is not installed")

import burn  # noqa: E402
from burn import nn, optim  # noqa: E402

EPOCHS, STEPS_PER_EPOCH, VALID_BATCHES = 2, 4, 2


def step(model: Any, batch: Any) -> StepOutput:
    x, y = batch
    logits = model(x)
    return StepOutput(nn.CrossEntropyLoss()(logits, y), logits, y)


def loaders() -> tuple[DataLoader, DataLoader]:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(96, 4)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int64)
    return (
        DataLoader(ArrayDataset(x[:64], y[:64]), 16, shuffle=True, seed=1),
        DataLoader(ArrayDataset(x[64:], y[64:]), 16),
    )


def learner(directory: Any = None, **kwargs: Any) -> Learner:
    device = burn.backend("autodiff(ndarray)").default_device()
    options: dict[str, Any] = {
        "lr": 0.05,
        "num_epochs": EPOCHS,
        "metrics": [LossMetric(), AccuracyMetric(), LearningRateMetric()],
        "directory": directory,
        "seed": 3,
        "progress": "none",
        "plot": False,
        "stream": io.StringIO(),
    }
    options.update(kwargs)
    return Learner(nn.LinearConfig(4, 2).init(device), optim.AdamConfig().init(), step, **options)


class Recording(Logger):
    """Keeps every call, in order."""

    def __init__(self, **options: Any) -> None:
        self.options = options
        self.calls: list[tuple[str, Any]] = []

    def start(self, run: RunInfo) -> None:
        self.calls.append(("start", run))

    def log_step(self, record: MetricsRecord) -> None:
        self.calls.append(("step", record))

    def log_epoch(self, record: MetricsRecord) -> None:
        self.calls.append(("epoch", record))

    def end(self, status: str) -> None:  # type: ignore[override]
        self.calls.append(("end", status))

    def of(self, kind: str) -> list[Any]:
        return [arg for name, arg in self.calls if name == kind]


def test_a_logger_sees_start_every_step_every_epoch_and_end() -> None:
    log = Recording()
    result = learner(loggers=[log], hparams={"batch_size": 16, "width": np.int64(4)}).fit(*loaders())
    names = [name for name, _ in log.calls]
    assert names[0] == "start" and names[-1] == "end" and names.count("start") == names.count("end") == 1
    run = log.of("start")[0]
    assert not run.resumed and run.start_epoch == 0 and run.num_epochs == EPOCHS
    assert run.hparams["batch_size"] == 16 and run.hparams["width"] == 4 and type(run.hparams["width"]) is int
    assert run.hparams["num_epochs"] == EPOCHS and run.hparams["optimizer"] == "Adam"
    assert run.hparams["seed"] == 3 and run.hparams["num_params"] == 10 and run.hparams["model"] == "Linear"
    steps = log.of("step")
    train_steps = [r for r in steps if r.split == "train"]
    assert [r.step for r in train_steps] == list(range(1, EPOCHS * STEPS_PER_EPOCH + 1))
    assert [r.iteration for r in train_steps[:STEPS_PER_EPOCH]] == [1, 2, 3, 4]
    assert set(train_steps[0].values) == {"loss", "accuracy", "lr"}
    valid_steps = [r for r in steps if r.split == "valid"]
    where = [(r.epoch, r.iteration, r.step) for r in valid_steps]
    assert where == [(1, 1, 4), (1, 2, 4), (2, 1, 8), (2, 2, 8)]
    epochs = log.of("epoch")
    assert [(r.split, r.epoch, r.step) for r in epochs] == [
        ("train", 1, 4), ("valid", 1, 4), ("train", 2, 8), ("valid", 2, 8)
    ]
    for record in epochs:
        assert record.values == result.history.last(record.split) or record.epoch == 1
    assert epochs[0].values["loss"] == pytest.approx(result.history.series("loss", "train")[0][1])
    assert log.of("end") == ["finished"]


def test_early_stopping_ends_the_loggers_with_stopped() -> None:
    log = Recording()
    stop = EarlyStopping("loss", split="train", patience=1, min_delta=1e9)  # nothing counts as better
    learner(loggers=[log], num_epochs=5, early_stopping=stop).fit(loaders()[0])
    assert log.of("end") == ["stopped"] and len(log.of("epoch")) == 2


def test_default_loggers_follow_the_directory(tmp_path) -> None:  # noqa: ANN001
    assert learner().loggers == []
    (default,) = learner(tmp_path).loggers
    assert isinstance(default, CsvLogger)
    assert learner(tmp_path / "b", loggers=[]).fit(*loaders()).files == {}
    assert not (tmp_path / "b" / "metrics.csv").exists() and (tmp_path / "b" / "checkpoints").is_dir()
    result = learner(tmp_path / "c", loggers=["csv"]).fit(*loaders())
    assert result.files["csv"].read_text().splitlines()[0] == "epoch,split,loss,accuracy,lr"
    assert len(result.files["csv"].read_text().splitlines()) == 1 + 2 * EPOCHS
    with pytest.raises(ValueError, match="csv logger needs a directory"):
        learner(loggers=["csv"])
    with pytest.raises(TypeError, match=r"write loggers=\['csv'\]"):
        learner(tmp_path, loggers="csv")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="Logger instances or logger names, got 3"):
        learner(loggers=[3])  # type: ignore[list-item]


def test_csv_logger_in_a_folder_of_its_own(tmp_path) -> None:  # noqa: ANN001
    result = learner(loggers=[CsvLogger(tmp_path / "logs", plot=False)]).fit(*loaders())
    assert result.files["csv"] == tmp_path / "logs" / "metrics.csv" and result.files["json"].is_file()


class Broken(Recording):
    name = "broken"

    def log_epoch(self, record: MetricsRecord) -> None:
        raise RuntimeError("disk full")


def test_a_failing_logger_is_named_and_the_others_end_failed() -> None:
    other = Recording()
    message = r"logger 'broken' \(Broken\) failed in log_epoch\(\): RuntimeError: disk full"
    with pytest.raises(LoggerError, match=message):
        learner(loggers=[other, Broken()]).fit(*loaders())
    assert other.of("end") == ["failed"]
    assert isinstance(LoggerError("x"), RuntimeError)


def test_a_failing_run_ends_its_loggers_failed() -> None:
    log = Recording()

    def bad_step(model: Any, batch: Any) -> StepOutput:
        raise ArithmeticError("boom")

    with pytest.raises(ArithmeticError, match="boom"):
        learner(loggers=[log], valid_step_fn=bad_step).fit(*loaders())
    assert log.of("end") == ["failed"] and len(log.of("epoch")) == 1


# -- the burn.loggers plugin group ------------------------------------------------------------------
def memory_plugin(name: str = "memory") -> types.ModuleType:
    mod = types.ModuleType(f"plugin_{name}")
    mod.burn_loggers = bp.hookimpl(lambda: [LoggerSpec(name, factory=Recording, package="burn-memory")])  # type: ignore[attr-defined]
    return mod


def test_a_logger_registered_at_run_time_is_found_by_name() -> None:
    plugin = memory_plugin()
    register_logger(plugin)
    try:
        made = learner(loggers=["memory"]).loggers[0]
        assert isinstance(made, Recording)
        made_with = create_logger("memory", flush=5)
        assert isinstance(made_with, Recording) and made_with.options == {"flush": 5}
        learner(loggers=[made]).fit(*loaders())
        assert made.of("end") == ["finished"]
    finally:
        unregister_logger(plugin)
    with pytest.raises(ValueError, match=r"no logger named 'memory' \(installed loggers: csv, mlflow"):
        create_logger("memory")


class FakeEntryPoint:
    def __init__(self, name: str, target: Any) -> None:
        self.name, self.value, self._target = name, f"fake_{name}.plugin", target

    def load(self) -> Any:
        if isinstance(self._target, BaseException):
            raise self._target
        return self._target


def test_entry_points_of_the_group_are_loaded_and_isolated() -> None:
    broken = FakeEntryPoint("wandb", ImportError("no module named wandb"))
    eps = [FakeEntryPoint("memory", memory_plugin()), broken]
    registry = LoggerRegistry(entry_points=lambda: eps)
    assert isinstance(registry.build("memory"), Recording)
    rows = {row.name: row for row in registry.loggers(strict=False)}
    assert rows["memory"].status == "available" and rows["memory"].kind == "logger"
    assert rows["csv"].package == "burn-core" and rows["wandb"].status == "failed"
    with pytest.raises(PluginError, match="logger 'wandb' could not be loaded: entry point wandb"):
        registry.build("wandb")
    with pytest.raises(PluginError, match="BURN_STRICT_PLUGINS"):
        registry.loggers(strict=True)
    with pytest.raises(ValueError, match="did you mean 'memory'"):
        registry.build("memroy")


def test_a_plugin_clashing_with_a_builtin_name_is_refused() -> None:
    registry = LoggerRegistry(entry_points=lambda: [])
    with pytest.raises(PluginError, match="'csv' is also provided by"):
        registry.register(memory_plugin("csv"))
    assert isinstance(registry.build("csv"), CsvLogger)
    with pytest.raises(PluginError, match="implements none of burn's hooks"):
        registry.register(types.ModuleType("nothing_here"))


def test_factories_must_build_loggers() -> None:
    registry = LoggerRegistry(entry_points=lambda: [], builtin=False)
    mod = types.ModuleType("plugin_wrong")
    mod.burn_loggers = bp.hookimpl(lambda: [LoggerSpec("wrong", factory=dict)])  # type: ignore[attr-defined]
    registry.register(mod)
    with pytest.raises(PluginError, match="returned dict, not a burn.train.Logger"):
        registry.build("wrong")


def test_missing_libraries_say_what_to_install(monkeypatch) -> None:  # noqa: ANN001
    # None in sys.modules makes find_spec report the module absent and `import` fail.
    monkeypatch.setitem(sys.modules, "tensorboardX", None)
    monkeypatch.setitem(sys.modules, "mlflow", None)
    registry = LoggerRegistry(entry_points=lambda: [])
    with pytest.raises(ImportError, match=r"pip install 'burn-core\[tensorboard\]'"):
        registry.build("tensorboard")
    with pytest.raises(ImportError, match=r"pip install 'burn-core\[mlflow\]'"):
        registry.build("mlflow")
    with pytest.raises(LoggerError, match=r"logger 'tensorboard' .* in start\(\): ImportError: tensorboardX"):
        learner(loggers=[TensorBoardLogger("unused")]).fit(*loaders())


# -- TensorBoard, read back by tensorboard's own reader -----------------------------------------------
def test_tensorboard_event_files_hold_every_scalar_at_its_step(tmp_path) -> None:  # noqa: ANN001
    pytest.importorskip("tensorboardX", reason="tensorboardX is not installed (burn-core[tensorboard])")
    pytest.importorskip("tensorboard", reason="tensorboard (the event reader) is not installed")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from tensorboard.plugins.hparams import plugin_data_pb2

    result = learner(tmp_path, loggers=["tensorboard"], hparams={"batch_size": 16}).fit(*loaders())
    folder = result.files["tensorboard"]
    assert folder == tmp_path / "tensorboard"
    events = EventAccumulator(str(folder))
    events.Reload()
    tags = set(events.Tags()["scalars"])
    assert {"step/train/loss", "step/train/lr", "epoch/train/loss", "epoch/valid/accuracy"} <= tags
    assert not any(tag.startswith("step/valid") for tag in tags)
    steps = result.history.steps
    train_loss = [(row["step"], row["loss"]) for row in steps if row["split"] == "train"]
    read = [(e.step, e.value) for e in events.Scalars("step/train/loss")]
    assert [s for s, _ in read] == [s for s, _ in train_loss]
    np.testing.assert_allclose([v for _, v in read], [v for _, v in train_loss], rtol=1e-6)
    valid_acc = [(e.step, e.value) for e in events.Scalars("epoch/valid/accuracy")]
    assert [s for s, _ in valid_acc] == [STEPS_PER_EPOCH, 2 * STEPS_PER_EPOCH]
    expected = [v for _, v in result.history.series("accuracy", "valid")]
    np.testing.assert_allclose([v for _, v in valid_acc], expected)
    content = events.PluginTagToContent("hparams")
    session = [plugin_data_pb2.HParamsPluginData.FromString(c) for c in content.values()]
    hparams = next(d.session_start_info.hparams for d in session if d.HasField("session_start_info"))
    assert hparams["batch_size"].number_value == 16 and hparams["optimizer"].string_value == "Adam"


def test_tensorboard_needs_a_folder() -> None:
    pytest.importorskip("tensorboardX", reason="tensorboardX is not installed (burn-core[tensorboard])")
    with pytest.raises(LoggerError, match="TensorBoardLogger has no folder"):
        learner(loggers=["tensorboard"]).fit(*loaders())


# -- MLflow, read back with MlflowClient --------------------------------------------------------------
def test_mlflow_run_holds_params_and_metrics_by_step(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    pytest.importorskip("mlflow", reason="mlflow is not installed (burn-core[mlflow])")
    from mlflow.tracking import MlflowClient

    # MLflow 3 keeps the file store in maintenance mode behind this switch; a tmp folder needs no server.
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    uri = (tmp_path / "mlruns").as_uri()
    logger = MlflowLogger(uri, experiment="burn-tests", run_name="linear")
    result = learner(loggers=[logger], hparams={"batch_size": 16}).fit(*loaders())
    client = MlflowClient(uri)
    run = client.get_run(logger.run_id)
    assert run.info.status == "FINISHED" and run.info.run_name == "linear"
    assert client.get_experiment(run.info.experiment_id).name == "burn-tests"
    assert run.data.params["batch_size"] == "16" and run.data.params["num_epochs"] == str(EPOCHS)
    assert run.data.params["optimizer"] == "Adam" and run.data.params["seed"] == "3"
    history = sorted((m.step, m.value) for m in client.get_metric_history(logger.run_id, "epoch/valid/loss"))
    assert [s for s, _ in history] == [STEPS_PER_EPOCH, 2 * STEPS_PER_EPOCH]
    expected = [v for _, v in result.history.series("loss", "valid")]
    np.testing.assert_allclose([v for _, v in history], expected)
    train = sorted((m.step, m.value) for m in client.get_metric_history(logger.run_id, "step/train/loss"))
    assert [s for s, _ in train] == list(range(1, EPOCHS * STEPS_PER_EPOCH + 1))
    epochs = sorted((m.step, m.value) for m in client.get_metric_history(logger.run_id, "epoch/number"))
    assert epochs == [(STEPS_PER_EPOCH, 1.0), (2 * STEPS_PER_EPOCH, 2.0)]

    failing = MlflowLogger(uri, experiment="burn-tests")

    def bad_step(model: Any, batch: Any) -> StepOutput:
        raise ArithmeticError("boom")

    with pytest.raises(ArithmeticError):
        learner(loggers=[failing], valid_step_fn=bad_step).fit(*loaders())
    assert client.get_run(failing.run_id).info.status == "FAILED"


@pytest.mark.parametrize(
    "module", ["", ".base", ".csv_logger", ".tensorboard_logger", ".mlflow_logger", ".registry"]
)
def test_docstring_examples(module: str) -> None:
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module("burn.train.loggers" + module))
    assert result.failed == 0 and result.attempted > 0


def test_compile_notice_is_said_once_per_package(monkeypatch, caplog) -> None:  # noqa: ANN001
    import burn.backend.compile_notice as notice

    monkeypatch.setattr(notice, "_said", set())
    with caplog.at_level("WARNING", logger="burn.compile"):
        assert notice.compile_notice("burn-x", "x kernels", tmp := "/tmp/x-cache", "X_CACHE")
        assert not notice.compile_notice("burn-x", "x kernels", tmp)
        assert notice.compile_notice("burn-y", "y kernels", None)
    first, second = (r.getMessage() for r in caplog.records)
    assert first.startswith("burn-x: compiling x kernels on first use (cached in /tmp/x-cache; X_CACHE moves")
    assert "not cached on disk" in second
    result = __import__("doctest").testmod(notice)
    assert result.failed == 0 and result.attempted > 0


def test_learner_config_passes_its_settings_as_hyperparameters() -> None:
    from burn.train import LearnerConfig

    log = Recording()
    device = burn.backend("autodiff(ndarray)").default_device()
    config = LearnerConfig(num_epochs=1, patience=4, stop_metric="accuracy", progress="none", plot=False)
    model = nn.LinearConfig(4, 2).init(device)
    metrics = [LossMetric(), AccuracyMetric()]
    made = config.init(
        model, optim.AdamConfig().init(), step, metrics=metrics, loggers=[log], hparams={"patience": 9}
    )
    made.fit(*loaders())
    hparams = log.of("start")[0].hparams
    assert hparams["stop_metric"] == "accuracy" and hparams["keep_checkpoints"] == 2
    assert hparams["patience"] == 9 and hparams["restore_best"] is False
