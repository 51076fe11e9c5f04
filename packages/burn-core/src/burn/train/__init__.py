"""Training: loaders (from `burn.data`), metrics, and a `Learner` that trains, validates, checkpoints
(every epoch, every N steps, the best epoch), resumes, stops early, accumulates gradients, calls
`Callback` hooks and sends hyperparameters and metrics to loggers (`burn.train.loggers`: CSV, JSON
and a PNG plot with ``burn-core[plot]``; TensorBoard with ``burn-core[tensorboard]``; MLflow with
``burn-core[mlflow]``; more by name through the ``burn.loggers`` plugin group).

Example:
    >>> import numpy as np
    >>> from burn.train import ArrayDataset, DataLoader
    >>> loader = DataLoader(ArrayDataset(np.zeros((10, 4)), np.arange(10)), batch_size=4, shuffle=True)
    >>> len(loader)
    3
    >>> # learner = Learner(model, optim.AdamConfig().init(), step, lr=1e-3, num_epochs=5,
    >>> #                   metrics=[LossMetric(), AccuracyMetric()], directory="runs/demo")
    >>> # result = learner.fit(loader, valid_loader)        # result.model, result.history
    >>> # result = learner.fit(loader, valid_loader, resume=True)   # after an interruption

See ``docs/guides/training.md``.
"""

from burn.data.dataset import ArrayDataset, Dataset
from burn.data.loader import Batcher, DataLoader, stack_batcher
from burn.train.callbacks import BestCheckpoint, Callback, TrainState
from burn.train.checkpoint import Checkpointer
from burn.train.config import LearnerConfig
from burn.train.ddp import DataParallel, ShardedLoader
from burn.train.early_stopping import EarlyStopping
from burn.train.history import History
from burn.train.learner import Learner, StepFn, TrainingResult
from burn.train.loggers import (
    CsvLogger,
    Logger,
    LoggerError,
    MetricsRecord,
    MlflowLogger,
    RunInfo,
    TensorBoardLogger,
    create_logger,
    register_logger,
    unregister_logger,
)
from burn.train.metrics import (
    AccuracyMetric,
    EpochAggregator,
    LearningRateMetric,
    LossMetric,
    Metric,
    StepOutput,
    default_metrics,
)
from burn.train.plot import plot_history
from burn.train.profiling import ProfileSteps
from burn.train.progress import BarProgress, PlainProgress, Progress, SilentProgress, make_progress

__all__ = [
    "AccuracyMetric",
    "ArrayDataset",
    "BarProgress",
    "Batcher",
    "BestCheckpoint",
    "Callback",
    "Checkpointer",
    "CsvLogger",
    "DataLoader",
    "DataParallel",
    "Dataset",
    "EarlyStopping",
    "EpochAggregator",
    "History",
    "Learner",
    "LearnerConfig",
    "LearningRateMetric",
    "Logger",
    "LoggerError",
    "LossMetric",
    "Metric",
    "MetricsRecord",
    "MlflowLogger",
    "PlainProgress",
    "ProfileSteps",
    "Progress",
    "RunInfo",
    "ShardedLoader",
    "SilentProgress",
    "StepFn",
    "StepOutput",
    "TensorBoardLogger",
    "TrainState",
    "TrainingResult",
    "create_logger",
    "default_metrics",
    "make_progress",
    "plot_history",
    "register_logger",
    "stack_batcher",
    "unregister_logger",
]
