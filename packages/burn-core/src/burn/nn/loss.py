"""Loss functions with Burn's configs and reductions.

Every loss's ``forward`` takes a `reduction` (``"mean"``, ``"sum"``, ``"none"``, or the enum
`Reduction`; the default ``AUTO`` is the loss's natural reduction, as in Burn and PyTorch). A
reduced loss is a tensor of shape ``(1,)`` (Burn's full reductions); ``"none"`` (or
``forward_no_reduction``) gives the per-element (or per-sample) losses. `CrossEntropyLoss` and
`BinaryCrossEntropyLoss` average by default, as Burn's; with class weights (and pad tokens) the
mean is the weighted one, ``sum(w_y * l) / sum(w_y)``, as PyTorch's.

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
from burn.foundations.dtype import DType
from burn.foundations.kind import Float, Int
from burn.module.base import Module
from burn.module.config import config
from burn.nn._util import HostConstant
from burn.tensor import activation as A
from burn.tensor.module.loss import cross_entropy, cross_entropy_with_logits
from burn.tensor.tensor import Tensor

if TYPE_CHECKING:
    from burn.backend.device import Device

__all__ = [
    "BinaryCrossEntropyLoss",
    "BinaryCrossEntropyLossConfig",
    "CosineEmbeddingLoss",
    "CosineEmbeddingLossConfig",
    "CrossEntropyLoss",
    "CrossEntropyLossConfig",
    "CtcLoss",
    "CtcLossConfig",
    "GaussianNllLoss",
    "GaussianNllLossConfig",
    "HingeEmbeddingLoss",
    "HingeEmbeddingLossConfig",
    "HuberLoss",
    "HuberLossConfig",
    "KLDivLoss",
    "KLDivLossConfig",
    "L1Loss",
    "L1LossConfig",
    "LpLoss",
    "LpLossConfig",
    "MarginRankingLoss",
    "MarginRankingLossConfig",
    "MseLoss",
    "MseLossConfig",
    "PoissonNllLoss",
    "PoissonNllLossConfig",
    "Reduction",
    "SmoothL1Loss",
    "SmoothL1LossConfig",
    "TripletMarginLoss",
    "TripletMarginLossConfig",
    "cross_entropy_with_logits",
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
    by the size of dim 0), ``NONE`` (no reduction: the element-wise losses) or ``AUTO`` (the
    loss's natural choice: mean, batch mean for KL). Strings (``"mean"``...) are accepted too."""

    MEAN = "mean"
    SUM = "sum"
    BATCH_MEAN = "batch_mean"
    NONE = "none"
    AUTO = "auto"


def _reduction(op: str, reduction: Reduction | str, auto: Reduction) -> Reduction:
    """`reduction` as a `Reduction`, AUTO resolved to `auto`; a clear error for unknown names."""
    if isinstance(reduction, Reduction):
        r = reduction
    else:
        try:
            r = Reduction(reduction)
        except ValueError:
            names = ", ".join(repr(m.value) for m in Reduction)
            raise ValueError(f"{op}: unknown reduction {reduction!r}; expected one of {names}") from None
    return auto if r is Reduction.AUTO else r


def _reduce(op: str, loss: Tensor, reduction: Reduction | str, auto: Reduction) -> Tensor:
    r = _reduction(op, reduction, auto)
    if r is Reduction.NONE:
        return loss
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
    non-pad samples (weighted by the targets' class weights when given) -> shape ``(1,)``.

    Scores ``[B, C, d1, d2, ...]`` (PyTorch's layout: the classes on dim 1, e.g. ``[B, C, T]``
    for sequences) take targets ``[B, d1, d2, ...]``, every position counting as a sample.
    """

    pad_tokens: tuple[int, ...] | None = None
    weights: HostConstant | None = None
    smoothing: float | None = None
    logits: bool = True

    def forward(self, logits: Tensor, targets: Tensor, reduction: Reduction | str = Reduction.AUTO) -> Tensor:
        """The loss; AUTO is MEAN, ``"none"`` gives the per-sample losses ``[B, d1, ...]``
        (weighted, 0 at pad tokens, as PyTorch's ``reduction="none"``)."""
        op = "CrossEntropyLoss"
        r = _reduction(op, reduction, Reduction.MEAN)
        shape = logits.shape
        if len(shape) < 2:
            raise ShapeError(
                f"{op}: logits must be [batch_size, num_classes] or [batch_size, num_classes, d1, ...], "
                f"got shape {shape}"
            )
        if targets._k is not Int:
            raise KindError(f"{op}: targets must be an Int tensor of class indices, got {targets.kind.name}")
        sample_shape = (shape[0], *shape[2:])
        if targets.shape != sample_shape:
            raise ShapeError(
                f"{op}: targets must have shape {sample_shape} for logits {shape}, got {targets.shape}"
            )
        if len(shape) > 2:
            # Classes to the last dim, then one row per position: the 2-D loss over B * d1 * ... rows.
            rank = len(shape)
            logits = logits.permute((0, *range(2, rank), 1)).reshape((-1, shape[1]))
            targets = targets.reshape((-1,))
        batch, classes = logits.shape

        if self.logits and self.smoothing is None and self.weights is None and not self.pad_tokens:
            # The plain loss: one backend op each way (`burn.tensor.module.cross_entropy`).
            if r is Reduction.NONE:
                return cross_entropy(logits, targets, "none").reshape(sample_shape)
            if r is Reduction.MEAN:
                return cross_entropy(logits, targets, "mean")
            total = cross_entropy(logits, targets, "sum")
            return total if r is Reduction.SUM else total / sample_shape[0]
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
        if r is Reduction.NONE:
            losses = -per if mask is None else -per.mask_fill(mask, 0.0)
            return losses.reshape(sample_shape)
        if r is Reduction.SUM or r is Reduction.BATCH_MEAN:
            total = -(per if mask is None else per.mask_fill(mask, 0.0)).sum()
            return total if r is Reduction.SUM else total / sample_shape[0]
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

    def forward(self, logits: Tensor, targets: Tensor, reduction: Reduction | str = Reduction.AUTO) -> Tensor:
        """The loss; AUTO is MEAN, ``"none"`` gives the element-wise losses."""
        op = "BinaryCrossEntropyLoss"
        r = _reduction(op, reduction, Reduction.MEAN)
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
        return _reduce(op, loss, r, Reduction.MEAN)


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


# -- embedding and ranking losses -----------------------------------------------------------------
def _signs(op: str, target: Tensor, like: Tensor, size: int) -> Tensor:
    """`target` (``[B]`` of 1 / -1, any kind) as a Float tensor like `like`."""
    if target.shape != (size,):
        raise ShapeError(f"{op}: target must have shape ({size},) of 1 / -1 values, got {target.shape}")
    return _float_like(op, target, like, "target")


def _as_batch(op: str, x: Tensor, name: str) -> Tensor:
    shape = x.shape
    if len(shape) == 1:
        return x.reshape((1, shape[0]))
    if len(shape) != 2:
        raise ShapeError(f"{op}: {name} must be [batch, features] or [features], got shape {shape}")
    return x


@config
class CosineEmbeddingLossConfig:
    """Builds a `CosineEmbeddingLoss` (`margin` in [-1, 1]; PyTorch's default 0)."""

    margin: float = 0.0

    def init(self, device: Device | None = None) -> CosineEmbeddingLoss:
        if not -1.0 <= self.margin <= 1.0:
            raise ValueError(f"CosineEmbeddingLossConfig: margin must be in [-1, 1], got {self.margin}")
        return CosineEmbeddingLoss(float(self.margin))


class CosineEmbeddingLoss(Module):
    """``1 - cos(x1, x2)`` for target 1, ``max(0, cos(x1, x2) - margin)`` for target -1.

    Inputs ``[B, D]`` (or ``[D]``), target ``[B]`` of 1 / -1; the cosine is
    ``x1 . x2 / sqrt((|x1|^2 + 1e-12) (|x2|^2 + 1e-12))``, as PyTorch computes it.
    """

    margin: float = 0.0

    def forward(
        self, x1: Tensor, x2: Tensor, target: Tensor, reduction: Reduction | str = Reduction.AUTO
    ) -> Tensor:
        """The reduced loss; AUTO is MEAN; ``"none"`` gives ``[B]``."""
        loss = self.forward_no_reduction(x1, x2, target)
        return _reduce("CosineEmbeddingLoss", loss, reduction, Reduction.MEAN)

    def forward_no_reduction(self, x1: Tensor, x2: Tensor, target: Tensor) -> Tensor:
        op = "CosineEmbeddingLoss"
        _same_shapes(op, x1, x2, ("x1", "x2"))
        a, b = _as_batch(op, x1, "x1"), _as_batch(op, x2, "x2")
        batch = a.shape[0]
        y = _signs(op, target.reshape((batch,)) if len(x1.shape) == 1 else target, a, batch)
        eps = 1e-12
        dot = (a * b).sum_dim(1).reshape((batch,))
        norms = (((a * a).sum_dim(1) + eps) * ((b * b).sum_dim(1) + eps)).sqrt().reshape((batch,))
        cos = dot / norms
        positive = (1.0 - cos).mask_fill(y.not_equal_elem(1.0), 0.0)
        negative = (cos - self.margin).clamp_min(0.0).mask_fill(y.not_equal_elem(-1.0), 0.0)
        return positive + negative


@config
class HingeEmbeddingLossConfig:
    """Builds a `HingeEmbeddingLoss` (PyTorch's default margin 1)."""

    margin: float = 1.0

    def init(self, device: Device | None = None) -> HingeEmbeddingLoss:
        return HingeEmbeddingLoss(float(self.margin))


class HingeEmbeddingLoss(Module):
    """``x`` where the target is 1, ``max(0, margin - x)`` where it is -1 (inputs and targets of
    the same shape)."""

    margin: float = 1.0

    def forward(self, x: Tensor, target: Tensor, reduction: Reduction | str = Reduction.AUTO) -> Tensor:
        """The reduced loss; AUTO is MEAN."""
        return _reduce("HingeEmbeddingLoss", self.forward_no_reduction(x, target), reduction, Reduction.MEAN)

    def forward_no_reduction(self, x: Tensor, target: Tensor) -> Tensor:
        op = "HingeEmbeddingLoss"
        _same_shapes(op, x, target, ("x", "target"))
        y = _float_like(op, target, x, "target")
        hinge = (self.margin - x).clamp_min(0.0).mask_fill(y.equal_elem(1.0), 0.0)
        return hinge + x.mask_fill(y.equal_elem(-1.0), 0.0)


@config
class MarginRankingLossConfig:
    """Builds a `MarginRankingLoss` (PyTorch's default margin 0)."""

    margin: float = 0.0

    def init(self, device: Device | None = None) -> MarginRankingLoss:
        return MarginRankingLoss(float(self.margin))


class MarginRankingLoss(Module):
    """``max(0, -target * (x1 - x2) + margin)``: target 1 asks for ``x1 > x2``, -1 for the reverse."""

    margin: float = 0.0

    def forward(
        self, x1: Tensor, x2: Tensor, target: Tensor, reduction: Reduction | str = Reduction.AUTO
    ) -> Tensor:
        """The reduced loss; AUTO is MEAN."""
        loss = self.forward_no_reduction(x1, x2, target)
        return _reduce("MarginRankingLoss", loss, reduction, Reduction.MEAN)

    def forward_no_reduction(self, x1: Tensor, x2: Tensor, target: Tensor) -> Tensor:
        op = "MarginRankingLoss"
        _same_shapes(op, x1, x2, ("x1", "x2"))
        _same_shapes(op, x1, target, ("x1", "target"))
        y = _float_like(op, target, x1, "target")
        return (-(y * (x1 - x2)) + self.margin).clamp_min(0.0)


@config
class TripletMarginLossConfig:
    """Builds a `TripletMarginLoss`.

    Attributes:
        margin: the required gap between the negative and positive distances.
        p: the norm of the distances.
        eps: added to each difference before the norm (PyTorch's ``pairwise_distance``).
        swap: use ``min(d(a, n), d(p, n))`` as the negative distance (Balntas et al.).
    """

    margin: float = 1.0
    p: float = 2.0
    eps: float = 1e-6
    swap: bool = False

    def init(self, device: Device | None = None) -> TripletMarginLoss:
        if self.p <= 0:
            raise ValueError(f"TripletMarginLossConfig: p must be positive, got {self.p}")
        return TripletMarginLoss(float(self.margin), float(self.p), float(self.eps), bool(self.swap))


class TripletMarginLoss(Module):
    """``max(0, d(a, p) - d(a, n) + margin)`` with ``d(x, y) = ||x - y + eps||_p`` over the last
    dim of ``[B, D]`` (or ``[D]``) anchors, positives and negatives."""

    margin: float = 1.0
    p: float = 2.0
    eps: float = 1e-6
    swap: bool = False

    def forward(
        self, anchor: Tensor, positive: Tensor, negative: Tensor, reduction: Reduction | str = Reduction.AUTO
    ) -> Tensor:
        """The reduced loss; AUTO is MEAN; ``"none"`` gives ``[B]`` (``[1]`` for ``[D]`` inputs)."""
        loss = self.forward_no_reduction(anchor, positive, negative)
        return _reduce("TripletMarginLoss", loss, reduction, Reduction.MEAN)

    def forward_no_reduction(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        op = "TripletMarginLoss"
        _same_shapes(op, anchor, positive, ("anchor", "positive"))
        _same_shapes(op, anchor, negative, ("anchor", "negative"))
        a, pos, neg = (_as_batch(op, t, n) for t, n in ((anchor, "anchor"), (positive, "positive"),
                                                         (negative, "negative")))
        d_pos = self._distance(a, pos)
        d_neg = self._distance(a, neg)
        if self.swap:
            d_swap = self._distance(pos, neg)
            d_neg = d_neg.mask_where(d_swap < d_neg, d_swap)
        return (d_pos - d_neg + self.margin).clamp_min(0.0)

    def _distance(self, x: Tensor, y: Tensor) -> Tensor:
        diff = x - y + self.eps
        batch = diff.shape[0]
        if self.p == 2.0:
            return (diff * diff).sum_dim(1).sqrt().reshape((batch,))
        if self.p == 1.0:
            return diff.abs().sum_dim(1).reshape((batch,))
        return diff.abs().powf_scalar(self.p).sum_dim(1).powf_scalar(1.0 / self.p).reshape((batch,))


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


# -- CTC ------------------------------------------------------------------------------------------
_CTC_NEG = -1e30  # "log 0" that stays finite: exp(-1e30 - m) is 0, and gradients stay finite


@config
class CtcLossConfig:
    """Builds a `CtcLoss` (connectionist temporal classification, Graves et al. 2006).

    Attributes:
        blank: the class index of the blank label.
        zero_infinity: impossible alignments (targets too long for their inputs) give a loss of
            0 and no gradient, instead of infinity.
    """

    blank: int = 0
    zero_infinity: bool = False

    def init(self, device: Device | None = None) -> CtcLoss:
        if self.blank < 0:
            raise ValueError(f"CtcLossConfig: blank must be >= 0, got {self.blank}")
        return CtcLoss(int(self.blank), bool(self.zero_infinity))


class CtcLoss(Module):
    """The CTC loss of ``log_probs [T, B, C]`` (log-softmax outputs; PyTorch's layout) against
    padded Int ``targets [B, S]``, with per-sample ``input_lengths`` and ``target_lengths``
    (Int tensors ``[B]`` or sequences of ints).

    The forward runs the alpha recursion in log space over time, batched; its gradient is that
    of the composition. ``"mean"`` (AUTO) divides each sample's loss by its target length (at
    least 1) and averages over the batch, as ``torch.nn.CTCLoss``; ``"none"`` gives ``[B]``.

    Example:
        >>> ctc = nn.CtcLossConfig().init()  # doctest: +SKIP
        >>> ctc(log_probs, targets, [50, 48], [10, 7]).shape  # doctest: +SKIP
        (1,)
    """

    blank: int = 0
    zero_infinity: bool = False

    def forward(
        self,
        log_probs: Tensor,
        targets: Tensor,
        input_lengths: Tensor | list[int] | tuple[int, ...],
        target_lengths: Tensor | list[int] | tuple[int, ...],
        reduction: Reduction | str = Reduction.AUTO,
    ) -> Tensor:
        """The reduced loss, shape ``(1,)``; ``"none"`` gives ``[B]``."""
        op = "CtcLoss"
        r = _reduction(op, reduction, Reduction.MEAN)
        losses = self.forward_no_reduction(log_probs, targets, input_lengths, target_lengths)
        if r is Reduction.MEAN:
            lengths = np.maximum(self._lengths(op, target_lengths, losses.shape[0], "target_lengths"), 1)
            divisor = Tensor.from_data(lengths.astype(np.float64), device=losses.device, dtype=losses.dtype)
            return (losses / divisor).mean()
        return _reduce(op, losses, r, Reduction.MEAN)

    def forward_no_reduction(
        self,
        log_probs: Tensor,
        targets: Tensor,
        input_lengths: Tensor | list[int] | tuple[int, ...],
        target_lengths: Tensor | list[int] | tuple[int, ...],
    ) -> Tensor:
        """The loss of each sample, ``[B]``."""
        op = "CtcLoss"
        shape = log_probs.shape
        if len(shape) != 3:
            raise ShapeError(f"{op}: log_probs must be [time, batch, classes], got shape {shape}")
        steps, batch, classes = shape
        if not 0 <= self.blank < classes:
            raise ValueError(f"{op}: blank {self.blank} is not a class of log_probs {shape}")
        if targets._k is not Int or len(targets.shape) != 2 or targets.shape[0] != batch:
            raise ShapeError(
                f"{op}: targets must be an Int tensor [batch={batch}, max_target_length], got "
                f"{targets.kind.name} {targets.shape}"
            )
        in_len = self._lengths(op, input_lengths, batch, "input_lengths")
        tgt_len = self._lengths(op, target_lengths, batch, "target_lengths")
        if (in_len > steps).any() or (in_len < 0).any():
            raise ValueError(f"{op}: input_lengths {in_len.tolist()} must be in [0, {steps}]")
        if (tgt_len > targets.shape[1]).any() or (tgt_len < 0).any():
            raise ValueError(f"{op}: target_lengths {tgt_len.tolist()} must be in [0, {targets.shape[1]}]")

        # Host tables from the (small, Int) targets: the extended label sequence per sample,
        # blank-interleaved, and where a transition may skip a blank (s - 2 -> s).
        labels = targets.to_numpy().astype(np.int64)
        width = 2 * int(tgt_len.max(initial=0)) + 1
        extended = np.full((batch, width), self.blank, dtype=np.int64)
        for b in range(batch):
            extended[b, 1 : 2 * tgt_len[b] : 2] = labels[b, : tgt_len[b]]
        skip = np.zeros((batch, width), dtype=bool)
        skip[:, 2:] = (extended[:, 2:] != self.blank) & (extended[:, 2:] != extended[:, :-2])
        device, dtype = log_probs.device, log_probs.dtype

        def host(array: np.ndarray, **kw: object) -> Tensor:
            return Tensor.from_data(array, device=device, **kw)  # type: ignore[arg-type]

        index = host(extended, kind=Int).reshape((1, batch, width)).expand((steps, batch, width))
        emit = log_probs.gather(2, index)  # [T, B, L]: log-prob of each extended label per step
        no_skip = host(~skip)
        start = np.full((batch, width), _CTC_NEG)
        start[:, 0] = 0.0
        if width > 1:
            start[:, 1] = np.where(tgt_len > 0, 0.0, _CTC_NEG)
        alpha = host(start, dtype=dtype) + emit.slice([(0, 1)]).reshape((batch, width))
        neg1 = host(np.full((batch, 1), _CTC_NEG), dtype=dtype)
        neg2 = host(np.full((batch, 2), _CTC_NEG), dtype=dtype)
        for t in range(1, int(in_len.max(initial=0))):
            prev1 = Tensor.cat([neg1, alpha.slice([None, (0, width - 1)])], 1) if width > 1 else neg1
            if width > 2:
                prev2 = Tensor.cat([neg2, alpha.slice([None, (0, width - 2)])], 1)
                prev2 = prev2.mask_fill(no_skip, _CTC_NEG)
            else:
                prev2 = alpha * 0.0 + _CTC_NEG
            step = _logsumexp3(alpha, prev1, prev2) + emit.slice([(t, t + 1)]).reshape((batch, width))
            active = in_len > t
            if active.all():
                alpha = step
            else:  # finished samples keep their alphas
                alpha = alpha.mask_where(host(np.broadcast_to(active[:, None], (batch, width)).copy()), step)

        # log p(target | input) = logsumexp of the last label and the last blank.
        last = host(np.stack([2 * tgt_len, np.maximum(2 * tgt_len - 1, 0)], 1), kind=Int)
        ends = alpha.gather(1, last)  # [B, 2]
        ends = ends.mask_fill(host(np.stack([np.zeros(batch, bool), tgt_len == 0], 1)), _CTC_NEG)
        m = ends.max_dim(1).detach()
        log_likelihood = ((ends - m).exp().sum_dim(1).log() + m).reshape((batch,))
        loss = -log_likelihood
        impossible = loss > -_CTC_NEG * 1e-3
        if impossible.any().item():
            loss = loss.mask_fill(impossible, 0.0 if self.zero_infinity else float("inf"))
        # Samples with no input steps at all: only an empty target is possible (probability 1).
        empty = in_len == 0
        if empty.any():
            value = np.where(tgt_len == 0, 0.0, 0.0 if self.zero_infinity else np.inf)
            loss = loss.mask_where(host(empty), host(value, dtype=dtype))
        return loss

    @staticmethod
    def _lengths(op: str, lengths: Tensor | list[int] | tuple[int, ...], batch: int, name: str) -> np.ndarray:
        array = lengths.to_numpy() if isinstance(lengths, Tensor) else np.asarray(lengths)
        if array.shape != (batch,) or not np.issubdtype(array.dtype, np.integer):
            raise ShapeError(f"{op}: {name} must be {batch} integers, got {array.dtype} {array.shape}")
        return array.astype(np.int64)


def _logsumexp3(a: Tensor, b: Tensor, c: Tensor) -> Tensor:
    """Element-wise ``log(exp(a) + exp(b) + exp(c))``, shifted by the (detached) maximum."""
    m = a.mask_where(b > a, b)
    m = m.mask_where(c > m, c).detach()
    return ((a - m).exp() + (b - m).exp() + (c - m).exp()).log() + m
