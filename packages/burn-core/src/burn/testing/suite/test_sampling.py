"""Sampling ops: ``interpolate`` in every mode (nearest, nearest-exact, bilinear, bicubic; 1-D
inputs, scale factors) and its backward helper, and ``grid_sample_2d`` with every padding mode.

Forward ops go through `burn.tensor.module`; the backward helper has no Tensor method and is
called on the backend's primitives directly. References: the pixel-by-pixel NumPy functions of
`burn.testing.reference.sampling` (float64).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.errors import ShapeError
from burn.foundations.dtype import DType
from burn.testing import covers
from burn.testing.helpers import (
    EPS,
    check_float,
    f64,
    float_input,
    float_inputs,
    make,
    prim,
    tensor_module,
    wrap_float,
)
from burn.testing.reference import sampling as ref
from burn.testing.reference import vjp_linear

# -- interpolate: nearest and bilinear -------------------------------------------------------------
INTERPOLATE = [
    ((1, 2, 4, 4), (8, 8), "nearest", False),
    ((1, 2, 8, 6), (4, 3), "nearest", False),
    ((2, 1, 5, 5), (3, 3), "nearest", False),
    ((1, 2, 4, 5), (7, 9), "bilinear", False),
    ((1, 2, 4, 5), (7, 9), "bilinear", True),
    ((1, 1, 6, 6), (3, 4), "bilinear", False),
    ((1, 1, 6, 6), (3, 4), "bilinear", True),
    ((1, 1, 1, 3), (2, 1), "bilinear", True),
]


@covers("interpolate")
@pytest.mark.parametrize(("xs", "size", "mode", "align"), INTERPOLATE, ids=str)
def test_interpolate(
    backend: Any, float_dtype: DType, xs: Any, size: Any, mode: str, align: bool, rng: Any
) -> None:
    ((x, tx),) = float_inputs(backend, rng, float_dtype, xs)
    out = tensor_module().interpolate(tx, size, mode=mode, align_corners=align)
    check_float(out, ref.interpolate(x, size, mode, align), float_dtype, terms=4, what=f"interpolate {mode}")


@covers("interpolate_backward")
@pytest.mark.parametrize(("xs", "size", "mode", "align"), INTERPOLATE, ids=str)
def test_interpolate_backward_helper(
    backend: Any, float_dtype: DType, xs: Any, size: Any, mode: str, align: bool, rng: Any
) -> None:
    ((x, tx),) = float_inputs(backend, rng, float_dtype, xs)
    ((g, tg),) = float_inputs(backend, rng, float_dtype, (xs[0], xs[1], *size))
    dx = backend.interpolate_backward(prim(tx), prim(tg), size, mode, align)
    expected = vjp_linear(lambda v: ref.interpolate(v, size, mode, align), xs, g)
    check_float(wrap_float(backend, dx), expected, float_dtype, terms=8, what=f"interpolate_backward {mode}")


# -- interpolate: nearest-exact and bicubic, 1-D inputs, scale factors -----------------------------
INTERPOLATE_MODES = [
    ((1, 2, 4, 5), (7, 9), "nearest-exact", False),
    ((1, 2, 8, 6), (3, 4), "nearest-exact", False),
    ((1, 2, 4, 5), (7, 9), "bicubic", False),
    ((1, 2, 4, 5), (7, 9), "bicubic", True),
    ((2, 1, 6, 6), (3, 4), "bicubic", False),
    ((1, 1, 6, 5), (4, 2), "bicubic", True),
    ((1, 1, 2, 1), (3, 1), "bicubic", False),
]


@covers("interpolate")
@pytest.mark.parametrize(("xs", "size", "mode", "align"), INTERPOLATE_MODES, ids=str)
def test_interpolate_modes(
    backend: Any, float_dtype: DType, xs: Any, size: Any, mode: str, align: bool, rng: Any
) -> None:
    x, tx = float_input(backend, rng, float_dtype, xs)
    out = tensor_module().interpolate(tx, size, mode=mode, align_corners=align)
    check_float(out, ref.interpolate(x, size, mode, align), float_dtype, terms=8, what=f"interpolate {mode}")


@covers("interpolate_backward")
@pytest.mark.parametrize(("xs", "size", "mode", "align"), INTERPOLATE_MODES, ids=str)
def test_interpolate_modes_backward_helper(
    backend: Any, float_dtype: DType, xs: Any, size: Any, mode: str, align: bool, rng: Any
) -> None:
    _, tx = float_input(backend, rng, float_dtype, xs)
    g, tg = float_input(backend, rng, float_dtype, (xs[0], xs[1], *size))
    dx = backend.interpolate_backward(tx._p, tg._p, size, mode, align)
    expected = vjp_linear(lambda v: ref.interpolate(v, size, mode, align), xs, g)
    check_float(wrap_float(backend, dx), expected, float_dtype, terms=16, what=f"interpolate_backward {mode}")


@covers("interpolate")
@pytest.mark.parametrize(
    ("length", "kw", "mode", "out"),
    [
        (5, {"output_size": 8}, "linear", 8),
        (5, {"scale_factor": 2.0}, "nearest", 10),
        (6, {"scale_factor": 0.5}, "nearest-exact", 3),
        (4, {"output_size": 7, "align_corners": True}, "cubic", 7),
    ],
    ids=str,
)
def test_interpolate_1d(
    backend: Any, float_dtype: DType, length: int, kw: Any, mode: str, out: int, rng: Any
) -> None:
    x, tx = float_input(backend, rng, float_dtype, (2, 3, length))
    got = tensor_module().interpolate1d(tx, mode=mode, **kw)
    ref_mode = {"linear": "bilinear", "cubic": "bicubic"}.get(mode, mode)
    want = ref.interpolate(x[:, :, None, :], (1, out), ref_mode, kw.get("align_corners", False))[:, :, 0]
    check_float(got, want, float_dtype, terms=8, what=f"interpolate1d {mode}")


@covers("interpolate")
def test_interpolate_scale_factor(backend: Any, rng: Any) -> None:
    dtype = backend.float_dtype
    x, tx = float_input(backend, rng, dtype, (1, 2, 4, 6))
    got = tensor_module().interpolate(tx, scale_factor=(1.5, 0.5), mode="bilinear")
    # floor(4 * 1.5) = 6, floor(6 * 0.5) = 3; then resampled by sizes alone.
    check_float(got, ref.interpolate(x, (6, 3), "bilinear", False), dtype, terms=4, what="scale_factor")


def test_interpolate_argument_errors(backend: Any) -> None:
    F = tensor_module()
    t = make(backend, np.zeros((1, 1, 4, 4)), backend.float_dtype)
    with pytest.raises(ValueError, match="exactly one of output_size and scale_factor"):
        F.interpolate(t)
    with pytest.raises(ValueError, match="exactly one of output_size and scale_factor"):
        F.interpolate(t, 2, scale_factor=2.0)
    with pytest.raises(ValueError, match="mode must be one of"):
        F.interpolate(t, 2, mode="area")
    with pytest.raises(ShapeError, match="empty output"):
        F.interpolate(t, scale_factor=0.1)
    with pytest.raises(ShapeError, match=r"\[N, C, L\] or \[N, C, H, W\]"):
        F.interpolate(make(backend, np.zeros((4, 4)), backend.float_dtype), 2)
    with pytest.raises(ShapeError, match=r"\[N, C, L\]"):
        F.interpolate1d(t, 2)


# -- grid_sample_2d -------------------------------------------------------------------------------
GRID_SAMPLE = [
    ("bilinear", "zeros", False),
    ("bilinear", "zeros", True),
    ("bilinear", "border", False),
    ("bilinear", "border", True),
    ("bilinear", "reflection", False),
    ("bilinear", "reflection", True),
]


@covers("grid_sample_2d")
@pytest.mark.parametrize(("mode", "padding", "align"), GRID_SAMPLE, ids=str)
def test_grid_sample_2d(
    backend: Any, float_dtype: DType, mode: str, padding: str, align: bool, rng: Any
) -> None:
    x, tx = float_input(backend, rng, float_dtype, (2, 3, 4, 5))
    grid, tgrid = float_input(backend, rng, float_dtype, (2, 3, 6, 2), -1.6, 1.6)  # some points outside
    out = tensor_module().grid_sample_2d(tx, tgrid, mode, padding, align)
    want = ref.grid_sample_2d(x, grid, mode, padding, align)
    # Positions are rounded to the dtype and scaled by the size: allow for that in half precision.
    rtol, atol = (None, None) if float_dtype in (DType.F64, DType.F32) else (8 * EPS[float_dtype],) * 2
    check_float(out, want, float_dtype, terms=8, rtol=rtol, atol=atol, what=f"grid_sample_2d {padding}")


def _pixel_grid(rng: Any, shape: tuple[int, int, int], h: int, w: int, align: bool) -> np.ndarray:
    """Grid points within 0.3 pixel of a pixel centre (some outside the input): rounding to the
    nearest pixel is then unambiguous in every dtype."""
    n, oh, ow = shape
    px = rng.integers(-1, w + 1, (n, oh, ow)) + rng.uniform(-0.3, 0.3, (n, oh, ow))
    py = rng.integers(-1, h + 1, (n, oh, ow)) + rng.uniform(-0.3, 0.3, (n, oh, ow))

    def normalize(p: np.ndarray, size: int) -> np.ndarray:
        return 2.0 * p / (size - 1) - 1.0 if align else (2.0 * p + 1.0) / size - 1.0

    return np.stack([normalize(px, w), normalize(py, h)], -1)


@covers("grid_sample_2d")
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [False, True])
def test_grid_sample_2d_nearest(backend: Any, padding: str, align: bool, rng: Any) -> None:
    dtype = backend.float_dtype
    x, tx = float_input(backend, rng, dtype, (1, 2, 4, 5))
    grid = _pixel_grid(rng, (1, 3, 4), 4, 5, align)
    tgrid = make(backend, grid, dtype)
    out = tensor_module().grid_sample_2d(tx, tgrid, "nearest", padding, align)
    want = ref.grid_sample_2d(x, f64(grid.astype(dtype.numpy)), "nearest", padding, align)
    check_float(out, want, dtype, what=f"grid_sample_2d nearest {padding}")


@covers("grid_sample_2d")
def test_grid_sample_2d_identity_grid_reproduces_the_input(backend: Any, rng: Any) -> None:
    # With align_corners the pixel centres sit on linspace(-1, 1): sampling there is the identity.
    dtype = backend.float_dtype
    x, tx = float_input(backend, rng, dtype, (1, 2, 3, 4))
    ys, xs = np.meshgrid(np.linspace(-1, 1, 3), np.linspace(-1, 1, 4), indexing="ij")
    grid = make(backend, np.stack([xs, ys], -1)[None], dtype)
    check_float(
        tensor_module().grid_sample_2d(tx, grid, align_corners=True), x, dtype, terms=4, what="identity"
    )


def test_grid_sample_2d_argument_errors(backend: Any) -> None:
    F = tensor_module()
    dtype = backend.float_dtype
    x = make(backend, np.zeros((2, 1, 3, 3)), dtype)
    with pytest.raises(ShapeError, match=r"grid must have shape \[2, H_out, W_out, 2\]"):
        F.grid_sample_2d(x, make(backend, np.zeros((1, 2, 2, 2)), dtype))
    with pytest.raises(ShapeError, match="grid must have shape"):
        F.grid_sample_2d(x, make(backend, np.zeros((2, 2, 2, 3)), dtype))
    grid = make(backend, np.zeros((2, 2, 2, 2)), dtype)
    with pytest.raises(ValueError, match="mode must be one of"):
        F.grid_sample_2d(x, grid, mode="bicubic")
    with pytest.raises(ValueError, match="padding_mode must be one of"):
        F.grid_sample_2d(x, grid, padding_mode="wrap")
