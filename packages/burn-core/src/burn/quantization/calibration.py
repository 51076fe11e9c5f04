"""`calibrate`: static post-training quantization. The float model runs on sample batches while
an observer records the input range of each `Linear` and `Conv2d`; the result is a copy whose
layers multiply int8 weights with inputs quantized by the calibrated scale and zero point
(`burn.quantization.static`), int32 sums where the backend has the kernels.

Layers the batches never reached, convolutions other than 2-D ones and embeddings get the
scheme's weights only (dequantized on the fly, as `burn.quantization.quantize_module`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from burn.module.base import Module
from burn.nn.conv import Conv2d
from burn.nn.linear import Linear
from burn.quantization.modules import map_layers, weight_quantized
from burn.quantization.observers import Observer, observer
from burn.quantization.scheme import QuantScheme
from burn.quantization.static import StaticQuantizedConv2d, StaticQuantizedLinear
from burn.tensor.tensor import Tensor

__all__ = ["calibrate"]

M = TypeVar("M", bound=Module)


class _Observed(Module):
    """A layer whose inputs an observer sees before the layer runs (calibration only)."""

    layer: Module
    watcher: Observer

    def forward(self, x: Tensor) -> Tensor:
        self.watcher.update(x)
        return self.layer(x)  # type: ignore[no-any-return]


def _first(batch: Any) -> Any:
    """A batch's model input: the batch itself, or the first item of a tuple / list (inputs,
    targets), as data loaders give them."""
    return batch[0] if isinstance(batch, (tuple, list)) else batch


def calibrate(
    module: M,
    batches: Iterable[Any],
    scheme: QuantScheme | str = "int8-static",
    *,
    observer_kind: str | Observer | type[Observer] = "minmax",
    symmetric: bool = False,
    forward: Callable[[Module, Any], Any] | None = None,
) -> M:
    """A statically quantized copy of `module`: each `Linear` and `Conv2d` the batches reach
    becomes a `StaticQuantizedLinear` / `StaticQuantizedConv2d` with its input's calibrated scale
    and zero point; `module` itself is not changed.

    Args:
        module: the trained float model.
        batches: sample inputs (a Tensor each, or tuples whose first item is the input; a data
            loader's batches work as they are). A few hundred samples usually suffice.
        scheme: a static `QuantScheme` (``activations="static"``, int8 symmetric weights per
            tensor or per output channel) or ``"int8-static"``.
        observer_kind: how the input ranges are estimated: ``"minmax"``, ``"moving-average"``,
            ``"percentile"``, an `Observer` class, or an unused observer to copy (per tensor).
        symmetric: symmetric input ranges (zero point 0) instead of affine ones.
        forward: ``forward(model, batch)`` when calling ``model(batch_input)`` is not how the
            model runs.

    Raises:
        ValueError: a scheme without static activations, or no batch at all.

    Example:
        >>> import burn
        >>> from burn import nn
        >>> B = burn.backend("ndarray")
        >>> model = nn.LinearConfig(16, 4).init(B.default_device())
        >>> batches = [burn.Tensor.random((8, 16), backend=B) for _ in range(4)]
        >>> qmodel = calibrate(model, batches)
        >>> type(qmodel).__name__
        'StaticQuantizedLinear'
        >>> bool((qmodel(batches[0]) - model(batches[0])).abs().max().item() < 0.05)
        True
    """
    parsed = QuantScheme.parse(scheme)
    if parsed.activations != "static":
        raise ValueError(
            f"calibrate: the scheme must quantize activations statically (activations='static', "
            f"e.g. 'int8-static'), got activations={parsed.activations!r}"
        )
    probe = observer(observer_kind)
    if probe.axis is not None:
        raise ValueError("calibrate: activation ranges are per tensor; give an observer with axis=None")

    def watch(layer: Module) -> Module | None:
        if isinstance(layer, (Linear, Conv2d)):
            return _Observed(layer, observer(observer_kind))
        return None

    observed = map_layers(module, watch)
    run = forward or (lambda model, batch: model(_first(batch)))
    seen = 0
    for batch in batches:
        run(observed, batch)
        seen += 1
    if not seen:
        raise ValueError("calibrate: no batch was given; the input ranges need at least one")
    weights_only = dataclasses.replace(parsed, activations="none")

    def settle(layer: Module) -> Module | None:
        if not isinstance(layer, _Observed):
            return weight_quantized(layer, weights_only)
        inner, watcher = layer.layer, layer.watcher
        if not watcher.batches:  # never reached: its weights only
            return weight_quantized(inner, weights_only)
        scale, zero_point = watcher.qparams(symmetric)
        if isinstance(inner, Linear):
            return StaticQuantizedLinear.from_linear(inner, parsed, scale, zero_point)
        assert isinstance(inner, Conv2d)
        return StaticQuantizedConv2d.from_conv2d(inner, parsed, scale, zero_point)

    return map_layers(observed, settle)
