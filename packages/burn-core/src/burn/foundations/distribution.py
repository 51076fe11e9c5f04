"""Distributions for `Tensor.random`."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Distribution:
    """Base class of the distributions accepted by random ops."""


@dataclass(frozen=True)
class Uniform(Distribution):
    """Uniform on ``[low, high)``. `Distribution.default()` is ``Uniform(0, 1)``."""

    low: float = 0.0
    high: float = 1.0


@dataclass(frozen=True)
class Normal(Distribution):
    """Gaussian with the given mean and standard deviation."""

    mean: float = 0.0
    std: float = 1.0


@dataclass(frozen=True)
class Bernoulli(Distribution):
    """1 with probability `prob`, else 0."""

    prob: float = 0.5


def default() -> Distribution:
    """Burn's default distribution: uniform on [0, 1)."""
    return Uniform(0.0, 1.0)


Distribution.default = staticmethod(default)  # type: ignore[attr-defined]
