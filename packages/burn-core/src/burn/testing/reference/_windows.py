"""Index helpers of the convolution and pooling references: the windows a kernel slides over."""

from __future__ import annotations

from typing import Any

Dims = tuple[int, ...]


def at(*rest: Any) -> Any:
    """An index ``[:, :, *rest]`` (batch and channels whole)."""
    return (slice(None), slice(None), *rest)


def _window(start: int, kernel: int, stride: int, out: int) -> slice:
    return slice(start, start + stride * (out - 1) + 1, stride)


def regions(pos: Dims, dilation: Dims, kernel: Dims, stride: Dims, out: Dims) -> tuple[slice, ...]:
    return tuple(
        _window(p * d, k, s, o) for p, d, k, s, o in zip(pos, dilation, kernel, stride, out, strict=True)
    )
