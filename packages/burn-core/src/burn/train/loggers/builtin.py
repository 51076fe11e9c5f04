"""burn-core's own loggers, registered with the logger registry like a ``burn.loggers`` plugin."""

from __future__ import annotations

import burn.plugins as bp
from burn.plugins.specs import LoggerSpec
from burn.train.loggers.csv_logger import CsvLogger
from burn.train.loggers.mlflow_logger import MlflowLogger, mlflow_missing
from burn.train.loggers.tensorboard_logger import TensorBoardLogger, tensorboardx_missing


@bp.hookimpl
def burn_loggers() -> list[LoggerSpec]:
    return [
        LoggerSpec(
            "csv", CsvLogger, description="metrics.csv, metrics.json and metrics.png", package="burn-core"
        ),
        LoggerSpec(
            "tensorboard",
            TensorBoardLogger,
            probe=tensorboardx_missing,
            description="TensorBoard event files (tensorboardX)",
            package="burn-core",
        ),
        LoggerSpec(
            "mlflow",
            MlflowLogger,
            probe=mlflow_missing,
            description="an MLflow tracking run (mlflow-skinny)",
            package="burn-core",
        ),
    ]
