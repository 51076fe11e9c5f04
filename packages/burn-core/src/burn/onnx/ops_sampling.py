"""Sampling ops: ``Resize`` and ``GridSample`` (burn's sampling family).

``Resize`` follows the ONNX reference exactly: it is separable, so each resized axis is one
gather of a few source rows per output row (indices and weights computed on the host from the
shapes alone) and a weighted sum, on burn tensor ops (any backend, autodiff). Every coordinate
transform, nearest rounding, cubic coefficient, ``exclude_outside`` and antialiasing of the
reference is covered; only integer inputs to the weighted modes are refused (the reference's
rounding of them is not reproduced).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from burn.foundations.kind import Float
from burn.onnx.errors import OnnxError
from burn.onnx.ops import register
from burn.onnx.runtime import Ctx, ints, norm_axis
from burn.tensor import module as F

if TYPE_CHECKING:
    from burn.onnx.graph import Node
    from burn.onnx.runtime import Value
    from burn.tensor.tensor import Tensor


_GRID_MODES = {"linear": "bilinear", "bilinear": "bilinear", "nearest": "nearest"}


@register("GridSample", "nn", "4-D inputs; modes linear and nearest (cubic is not supported)")
def _grid_sample(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    x, grid = ctx.tensor(inputs[0]), ctx.tensor(inputs[1])
    mode = node.attr("mode", "linear")
    padding = node.attr("padding_mode", "zeros")
    if len(x.shape) != 4 or mode not in _GRID_MODES or padding not in ("zeros", "border", "reflection"):
        raise OnnxError(
            f"node {node.name!r} (GridSample): only 4-D inputs with modes linear/nearest and paddings "
            f"zeros/border/reflection are supported, got rank {len(x.shape)}, mode {mode!r}, "
            f"padding_mode {padding!r}"
        )
    return [F.grid_sample_2d(x, grid, _GRID_MODES[mode], padding, bool(node.attr("align_corners", 0)))]


# -- Resize -----------------------------------------------------------------------------------------
_COORDINATE_MODES = (
    "half_pixel",
    "half_pixel_symmetric",
    "pytorch_half_pixel",
    "align_corners",
    "asymmetric",
    "tf_crop_and_resize",
)


def _source_coords(
    mode: str, out_int: int, scale: float, size: int, roi: tuple[float, float] | None
) -> tuple[np.ndarray, np.ndarray | None]:
    """The source coordinate of each output position along one axis (and, for
    tf_crop_and_resize, which positions fall outside the input)."""
    y = np.arange(out_int, dtype=np.float64)
    out = scale * size
    outside = None
    if mode == "align_corners":
        x = np.zeros(out_int) if out == 1 else y * (size - 1) / (out - 1)
    elif mode == "asymmetric":
        x = y / scale
    elif mode == "tf_crop_and_resize":
        lo, hi = roi if roi is not None else (0.0, 1.0)
        x = (
            np.full(out_int, (hi - lo) * (size - 1) / 2)
            if out == 1
            else y * (hi - lo) * (size - 1) / (out - 1)
        )
        x = x + lo * (size - 1)
        outside = (x < 0) | (x > size - 1)
    elif mode == "pytorch_half_pixel":
        x = np.full(out_int, -0.5) if out == 1 else (y + 0.5) / scale - 0.5
    elif mode == "half_pixel":
        x = (y + 0.5) / scale - 0.5
    else:  # half_pixel_symmetric
        offset = size / 2 * (1 - out_int / out)
        x = offset + (y + 0.5) / scale - 0.5
    return x, outside


def _coeffs(node: Node, ratio: float, scale: float) -> np.ndarray:
    """The reference's interpolation weights for a source coordinate `ratio` past the left pixel."""
    mode = node.attr("mode", "nearest")
    antialias = bool(node.attr("antialias", 0))
    if mode == "nearest":
        if float(ratio).is_integer():
            return np.array([0.0, 1.0])
        rounding = node.attr("nearest_mode", "round_prefer_floor")
        up = {
            "round_prefer_floor": ratio > 0.5,
            "round_prefer_ceil": ratio >= 0.5,
            "floor": False,
            "ceil": True,
        }[rounding]
        return np.array([0.0, 1.0]) if up else np.array([1.0, 0.0])
    if mode == "linear":
        if not antialias:
            return np.array([1 - ratio, ratio])
        s = min(scale, 1.0)
        start = int(np.floor(-1 / s) + 1)
        args = (np.arange(start, start + 2 - 2 * start) - ratio) * s
        w = np.clip(1 - np.abs(args), 0, 1)
        return w / w.sum()  # type: ignore[no-any-return]
    a = float(node.attr("cubic_coeff_a", -0.75))
    if not antialias:
        r = ratio
        return np.array(
            [
                ((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a,
                ((a + 2) * r - (a + 3)) * r * r + 1,
                ((a + 2) * (1 - r) - (a + 3)) * (1 - r) * (1 - r) + 1,
                ((a * ((1 - r) + 1) - 5 * a) * ((1 - r) + 1) + 8 * a) * ((1 - r) + 1) - 4 * a,
            ]
        )
    s = min(scale, 1.0)

    def cubic(v: float) -> float:
        v = abs(v)
        if v <= 1:
            return (a + 2) * v**3 - (a + 3) * v**2 + 1
        return a * v**3 - 5 * a * v**2 + 8 * a * v - 4 * a if v < 2 else 0.0

    start = int(np.floor(-2 / s) + 1)
    w = np.array([cubic(s * (i - ratio)) for i in range(start, 2 - start)])
    return w / w.sum()  # type: ignore[no-any-return]


def _axis_taps(
    node: Node, size: int, out_int: int, scale: float, roi: tuple[float, float] | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Source indices ``[out, n]`` (clamped: edge padding), their weights ``[out, n]`` and the
    extrapolated positions of one axis, as the reference's ``_interpolate_1d_along_axis``."""
    x, outside = _source_coords(
        node.attr("coordinate_transformation_mode", "half_pixel"), out_int, scale, size, roi
    )
    left = np.floor(x).astype(np.int64)
    ratios = np.where(x == left, 1.0, x - left)
    coeffs = np.stack([_coeffs(node, float(r), scale) for r in ratios]) if out_int else np.zeros((0, 2))
    n = coeffs.shape[1]
    pad = math.ceil(n / 2)
    padded = x + pad
    p = np.floor(padded).astype(np.int64)
    frac = padded - p
    if n % 2 == 0:
        offset = np.where(frac == 0, -(n // 2), -(n // 2) + 1)
    else:
        base = -((n - 1) // 2)
        offset = np.where(frac <= 0.5, base, base + 1)
    idx = (p + offset)[:, None] + np.arange(n)[None, :] - pad
    if node.attr("exclude_outside", 0):
        coeffs = np.where((idx < 0) | (idx >= size), 0.0, coeffs)
        total = coeffs.sum(axis=-1, keepdims=True)
        coeffs = coeffs / np.where(total == 0, 1.0, total)
    return np.clip(idx, 0, size - 1), coeffs, outside


def _resize_plan(
    node: Node, shape: tuple[int, ...], inputs: Sequence[Value]
) -> tuple[list[int], list[float]]:
    """Output sizes and scales of every axis, from `scales` or `sizes` (with `axes` and
    keep_aspect_ratio_policy), as the reference computes them."""
    rank = len(shape)
    axes = [norm_axis(a, rank, node, "axes entry") for a in node.attr("axes", list(range(rank)))]
    hosted = [Ctx.host(v) if v is not None else None for v in (*inputs[2:4], None, None)[:2]]
    scales_in, sizes_in = (v if v is not None and v.size else None for v in hosted)
    if (scales_in is None) == (sizes_in is None):
        raise OnnxError(f"node {node.name!r} (Resize): exactly one of scales and sizes must be given")
    if sizes_in is not None:
        wanted = ints(sizes_in)
        if len(wanted) != len(axes):
            raise OnnxError(f"node {node.name!r} (Resize): {len(wanted)} sizes for {len(axes)} axes")
        sizes = list(shape)
        for a, n in zip(axes, wanted, strict=True):
            sizes[a] = n
        scales = [sizes[i] / shape[i] if shape[i] else 1.0 for i in range(rank)]
        policy = node.attr("keep_aspect_ratio_policy", "stretch")
        if policy != "stretch":
            if policy not in ("not_larger", "not_smaller"):
                raise OnnxError(
                    f"node {node.name!r} (Resize): keep_aspect_ratio_policy {policy!r} is unknown"
                )
            picked = [scales[a] for a in axes]
            s = min(picked) if policy == "not_larger" else max(picked)
            scales = [s if i in axes else 1.0 for i in range(rank)]
            sizes = [int(s * shape[i] + 0.5) if i in axes else shape[i] for i in range(rank)]
        return sizes, scales
    given = np.asarray(scales_in).reshape(-1)
    if len(given) != len(axes) or not np.all(given > 0):
        raise OnnxError(f"node {node.name!r} (Resize): scales {given.tolist()} do not fit axes {axes}")
    full = np.ones(rank, dtype=given.dtype)
    for a, s in zip(axes, given, strict=True):
        full[a] = s
    sizes = [int(v) for v in (full * np.array(shape)).astype(np.int64)]
    return sizes, [float(s) for s in full]


@register("Resize", "nn", "integer inputs only with mode nearest")
def _resize(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    mode = node.attr("mode", "nearest")
    coord = node.attr("coordinate_transformation_mode", "half_pixel")
    if mode not in ("nearest", "linear", "cubic") or coord not in _COORDINATE_MODES:
        raise OnnxError(
            f"node {node.name!r} (Resize): mode {mode!r} with {coord!r} coordinates is not supported"
        )
    if mode == "nearest" and node.attr("antialias", 0):
        raise OnnxError(f"node {node.name!r} (Resize): antialias is not defined for mode 'nearest'")
    x = ctx.tensor(inputs[0])
    if mode != "nearest" and x.kind is not Float:
        raise OnnxError(
            f"node {node.name!r} (Resize): mode {mode!r} on {x.kind.name} inputs is not supported"
        )
    shape = tuple(x.shape)
    rank = len(shape)
    sizes, scales = _resize_plan(node, shape, inputs)
    roi = np.asarray(ctx.host(inputs[1])).reshape(-1) if inputs[1] is not None else np.zeros(0)
    if roi.size and node.attr("axes") is not None:
        axes = [norm_axis(a, rank, node, "axes entry") for a in node.attr("axes")]
        full = [0.0] * rank + [1.0] * rank
        for i, a in enumerate(axes):
            full[a], full[rank + a] = float(roi[i]), float(roi[len(axes) + i])
        roi = np.asarray(full)
    extrapolation = float(node.attr("extrapolation_value", 0.0))
    for axis in range(rank):
        axis_roi = (float(roi[axis]), float(roi[axis + rank])) if roi.size == 2 * rank else None
        if (
            math.isclose(scales[axis], 1.0)
            and sizes[axis] == shape[axis]
            and (axis_roi is None or coord != "tf_crop_and_resize" or axis_roi == (0.0, 1.0))
        ):
            continue  # the identity along this axis, as the reference skips it
        if coord == "tf_crop_and_resize" and axis_roi is None:
            raise OnnxError(
                f"node {node.name!r} (Resize): tf_crop_and_resize needs a roi of {2 * rank} values"
            )
        x = _resize_axis(ctx, node, x, axis, sizes[axis], scales[axis], axis_roi, extrapolation)
    return [x]


def _resize_axis(
    ctx: Ctx,
    node: Node,
    x: Tensor,
    axis: int,
    out: int,
    scale: float,
    roi: tuple[float, float] | None,
    extrapolation: float,
) -> Tensor:
    shape = tuple(x.shape)
    idx, coeffs, outside = _axis_taps(node, shape[axis], out, scale, roi)
    after = (1,) * (len(shape) - axis - 1)
    if node.attr("mode", "nearest") == "nearest":  # one tap of weight 1: a gather, exact on any kind
        y = x.select(axis, idx[np.arange(out), coeffs.argmax(axis=1)].tolist())
    else:
        n = idx.shape[1]
        taps = x.select(axis, idx.reshape(-1).tolist()).reshape(shape[:axis] + (out, n) + shape[axis + 1 :])
        weights = ctx.tensor(coeffs.astype(np.float64)).reshape((1,) * axis + (out, n) + after)
        y = (taps * weights).sum_dims([axis + 1]).squeeze_dims([axis + 1])
    if outside is not None and outside.any():
        mask = ctx.tensor(outside).reshape((1,) * axis + (out,) + after).expand(tuple(y.shape))
        y = y.mask_fill(mask, extrapolation)
    return y


def _grid_axis(size: int, align_corners: bool) -> np.ndarray:
    """The normalized coordinates of `size` points along one axis, in [-1, 1]: the corner
    pixels' centers at -1 and 1 (`align_corners`), else the corners of the edge pixels."""
    if align_corners:
        return np.linspace(-1.0, 1.0, size) if size > 1 else np.zeros(1)
    return (2.0 * np.arange(size) + 1.0) / size - 1.0


@register("AffineGrid", "nn")
def _affine_grid(ctx: Ctx, node: Node, inputs: Sequence[Value]) -> list[Value]:
    theta = ctx.tensor(inputs[0], Float)
    size = ints(inputs[1])
    spatial = size[2:]
    k = len(spatial)
    if k not in (2, 3) or tuple(theta.shape) != (size[0], k, k + 1):
        raise OnnxError(
            f"node {node.name!r} (AffineGrid): theta {list(theta.shape)} does not fit size {size} "
            "(2-D: theta [N, 2, 3] and size [N, C, H, W]; 3-D: [N, 3, 4] and [N, C, D, H, W])"
        )
    align = bool(node.attr("align_corners", 0))
    # Homogeneous coordinates (x, y[, z], 1) of every output point, x varying fastest.
    axes = [_grid_axis(n, align) for n in reversed(spatial)]  # x (width) first
    mesh = np.meshgrid(*axes[::-1], indexing="ij")[::-1]  # in (D, H, W) layout, listed x first
    base = np.stack([m.reshape(-1) for m in mesh] + [np.ones(mesh[0].size)], 1)  # [points, k + 1]
    points = ctx.tensor(base).unsqueeze_dim(0).expand((size[0], base.shape[0], k + 1))
    grid = points.matmul(theta.swap_dims(1, 2))  # [N, points, k]
    return [grid.reshape((size[0], *spatial, k))]
