"""Functional interpolation and sampling (the sampling family): `interpolate`, `interpolate1d`
and `grid_sample_2d`.

`interpolate` resizes ``[N, C, H, W]`` (or ``[N, C, L]``) inputs with ``"nearest"``,
``"nearest-exact"``, ``"bilinear"`` (``"linear"`` in 1-D) or ``"bicubic"`` (``"cubic"``), to an
output size or by a scale factor; `grid_sample_2d` samples at arbitrary normalized positions.
Layouts and conventions are PyTorch's; the backend ops are `burn.backend.ops.sampling`'s
``interpolate`` and ``grid_sample_2d``.

Example:
    >>> from burn import Tensor
    >>> from burn.tensor import module as F
    >>> x = Tensor.ones((1, 3, 4, 4))  # doctest: +SKIP
    >>> F.interpolate(x, scale_factor=2, mode="bicubic").shape  # doctest: +SKIP
    (1, 3, 8, 8)
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

from burn.backend.ops.sampling import GRID_SAMPLE_MODES, GRID_SAMPLE_PADDINGS
from burn.errors import ShapeError
from burn.foundations.kind import Float
from burn.tensor._base import wrap
from burn.tensor._errors import expect_same
from burn.tensor.module._args import float_input

if TYPE_CHECKING:
    from burn.backend.ops.sampling import GridSampleMode, GridSamplePadding, InterpolateMode
    from burn.tensor.tensor import Tensor

__all__ = [
    "grid_sample_2d",
    "interpolate",
    "interpolate1d",
]

# Accepted mode names -> the backend op's mode (1-D PyTorch names are aliases); `burn.nn`'s
# resizing layers check their mode against it too.
INTERPOLATE_MODES: dict[str, str] = {
    "nearest": "nearest",
    "nearest-exact": "nearest-exact",
    "bilinear": "bilinear",
    "linear": "bilinear",
    "bicubic": "bicubic",
    "cubic": "bicubic",
}


def _sizes(op: str, name: str, value: Any, count: int) -> list[Any]:
    if isinstance(value, Sequence) and not isinstance(value, str):
        if len(value) != count:
            raise ValueError(f"{op}: {name} must be a number or {count} numbers, got {value!r}")
        return list(value)
    return [value] * count


def _output_size(
    op: str, spatial: tuple[int, ...], output_size: Any, scale_factor: Any
) -> tuple[int, ...]:
    if (output_size is None) == (scale_factor is None):
        raise ValueError(f"{op}: give exactly one of output_size and scale_factor")
    if output_size is not None:
        out = []
        for v in _sizes(op, "output_size", output_size, len(spatial)):
            try:
                n = operator.index(v)
            except TypeError:
                raise TypeError(f"{op}: output_size must be ints, got {output_size!r}") from None
            if n < 1:
                raise ValueError(f"{op}: output_size must be >= 1, got {output_size!r}")
            out.append(n)
        return tuple(out)
    scales = [float(s) for s in _sizes(op, "scale_factor", scale_factor, len(spatial))]
    if any(not s > 0 or not math.isfinite(s) for s in scales):
        raise ValueError(f"{op}: scale_factor must be positive, got {scale_factor!r}")
    out = [math.floor(n * s) for n, s in zip(spatial, scales, strict=True)]
    if any(n < 1 for n in out):
        raise ShapeError(f"{op}: scale_factor {scale_factor!r} makes an empty output from sizes {spatial}")
    return tuple(out)


def interpolate(
    x: Tensor,
    output_size: int | Sequence[int] | None = None,
    mode: str = "nearest",
    align_corners: bool = False,
    scale_factor: float | Sequence[float] | None = None,
) -> Tensor:
    """Resize ``[N, C, H, W]`` (or ``[N, C, L]``) to `output_size`, or by `scale_factor`.

    Modes: ``"nearest"`` (PyTorch's: ``floor(i * in / out)``), ``"nearest-exact"`` (the
    nearest pixel centre), ``"bilinear"`` (``"linear"``) and ``"bicubic"`` (``"cubic"``; Keys'
    kernel with ``a = -0.75``, as PyTorch). `align_corners` (default False, PyTorch's; Burn's
    is True) maps the corner pixels' centres onto each other; it matters for (bi)linear and
    bicubic only. A `scale_factor` gives the output size ``floor(size * scale)``, and the
    resampling then depends on the sizes only (PyTorch's ``recompute_scale_factor=True``).

    Example:
        >>> interpolate(Tensor.ones((1, 1, 5)), scale_factor=2.0, mode="linear").shape  # doctest: +SKIP
        (1, 1, 10)

    Raises:
        ShapeError: an input of another rank, an empty spatial dim, or an empty output.
        ValueError: an unknown mode, or both or neither of output_size and scale_factor.
    """
    op = "interpolate"
    shape = float_input(op, x, (3, 4), "[N, C, L] or [N, C, H, W]")
    backend_mode = INTERPOLATE_MODES.get(mode)
    if backend_mode is None:
        raise ValueError(f"{op}: mode must be one of {tuple(INTERPOLATE_MODES)}, got {mode!r}")
    spatial = shape[2:]
    if any(n == 0 for n in spatial):
        raise ShapeError(f"{op}: the input {shape} has an empty spatial dim")
    out = _output_size(op, spatial, output_size, scale_factor)
    checked = cast("InterpolateMode", backend_mode)
    b = x._b
    if len(shape) == 3:
        n, c, length = shape
        planes = b.float_reshape(x._p, (n, c, 1, length))
        resized = b.interpolate(planes, (1, out[0]), checked, bool(align_corners))
        return wrap(b.float_reshape(resized, (n, c, out[0])), b, Float)
    return wrap(b.interpolate(x._p, (out[0], out[1]), checked, bool(align_corners)), b, Float)


def interpolate1d(
    x: Tensor,
    output_size: int | None = None,
    mode: str = "nearest",
    align_corners: bool = False,
    scale_factor: float | None = None,
) -> Tensor:
    """`interpolate` of ``[N, C, L]`` inputs (modes ``"nearest"``, ``"nearest-exact"``,
    ``"linear"``, ``"cubic"``), Burn's ``interpolate1d``."""
    float_input("interpolate1d", x, (3,), "[N, C, L]")
    return interpolate(x, output_size, mode, align_corners, scale_factor)


def grid_sample_2d(
    x: Tensor,
    grid: Tensor,
    mode: str = "bilinear",
    padding_mode: str = "zeros",
    align_corners: bool = False,
) -> Tensor:
    """Sample ``x [N, C, H, W]`` at ``grid [N, H_out, W_out, 2]`` -> ``[N, C, H_out, W_out]``
    (PyTorch's ``grid_sample`` on 4-D inputs, with its defaults).

    The grid holds ``(x, y)`` positions normalized to ``[-1, 1]`` (``x`` along the width).
    `mode` is ``"bilinear"`` or ``"nearest"``; `padding_mode` ``"zeros"``, ``"border"`` or
    ``"reflection"``; with `align_corners` -1 and 1 are the corner pixels' centres, else their
    outer edges. Differentiable with respect to `x` and `grid`.

    Example:
        >>> corners = [[[[-1.0, -1.0], [1.0, -1.0]], [[-1.0, 1.0], [1.0, 1.0]]]]
        >>> grid = Tensor.from_data(corners)  # doctest: +SKIP
        >>> grid_sample_2d(x, grid, align_corners=True)  # x's four corners  # doctest: +SKIP
    """
    op = "grid_sample_2d"
    n, c, h, w = float_input(op, x, (4,), "[N, C, H, W]")
    expect_same(op, x, grid, Float, "grid")
    gshape = grid.shape
    if len(gshape) != 4 or gshape[0] != n or gshape[3] != 2:
        raise ShapeError(
            f"{op}: grid must have shape [{n}, H_out, W_out, 2] for input {x.shape}, got {gshape}"
        )
    if h == 0 or w == 0:
        raise ShapeError(f"{op}: the input {x.shape} has an empty spatial dim")
    if mode not in GRID_SAMPLE_MODES:
        raise ValueError(f"{op}: mode must be one of {GRID_SAMPLE_MODES}, got {mode!r}")
    if padding_mode not in GRID_SAMPLE_PADDINGS:
        choices = GRID_SAMPLE_PADDINGS
        raise ValueError(f"{op}: padding_mode must be one of {choices}, got {padding_mode!r}")
    b = x._b
    checked_mode = cast("GridSampleMode", mode)
    checked_padding = cast("GridSamplePadding", padding_mode)
    return wrap(b.grid_sample_2d(x._p, grid._p, checked_mode, checked_padding, bool(align_corners)), b, Float)

