"""Padding settings of convolution and pooling layers (Burn's ``PaddingConfig1d/2d``).

A padding is ``"valid"`` (none), ``"same"`` (output size ``ceil(input / stride)``; the effective
kernel ``dilation * (kernel - 1) + 1`` must be odd so the padding is symmetric), or explicit: an
int for 1-D layers, a ``(height, width)`` pair for 2-D ones, a ``(depth, height, width)`` triple
for 3-D ones. Convolutions also take Burn's asymmetric forms: ``(left, right)`` in 1-D and
``(top, left, bottom, right)`` in 2-D (the difference is zero-padded explicitly). It is resolved
once, when the layer is built, because it does not depend on the input size.
"""

from __future__ import annotations

from typing import Literal

__all__ = [
    "PaddingConfig1d",
    "PaddingConfig2d",
    "PaddingConfig3d",
    "resolve_conv_padding_1d",
    "resolve_conv_padding_2d",
    "resolve_padding_1d",
    "resolve_padding_2d",
    "resolve_padding_3d",
]

PaddingConfig1d = Literal["valid", "same"] | int | tuple[int, int]
PaddingConfig2d = Literal["valid", "same"] | tuple[int, int] | tuple[int, int, int, int]
PaddingConfig3d = Literal["valid", "same"] | tuple[int, int, int]


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


def _explicit(layer: str, padding: object, size: int, form: str) -> tuple[int, ...]:
    if (
        not isinstance(padding, (tuple, list))
        or len(padding) != size
        or not all(isinstance(p, int) and not isinstance(p, bool) and p >= 0 for p in padding)
    ):
        raise ValueError(f"{layer}: padding must be 'valid', 'same' or {form} of ints >= 0, got {padding!r}")
    return tuple(padding)


def resolve_padding_3d(
    layer: str,
    padding: PaddingConfig3d,
    kernel: tuple[int, int, int],
    dilation: tuple[int, int, int] = (1, 1, 1),
) -> tuple[int, int, int]:
    """The explicit ``(depth, height, width)`` padding of a 3-D layer.

    Example:
        >>> resolve_padding_3d("Conv3d", "same", (3, 5, 1))
        (1, 2, 0)
    """
    if padding == "valid":
        return (0, 0, 0)
    if padding == "same":
        return (
            _same(layer, kernel[0], dilation[0]),
            _same(layer, kernel[1], dilation[1]),
            _same(layer, kernel[2], dilation[2]),
        )
    d, h, w = _explicit(layer, padding, 3, "a (depth, height, width) triple")
    return (d, h, w)


def resolve_conv_padding_1d(
    layer: str, padding: PaddingConfig1d, kernel: int, dilation: int = 1
) -> int | tuple[int, int]:
    """A 1-D convolution's padding: an int, or Burn's asymmetric ``(left, right)`` (an int when
    both sides agree).

    Example:
        >>> resolve_conv_padding_1d("Conv1d", (2, 1), 3), resolve_conv_padding_1d("Conv1d", (1, 1), 3)
        ((2, 1), 1)
    """
    if isinstance(padding, (tuple, list)):
        left, right = _explicit(layer, padding, 2, "an int or a (left, right) pair")
        return left if left == right else (left, right)
    return resolve_padding_1d(layer, padding, kernel, dilation)


def resolve_conv_padding_2d(
    layer: str, padding: PaddingConfig2d, kernel: tuple[int, int], dilation: tuple[int, int] = (1, 1)
) -> tuple[int, int] | tuple[tuple[int, int], tuple[int, int]]:
    """A 2-D convolution's padding: ``(height, width)``, or from Burn's asymmetric
    ``(top, left, bottom, right)`` the pairs ``((top, bottom), (left, right))`` (a
    ``(height, width)`` pair when both sides agree).

    Example:
        >>> resolve_conv_padding_2d("Conv2d", (1, 0, 2, 0), (3, 3))
        ((1, 2), (0, 0))
    """
    if isinstance(padding, (tuple, list)) and len(padding) == 4:
        top, left, bottom, right = _explicit(layer, padding, 4, "a (top, left, bottom, right) tuple")
        if top == bottom and left == right:
            return (top, left)
        return ((top, bottom), (left, right))
    return resolve_padding_2d(layer, padding, kernel, dilation)  # type: ignore[arg-type]
