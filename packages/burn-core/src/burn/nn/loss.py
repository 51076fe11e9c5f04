"""Loss functions with Burn's configs and reductions.

`MseLoss`, `HuberLoss` and `KLDivLoss` take a `Reduction`; `CrossEntropyLoss` and
`BinaryCrossEntropyLoss` always average, as Burn's. Every loss returns a tensor of shape ``(1,)``
(Burn's full reductions), or the element-wise losses from ``forward_no_reduction``.

Example:
    >>> from burn import nn
    >>> loss = nn.CrossEntropyLossConfig(smoothing=0.1).init(device)  # doctest: +SKIP
    >>> loss(logits, targets).shape  # logits [B, C], targets Int [B]  # doctest: +SKIP
    (1,)
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING

import numpy as np

from burn.errors import KindError, ShapeError
from burn.module.base import Module
from burn.module.config import config
from burn.nn._util import HostConstant
from burn.tensor import activation as A
from burn.tensor.dtype import DType
from burn.tensor.kind import Float, Int
from burn.tensor.tensor import Tensor

if TYPE_CHECKING:
    from burn.backend.device import Device

__all__ = [
    "BinaryCrossEntropyLoss",
    "BinaryCrossEntropyLossConfig",
    "CrossEntropyLoss",
    "CrossEntropyLossConfig",
    "HuberLoss",
    "HuberLossConfig",
    "KLDivLoss",
    "KLDivLossConfig",
    "MseLoss",
    "MseLossConfig",
    "Reduction",
]

# Smallest positive normal value per float dtype: probabilities are clamped to it before a log.
_TINY = {
    DType.F64: float(np.finfo(np.float64).tiny),
    DType.F32: float(np.finfo(np.float32).tiny),
    DType.F16: float(np.finfo(np.float16).tiny),
    DType.BF16: float(np.finfo(np.float32).tiny),
}


class Reduction(enum.Enum):
    """How a loss reduces its element-wise values: ``MEAN``, ``SUM``, ``BATCH_MEAN`` (sum divided
    by the size of dim 0) or ``AUTO`` (the loss's natural choice: mean, batch mean for KL)."""

    MEAN = "mean"
    SUM = "sum"
    BATCH_MEAN = "batch_mean"
    AUTO = "auto"


def _reduce(op: str, loss: Tensor, reduction: Reduction | str, auto: Reduction) -> Tensor:
    r = Reduction(reduction) if not isinstance(reduction, Reduction) else reduction
    if r is Reduction.AUTO:
        r = auto
    if r is Reduction.MEAN:
        return loss.mean()
    if r is Reduction.SUM:
        return loss.sum()
    shape = loss.shape
    return loss.sum() / (shape[0] if shape else 1)


def _same_shapes(op: str, a: Tensor, b: Tensor, names: tuple[str, str]) -> None:
    if a.shape != b.shape:
        raise ShapeError(f"{op}: {names[0]} {a.shape} and {names[1]} {b.shape} must have the same shape")


def _float_like(op: str, t: Tensor, like: Tensor, name: str) -> Tensor:
    """`t` as a Float tensor of `like`'s dtype (Int/Bool targets are converted)."""
    if t._k is not Float:
        t = t.float()
    return t if t.dtype is like.dtype else t.cast(like.dtype)


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


# -- cross-entropy --------------------------------------------------------------------------------
def _weights(name: str, weights: list[float] | None) -> HostConstant | None:
    if weights is None:
        return None
    if not weights or any(w <= 0 for w in weights):
        raise ValueError(f"{name}: weights must be a non-empty list of positive numbers, got {weights}")
    return HostConstant(np.asarray(weights, dtype=np.float64))


def _smoothing(name: str, smoothing: float | None) -> float | None:
    if smoothing is not None and not 0.0 <= smoothing <= 1.0:
        raise ValueError(f"{name}: smoothing must be in [0, 1], got {smoothing}")
    return None if smoothing is None else float(smoothing)


@config
class CrossEntropyLossConfig:
    """Builds a `CrossEntropyLoss`.

    Attributes:
        pad_tokens: target values whose samples are left out (loss and normalizer).
        weights: one positive weight per class; the loss is then ``sum(w_y * l) / sum(w_y)``.
        smoothing: label smoothing ``alpha``: targets become ``(1 - alpha) * onehot + alpha / C``.
        logits: inputs are logits (else probabilities, clamped away from 0 before the log).
    """

    pad_tokens: list[int] | None = None
    weights: list[float] | None = None
    smoothing: float | None = None
    logits: bool = True

    def init(self, device: Device | None = None) -> CrossEntropyLoss:
        name = "CrossEntropyLossConfig"
        return CrossEntropyLoss(
            pad_tokens=tuple(self.pad_tokens) if self.pad_tokens else None,
            weights=_weights(name, self.weights),
            smoothing=_smoothing(name, self.smoothing),
            logits=self.logits,
        )


class CrossEntropyLoss(Module):
    """Cross-entropy of ``[B, C]`` scores against Int class targets ``[B]``, averaged over the
    non-pad samples (weighted by the targets' class weights when given) -> shape ``(1,)``."""

    pad_tokens: tuple[int, ...] | None = None
    weights: HostConstant | None = None
    smoothing: float | None = None
    logits: bool = True

    def forward(self, logits: Tensor, targets: Tensor) -> Tensor:
        op = "CrossEntropyLoss"
        shape = logits.shape
        if len(shape) != 2:
            raise ShapeError(f"{op}: logits must be [batch_size, num_classes], got shape {shape}")
        if targets._k is not Int:
            raise KindError(f"{op}: targets must be an Int tensor of class indices, got {targets.kind.name}")
        batch, classes = shape
        if targets.shape != (batch,):
            raise ShapeError(
                f"{op}: targets must have shape ({batch},) for logits {shape}, got {targets.shape}"
            )

        if self.logits:
            log_p = A.log_softmax(logits, 1)
        else:
            log_p = logits.clamp_min(_TINY.get(logits.dtype, 1e-38) ** 0.5).log()
        index = targets.reshape((batch, 1))
        weights = self.weights.like(log_p) if self.weights is not None else None
        if weights is not None and weights.shape[0] != classes:
            raise ShapeError(f"{op}: {weights.shape[0]} class weights for logits with {classes} classes")

        if self.smoothing is None:
            per = log_p.gather(1, index).reshape((batch,))
        else:
            alpha = self.smoothing
            classes_row = Tensor.arange(classes, device=logits.device).reshape((1, classes))
            onehot = _float_like(op, index == classes_row, log_p, "targets")
            scaled = log_p * (onehot * (1.0 - alpha) + alpha / classes)
            if weights is not None:
                scaled = scaled * weights.reshape((1, classes))
            per = scaled.sum_dim(1).reshape((batch,))

        target_w = weights.gather(0, targets) if weights is not None else None
        if target_w is not None and self.smoothing is None:
            per = per * target_w
        mask = self._pad_mask(targets)
        if target_w is None and mask is None:
            return -per.mean()
        norm = target_w if target_w is not None else per.ones_like()
        if mask is not None:
            per = per.mask_fill(mask, 0.0)
            norm = norm.mask_fill(mask, 0.0)
        return -per.sum() / norm.sum()

    def _pad_mask(self, targets: Tensor) -> Tensor | None:
        pads = self.pad_tokens
        if not pads:
            return None
        mask = targets.equal_elem(pads[0])
        for token in pads[1:]:
            mask = mask | targets.equal_elem(token)
        return mask


@config
class BinaryCrossEntropyLossConfig:
    """Builds a `BinaryCrossEntropyLoss`.

    Attributes:
        weights: for ``[B]`` inputs, one weight per target value (0 and 1); for ``[B, C]``
            (multi-label) inputs, one weight per class.
        smoothing: targets become ``t * (1 - alpha) + alpha / C`` (``C = 2`` for ``[B]`` inputs).
        logits: inputs are logits (stable ``log_sigmoid`` form) rather than probabilities.
    """

    weights: list[float] | None = None
    smoothing: float | None = None
    logits: bool = False

    def init(self, device: Device | None = None) -> BinaryCrossEntropyLoss:
        name = "BinaryCrossEntropyLossConfig"
        return BinaryCrossEntropyLoss(
            weights=_weights(name, self.weights),
            smoothing=_smoothing(name, self.smoothing),
            logits=self.logits,
        )


class BinaryCrossEntropyLoss(Module):
    """Binary cross-entropy of ``[B]`` or ``[B, C]`` inputs against 0/1 targets of the same
    shape (Int, or Float for soft targets), averaged -> shape ``(1,)``."""

    weights: HostConstant | None = None
    smoothing: float | None = None
    logits: bool = False

    def forward(self, logits: Tensor, targets: Tensor) -> Tensor:
        op = "BinaryCrossEntropyLoss"
        _same_shapes(op, logits, targets, ("logits", "targets"))
        shape = logits.shape
        t = _float_like(op, targets, logits, "targets")
        if self.smoothing is not None:
            classes = shape[-1] if len(shape) > 1 else 2
            t = t * (1.0 - self.smoothing) + self.smoothing / classes
        if self.logits:
            loss = (1.0 - t) * logits - A.log_sigmoid(logits)
        else:
            # PyTorch clamps each log at -100 so that p = 0 or 1 gives a finite loss; clamping the
            # probability first keeps log(0) (and its warning) out of it.
            tiny = _TINY.get(logits.dtype, 1e-38)
            log_p = logits.clamp_min(tiny).log().clamp_min(-100.0)
            log_q = (1.0 - logits).clamp_min(tiny).log().clamp_min(-100.0)
            loss = -(t * log_p + (1.0 - t) * log_q)
        if self.weights is not None:
            weights = self.weights.like(logits)
            if len(shape) > 1:
                if weights.shape[0] != shape[-1]:
                    raise ShapeError(f"{op}: {weights.shape[0]} class weights for inputs of shape {shape}")
                loss = loss * weights
            else:
                if targets._k is not Int:
                    raise KindError(f"{op}: per-target weights of [B] inputs need Int targets")
                loss = loss * weights.gather(0, targets)
        return loss.mean()
