"""Quantized layers and `quantize_module`, which swaps a model's Linear, Embedding and
convolution layers for them (post-training quantization of the weights).

A quantized layer keeps its stored integers, scales and zero points as params that need no
gradient (Int params for the integers), so moving, saving and loading a quantized model go through
the ordinary module and record machinery, and its records hold the int8 / packed 4-bit storage.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar

from burn.module.base import Module
from burn.module.param import Param
from burn.nn.conv import _ConvLayer
from burn.nn.embedding import Embedding
from burn.nn.linear import Linear
from burn.quantization.scheme import QuantScheme
from burn.quantization.tensor import QuantizedTensor, quantize_tensor
from burn.tensor import module as F
from burn.tensor.tensor import Tensor

M = TypeVar("M", bound=Module)


def _params(q: QuantizedTensor) -> tuple[Param, Param, Param | None]:
    zp = None if q.zero_points is None else Param.from_tensor(q.zero_points, require_grad=False)
    return (
        Param.from_tensor(q.values, require_grad=False),
        Param.from_tensor(q.scales, require_grad=False),
        zp,
    )


def _tensor(
    values: Param, scales: Param, zero_points: Param | None, scheme: QuantScheme, shape: tuple[int, ...]
) -> QuantizedTensor:
    zp = None if zero_points is None else zero_points.val()
    return QuantizedTensor(values.val(), scales.val(), zp, scheme, shape)


class QuantizedLinear(Module):
    """A `Linear` whose weight is stored quantized, in PyTorch's ``[d_output, d_input]`` layout
    (so one scale per output channel is the scheme's channel axis 0, and blocks run along the
    input dim, the dim the product sums over).

    With ``scheme.activations == "dynamic"`` the input is quantized per row to int8 at run time
    and multiplied in integers (`burn.tensor.module.quantized_linear`); otherwise the product
    runs in the input's float dtype on the stored weight (`burn.tensor.module.dequantized_linear`:
    backends with a kernel for it, ndarray, dequantize a few rows at a time).

    Attributes:
        values: Int param of the stored weight (int8, or uint8 packing 4-bit pairs).
        scales: float32 param of the scales (see `burn.quantization.tensor`).
        zero_points: Int param (affine schemes) or None.
        bias: float ``[d_output]`` or None, kept as it was.
        scheme: the `QuantScheme` (a constant: build the module with `quantize_module` before
            loading a record into it).
        d_input: input features.
        d_output: output features.
    """

    values: Param
    scales: Param
    zero_points: Param | None
    bias: Param | None
    scheme: QuantScheme
    d_input: int
    d_output: int

    @classmethod
    def from_linear(cls, linear: Linear, scheme: QuantScheme) -> QuantizedLinear:
        """Quantize `linear`'s weight with `scheme`; the bias is shared."""
        if scheme.activations == "dynamic" and not (
            scheme.level == "tensor" or (scheme.level == "channel" and scheme.axis == 0)
        ):
            raise ValueError(
                "quantize: dynamic activations need one weight scale per tensor or per output channel "
                f"(level='channel', axis=0), got level={scheme.level!r}, axis={scheme.axis}"
            )
        weight = linear.weight.val().detach()
        d_input, d_output = weight.shape
        q = quantize_tensor(weight.swap_dims(0, 1), scheme)
        # Quantized from a transposed view, the integers may keep its layout; a round trip through
        # host data stores them row by row, as a record loads them (integer kernels read rows).
        q = dataclasses.replace(
            q, values=Tensor.from_data(q.values.to_data(), q.values.device, dtype=q.values.dtype)
        )
        values, scales, zero_points = _params(q)
        return cls(values, scales, zero_points, linear.bias, scheme, d_input, d_output)

    def weight(self) -> QuantizedTensor:
        """The quantized ``[d_output, d_input]`` weight."""
        return _tensor(self.values, self.scales, self.zero_points, self.scheme, (self.d_output, self.d_input))

    def forward(self, x: Tensor) -> Tensor:
        bias = None if self.bias is None else self.bias.val()
        if self.scheme.activations == "dynamic":
            scales = self.scales.val()
            return F.quantized_linear(x, self.values.val(), scales.reshape((scales.shape[0],)), bias)
        scheme = self.scheme
        if scheme.level == "channel" and scheme.axis % 2 != 0:  # scales along the input dim
            weight = self.weight().dequantize(x.dtype)
            return F.linear(x, weight.swap_dims(0, 1), bias)
        zero_points = None if self.zero_points is None else self.zero_points.val()
        return F.dequantized_linear(x, self.values.val(), self.scales.val(), zero_points, scheme.value, bias)


class QuantizedEmbedding(Module):
    """An `Embedding` whose table is stored quantized: a lookup picks the rows' integers and
    scales and dequantizes only those rows.

    Attributes:
        values, scales, zero_points: the quantized ``[n_embedding, d_model]`` table (scales per
            tensor, per row: channel axis 0, or per block of each row).
        scheme: the `QuantScheme`.
        n_embedding: rows of the table.
        d_model: the embedding size.
        padding_idx: kept from the `Embedding` (its row gets no gradient there; here nothing does).
    """

    values: Param
    scales: Param
    zero_points: Param | None
    scheme: QuantScheme
    n_embedding: int
    d_model: int
    padding_idx: int | None = None

    @classmethod
    def from_embedding(cls, embedding: Embedding, scheme: QuantScheme) -> QuantizedEmbedding:
        """Quantize `embedding`'s table with `scheme` (a channel level is taken per row)."""
        if scheme.level == "channel" and scheme.axis != 0:
            scheme = QuantScheme(
                scheme.value, "channel", scheme.mode, 0, scheme.block_size, scheme.activations
            )
        weight = embedding.weight.val().detach()
        q = quantize_tensor(weight, scheme)
        values, scales, zero_points = _params(q)
        n, d = weight.shape
        return cls(values, scales, zero_points, scheme, n, d, embedding.padding_idx)

    def table(self) -> QuantizedTensor:
        """The quantized ``[n_embedding, d_model]`` table."""
        return _tensor(
            self.values, self.scales, self.zero_points, self.scheme, (self.n_embedding, self.d_model)
        )

    def forward(self, indices: Tensor) -> Tensor:
        return self.table().select_rows(indices).dequantize(self.scales.val().dtype)


class QuantizedConv(Module):
    """A convolution (`Conv1d` to `Conv3d`, `ConvTranspose1d` to `ConvTranspose3d`) whose weight is
    stored quantized as ``[weight.shape[0], rest]`` (each output channel's, or for a transposed
    convolution each input channel's, kernel in one row: per channel is the scheme's axis 0, and
    blocks run along the row), dequantized on the fly; a scheme's dynamic activations apply to
    Linear layers only.

    Attributes:
        values, scales, zero_points: the quantized weight rows.
        bias: kept as it was.
        scheme: the `QuantScheme` (channel level: axis 0).
        shape: the weight's shape.
        op: the layer's functional op (`burn.tensor.module.conv2d`...), a constant.
        hyper: the op's arguments after the bias (stride, padding, ...), constants.
    """

    values: Param
    scales: Param
    zero_points: Param | None
    bias: Param | None
    scheme: QuantScheme
    shape: tuple[int, ...]
    op: Callable[..., Tensor]
    hyper: tuple[Any, ...]

    @classmethod
    def from_conv(cls, conv: _ConvLayer, scheme: QuantScheme) -> QuantizedConv:
        """Quantize `conv`'s weight with `scheme`; the bias is shared."""
        scheme = QuantScheme(scheme.value, scheme.level, scheme.mode, 0, scheme.block_size)
        weight = conv.weight.val().detach()
        shape = tuple(weight.shape)
        q = quantize_tensor(weight.reshape((shape[0], -1)), scheme)
        values, scales, zero_points = _params(q)
        hyper = tuple(getattr(conv, name) for name in conv._hyper)
        return cls(values, scales, zero_points, conv.bias, scheme, shape, type(conv)._op, hyper)

    def weight(self) -> QuantizedTensor:
        """The quantized weight rows ``[shape[0], rest]``."""
        rows = (self.shape[0], _count(self.shape) // self.shape[0])
        return _tensor(self.values, self.scales, self.zero_points, self.scheme, rows)

    def forward(self, x: Tensor) -> Tensor:
        weight = self.weight().dequantize(x.dtype).reshape(self.shape)
        return self.op(x, weight, None if self.bias is None else self.bias.val(), *self.hyper)


def _count(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def quantize_module(module: M, scheme: QuantScheme | str) -> M:
    """A copy of `module` whose `Linear`, `Embedding` and convolution layers (at any depth, in
    lists, tuples and dicts too) are quantized with `scheme`; `module` itself is not changed.

    Embeddings and convolutions take the scheme's weights only: their weights are dequantized on
    the fly (a lookup has no product; `burn.quantization.calibrate` gives Conv2d layers integer
    kernels with static activations).

    Raises:
        ValueError: a static scheme (``"int8-static"``): its activation parameters come from
            `burn.quantization.calibrate`.
    """
    parsed = QuantScheme.parse(scheme)
    if parsed.activations == "static":
        raise ValueError(
            "quantize: a static scheme needs calibrated activation ranges: use "
            "burn.quantization.calibrate(module, batches, scheme)"
        )
    return map_layers(module, lambda layer: weight_quantized(layer, parsed))


def weight_quantized(layer: Module, scheme: QuantScheme) -> Module | None:
    """`layer` quantized with `scheme` when it is a `Linear`, `Embedding` or convolution, else
    None."""
    if isinstance(layer, Linear):
        return QuantizedLinear.from_linear(layer, scheme)
    if isinstance(layer, Embedding):
        return QuantizedEmbedding.from_embedding(layer, scheme)
    if isinstance(layer, _ConvLayer):
        return QuantizedConv.from_conv(layer, scheme)
    return None


def map_layers(module: M, swap: Callable[[Module], Module | None]) -> M:
    """A copy of `module` in which every submodule (at any depth, in lists, tuples and dicts too)
    for which ``swap(submodule)`` gives a module is replaced by it, the others searched further;
    parts with nothing replaced are shared, and `module` itself is not changed."""
    new = swap(module)
    if new is not None:
        return new  # type: ignore[return-value]
    changes = {}
    for name, value in vars(module).items():
        converted = _convert(value, swap)
        if converted is not value:
            changes[name] = converted
    if not changes:
        return module
    out = copy.copy(module)
    for name, value in changes.items():
        object.__setattr__(out, name, value)
    return out


def _convert(value: Any, swap: Callable[[Module], Module | None]) -> Any:
    if isinstance(value, Module):
        return map_layers(value, swap)
    if isinstance(value, (list, tuple)):
        items = [_convert(v, swap) for v in value]
        if all(a is b for a, b in zip(items, value, strict=True)):
            return value
        return type(value)(items) if isinstance(value, list) else tuple(items)
    if isinstance(value, dict):
        converted = {k: _convert(v, swap) for k, v in value.items()}
        return value if all(converted[k] is value[k] for k in value) else converted
    return value
