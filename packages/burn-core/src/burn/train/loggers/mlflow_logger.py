"""`MlflowLogger`: an MLflow run with the hyperparameters as params and every metric by step
(``burn-core[mlflow]``: mlflow-skinny, the tracking client without the server)."""

from __future__ import annotations

import importlib.util
import time
from typing import Any

from burn.train.loggers.base import EndStatus, Logger, MetricsRecord, RunInfo, plain_value

MISSING_MLFLOW = "mlflow is not installed: pip install 'burn-core[mlflow]' (mlflow-skinny) or mlflow"
_STATUS = {"finished": "FINISHED", "stopped": "FINISHED", "failed": "FAILED"}


def mlflow_missing() -> str | None:
    """None when mlflow (or mlflow-skinny) can be imported, else what to install."""
    return None if importlib.util.find_spec("mlflow") is not None else MISSING_MLFLOW


class MlflowLogger(Logger):
    """Logs the run to MLflow tracking: params at the start, metrics with their step, the end status.

    Metric keys are those of `TensorBoardLogger`: ``step/train/<metric>`` per training step and
    ``epoch/<split>/<metric>`` per epoch, each with the optimizer step as MLflow's ``step``, and
    ``epoch/number`` (the epoch) at each epoch's end step. The run ends ``FINISHED`` (also after early
    stopping) or ``FAILED``. It goes through `mlflow.tracking.MlflowClient`, never mlflow's global
    active run, so it does not disturb an ``mlflow.start_run()`` of the caller.

    Args:
        tracking_uri: where runs go (``http://host:5000``, ``sqlite:///mlflow.db``, ``file:/path``);
            None: mlflow's own default (the ``MLFLOW_TRACKING_URI`` variable, else ``mlflow.db``
            in the working directory, which needs the full ``mlflow`` package). The ``file:`` store
            is in maintenance mode in MLflow 3 and needs ``MLFLOW_ALLOW_FILE_STORE=true``.
        experiment: the experiment's name (created when missing).
        run_name: the run's name; None lets MLflow pick one.
        run_id: continue this existing run (e.g. on ``fit(resume=True)``) instead of creating one.
        tags: extra run tags.

    Raises:
        ImportError: at the run's start, when mlflow is not installed.

    Example:
        >>> logger = MlflowLogger("sqlite:///runs/mlflow.db", experiment="digits", run_name="mlp")
        >>> logger.experiment, logger.run_id is None
        ('digits', True)
        >>> # Learner(model, optimizer, step, loggers=[logger]); logger.run_id after fit
    """

    name = "mlflow"

    def __init__(
        self,
        tracking_uri: str | None = None,
        *,
        experiment: str = "burn",
        run_name: str | None = None,
        run_id: str | None = None,
        tags: dict[str, str] | None = None,
    ) -> None:
        self.tracking_uri = tracking_uri
        self.experiment = experiment
        self.run_name = run_name
        self.run_id = run_id
        self.tags = dict(tags or {})
        self._client: Any = None

    def start(self, run: RunInfo) -> None:
        missing = mlflow_missing()
        if missing:
            raise ImportError(missing)
        from mlflow.entities import Param
        from mlflow.tracking import MlflowClient

        client = MlflowClient(self.tracking_uri)
        if self.run_id is None:
            found = client.get_experiment_by_name(self.experiment)
            experiment_id = (
                found.experiment_id if found is not None else client.create_experiment(self.experiment)
            )
            created = client.create_run(experiment_id, run_name=self.run_name, tags=self.tags or None)
            self.run_id = created.info.run_id
            params = [Param(k, str(plain_value(v))) for k, v in sorted(run.hparams.items())]
            if params:
                client.log_batch(self.run_id, params=params)
        else:  # params were logged by the run's first fit (MLflow refuses to change them)
            client.update_run(self.run_id, status="RUNNING")
        self._client = client

    def log_step(self, record: MetricsRecord) -> None:
        if record.split == "train":
            self._log({f"step/train/{k}": v for k, v in record.values.items()}, record.step)

    def log_epoch(self, record: MetricsRecord) -> None:
        values = {f"epoch/{record.split}/{k}": v for k, v in record.values.items()}
        if record.split == "train":  # once per epoch: validation follows at the same step
            values["epoch/number"] = float(record.epoch)
        self._log(values, record.step)

    def end(self, status: EndStatus) -> None:
        if self._client is not None and self.run_id is not None:
            self._client.set_terminated(self.run_id, status=_STATUS[status])
            self._client = None

    def _log(self, values: dict[str, float], step: int) -> None:
        from mlflow.entities import Metric

        now = int(time.time() * 1000)
        metrics = [Metric(key, float(value), now, step) for key, value in values.items()]
        self._client.log_batch(self.run_id, metrics=metrics)
