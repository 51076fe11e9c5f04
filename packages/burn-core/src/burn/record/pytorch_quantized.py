"""PyTorch's quantized tensors in a checkpoint (`burn.record.pytorch_pickle.TorchQuantizedTensor`)
as the params of burn's quantized layers (`burn.quantization`), for `load_pytorch`.

`torch.ao.quantization` saves a quantized Linear (dynamic, ``quantize_dynamic``, or static,
``convert``) as ``<layer>._packed_params._packed_params``, a ``(weight, bias)`` pair with a quantized
weight, beside ``<layer>._packed_params.dtype`` and the layer's output ``scale`` / ``zero_point``;
other quantized modules (convolutions, embeddings) as a quantized ``<layer>.weight``. Each becomes
``<layer>.values`` (int8), ``<layer>.scales`` (float32: ``[1]`` per tensor, ``[channels, 1, ...]``
per channel) and, for a zero point that is not 0, ``<layer>.zero_points`` (int8), the layout of
`burn.quantization.QuantizedTensor`; a Linear's bias becomes ``<layer>.bias``. ``quint8`` values
(and their zero points) are shifted by -128 into int8: ``(q - zp) * scale`` is unchanged. The
output ``scale`` / ``zero_point`` of a layer with packed params (the activation quantization of a
static model, which burn's layers, float in and out, do not use) and the dtype entries are dropped.

So a model quantized by PyTorch loads into the same architecture quantized by burn with the
scheme PyTorch used: ``quantize(model, QuantScheme("int8", "tensor", activations="dynamic"))`` for
``quantize_dynamic``'s default (per-tensor symmetric qint8), ``QuantScheme("int8", "channel",
activations="dynamic")`` for a per-channel one, an ``"affine"`` mode for zero points that are not 0.

Example:
    >>> qmodel = quantize(model, QuantScheme("int8", "tensor", activations="dynamic"))  # doctest: +SKIP
    >>> qmodel = load_pytorch("dynamic_int8.pt", qmodel)  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from burn.foundations.data import TensorData
from burn.record.errors import RecordError
from burn.record.pytorch_pickle import StateEntry, TorchQuantizedTensor, TorchTensor

__all__ = ["PACKED_SUFFIX", "expand_quantized"]

PACKED_SUFFIX = "._packed_params._packed_params"
_DTYPE_SUFFIX = "._packed_params.dtype"


def expand_quantized(state: Mapping[str, StateEntry]) -> dict[str, TensorData | TorchTensor]:
    """`state` with every quantized entry replaced by the params of burn's quantized layer (see
    the module docstring); plain tensors are kept as they are (read later, lazily).

    Raises:
        RecordError: a quantized tensor of a dtype burn does not store (``qint32``), or two
            entries expanding to the same key.
    """
    packed = {k[: -len(PACKED_SUFFIX)] for k in state if k.endswith(PACKED_SUFFIX)}
    out: dict[str, TensorData | TorchTensor] = {}

    def put(key: str, value: TensorData | TorchTensor) -> None:
        if key in out:
            raise RecordError(f"the quantized entries of the checkpoint give {key!r} twice", path=key)
        out[key] = value

    for key, value in state.items():
        if key.endswith(_DTYPE_SUFFIX):
            continue
        layer, _, field = key.rpartition(".")
        if layer in packed and field in ("scale", "zero_point"):
            continue  # the static layer's output quantization: burn's layers give floats
        if key.endswith(PACKED_SUFFIX):
            prefix = key[: -len(PACKED_SUFFIX)]
            weight, bias = value[0], value[1]  # `Checkpoint.state_dict` checked the pair
            assert isinstance(weight, TorchQuantizedTensor)
            assert bias is None or isinstance(bias, TorchTensor)
            for name, data in _params(weight, key).items():
                put(f"{prefix}.{name}", data)
            if bias is not None:
                put(f"{prefix}.bias", bias)
        elif isinstance(value, TorchQuantizedTensor):
            prefix = layer if field == "weight" else key
            for name, data in _params(value, key).items():
                put(f"{prefix}.{name}" if prefix else name, data)
        elif isinstance(value, TorchTensor):
            put(key, value)
        else:
            raise RecordError(f"{key!r} holds {value!r}, not a tensor", path=key)
    return out


def _params(q: TorchQuantizedTensor, key: str) -> dict[str, TensorData]:
    """``values``, ``scales`` and (a zero point other than 0) ``zero_points`` of `q`."""
    values = q.values.read().array
    if values.dtype == np.uint8:
        shift = 128
        values = (values.astype(np.int16) - shift).astype(np.int8)
    elif values.dtype == np.int8:
        shift = 0
    else:
        raise RecordError(
            f"quantized tensor of {values.dtype} values: burn's quantized layers store qint8 and quint8",
            path=key,
        )
    rank = values.ndim
    if q.qscheme == "per_tensor_affine":
        assert isinstance(q.scales, float) and isinstance(q.zero_points, int)
        scales = np.array([q.scales], np.float32)
        zero_points = np.array([q.zero_points - shift], np.int64)
    else:
        assert isinstance(q.scales, TorchTensor) and isinstance(q.zero_points, TorchTensor)
        # Per channel of axis a: the channel's dim kept, every other dim 1.
        shape = tuple(values.shape[d] if d == q.axis else 1 for d in range(rank))
        scales = q.scales.read().array.astype(np.float32).reshape(shape)
        zero_points = q.zero_points.read().array.astype(np.int64).reshape(shape) - shift
    if not np.all(np.isfinite(scales)) or np.any(scales <= 0):
        raise RecordError("quantized tensor with a scale that is not a positive finite float", path=key)
    if np.any(zero_points < -128) or np.any(zero_points > 127):
        raise RecordError("quantized tensor with a zero point outside int8", path=key)
    params = {"values": TensorData(np.ascontiguousarray(values)), "scales": TensorData(scales)}
    if np.any(zero_points != 0):
        params["zero_points"] = TensorData(zero_points.astype(np.int8))
    return params
