"""Where a `Learner` run's hyperparameters and metrics go: the `Logger` interface, burn-core's
loggers (`CsvLogger`, `TensorBoardLogger`, `MlflowLogger`) and the ``burn.loggers`` plugin group
through which a package ships a logger by name (`burn.train.loggers.registry`).

Example:
    >>> from burn.train.loggers import create_logger
    >>> create_logger("csv").name
    'csv'
    >>> # Learner(model, optimizer, step, directory="runs/a", loggers=["csv", "tensorboard"])
"""

from burn.train.loggers.base import EndStatus, Logger, LoggerError, MetricsRecord, RunInfo, Split
from burn.train.loggers.csv_logger import CsvLogger
from burn.train.loggers.mlflow_logger import MlflowLogger
from burn.train.loggers.registry import (
    LOGGER_ENTRY_POINT_GROUP,
    LoggerRegistry,
    create_logger,
    loggers,
    register_logger,
    unregister_logger,
)
from burn.train.loggers.tensorboard_logger import TensorBoardLogger

__all__ = [
    "LOGGER_ENTRY_POINT_GROUP",
    "CsvLogger",
    "EndStatus",
    "Logger",
    "LoggerError",
    "LoggerRegistry",
    "MetricsRecord",
    "MlflowLogger",
    "RunInfo",
    "Split",
    "TensorBoardLogger",
    "create_logger",
    "loggers",
    "register_logger",
    "unregister_logger",
]
