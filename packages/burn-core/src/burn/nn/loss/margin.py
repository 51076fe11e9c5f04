"""Margin losses on embeddings and rankings: `CosineEmbeddingLoss`, `HingeEmbeddingLoss`,
`MarginRankingLoss` and `TripletMarginLoss`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from burn.errors import ShapeError
from burn.module.base import Module
from burn.module.config import config
from burn.nn.loss._reduction import Reduction, _float_like, _reduce, _same_shapes
from burn.tensor.tensor import Tensor

if TYPE_CHECKING:
    from burn.backend.device import Device


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
