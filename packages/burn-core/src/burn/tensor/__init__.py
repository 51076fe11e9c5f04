"""Tensor types: `Tensor`, `TensorData`, `DType`, kinds and distributions; functional ops in
`burn.tensor.module` (convolution, pooling...) and `burn.tensor.activation` (relu, softmax...)."""

from burn.tensor.data import TensorData
from burn.tensor.distribution import Bernoulli, Distribution, Normal, Uniform
from burn.tensor.dtype import DType
from burn.tensor.kind import Bool, Float, Int, Kind
from burn.tensor.tensor import Tensor

__all__ = [
    "Bernoulli",
    "Bool",
    "DType",
    "Distribution",
    "Float",
    "Int",
    "Kind",
    "Normal",
    "Tensor",
    "TensorData",
    "Uniform",
]
