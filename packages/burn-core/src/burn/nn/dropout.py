"""`Dropout`: zeroes elements with probability `prob` while training, scaling the others by
``1 / (1 - prob)``; the identity otherwise. It trains in training mode (``module.train()``), or,
with no explicit mode, when its input is on an autodiff backend (Burn's rule)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from burn.foundations.distribution import Bernoulli
from burn.module.base import Module
from burn.module.config import config

if TYPE_CHECKING:
    from burn.backend.device import Device
    from burn.tensor.tensor import Tensor

__all__ = ["Dropout", "DropoutConfig"]


@config
class DropoutConfig:
    """Builds a `Dropout` with drop probability `prob` in ``[0, 1)``.

    Example:
        >>> from burn import nn
        >>> nn.DropoutConfig(0.1).init().prob
        0.1
    """

    prob: float

    def __post_init__(self) -> None:
        if not 0.0 <= self.prob < 1.0:
            raise ValueError(f"DropoutConfig: prob must be in [0, 1), got {self.prob}")

    def init(self, device: Device | None = None) -> Dropout:
        return Dropout(float(self.prob))


class Dropout(Module):
    """Training: ``x * mask / (1 - prob)`` with a fresh Bernoulli mask per call, drawn from the
    backend's seeded generator. Inference: returns `x` itself.

    It trains in training mode (``.train()``); in evaluation mode (``.eval()``) it infers, on any
    backend. With no explicit mode it trains exactly when `x` is on an autodiff backend, so
    ``model.valid()`` (the inner backend) infers.

    Example:
        >>> from burn import nn
        >>> drop = nn.DropoutConfig(0.5).init()
        >>> drop.eval().is_training(), drop.train().is_training()
        (False, True)
    """

    prob: float

    def forward(self, x: Tensor) -> Tensor:
        prob = self.prob
        if prob == 0.0 or not self.is_training(x):
            return x
        keep = 1.0 - prob
        mask = x.random_like(Bernoulli(keep))
        return x * mask * (1.0 / keep)
