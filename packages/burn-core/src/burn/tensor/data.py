"""Moved to `burn.foundations.data`; this path keeps working for existing imports."""

from burn.foundations.data import TensorData

__all__ = ["TensorData"]
