"""`fake_quantize`: quantization-aware training's rounding in the forward pass, with the
straight-through estimator as its gradient.

The forward value is ``dequantize(quantize(x))``; the gradient passes through unchanged (the
straight-through estimator of Bengio et al., 2013), written as
``x + (dequantize(quantize(x)) - x).detach()``: the detached correction carries no gradient, so
the backward of the sum is the identity, on every backend that records gradients.
"""

from __future__ import annotations

from burn.quantization.scheme import QuantScheme
from burn.quantization.tensor import dequantize_unpacked, padded, quantize_unpacked
from burn.tensor.tensor import Tensor


def fake_quantize(x: Tensor, scheme: QuantScheme | str) -> Tensor:
    """`x` rounded to the values `scheme` can store (scales from `x` itself), with the gradient
    of the identity.

    Example:
        >>> import burn
        >>> B = burn.backend("ndarray")
        >>> x = burn.Tensor.from_data([0.5, -1.0, 0.3], backend=B)
        >>> [round(v, 4) for v in fake_quantize(x, QuantScheme("int4")).tolist()]  # steps of 1/7
        [0.4286, -1.0, 0.2857]
    """
    parsed = QuantScheme.parse(scheme)
    plain = x.detach()
    wide = padded(plain, parsed)
    rounded = dequantize_unpacked(*quantize_unpacked(wide, parsed), parsed, x.dtype)
    if wide.shape != plain.shape:
        rounded = rounded.narrow(-1, 0, plain.shape[-1])
    return x + (rounded - plain).detach()
