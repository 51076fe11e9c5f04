"""Padding settings of convolution and pooling layers (Burn's ``PaddingConfig1d/2d``).

A padding is ``"valid"`` (none), ``"same"`` (output size ``ceil(input / stride)``; the effective
kernel ``dilation * (kernel - 1) + 1`` must be odd so the padding is symmetric), or explicit: an
int for 1-D layers, a ``(height, width)`` pair for 2-D ones. It is resolved once, when the layer is
built, because it does not depend on the input size.
"""

from __future__ import annotations

from typing import Literal

__all__ = ["PaddingConfig1d", "PaddingConfig2d", "resolve_padding_1d", "resolve_padding_2d"]

PaddingConfig1d = Literal["valid", "same"] | int
PaddingConfig2d = Literal["valid", "same"] | tuple[int, int]


def _same(layer: str, kernel: int, dilation: int) -> int:
    span = dilation * (kernel - 1)
    if span % 2:
        raise ValueError(
            f"{layer}: 'same' padding needs an odd effective kernel size, got kernel {kernel} with "
            f"dilation {dilation} (effective {span + 1}); use explicit padding instead"
        )
    return span // 2


def resolve_padding_1d(layer: str, padding: PaddingConfig1d, kernel: int, dilation: int = 1) -> int:
    """The explicit padding of a 1-D layer.

    Example:
        >>> resolve_padding_1d("Conv1d", "same", 5), resolve_padding_1d("Conv1d", 2, 3)
        (2, 2)
    """
    if padding == "valid":
        return 0
    if padding == "same":
        return _same(layer, kernel, dilation)
    if isinstance(padding, bool) or not isinstance(padding, int) or padding < 0:
        raise ValueError(f"{layer}: padding must be 'valid', 'same' or an int >= 0, got {padding!r}")
    return padding


def resolve_padding_2d(
    layer: str, padding: PaddingConfig2d, kernel: tuple[int, int], dilation: tuple[int, int] = (1, 1)
) -> tuple[int, int]:
    """The explicit ``(height, width)`` padding of a 2-D layer.

    Example:
        >>> resolve_padding_2d("Conv2d", "same", (3, 5))
        (1, 2)
    """
    if padding == "valid":
        return (0, 0)
    if padding == "same":
        return (_same(layer, kernel[0], dilation[0]), _same(layer, kernel[1], dilation[1]))
    if (
        not isinstance(padding, (tuple, list))
        or len(padding) != 2
        or not all(isinstance(p, int) and not isinstance(p, bool) and p >= 0 for p in padding)
    ):
        raise ValueError(f"{layer}: padding must be 'valid', 'same' or a pair of ints >= 0, got {padding!r}")
    return (padding[0], padding[1])
