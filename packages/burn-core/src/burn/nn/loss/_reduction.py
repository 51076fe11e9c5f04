"""The reduction every loss takes (`Reduction`) and the checks and conversions the losses share."""

from __future__ import annotations

import enum

import numpy as np

from burn.errors import ShapeError
from burn.foundations.dtype import DType
from burn.foundations.kind import Float
from burn.tensor.tensor import Tensor

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
