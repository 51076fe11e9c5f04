"""The connectionist temporal classification loss (`CtcLoss`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from burn.errors import ShapeError
from burn.foundations.kind import Int
from burn.module.base import Module
from burn.module.config import config
from burn.nn.loss._reduction import Reduction, _reduce, _reduction
from burn.tensor.tensor import Tensor

if TYPE_CHECKING:
    from burn.backend.device import Device


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
