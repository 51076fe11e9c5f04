"""`Dropout`: zeroes elements with probability `prob` while training (Burn's rule: only on an
autodiff backend), scaling the others by ``1 / (1 - prob)``; the identity otherwise."""

from __future__ import annotations

from typing import TYPE_CHECKING

from burn.module.base import Module
from burn.module.config import config
from burn.tensor.distribution import Bernoulli

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
    """Training (input on an autodiff backend): ``x * mask / (1 - prob)`` with a fresh Bernoulli
    mask per call, drawn from the backend's seeded generator. Inference (after ``valid()``, or on
    any plain backend): returns `x` itself."""

    prob: float

    def forward(self, x: Tensor) -> Tensor:
        prob = self.prob
        if prob == 0.0 or not x._b.ad_enabled:
            return x
        keep = 1.0 - prob
        mask = x.random_like(Bernoulli(keep))
        return x * mask * (1.0 / keep)
