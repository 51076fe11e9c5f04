"""Quantization: tensors stored as int8 or packed 4-bit integers with float32 scales, quantized
Linear, Embedding and convolution layers, and fake quantization for quantization-aware training.

`quantize` takes a module (its Linear, Embedding and convolution weights are quantized: post-training
quantization) or a Float tensor (a `QuantizedTensor`). Schemes are `QuantScheme` values or the
names ``"int8"`` (int8 weights per output channel, activations quantized per row at run time and
multiplied in integers), ``"int8-weight"`` (the same weights, dequantized on the fly) and
``"int4-weight"`` (int4 per block of 32, packed two to a byte, dequantized on the fly).
Static quantization (``"int8-static"``) goes through `calibrate`: observers (`MinMaxObserver`,
`MovingAverageObserver`, `PercentileObserver`) record each Linear's and Conv2d's input range on
sample batches, and the layers become `StaticQuantizedLinear` / `StaticQuantizedConv2d`. The
backend ops (quantize, dequantize, the integer Linear product) are the contract's quantization
family, `burn.backend.ops.quantization`: written once from the float and int ops, so every
backend runs quantized models, and overridden by backends with integer kernels.

Example:
    >>> import burn
    >>> from burn import nn
    >>> from burn.quantization import quantize
    >>> B = burn.backend("ndarray")
    >>> model = nn.LinearConfig(64, 8).init(B.default_device())
    >>> qmodel = quantize(model, "int8")
    >>> x = burn.Tensor.ones((2, 64), backend=B)
    >>> bool((qmodel(x) - model(x)).abs().max().item() < 0.05)
    True
"""

from __future__ import annotations

from typing import TypeVar, overload

from burn.module.base import Module
from burn.quantization.calibration import calibrate
from burn.quantization.fake import fake_quantize
from burn.quantization.modules import QuantizedConv, QuantizedEmbedding, QuantizedLinear, quantize_module
from burn.quantization.observers import MinMaxObserver, MovingAverageObserver, Observer, PercentileObserver
from burn.quantization.scheme import QuantScheme
from burn.quantization.static import StaticQuantizedConv2d, StaticQuantizedLinear
from burn.quantization.tensor import QuantizedTensor, dequantize, pack, quantize_tensor, unpack
from burn.tensor.tensor import Tensor

__all__ = [
    "MinMaxObserver",
    "MovingAverageObserver",
    "Observer",
    "PercentileObserver",
    "QuantScheme",
    "QuantizedConv",
    "QuantizedEmbedding",
    "QuantizedLinear",
    "QuantizedTensor",
    "StaticQuantizedConv2d",
    "StaticQuantizedLinear",
    "calibrate",
    "dequantize",
    "fake_quantize",
    "pack",
    "quantize",
    "quantize_module",
    "quantize_tensor",
    "unpack",
]

M = TypeVar("M", bound=Module)


@overload
def quantize(target: M, scheme: QuantScheme | str) -> M: ...
@overload
def quantize(target: Tensor, scheme: QuantScheme | str) -> QuantizedTensor: ...


def quantize(target: Module | Tensor, scheme: QuantScheme | str) -> Module | QuantizedTensor:
    """Quantize a module (`quantize_module`: a copy with quantized Linear and Embedding layers)
    or a Float tensor (`quantize_tensor`: a `QuantizedTensor`) with `scheme`."""
    if isinstance(target, Module):
        return quantize_module(target, scheme)
    if isinstance(target, Tensor):
        return quantize_tensor(target, scheme)
    raise TypeError(f"quantize: expected a Module or a Float Tensor, got {type(target).__name__}")
