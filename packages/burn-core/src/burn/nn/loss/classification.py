"""Classification losses: cross-entropy against class indices (`CrossEntropyLoss`, with class
weights, label smoothing and pad tokens) and binary cross-entropy (`BinaryCrossEntropyLoss`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from burn.errors import KindError, ShapeError
from burn.foundations.kind import Int
from burn.module.base import Module
from burn.module.config import config
from burn.nn._util import HostConstant
from burn.nn.loss._reduction import _TINY, Reduction, _float_like, _reduce, _reduction, _same_shapes
from burn.tensor import activation as A
from burn.tensor import autocast as _amp
from burn.tensor.module.loss import cross_entropy
from burn.tensor.tensor import Tensor

if TYPE_CHECKING:
    from burn.backend.device import Device


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
        if _amp.active:  # every path below (smoothing, weights, pad tokens) in float32
            logits = _amp.full_precision("cross_entropy", logits)
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
