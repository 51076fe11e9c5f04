"""Interpolation modes beyond nearest/bilinear (nearest-exact, bicubic), 1-D inputs, scale
factors, and grid_sample_2d, against the pixel-by-pixel NumPy references of
`burn.testing.nn_reference_sampling`; plus the functional `linear` and
`cross_entropy_with_logits`."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.errors import ShapeError
from burn.foundations.dtype import DType
from burn.testing import covers
from burn.testing import nn_reference as nn_ref
from burn.testing import nn_reference_sampling as ref
from burn.testing.helpers import EPS, check_float, f64, make, rand_float


def _module() -> Any:
    from burn.tensor import module

    return module


def _input(
    backend: Any, rng: Any, dtype: DType, shape: tuple[int, ...], low: float = -2, high: float = 2
) -> Any:
    x = rand_float(rng, shape, dtype, low, high)
    return f64(x), make(backend, x, dtype)


def _wrap_float(backend: Any, primitive: Any) -> Any:
    from burn import Float
    from burn.tensor._base import wrap

    return wrap(primitive, backend, Float)


# -- interpolate ----------------------------------------------------------------------------------
INTERPOLATE = [
    ((1, 2, 4, 5), (7, 9), "nearest-exact", False),
    ((1, 2, 8, 6), (3, 4), "nearest-exact", False),
    ((1, 2, 4, 5), (7, 9), "bicubic", False),
    ((1, 2, 4, 5), (7, 9), "bicubic", True),
    ((2, 1, 6, 6), (3, 4), "bicubic", False),
    ((1, 1, 6, 5), (4, 2), "bicubic", True),
    ((1, 1, 2, 1), (3, 1), "bicubic", False),
]


@covers("interpolate")
@pytest.mark.parametrize(("xs", "size", "mode", "align"), INTERPOLATE, ids=str)
def test_interpolate_modes(
    backend: Any, float_dtype: DType, xs: Any, size: Any, mode: str, align: bool, rng: Any
) -> None:
    x, tx = _input(backend, rng, float_dtype, xs)
    out = _module().interpolate(tx, size, mode=mode, align_corners=align)
    check_float(out, ref.interpolate(x, size, mode, align), float_dtype, terms=8, what=f"interpolate {mode}")


@covers("interpolate_backward")
@pytest.mark.parametrize(("xs", "size", "mode", "align"), INTERPOLATE, ids=str)
def test_interpolate_modes_backward_helper(
    backend: Any, float_dtype: DType, xs: Any, size: Any, mode: str, align: bool, rng: Any
) -> None:
    _, tx = _input(backend, rng, float_dtype, xs)
    g, tg = _input(backend, rng, float_dtype, (xs[0], xs[1], *size))
    dx = backend.interpolate_backward(tx._p, tg._p, size, mode, align)
    expected = nn_ref.vjp_linear(lambda v: ref.interpolate(v, size, mode, align), xs, g)
    check_float(
        _wrap_float(backend, dx), expected, float_dtype, terms=16, what=f"interpolate_backward {mode}"
    )


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
    x, tx = _input(backend, rng, float_dtype, (2, 3, length))
    got = _module().interpolate1d(tx, mode=mode, **kw)
    ref_mode = {"linear": "bilinear", "cubic": "bicubic"}.get(mode, mode)
    want = ref.interpolate(x[:, :, None, :], (1, out), ref_mode, kw.get("align_corners", False))[:, :, 0]
    check_float(got, want, float_dtype, terms=8, what=f"interpolate1d {mode}")


@covers("interpolate")
def test_interpolate_scale_factor(backend: Any, rng: Any) -> None:
    dtype = backend.float_dtype
    x, tx = _input(backend, rng, dtype, (1, 2, 4, 6))
    got = _module().interpolate(tx, scale_factor=(1.5, 0.5), mode="bilinear")
    # floor(4 * 1.5) = 6, floor(6 * 0.5) = 3; then resampled by sizes alone.
    check_float(got, ref.interpolate(x, (6, 3), "bilinear", False), dtype, terms=4, what="scale_factor")


def test_interpolate_argument_errors(backend: Any) -> None:
    F = _module()
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
    x, tx = _input(backend, rng, float_dtype, (2, 3, 4, 5))
    grid, tgrid = _input(backend, rng, float_dtype, (2, 3, 6, 2), -1.6, 1.6)  # some points outside
    out = _module().grid_sample_2d(tx, tgrid, mode, padding, align)
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
    x, tx = _input(backend, rng, dtype, (1, 2, 4, 5))
    grid = _pixel_grid(rng, (1, 3, 4), 4, 5, align)
    tgrid = make(backend, grid, dtype)
    out = _module().grid_sample_2d(tx, tgrid, "nearest", padding, align)
    want = ref.grid_sample_2d(x, f64(grid.astype(dtype.numpy)), "nearest", padding, align)
    check_float(out, want, dtype, what=f"grid_sample_2d nearest {padding}")


@covers("grid_sample_2d")
def test_grid_sample_2d_identity_grid_reproduces_the_input(backend: Any, rng: Any) -> None:
    # With align_corners the pixel centres sit on linspace(-1, 1): sampling there is the identity.
    dtype = backend.float_dtype
    x, tx = _input(backend, rng, dtype, (1, 2, 3, 4))
    ys, xs = np.meshgrid(np.linspace(-1, 1, 3), np.linspace(-1, 1, 4), indexing="ij")
    grid = make(backend, np.stack([xs, ys], -1)[None], dtype)
    check_float(_module().grid_sample_2d(tx, grid, align_corners=True), x, dtype, terms=4, what="identity")


def test_grid_sample_2d_argument_errors(backend: Any) -> None:
    F = _module()
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


# -- functional linear and cross_entropy_with_logits (compositions) ----------------------------
@pytest.mark.parametrize("shape", [(3,), (2, 3), (2, 4, 3)], ids=str)
def test_linear(backend: Any, float_dtype: DType, shape: Any, rng: Any) -> None:
    x, tx = _input(backend, rng, float_dtype, shape)
    w, tw = _input(backend, rng, float_dtype, (3, 5))
    bias, tb = _input(backend, rng, float_dtype, (5,))
    F = _module()
    check_float(F.linear(tx, tw, tb), x @ w + bias, float_dtype, terms=4, what="linear")
    check_float(F.linear(tx, tw), x @ w, float_dtype, terms=4, what="linear without bias")
    with pytest.raises(ShapeError, match=r"weight must be \[d_input=3, d_output\]"):
        F.linear(tx, make(backend, np.zeros((5, 3)), float_dtype))


def test_cross_entropy_with_logits(backend: Any, rng: Any) -> None:
    dtype = backend.float_dtype
    logits, tl = _input(backend, rng, dtype, (2, 3, 4))
    probs = nn_ref.softmax(rng.standard_normal((2, 3, 4)), -1)
    tp = make(backend, probs, dtype)
    want = -(nn_ref.log_softmax(logits, -1) * f64(probs.astype(dtype.numpy))).sum(-1).mean()
    check_float(_module().cross_entropy_with_logits(tl, tp), [want], dtype, terms=8, what="cross_entropy")
    with pytest.raises(ShapeError, match="must have the same shape"):
        _module().cross_entropy_with_logits(tl, make(backend, probs[0], dtype))
