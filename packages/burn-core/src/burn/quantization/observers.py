"""Observers: the value range a tensor takes over calibration batches, and the int8 scale and
zero point that range gives (static quantization, `burn.quantization.calibrate`).

Three estimates of the range, each per tensor (``axis=None``) or per channel (one range per
index of `axis`):

- `MinMaxObserver`: the smallest and largest value seen (no value saturates on the batches);
- `MovingAverageObserver`: each batch's min and max averaged with weight `momentum` (the first
  batch sets them), as PyTorch's ``MovingAverageMinMaxObserver``: one outlying batch moves the
  range by `momentum` of its excess only;
- `PercentileObserver`: the `percentile`-th and ``(100 - percentile)``-th percentiles of each
  batch, averaged over batches: the rare extreme values saturate, which keeps the step small for
  the many (heavy-tailed activations).

`Observer.qparams` turns the range into the activation grid the static int8 ops use,
``[-127, 127]`` (`burn.backend.ops.quantization.ACTIVATION_QMAX`), symmetric
(``scale = max(|lo|, |hi|) / 127``, zero point 0) or affine (``scale = (hi - lo) / 254``, the zero
point placing ``lo`` at -127; the range is widened to hold 0, so zero padding is exact).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from burn.backend.ops.quantization import ACTIVATION_QMAX
from burn.tensor.tensor import Tensor

__all__ = ["MinMaxObserver", "MovingAverageObserver", "Observer", "PercentileObserver", "observer"]


class Observer:
    """The range of the tensors given to `update`, per tensor or per channel of `axis`.

    Attributes:
        axis: the channel dim (one range per index), or None for one range.
        batches: how many tensors were observed.
    """

    def __init__(self, axis: int | None = None) -> None:
        self.axis = axis
        self.batches = 0
        self._lo: np.ndarray | None = None
        self._hi: np.ndarray | None = None

    def _batch_range(self, x: Tensor) -> tuple[np.ndarray, np.ndarray]:
        """This batch's ``(lo, hi)`` as float64 arrays: ``[1]`` or ``[channels]``."""
        dims = self._reduced(x)
        lo = x.min_dims(dims) if dims else x
        hi = x.max_dims(dims) if dims else x
        return (
            np.asarray(lo.to_numpy(), np.float64).reshape(-1),
            np.asarray(hi.to_numpy(), np.float64).reshape(-1),
        )

    def _reduced(self, x: Tensor) -> list[int]:
        rank = len(x.shape)
        if self.axis is None:
            return list(range(rank))
        if not -rank <= self.axis < rank:
            raise ValueError(f"observer: channel axis {self.axis} is out of range for shape {list(x.shape)}")
        return [d for d in range(rank) if d != self.axis % rank]

    def _merge(self, lo: np.ndarray, hi: np.ndarray) -> None:
        assert self._lo is not None and self._hi is not None
        self._lo, self._hi = np.minimum(self._lo, lo), np.maximum(self._hi, hi)

    def update(self, x: Tensor) -> None:
        """Observe one Float tensor (detached: observing records no gradient)."""
        if x.kind.name != "Float":
            raise TypeError(f"observer: expected a Float tensor, got kind {x.kind.name}")
        if not bool(x.is_finite().all().item()):
            raise ValueError(f"observer: a tensor of shape {list(x.shape)} has NaN or infinite values")
        lo, hi = self._batch_range(x.detach())
        if self._lo is not None and self._lo.shape != lo.shape:
            raise ValueError(
                f"observer: {lo.shape[0]} channels on axis {self.axis}, "
                f"earlier batches had {self._lo.shape[0]}"
            )
        if self._lo is None:
            self._lo, self._hi = lo, hi
        else:
            self._merge(lo, hi)
        self.batches += 1

    def range(self) -> tuple[np.ndarray, np.ndarray]:
        """``(lo, hi)``: float64 arrays, ``[1]`` per tensor or ``[channels]``.

        Raises:
            ValueError: nothing was observed.
        """
        if self._lo is None or self._hi is None:
            raise ValueError(f"{type(self).__name__}: no batch was observed, so there is no range")
        return self._lo.copy(), self._hi.copy()

    def qparams(self, symmetric: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """The int8 activation ``(scale, zero_point)`` of the observed range (float32 and int32
        arrays shaped as `range`'s), on the ``[-127, 127]`` grid of the static int8 ops.

        Example:
            >>> import burn
            >>> obs = MinMaxObserver()
            >>> obs.update(burn.Tensor.from_data([0.0, 2.54], backend=burn.backend("ndarray")))
            >>> scale, zp = obs.qparams()
            >>> round(float(scale[0]), 6), int(zp[0])
            (0.01, -127)
        """
        lo, hi = self.range()
        return activation_qparams(lo, hi, symmetric)


def activation_qparams(lo: np.ndarray, hi: np.ndarray, symmetric: bool) -> tuple[np.ndarray, np.ndarray]:
    """``(scale, zero_point)`` placing ``[lo, hi]`` (widened to hold 0) on ``[-127, 127]``; a
    range of only zeros gets scale 1 (every value then quantizes to the zero point)."""
    qmax = np.float32(ACTIVATION_QMAX)
    lo = np.minimum(np.asarray(lo, np.float32), np.float32(0))
    hi = np.maximum(np.asarray(hi, np.float32), np.float32(0))
    if symmetric:
        scale = np.maximum(-lo, hi) / qmax
    else:
        scale = (hi - lo) / (2 * qmax)
    scale = np.where(scale == 0, np.float32(1), scale).astype(np.float32)
    if symmetric:
        zero_point = np.zeros(scale.shape, np.int32)
    else:
        zero_point = np.clip(-qmax - np.rint(lo / scale), -qmax, qmax).astype(np.int32)
    return scale, zero_point


class MinMaxObserver(Observer):
    """The smallest and largest value observed (per tensor, or per channel of `axis`).

    Example:
        >>> import burn
        >>> B = burn.backend("ndarray")
        >>> obs = MinMaxObserver(axis=1)
        >>> obs.update(burn.Tensor.from_data([[1.0, -2.0], [3.0, 0.5]], backend=B))
        >>> [a.tolist() for a in obs.range()]
        [[1.0, -2.0], [3.0, 0.5]]
    """


class MovingAverageObserver(Observer):
    """Each batch's min and max folded into an exponential moving average:
    ``range = (1 - momentum) * range + momentum * batch_range`` (the first batch sets it).

    Args:
        momentum: the weight of each new batch, in (0, 1].
        axis: the channel dim, or None for one range.
    """

    def __init__(self, momentum: float = 0.01, axis: int | None = None) -> None:
        if not 0.0 < momentum <= 1.0:
            raise ValueError(f"MovingAverageObserver: momentum must be in (0, 1], got {momentum}")
        super().__init__(axis)
        self.momentum = momentum

    def _merge(self, lo: np.ndarray, hi: np.ndarray) -> None:
        assert self._lo is not None and self._hi is not None
        m = self.momentum
        self._lo = (1 - m) * self._lo + m * lo
        self._hi = (1 - m) * self._hi + m * hi


class PercentileObserver(Observer):
    """The ``(100 - percentile)``-th and `percentile`-th percentiles of each batch (per tensor or
    per channel), averaged over the batches: values beyond them saturate.

    Args:
        percentile: in (50, 100]; 100 is each batch's min and max.
        axis: the channel dim, or None for one range.
    """

    def __init__(self, percentile: float = 99.99, axis: int | None = None) -> None:
        if not 50.0 < percentile <= 100.0:
            raise ValueError(f"PercentileObserver: percentile must be in (50, 100], got {percentile}")
        super().__init__(axis)
        self.percentile = percentile

    def _batch_range(self, x: Tensor) -> tuple[np.ndarray, np.ndarray]:
        # Percentiles need the values in order: read on the host (calibration runs once, offline).
        values = np.asarray(x.to_numpy(), np.float64)
        if self.axis is None:
            rows = values.reshape(1, -1)
        else:
            self._reduced(x)  # checks the axis
            rows = np.moveaxis(values, self.axis, 0).reshape(values.shape[self.axis], -1)
        lo = np.percentile(rows, 100.0 - self.percentile, axis=1)
        hi = np.percentile(rows, self.percentile, axis=1)
        return lo, hi

    def _merge(self, lo: np.ndarray, hi: np.ndarray) -> None:
        # The running mean of the per-batch percentiles: batch b moves it by 1 / b of its offset.
        assert self._lo is not None and self._hi is not None
        b = self.batches + 1
        self._lo = self._lo + (lo - self._lo) / b
        self._hi = self._hi + (hi - self._hi) / b


_NAMES: dict[str, type[Observer]] = {
    "minmax": MinMaxObserver,
    "moving-average": MovingAverageObserver,
    "percentile": PercentileObserver,
}


def observer(kind: str | Observer | type[Observer], **options: Any) -> Observer:
    """A fresh observer: one of the names ``"minmax"``, ``"moving-average"``, ``"percentile"``
    (with `options` for its constructor), an `Observer` subclass, or a copy of an unused
    `Observer` to take its settings from."""
    if isinstance(kind, Observer):
        fresh = type(kind).__new__(type(kind))
        fresh.__dict__.update(kind.__dict__)
        fresh.batches, fresh._lo, fresh._hi = 0, None, None
        return fresh
    if isinstance(kind, type) and issubclass(kind, Observer):
        return kind(**options)
    if not isinstance(kind, str) or kind not in _NAMES:
        raise ValueError(f"unknown observer {kind!r}: expected an Observer or one of {', '.join(_NAMES)}")
    return _NAMES[kind](**options)
