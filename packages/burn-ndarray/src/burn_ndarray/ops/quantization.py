"""The quantization family (`burn.backend.ops.quantization`) on NumPy arrays: the dynamic int8
Linear through the compiled kernel (`burn_ndarray.kernels.quantization`) for float32 inputs and
int8 weights; other dtypes take the contract's default."""

from __future__ import annotations

from typing import Any

import numpy as np

from burn.backend.ops.quantization import QuantizationOps as Contract

Array = Any


class QuantizationOps:
    """The quantization ops of `burn_ndarray.NdArray`."""

    def quantized_linear(self, x: Array, weight: Array, weight_scales: Array, bias: Array | None) -> Array:
        n, k = weight.shape
        fast = (
            x.dtype == np.float32 and weight.dtype == np.int8 and weight_scales.dtype == np.float32
            and (bias is None or bias.dtype == np.float32) and x.ndim >= 1 and x.shape[-1] == k
        )
        if not fast:
            return Contract.quantized_linear(self, x, weight, weight_scales, bias)  # type: ignore[arg-type]
        from burn_ndarray.kernels.quantization import int8_linear, quantize_rows

        rows = np.ascontiguousarray(x.reshape(-1, k))
        m = rows.shape[0]
        q = np.empty((m, k), np.int8)
        scales = np.empty(m, np.float32)
        quantize_rows(rows, q, scales)
        out = np.empty((m, n), np.float32)
        int8_linear(q, scales, np.ascontiguousarray(weight), weight_scales, bias, out)
        return out.reshape((*x.shape[:-1], n))
