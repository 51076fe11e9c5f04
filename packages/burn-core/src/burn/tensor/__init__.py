"""Tensor types: `Tensor`, `TensorData`, `DType`, kinds and distributions; functional ops in
`burn.tensor.module` (convolution, pooling...) and `burn.tensor.activation` (relu, softmax...)."""

from burn.foundations.data import TensorData
from burn.foundations.distribution import Bernoulli, Distribution, Normal, Uniform
from burn.foundations.dtype import DType
from burn.foundations.kind import Bool, Float, Int, Kind
from burn.tensor.pad_mode import PadMode
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
    "PadMode",
    "Tensor",
    "TensorData",
    "Uniform",
]
