"""Losses between distributions: the KL divergence (`KLDivLoss`) and the Gaussian and Poisson
negative log-likelihoods (`GaussianNllLoss`, `PoissonNllLoss`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from burn.errors import ShapeError
from burn.module.base import Module
from burn.module.config import config
from burn.nn.loss._reduction import _TINY, Reduction, _float_like, _reduce, _same_shapes
from burn.tensor.tensor import Tensor

if TYPE_CHECKING:
    from burn.backend.device import Device


# -- KL divergence --------------------------------------------------------------------------------
@config
class KLDivLossConfig:
    """Builds a `KLDivLoss`; with `log_target` the targets are log-probabilities too."""

    log_target: bool = False

    def init(self, device: Device | None = None) -> KLDivLoss:
        return KLDivLoss(self.log_target)


class KLDivLoss(Module):
    """``target * (log(target) - predictions)`` with `predictions` as log-probabilities.

    AUTO reduces with BATCH_MEAN (the mathematical KL divergence per sample); MEAN averages over
    every element, as PyTorch's ``reduction="mean"``.
    """

    log_target: bool = False

    def forward(
        self, predictions: Tensor, targets: Tensor, reduction: Reduction | str = Reduction.AUTO
    ) -> Tensor:
        return _reduce(
            "KLDivLoss", self.forward_no_reduction(predictions, targets), reduction, Reduction.BATCH_MEAN
        )

    def forward_no_reduction(self, predictions: Tensor, targets: Tensor) -> Tensor:
        _same_shapes("KLDivLoss", predictions, targets, ("predictions", "targets"))
        if self.log_target:
            return targets.exp() * (targets - predictions)
        # Zero targets contribute 0 (0 * log 0 := 0): clamping keeps the log finite.
        log_t = targets.clamp(_TINY.get(targets.dtype, 1e-38), 1.0).log()
        return targets * (log_t - predictions)


# -- likelihood losses ----------------------------------------------------------------------------
_LOG_2PI = float(np.log(2.0 * np.pi))


@config
class GaussianNllLossConfig:
    """Builds a `GaussianNllLoss`: `full` adds the constant ``log(2 pi) / 2``; variances are
    clamped to at least `eps` (PyTorch's defaults: False, 1e-6)."""

    full: bool = False
    eps: float = 1e-6

    def init(self, device: Device | None = None) -> GaussianNllLoss:
        if self.eps <= 0:
            raise ValueError(f"GaussianNllLossConfig: eps must be positive, got {self.eps}")
        return GaussianNllLoss(bool(self.full), float(self.eps))


class GaussianNllLoss(Module):
    """``(log(var) + (input - target)^2 / var) / 2`` for predicted means `input` and variances
    `var` (the shape of `input`, or with its last dim 1 for one variance per sample).

    The clamp of `var` to `eps` is not differentiated (the gradient passes as if unclamped), as
    in PyTorch.
    """

    full: bool = False
    eps: float = 1e-6

    def forward(
        self, input: Tensor, target: Tensor, var: Tensor, reduction: Reduction | str = Reduction.AUTO
    ) -> Tensor:
        """The reduced loss; AUTO is MEAN."""
        loss = self.forward_no_reduction(input, target, var)
        return _reduce("GaussianNllLoss", loss, reduction, Reduction.MEAN)

    def forward_no_reduction(self, input: Tensor, target: Tensor, var: Tensor) -> Tensor:
        op = "GaussianNllLoss"
        _same_shapes(op, input, target, ("input", "target"))
        shape, vshape = input.shape, var.shape
        if vshape != shape and shape and vshape == shape[:-1]:
            var = var.reshape((*vshape, 1))  # one variance per sample, as PyTorch accepts it
            vshape = var.shape
        if vshape != shape and (vshape[:-1] != shape[:-1] or vshape[-1:] != (1,)):
            raise ShapeError(f"{op}: var {vshape} must have the shape of input {shape} or its last dim 1")
        # The clamp's value with the identity's gradient: var + (clamped - var), detached.
        var = var + (var.clamp_min(self.eps) - var).detach()
        diff = input - target
        loss = (var.log() + diff * diff / var) * 0.5
        return loss + 0.5 * _LOG_2PI if self.full else loss


@config
class PoissonNllLossConfig:
    """Builds a `PoissonNllLoss` (PyTorch's defaults: log inputs, no Stirling term, eps 1e-8)."""

    log_input: bool = True
    full: bool = False
    eps: float = 1e-8

    def init(self, device: Device | None = None) -> PoissonNllLoss:
        return PoissonNllLoss(bool(self.log_input), bool(self.full), float(self.eps))


class PoissonNllLoss(Module):
    """Negative log-likelihood of `target` counts under a Poisson of rate ``exp(input)``
    (`log_input`) or `input`: ``exp(input) - target * input``, or ``input - target * log(input +
    eps)``; `full` adds Stirling's ``t log t - t + log(2 pi t) / 2`` where ``t > 1``."""

    log_input: bool = True
    full: bool = False
    eps: float = 1e-8

    def forward(self, input: Tensor, target: Tensor, reduction: Reduction | str = Reduction.AUTO) -> Tensor:
        """The reduced loss; AUTO is MEAN."""
        return _reduce("PoissonNllLoss", self.forward_no_reduction(input, target), reduction, Reduction.MEAN)

    def forward_no_reduction(self, input: Tensor, target: Tensor) -> Tensor:
        op = "PoissonNllLoss"
        _same_shapes(op, input, target, ("input", "target"))
        t = _float_like(op, target, input, "target")
        if self.log_input:
            loss = input.exp() - t * input
        else:
            loss = input - t * (input + self.eps).log()
        if self.full:
            # Only where t > 1; elsewhere t is replaced by 1 first, so that log stays finite.
            small = t.lower_equal_elem(1.0)
            safe = t.mask_fill(small, 1.0)
            stirling = safe * safe.log() - safe + (safe * (2.0 * np.pi)).log() * 0.5
            loss = loss + stirling.mask_fill(small, 0.0)
        return loss
