"""burn-ndarray's native kernels for Burn's wider op set against the burn-core defaults they
replace (`Backend.op(B, ...)` runs the default, whose inner ops are then NdArray's own):
layout ops bit for bit, float kernels within a few ulps, on random inputs with repeated
indices and edge shapes."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest

from burn.backend import Backend
from burn_ndarray import NdArray
from burn_ndarray.ops.kinds import last_writes

Gen = np.random.Generator


def _exact(got: Any, want: Any) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
    np.testing.assert_array_equal(got, want)


def _close(got: Any, want: Any, rtol: float = 2e-6, atol: float = 1e-6) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol)


def _ints(rng: Gen, shape: tuple[int, ...], high: int, dtype: Any = np.int64) -> np.ndarray:
    return rng.integers(0, high, size=shape).astype(dtype)


def _nd_indices(rng: Gen, shape: tuple[int, ...], ishape: tuple[int, ...]) -> np.ndarray:
    """Random in-range ``[..., K]`` indices into the first K dims of `shape`."""
    columns = [_ints(rng, ishape[:-1], shape[j]) for j in range(ishape[-1])]
    return np.stack(columns, axis=-1) if columns else np.zeros(ishape, np.int64)


def _data(rng: Gen, shape: tuple[int, ...], kind: str) -> np.ndarray:
    if kind == "float":
        return rng.standard_normal(shape).astype(np.float32)
    if kind == "int":
        return rng.integers(-5, 5, size=shape).astype(np.int64)
    return rng.random(shape) < 0.5


# -- layout ops --------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["float", "int", "bool"])
@pytest.mark.parametrize(("shape", "dim", "size", "step"), [
    ((7,), 0, 3, 2), ((2, 5, 3), 1, 2, 1), ((4, 3), 0, 4, 3), ((2, 3), 1, 4, 1), ((3, 2), 1, 1, 5),
])
def test_unfold(
    B: NdArray, rng: Gen, kind: str, shape: tuple[int, ...], dim: int, size: int, step: int
) -> None:
    x = _data(rng, shape, kind)
    _exact(getattr(B, f"{kind}_unfold")(x, dim, size, step),
           getattr(Backend, f"{kind}_unfold")(B, x, dim, size, step))


@pytest.mark.parametrize("kind", ["float", "int", "bool"])
@pytest.mark.parametrize(("shape", "ishape"), [
    ((4, 3, 2), (5, 1)), ((4, 3, 2), (2, 3, 2)), ((4, 3, 2), (6, 3)), ((4, 3), (3, 0)), ((4, 3), (0, 2)),
])
def test_gather_nd(B: NdArray, rng: Gen, kind: str, shape: tuple[int, ...], ishape: tuple[int, ...]) -> None:
    x = _data(rng, shape, kind)
    idx = _nd_indices(rng, shape, ishape)
    _exact(getattr(B, f"{kind}_gather_nd")(x, idx), getattr(Backend, f"{kind}_gather_nd")(B, x, idx))


def test_gather_nd_of_a_scalar_repeats_it(B: NdArray) -> None:
    x = np.float32(2.5)  # 0-d results of ufuncs are NumPy scalars
    _exact(B.float_gather_nd(x, np.zeros((3, 0), np.int64)), np.full(3, 2.5, np.float32))


@pytest.mark.parametrize("kind", ["float", "int"])
@pytest.mark.parametrize("mode", ["add", "mul", "max", "min", "assign"])
@pytest.mark.parametrize(("shape", "ishape"), [((5, 3), (12, 1)), ((3, 4), (9, 2)), ((2, 2), (0, 1))])
def test_scatter_nd(
    B: NdArray, rng: Gen, kind: str, mode: str, shape: tuple[int, ...], ishape: tuple[int, ...]
) -> None:
    x = _data(rng, shape, kind)
    k = ishape[-1]
    idx = _nd_indices(rng, shape, ishape)  # few targets for many updates: repeats everywhere
    values = _data(rng, (*ishape[:-1], *shape[k:]), kind)
    got = getattr(B, f"{kind}_scatter_nd")(x, idx, values, mode)
    want = getattr(Backend, f"{kind}_scatter_nd")(B, x, idx, values, mode)
    if kind == "float" and mode in ("add", "mul"):
        _close(got, want)  # each run is reduced before it meets the tensor: a different rounding
    else:
        _exact(got, want)


def test_scatter_nd_assign_keeps_the_last_update(B: NdArray, rng: Gen) -> None:
    x = np.zeros(4, np.int64)
    idx = _ints(rng, (200, 1), 4)
    values = np.arange(200, dtype=np.int64)
    want = x.copy()
    for i, v in zip(idx[:, 0], values, strict=True):  # the plain sequential meaning
        want[i] = v
    _exact(B.int_scatter_nd(x, idx, values, "assign"), want)
    assert last_writes(np.array([3, 1, 3, 3, 1])).tolist() == [4, 3]


@pytest.mark.parametrize("kind", ["float", "int", "bool"])
@pytest.mark.parametrize("dim", [0, 1])
def test_scatter_and_select_assign(B: NdArray, rng: Gen, kind: str, dim: int) -> None:
    x = _data(rng, (4, 5), kind)
    ishape = (6, 3) if dim == 0 else (3, 8)  # smaller than the tensor off `dim`, repeats along it
    idx = _ints(rng, ishape, x.shape[dim])
    values = _data(rng, ishape, kind)
    _exact(getattr(B, f"{kind}_scatter_assign")(dim, x, idx, values),
           getattr(Backend, f"{kind}_scatter_assign")(B, dim, x, idx, values))
    rows = _ints(rng, (7,), x.shape[dim])
    values = _data(rng, (7, 5) if dim == 0 else (4, 7), kind)
    _exact(getattr(B, f"{kind}_select_assign")(x, dim, rows, values),
           getattr(Backend, f"{kind}_select_assign")(B, x, dim, rows, values))


@pytest.mark.parametrize("dim", [0, 1])
def test_bool_scatter_and_select_or_accumulate(B: NdArray, rng: Gen, dim: int) -> None:
    x = _data(rng, (4, 5), "bool")
    idx = _ints(rng, (4, 5), x.shape[dim])
    values = _data(rng, (4, 5), "bool")
    _exact(B.bool_scatter_add(dim, x, idx, values), Backend.bool_scatter_add(B, dim, x, idx, values))
    rows = _ints(rng, (9,), x.shape[dim])
    values = _data(rng, (9, 5) if dim == 0 else (4, 9), "bool")
    _exact(B.bool_select_add(x, dim, rows, values), Backend.bool_select_add(B, x, dim, rows, values))


@pytest.mark.parametrize("kind", ["float", "int"])
@pytest.mark.parametrize(("shape", "dim"), [((3,), 0), ((4, 3), 1), ((3, 2, 2), 0)])
def test_cross(B: NdArray, rng: Gen, kind: str, shape: tuple[int, ...], dim: int) -> None:
    a, b = _data(rng, shape, kind), _data(rng, shape, kind)
    _exact(getattr(B, f"{kind}_cross")(a, b, dim), getattr(Backend, f"{kind}_cross")(B, a, b, dim))


@pytest.mark.parametrize("op", ["gather_nd", "scatter_nd", "scatter_assign", "select_assign"])
def test_out_of_range_indices_name_the_op(B: NdArray, op: str) -> None:
    x = np.zeros((3, 2), np.float32)
    with pytest.raises(IndexError, match=rf"{op}: .*out of range \[0, 3\)"):
        if op == "gather_nd":
            B.float_gather_nd(x, np.array([[3]]))
        elif op == "scatter_nd":
            B.float_scatter_nd(x, np.array([[-1]]), np.ones((1, 2), np.float32), "add")
        elif op == "scatter_assign":
            B.float_scatter_assign(0, x, np.array([[0, 3]]), np.ones((1, 2), np.float32))
        else:
            B.float_select_assign(x, 0, np.array([5]), np.ones((1, 2), np.float32))


# -- activations -------------------------------------------------------------------------------
ACTIVATIONS: list[tuple[str, tuple[Any, ...]]] = [
    ("gelu_approximate", ()), ("elu", (0.7,)), ("celu", (1.3,)), ("selu", ()), ("relu6", ()),
    ("hardtanh", (-0.5, 2.0)), ("hard_swish", ()), ("softsign", ()), ("tanhshrink", ()),
    ("threshold", (0.3, -2.0)), ("thresholded_relu", (0.5,)), ("glu", (1,)), ("softmin", (1,)),
]
# Relative tolerance per dtype: the native kernels compute float16/bfloat16 in float32 (and use
# expm1), the defaults in the type itself, so the low types differ by a rounding or two.
DTYPE_RTOL = [(np.float32, 2e-6), (np.float64, 1e-13), (np.float16, 4e-3), (ml_dtypes.bfloat16, 3e-2)]


@pytest.mark.parametrize(("op", "args"), ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
@pytest.mark.parametrize(("dtype", "rtol"), DTYPE_RTOL, ids=["f32", "f64", "f16", "bf16"])
def test_activations(B: NdArray, rng: Gen, op: str, args: tuple[Any, ...], dtype: Any, rtol: float) -> None:
    x = (rng.standard_normal((3, 8)) * 4).astype(dtype)
    x[0, :6] = [0.0, -0.0, 6.0, 0.3, 30.0, -30.0]  # bounds, thresholds and both tails
    got, want = getattr(B, op)(x, *args), getattr(Backend, op)(B, x, *args)
    # The default's x - tanh(x) cancels for |x| < 1 in the low types: an absolute error of an ulp of 1.
    _close(got, want, rtol=rtol, atol=rtol if op == "tanhshrink" else rtol * 1e-2)


@pytest.mark.parametrize("op", ["elu", "relu6", "threshold", "softsign"])
def test_activations_keep_nan_and_scalars(B: NdArray, op: str) -> None:
    args = {"elu": (1.0,), "threshold": (0.0, 5.0)}.get(op, ())
    x = np.array([np.nan, -np.inf, np.inf, -1.0], np.float32)
    with np.errstate(invalid="ignore"):  # softsign: inf / inf is NaN on both sides
        _close(getattr(B, op)(x, *args), getattr(Backend, op)(B, x, *args))
    scalar = np.float32(-0.5)  # a 0-d ufunc result
    _close(getattr(B, op)(scalar, *args), getattr(Backend, op)(B, np.asarray(scalar), *args))


# -- 3-D pooling, conv_transpose1d -------------------------------------------------------------
POOL3D = [  # kernel, stride, padding, dilation
    ((2, 2, 2), (2, 2, 2), (0, 0, 0), (1, 1, 1)),
    ((3, 2, 3), (1, 2, 2), (1, 1, 1), (1, 1, 1)),
    ((2, 3, 2), (2, 1, 1), (1, 0, 1), (2, 1, 2)),
]


@pytest.mark.parametrize(("kernel", "stride", "padding", "dilation"), POOL3D)
def test_max_pool3d(B: NdArray, rng: Gen, kernel: Any, stride: Any, padding: Any, dilation: Any) -> None:
    x = rng.standard_normal((2, 3, 5, 6, 5)).astype(np.float32)
    x[0, 0] = -np.inf  # windows with no finite element: the index names what the default names
    x[1, 1, 2, 3, 4] = np.nan
    x[1, 2, :2] = 0.5  # ties: the first in kernel order wins
    _exact(B.max_pool3d(x, kernel, stride, padding, dilation),
           Backend.max_pool3d(B, x, kernel, stride, padding, dilation))
    values, indices = B.max_pool3d_with_indices(x, kernel, stride, padding, dilation)
    d_values, d_indices = Backend.max_pool3d_with_indices(B, x, kernel, stride, padding, dilation)
    _exact(values, d_values)
    _exact(indices, d_indices)
    grad = rng.standard_normal(values.shape).astype(np.float32)
    _close(B.max_pool3d_with_indices_backward(x, kernel, stride, padding, dilation, grad, indices),
           Backend.max_pool3d_with_indices_backward(B, x, kernel, stride, padding, dilation, grad, indices))


@pytest.mark.parametrize("count_include_pad", [True, False])
@pytest.mark.parametrize(("kernel", "stride", "padding", "dilation"), POOL3D[:2])
def test_avg_pool3d(
    B: NdArray, rng: Gen, kernel: Any, stride: Any, padding: Any, dilation: Any, count_include_pad: bool
) -> None:
    x = rng.standard_normal((2, 3, 5, 6, 5)).astype(np.float32)
    out = B.avg_pool3d(x, kernel, stride, padding, count_include_pad)
    _close(out, Backend.avg_pool3d(B, x, kernel, stride, padding, count_include_pad))
    grad = rng.standard_normal(out.shape).astype(np.float32)
    _close(B.avg_pool3d_backward(x, grad, kernel, stride, padding, count_include_pad),
           Backend.avg_pool3d_backward(B, x, grad, kernel, stride, padding, count_include_pad))


@pytest.mark.parametrize("output_size", [(2, 3, 5), (3, 4, 2), (5, 6, 5)])
def test_adaptive_avg_pool3d(B: NdArray, rng: Gen, output_size: Any) -> None:
    x = rng.standard_normal((2, 2, 5, 6, 5)).astype(np.float32)
    out = B.adaptive_avg_pool3d(x, output_size)
    _close(out, Backend.adaptive_avg_pool3d(B, x, output_size))
    grad = rng.standard_normal(out.shape).astype(np.float32)
    _close(B.adaptive_avg_pool3d_backward(x, grad), Backend.adaptive_avg_pool3d_backward(B, x, grad))


@pytest.mark.parametrize(("stride", "padding", "padding_out", "dilation", "groups"), [
    (1, 0, 0, 1, 1), (2, 1, 1, 1, 2), (3, 2, 1, 2, 1),
])
def test_conv_transpose1d(
    B: NdArray, rng: Gen, stride: int, padding: int, padding_out: int, dilation: int, groups: int
) -> None:
    x = rng.standard_normal((2, 4, 7)).astype(np.float32)
    weight = rng.standard_normal((4, 3, 3)).astype(np.float32)
    bias = rng.standard_normal(3 * groups).astype(np.float32)
    args = (stride, padding, padding_out, dilation, groups)
    _close(B.conv_transpose1d(x, weight, bias, *args), Backend.conv_transpose1d(B, x, weight, bias, *args),
           rtol=1e-5, atol=1e-5)


# -- sampling, deformable convolution, fold ----------------------------------------------------
@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [True, False])
def test_grid_sample_2d(B: NdArray, rng: Gen, mode: str, padding_mode: str, align_corners: bool) -> None:
    x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    grid = rng.uniform(-1.6, 1.6, (2, 3, 6, 2)).astype(np.float32)  # outside the input too
    grid[0, 0, :4] = [[-1.0, -1.0], [1.0, 1.0], [0.25, -0.5], [-1.0, 1.0]]  # corners, exact halves
    _close(B.grid_sample_2d(x, grid, mode, padding_mode, align_corners),
           Backend.grid_sample_2d(B, x, grid, mode, padding_mode, align_corners))


@pytest.mark.parametrize("modulated", [True, False])
@pytest.mark.parametrize(("stride", "padding", "dilation", "weight_groups", "offset_groups"), [
    ((1, 1), (1, 1), (1, 1), 1, 1), ((2, 1), (0, 2), (1, 2), 2, 2), ((1, 2), (1, 0), (2, 1), 1, 4),
])
def test_deform_conv2d(
    B: NdArray, rng: Gen, modulated: bool, stride: Any, padding: Any, dilation: Any, weight_groups: int,
    offset_groups: int,
) -> None:
    n, c_in, c_out, h, w, kh, kw = 2, 4, 6, 5, 6, 3, 2
    oh = (h + 2 * padding[0] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (w + 2 * padding[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    x = rng.standard_normal((n, c_in, h, w)).astype(np.float32)
    offset = (rng.standard_normal((n, 2 * offset_groups * kh * kw, oh, ow)) * 2).astype(np.float32)
    weight = rng.standard_normal((c_out, c_in // weight_groups, kh, kw)).astype(np.float32)
    mask = rng.random((n, offset_groups * kh * kw, oh, ow)).astype(np.float32) if modulated else None
    bias = rng.standard_normal(c_out).astype(np.float32)
    args = (stride, padding, dilation, weight_groups, offset_groups)
    _close(B.deform_conv2d(x, offset, weight, mask, bias, *args),
           Backend.deform_conv2d(B, x, offset, weight, mask, bias, *args), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(("kernel", "stride", "padding", "dilation"), [
    ((2, 3), (1, 1), (0, 0), (1, 1)), ((3, 2), (2, 1), (1, 2), (1, 2)), ((1, 1), (3, 2), (0, 0), (1, 1)),
])
def test_unfold4d_and_fold4d(
    B: NdArray, rng: Gen, kernel: Any, stride: Any, padding: Any, dilation: Any
) -> None:
    x = rng.standard_normal((2, 3, 6, 7)).astype(np.float32)
    cols = B.unfold4d(x, kernel, stride, padding, dilation)
    _exact(cols, Backend.unfold4d(B, x, kernel, stride, padding, dilation))
    _close(B.fold4d(cols, (6, 7), kernel, stride, padding, dilation),
           Backend.fold4d(B, cols, (6, 7), kernel, stride, padding, dilation))
