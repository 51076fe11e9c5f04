"""The sampling family of the backend contract: ``interpolate`` (nearest, nearest-exact, bilinear,
bicubic) with its backward helper, and ``grid_sample_2d`` (PyTorch's ``grid_sample`` for 4-D
inputs, Burn's ``grid_sample_2d``).

Interpolation resamples one axis at a time with host-built tables (`burn.backend.tables`).
``grid_sample_2d``'s default computes the sampling positions from the grid with element-wise ops,
reads the four (or one) source pixels with one gather each and weights them from the grid too, so
the autodiff decorator differentiates it with respect to both the input and the grid (the
gradient of ``floor`` is 0, so the weights carry it all).

Layouts are PyTorch's: input ``[N, C, H, W]``; grid ``[N, H_out, W_out, 2]`` holding ``(x, y)`` in
``[-1, 1]`` (``x`` indexes the width); output ``[N, C, H_out, W_out]``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from burn.backend.contract import default, family
from burn.backend.tables import (
    Kind,
    adjoint_table,
    int_table,
    nearest_index,
    resample,
    resample_table,
)

if TYPE_CHECKING:
    from burn.backend.base import Backend

P = Any
Pair = tuple[int, int]
InterpolateMode = Literal["nearest", "nearest-exact", "bilinear", "bicubic"]

# Each interpolation mode's per-axis resampling table kind (`_tables`).
_INTERPOLATE_KINDS: dict[str, Kind] = {
    "nearest": "nearest", "nearest-exact": "nearest_exact", "bilinear": "linear", "bicubic": "cubic",
}

GridSampleMode = Literal["bilinear", "nearest"]

GridSamplePadding = Literal["zeros", "border", "reflection"]

GRID_SAMPLE_MODES: tuple[str, ...] = ("bilinear", "nearest")

GRID_SAMPLE_PADDINGS: tuple[str, ...] = ("zeros", "border", "reflection")


@family("sampling")
class SamplingOps:
    """Sampling ops; every one has a default."""

    @default
    def interpolate(self, x: P, output_size: Pair, mode: InterpolateMode, align_corners: bool) -> P:
        """Resize ``[N, C, H, W]`` to `output_size`. Nearest uses ``floor(i * H_in / H_out)``
        (PyTorch's ``nearest``), nearest-exact ``floor((i + 0.5) * H_in / H_out)`` (PyTorch's
        ``nearest-exact``); bilinear and bicubic (Keys' kernel with ``a = -0.75``, replicated
        borders, as PyTorch) follow PyTorch's ``align_corners`` semantics.

        As in PyTorch, the nearest scale ``H_in / H_out`` is a float32, which moves a few indices
        for some sizes (26 -> 22 picks row 12 for output 11, not 13)."""
        b: Backend = self  # type: ignore[assignment]
        kind = _INTERPOLATE_KINDS.get(mode)
        if kind is None:
            expected = tuple(_INTERPOLATE_KINDS)
            raise ValueError(f"interpolate: unknown mode {mode!r}; expected one of {expected}")
        h, w = b.float_shape(x)[2:]
        axes = ((2, h, output_size[0]), (3, w, output_size[1]))
        if kind == "nearest":
            # One source row/column per output one: a select per resized axis.
            device = b.float_device(x)
            for dim, size, out in axes:
                if out != size:
                    x = b.float_select(x, dim, int_table(b, nearest_index(size, out), device))
            return x
        # Separable: blend source rows, then source columns (equal sizes are the identity under
        # both corner conventions, for every kind).
        for dim, size, out in axes:
            if out != size:
                x = resample(b, x, dim, resample_table(kind, size, out, align_corners))
        return x

    @default(backward_of="interpolate")
    def interpolate_backward(
        self, x: P, output_grad: P, output_size: Pair, mode: InterpolateMode, align_corners: bool
    ) -> P:
        b: Backend = self  # type: ignore[assignment]
        kind = _INTERPOLATE_KINDS.get(mode)
        if kind is None:
            raise ValueError(
                f"interpolate_backward: unknown mode {mode!r}; expected one of {tuple(_INTERPOLATE_KINDS)}"
            )
        h, w = b.float_shape(x)[2:]
        corners = align_corners and kind in ("linear", "cubic")
        # Transposed tables gather every output a source fed: a select and a sum, no scatter-add.
        grad = output_grad
        for dim, size, out in ((3, w, output_size[1]), (2, h, output_size[0])):
            if out != size:
                grad = resample(b, grad, dim, adjoint_table(kind, size, out, corners))
        return grad

    @default
    def grid_sample_2d(
        self, x: P, grid: P, mode: GridSampleMode, padding_mode: GridSamplePadding, align_corners: bool
    ) -> P:
        """Sample ``x [N, C, H, W]`` at the normalized positions ``grid [N, H_out, W_out, 2]``.

        With `align_corners`, -1 and 1 are the centres of the corner pixels, else their outer
        edges. Positions outside the input read zeros (``"zeros"``), the nearest border pixel
        (``"border"``) or the input reflected at its borders (``"reflection"``). ``"nearest"``
        rounds half to even, as PyTorch.
        """
        b: Backend = self  # type: ignore[assignment]
        if mode not in GRID_SAMPLE_MODES:
            raise ValueError(f"grid_sample_2d: unknown mode {mode!r}; expected one of {GRID_SAMPLE_MODES}")
        if padding_mode not in GRID_SAMPLE_PADDINGS:
            choices = GRID_SAMPLE_PADDINGS
            raise ValueError(f"grid_sample_2d: unknown padding_mode {padding_mode!r}; expected {choices}")
        n, c, h, w = b.float_shape(x)
        _, ho, wo, _ = b.float_shape(grid)
        points = ho * wo
        flat_grid = b.float_reshape(grid, (n, points, 2))

        def coordinate(k: int, size: int) -> P:
            g = b.float_reshape(b.float_slice(flat_grid, (slice(0, n), slice(0, points), slice(k, k + 1))),
                                (n, 1, points))
            pos = _unnormalize(b, g, size, align_corners)
            if padding_mode == "reflection":
                pos = _reflect(b, pos, size, align_corners)
            if padding_mode != "zeros":
                pos = b.float_clamp(pos, 0.0, float(size - 1))
            return pos

        ix, iy = coordinate(0, w), coordinate(1, h)
        source = b.float_reshape(x, (n, c, h * w))
        if mode == "nearest":
            taps = [(b.float_round(ix), b.float_round(iy), None)]
        else:
            x0, y0 = b.float_floor(ix), b.float_floor(iy)
            tx, ty = b.float_sub(ix, x0), b.float_sub(iy, y0)
            ux, uy = _one_minus(b, tx), _one_minus(b, ty)
            x1, y1 = b.float_add_scalar(x0, 1.0), b.float_add_scalar(y0, 1.0)
            taps = [
                (x0, y0, b.float_mul(ux, uy)),
                (x1, y0, b.float_mul(tx, uy)),
                (x0, y1, b.float_mul(ux, ty)),
                (x1, y1, b.float_mul(tx, ty)),
            ]
        out = None
        for px, py, weight in taps:
            term = _read(b, source, px, py, (n, c, h, w), points)
            if padding_mode == "zeros":
                # Taps outside the input read 0: their weight (or, nearest, the value) is masked.
                outside = _outside(b, px, py, h, w)
                if weight is None:
                    term = b.float_mask_fill(term, outside, 0.0)
                else:
                    weight = b.float_mask_fill(weight, outside, 0.0)
            if weight is not None:
                term = b.float_mul(term, weight)
            out = term if out is None else b.float_add(out, term)
        return b.float_reshape(out, (n, c, ho, wo))


def _one_minus(b: Backend, t: P) -> P:
    return b.float_add_scalar(b.float_neg(t), 1.0)


def _unnormalize(b: Backend, g: P, size: int, align_corners: bool) -> P:
    """Grid values in ``[-1, 1]`` to pixel coordinates along an axis of `size`."""
    if align_corners:  # -1 and 1 are the corner pixels' centres: (g + 1) / 2 * (size - 1)
        return b.float_mul_scalar(b.float_add_scalar(g, 1.0), (size - 1) / 2.0)
    # -1 and 1 are the corner pixels' outer edges: ((g + 1) * size - 1) / 2
    return b.float_mul_scalar(b.float_add_scalar(b.float_mul_scalar(g, float(size)), float(size) - 1.0), 0.5)


def _reflect(b: Backend, pos: P, size: int, align_corners: bool) -> P:
    """Reflect coordinates into the input: about the corner centres ``[0, size - 1]`` with
    `align_corners`, else about the outer edges ``[-0.5, size - 0.5]`` (as PyTorch)."""
    low, span = (0.0, float(size - 1)) if align_corners else (-0.5, float(size))
    if span <= 0:
        return b.float_mul_scalar(pos, 0.0)
    dist = b.float_abs(b.float_sub_scalar(pos, low))
    extra = b.float_remainder_scalar(dist, span)
    flips = b.float_floor(b.float_div_scalar(dist, span))
    odd = b.float_equal_elem(b.float_remainder_scalar(flips, 2.0), 1.0)
    forward = b.float_add_scalar(extra, low)
    backward = b.float_add_scalar(b.float_neg(extra), span + low)
    return b.float_mask_where(forward, odd, backward)


def _outside(b: Backend, px: P, py: P, h: int, w: int) -> P:
    """Bool: integer positions ``(px, py)`` outside the ``h x w`` input."""
    out_x = b.bool_or(b.float_lower_elem(px, 0.0), b.float_greater_elem(px, float(w - 1)))
    out_y = b.bool_or(b.float_lower_elem(py, 0.0), b.float_greater_elem(py, float(h - 1)))
    return b.bool_or(out_x, out_y)


def _read(b: Backend, source: P, px: P, py: P, shape: tuple[int, int, int, int], points: int) -> P:
    """``source [N, C, H*W]`` at the integer positions ``px, py [N, 1, P]`` (clamped into the
    input; callers mask what lies outside) -> ``[N, C, P]``."""
    n, c, h, w = shape
    cx = b.float_clamp(px, 0.0, float(w - 1))
    cy = b.float_clamp(py, 0.0, float(h - 1))
    # Row and column become ints before they are combined: exact for any size in any float dtype.
    row, col = b.float_into_int(cy, b.int_dtype), b.float_into_int(cx, b.int_dtype)
    index = b.int_expand(b.int_add(b.int_mul_scalar(row, w), col), (n, c, points))
    return b.float_gather(2, source, index)
