"""Tensor types: `Tensor`, `TensorData`, `DType`, kinds and distributions."""

from burn.tensor.data import TensorData
from burn.tensor.distribution import Bernoulli, Distribution, Normal, Uniform
from burn.tensor.dtype import DType
from burn.tensor.kind import Bool, Float, Int, Kind

__all__ = ["Bernoulli", "Bool", "DType", "Distribution", "Float", "Int", "Kind", "Normal", "TensorData", "Uniform"]
