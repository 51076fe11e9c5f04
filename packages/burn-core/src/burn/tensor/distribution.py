"""Moved to `burn.foundations.distribution`; this path keeps working for existing imports."""

from burn.foundations.distribution import Bernoulli, Distribution, Normal, Uniform, default

__all__ = ["Bernoulli", "Distribution", "Normal", "Uniform", "default"]
