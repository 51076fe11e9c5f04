"""Metrics: a value per step, aggregated per epoch as a mean weighted by batch size."""

from __future__ import annotations

import abc
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from burn.tensor.tensor import Tensor


@dataclass
class StepOutput:
    """What a step function returns: the loss and, for metrics such as accuracy, the model's
    output and the targets.

    Attributes:
        loss: a scalar-like tensor (shape ``()`` or ``(1,)``); training calls ``loss.backward()``.
        output: the model's output, e.g. logits ``[batch, classes]``.
        targets: the targets, e.g. class indices ``[batch]``.
        batch_size: weight of this step in epoch means (default: ``output.shape[0]``, else 1).

    Example:
        >>> out = StepOutput(loss=loss, output=logits, targets=labels)  # doctest: +SKIP
    """

    loss: Tensor
    output: Tensor | None = None
    targets: Tensor | None = None
    batch_size: int | None = None

    def weight(self) -> int:
        if self.batch_size is not None:
            return self.batch_size
        if self.output is not None and len(self.output.shape) > 0:
            return int(self.output.shape[0])
        return 1


class Metric(abc.ABC):
    """One number per step (with a weight), averaged over an epoch.

    Subclasses set `name` and implement `compute`; returning None skips the step (e.g. the
    learning rate during validation).
    """

    name: str = ""

    @abc.abstractmethod
    def compute(self, output: StepOutput, lr: float | None) -> tuple[float, float] | None:
        """``(value, weight)`` of one step, or None when the metric does not apply."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class LossMetric(Metric):
    """The step's loss, weighted by batch size.

    Example:
        >>> LossMetric().name
        'loss'
    """

    name = "loss"

    def compute(self, output: StepOutput, lr: float | None) -> tuple[float, float]:
        value = float(np.asarray(output.loss.to_numpy(), dtype=np.float64).reshape(-1)[0])
        return value, float(output.weight())


class AccuracyMetric(Metric):
    """The fraction of samples whose highest score (``argmax`` over the last dim of `output`)
    is the target class.

    Example:
        >>> AccuracyMetric().name
        'accuracy'
    """

    name = "accuracy"

    def compute(self, output: StepOutput, lr: float | None) -> tuple[float, float]:
        if output.output is None or output.targets is None:
            raise ValueError("AccuracyMetric needs a StepOutput with output and targets")
        scores = output.output.to_numpy()
        targets = output.targets.to_numpy().reshape(-1)
        predicted = np.argmax(scores.reshape(len(targets), -1), axis=-1)
        if predicted.shape != targets.shape:
            raise ValueError(
                f"AccuracyMetric: output {tuple(output.output.shape)} does not match targets "
                f"{tuple(output.targets.shape)}"
            )
        return float(np.mean(predicted == targets)), float(len(targets))


class LearningRateMetric(Metric):
    """The learning rate of each training step (skipped during validation).

    Example:
        >>> LearningRateMetric().compute(None, 0.01)  # type: ignore[arg-type]
        (0.01, 1.0)
    """

    name = "lr"

    def compute(self, output: StepOutput, lr: float | None) -> tuple[float, float] | None:
        return None if lr is None else (float(lr), 1.0)


def default_metrics() -> list[Metric]:
    """Loss and learning rate: what every step function provides."""
    return [LossMetric(), LearningRateMetric()]


class EpochAggregator:
    """Weighted means of metrics over one epoch of one split.

    Example:
        >>> agg = EpochAggregator()
        >>> agg.add({"loss": (1.0, 2.0)}); agg.add({"loss": (4.0, 1.0)})
        >>> agg.means()
        {'loss': 2.0}
    """

    def __init__(self) -> None:
        self._sums: dict[str, float] = {}
        self._weights: dict[str, float] = {}

    def add(self, values: dict[str, tuple[float, float]]) -> None:
        for name, (value, weight) in values.items():
            self._sums[name] = self._sums.get(name, 0.0) + value * weight
            self._weights[name] = self._weights.get(name, 0.0) + weight

    def means(self) -> dict[str, float]:
        return {name: (self._sums[name] / w if w > 0 else math.nan) for name, w in self._weights.items()}

    def to_record(self) -> dict[str, dict[str, float]]:
        """The running sums, so that a mid-epoch checkpoint resumes the epoch's means exactly."""
        return {"sums": dict(self._sums), "weights": dict(self._weights)}

    @classmethod
    def from_record(cls, record: dict[str, dict[str, float]]) -> EpochAggregator:
        """The aggregator `to_record` saved."""
        aggregator = cls()
        aggregator._sums = {str(k): float(v) for k, v in record["sums"].items()}
        aggregator._weights = {str(k): float(v) for k, v in record["weights"].items()}
        return aggregator


def compute_all(
    metrics: list[Metric], output: StepOutput, lr: float | None
) -> dict[str, tuple[float, float]]:
    """Every metric's ``(value, weight)`` for one step, skipping those that return None."""
    values: dict[str, tuple[float, float]] = {}
    for metric in metrics:
        result = metric.compute(output, lr)
        if result is not None:
            values[metric.name] = result
    return values


def check_metrics(metrics: Any) -> list[Metric]:
    """`metrics` as a list of `Metric` with distinct names, else a clear error."""
    checked = list(metrics)
    names: list[str] = []
    for metric in checked:
        if not isinstance(metric, Metric):
            raise TypeError(f"metrics must be burn.train.Metric instances, got {type(metric).__name__}")
        if not metric.name:
            raise ValueError(f"{type(metric).__name__} has no name")
        if metric.name in names:
            raise ValueError(f"two metrics are named {metric.name!r}")
        names.append(metric.name)
    return checked
