"""Regression losses: squared (`MseLoss`), absolute (`L1Loss`), Huber (`HuberLoss`), smooth L1
(`SmoothL1Loss`) and Lp (`LpLoss`) errors between predictions and targets of the same shape."""

from __future__ import annotations

from typing import TYPE_CHECKING

from burn.module.base import Module
from burn.module.config import config
from burn.nn.loss._reduction import Reduction, _reduce, _same_shapes
from burn.tensor import autocast as _amp
from burn.tensor.tensor import Tensor

if TYPE_CHECKING:
    from burn.backend.device import Device


# -- MSE ------------------------------------------------------------------------------------------
@config
class MseLossConfig:
    """Builds an `MseLoss` (no options; Burn builds it with ``MseLoss::new()``)."""

    def init(self, device: Device | None = None) -> MseLoss:
        return MseLoss()


class MseLoss(Module):
    """Mean squared error ``(logits - targets)^2``."""

    def forward(self, logits: Tensor, targets: Tensor, reduction: Reduction | str = Reduction.AUTO) -> Tensor:
        """The reduced loss, shape ``(1,)``; AUTO means MEAN."""
        return _reduce("MseLoss", self.forward_no_reduction(logits, targets), reduction, Reduction.MEAN)

    def forward_no_reduction(self, logits: Tensor, targets: Tensor) -> Tensor:
        _same_shapes("MseLoss", logits, targets, ("logits", "targets"))
        if _amp.active:
            logits = _amp.full_precision("mse_loss", logits)
            targets = _amp.full_precision("mse_loss", targets)
        diff = logits - targets
        return diff * diff


# -- Huber ----------------------------------------------------------------------------------------
@config
class HuberLossConfig:
    """Builds a `HuberLoss`: quadratic for residuals up to `delta`, linear beyond."""

    delta: float = 1.0

    def init(self, device: Device | None = None) -> HuberLoss:
        if self.delta <= 0:
            raise ValueError(f"HuberLossConfig: delta must be positive, got {self.delta}")
        return HuberLoss(float(self.delta))


class HuberLoss(Module):
    """``0.5 r^2`` where ``|r| <= delta``, else ``delta * (|r| - 0.5 delta)``, ``r = pred - target``."""

    delta: float = 1.0

    def forward(
        self, predictions: Tensor, targets: Tensor, reduction: Reduction | str = Reduction.AUTO
    ) -> Tensor:
        return _reduce(
            "HuberLoss", self.forward_no_reduction(predictions, targets), reduction, Reduction.MEAN
        )

    def forward_no_reduction(self, predictions: Tensor, targets: Tensor) -> Tensor:
        _same_shapes("HuberLoss", predictions, targets, ("predictions", "targets"))
        r = (predictions - targets).abs()
        # With c = min(|r|, delta): c * (|r| - c / 2) is 0.5 r^2 inside, delta (|r| - delta / 2) outside.
        c = r.clamp_max(self.delta)
        return c * (r - c * 0.5)


# -- L1, smooth L1, Lp ----------------------------------------------------------------------------
@config
class L1LossConfig:
    """Builds an `L1Loss` (no options)."""

    def init(self, device: Device | None = None) -> L1Loss:
        return L1Loss()


class L1Loss(Module):
    """Mean absolute error ``|predictions - targets|``.

    Example:
        >>> loss = nn.L1LossConfig().init()  # doctest: +SKIP
        >>> loss(pred, target, "sum").shape  # doctest: +SKIP
        (1,)
    """

    def forward(
        self, predictions: Tensor, targets: Tensor, reduction: Reduction | str = Reduction.AUTO
    ) -> Tensor:
        """The reduced loss; AUTO is MEAN."""
        return _reduce("L1Loss", self.forward_no_reduction(predictions, targets), reduction, Reduction.MEAN)

    def forward_no_reduction(self, predictions: Tensor, targets: Tensor) -> Tensor:
        _same_shapes("L1Loss", predictions, targets, ("predictions", "targets"))
        return (predictions - targets).abs()


@config
class SmoothL1LossConfig:
    """Builds a `SmoothL1Loss`: quadratic below `beta`, linear above (``beta = 0`` is L1)."""

    beta: float = 1.0

    def init(self, device: Device | None = None) -> SmoothL1Loss:
        if self.beta < 0:
            raise ValueError(f"SmoothL1LossConfig: beta must be >= 0, got {self.beta}")
        return SmoothL1Loss(float(self.beta))


class SmoothL1Loss(Module):
    """``0.5 r^2 / beta`` where ``|r| < beta``, else ``|r| - 0.5 beta`` (``r = pred - target``),
    PyTorch's ``SmoothL1Loss``: a Huber loss divided by `beta`."""

    beta: float = 1.0

    def forward(
        self, predictions: Tensor, targets: Tensor, reduction: Reduction | str = Reduction.AUTO
    ) -> Tensor:
        """The reduced loss; AUTO is MEAN."""
        loss = self.forward_no_reduction(predictions, targets)
        return _reduce("SmoothL1Loss", loss, reduction, Reduction.MEAN)

    def forward_no_reduction(self, predictions: Tensor, targets: Tensor) -> Tensor:
        _same_shapes("SmoothL1Loss", predictions, targets, ("predictions", "targets"))
        r = (predictions - targets).abs()
        if self.beta == 0:
            return r
        c = r.clamp_max(self.beta)  # as in HuberLoss: c * (|r| - c / 2) is Huber's loss
        return c * (r - c * 0.5) / self.beta


@config
class LpLossConfig:
    """Builds an `LpLoss` with exponent ``p > 0`` (1: L1, 2: MSE)."""

    p: float = 2.0

    def init(self, device: Device | None = None) -> LpLoss:
        if self.p <= 0:
            raise ValueError(f"LpLossConfig: p must be positive, got {self.p}")
        return LpLoss(float(self.p))


class LpLoss(Module):
    """``|predictions - targets|^p`` element-wise; the mean (AUTO) is the p-th power of the
    normalized Lp distance."""

    p: float = 2.0

    def forward(
        self, predictions: Tensor, targets: Tensor, reduction: Reduction | str = Reduction.AUTO
    ) -> Tensor:
        """The reduced loss; AUTO is MEAN."""
        return _reduce("LpLoss", self.forward_no_reduction(predictions, targets), reduction, Reduction.MEAN)

    def forward_no_reduction(self, predictions: Tensor, targets: Tensor) -> Tensor:
        _same_shapes("LpLoss", predictions, targets, ("predictions", "targets"))
        r = (predictions - targets).abs()
        if self.p == 1.0:
            return r
        if self.p == 2.0:
            return r * r
        return r.powf_scalar(self.p)
