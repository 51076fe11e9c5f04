"""The quantization family: float to int with scales and zero points and back, exactly as NumPy
computes the formulas, the dynamic int8 Linear within its tolerance
(`burn.testing.tolerances.quantized_linear_tolerance`), the weight-only quantized Linear within a
float matmul's; then `burn.quantization`'s tensors
(every scheme, 4-bit packing) on top of them.

Exact comparisons use inputs whose quotients ``x / scale`` are exact in float32 (power-of-two
scales) or lie away from a rounding tie: a backend's division may be an ulp off (OpenCL allows
2.5), which moves only values at a tie.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.errors import ShapeError
from burn.foundations.dtype import DType
from burn.testing import covers
from burn.testing.helpers import check_exact, check_float, make, require_dtype, tensor_module
from burn.testing.tolerances import quantized_linear_tolerance, tolerance

F32 = DType.F32


def _reference(x: np.ndarray, scales: np.ndarray, zp: np.ndarray | None, qmin: int, qmax: int) -> np.ndarray:
    q = np.rint(x.astype(np.float32) / scales.astype(np.float32))
    if zp is not None:
        q = q + zp.astype(np.float32)
    return np.clip(q, qmin, qmax)


@covers("quantize_into_int")
@pytest.mark.parametrize("affine", [False, True], ids=["symmetric", "affine"])
def test_quantize_into_int_exact(backend: Any, affine: bool, rng: Any) -> None:
    require_dtype(backend, DType.I8)
    scales = np.array([[0.25], [0.5], [2.0**-6]], dtype=np.float32)  # per row: x / s is exact
    steps = rng.integers(-300, 300, size=(3, 16)).astype(np.float32)
    steps[:, :4] = [[2.5, -2.5, 3.5, -0.5]] * 3  # ties: round half to even
    x = steps * scales
    zp = rng.integers(-5, 5, size=(3, 1)) if affine else None
    F = tensor_module()
    tz = None if zp is None else make(backend, zp, DType.I8)
    out = F.quantize_into_int(make(backend, x, F32), make(backend, scales, F32), tz, -128, 127, DType.I8)
    check_exact(out, _reference(x, scales, zp, -128, 127), DType.I8, what="quantize_into_int")


@covers("quantize_into_int")
def test_quantize_into_int_any_scale(backend: Any, rng: Any) -> None:
    x = rng.standard_normal((4, 33)).astype(np.float32)
    scales = (np.abs(x).max(axis=1, keepdims=True) / np.float32(7)).astype(np.float32)
    F = tensor_module()
    dtype = backend.int_dtype
    out = F.quantize_into_int(make(backend, x, F32), make(backend, scales, F32), None, -7, 7, dtype)
    got = np.asarray(out.to_data().array)
    expected = _reference(x, scales, None, -7, 7)
    quotient = x.astype(np.float64) / scales
    clear = np.abs(np.abs(quotient - np.floor(quotient)) - 0.5) > 1e-4  # away from a tie
    assert out.dtype is dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got[clear], expected[clear])
    assert np.all(np.abs(got - expected) <= 1)


@covers("dequantize")
@pytest.mark.parametrize("affine", [False, True], ids=["symmetric", "affine"])
def test_dequantize_exact(backend: Any, affine: bool, rng: Any) -> None:
    require_dtype(backend, DType.I8)
    q = rng.integers(-128, 128, size=(2, 3, 8))
    scales = rng.uniform(0.001, 0.1, size=(1, 3, 1)).astype(np.float32)
    zp = rng.integers(-10, 10, size=(1, 3, 1)) if affine else None
    F = tensor_module()
    tz = None if zp is None else make(backend, zp, DType.I8)
    out = F.dequantize(make(backend, q, DType.I8), make(backend, scales, F32), tz)
    shifted = (q - (0 if zp is None else zp)).astype(np.float32)  # small ints: exact in float32
    check_exact(out, shifted * scales, F32, what="dequantize")


@covers("dequantize", "quantize_into_int")
def test_quantize_ops_reject_bad_operands(backend: Any) -> None:
    from burn.errors import ShapeError

    F = tensor_module()
    x = make(backend, np.ones((2, 4), dtype=np.float32), F32)
    with pytest.raises(ShapeError, match="quantize_into_int: scales of shape"):
        F.quantize_into_int(x, make(backend, np.ones(3, dtype=np.float32), F32), None, -127, 127, DType.I32)
    with pytest.raises(ValueError, match="dtype must be an int type"):
        F.quantize_into_int(x, make(backend, np.ones(1, dtype=np.float32), F32), None, -127, 127, F32)
    with pytest.raises(TypeError, match="dequantize: values must be an Int tensor"):
        F.dequantize(x, make(backend, np.ones(1, dtype=np.float32), F32), None)


def _linear_inputs(rng: Any, m: int, k: int, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x = rng.standard_normal((m, k)).astype(np.float32)
    w = rng.integers(-127, 128, size=(n, k)).astype(np.int8)
    s = rng.uniform(0.001, 0.02, size=n).astype(np.float32)
    return x, w, s


@covers("quantized_linear")
@pytest.mark.parametrize("shape", [(1, 8, 3), (5, 64, 17), (7, 130, 33)], ids=str)
def test_quantized_linear_within_bound(backend: Any, shape: tuple[int, int, int], rng: Any) -> None:
    require_dtype(backend, DType.I8)
    m, k, n = shape
    x, w, s = _linear_inputs(rng, m, k, n)
    x[0] = 0.0  # a row of zeros: scale 1, output exactly the bias
    bias = rng.standard_normal(n).astype(np.float32)
    F = tensor_module()
    out = F.quantized_linear(
        make(backend, x, F32), make(backend, w, DType.I8), make(backend, s, F32), make(backend, bias, F32)
    )
    w_deq = w.astype(np.float64) * s[:, None]
    expected = x.astype(np.float64) @ w_deq.T + bias
    x_step = np.abs(x).max(axis=1) / 127
    atol = np.array(
        [[quantized_linear_tolerance(xs, ws) for ws in np.abs(w_deq).sum(axis=1)] for xs in x_step]
    )
    got = np.asarray(out.to_data().array, dtype=np.float64)
    assert out.dtype is F32 and got.shape == (m, n)
    assert np.all(np.abs(got - expected) <= atol), f"max excess {np.max(np.abs(got - expected) - atol)}"
    rtol, atol1 = tolerance(DType.F32)  # the all-zero row is the bias, added once in float32
    np.testing.assert_allclose(got[0], bias, rtol=rtol, atol=atol1)


@covers("quantized_linear")
def test_quantized_linear_integer_sums(backend: Any, rng: Any) -> None:
    """Rows whose max is 127 steps of 1/16: the activation quantizes exactly, so the result is the
    integer product scaled, up to the float rounding of the scalings; batch dims are kept."""
    require_dtype(backend, DType.I8)
    q = rng.integers(-127, 128, size=(2, 3, 40))
    q[..., 0] = 127
    x = (q / 16).astype(np.float32)
    w = rng.integers(-127, 128, size=(5, 40)).astype(np.int8)
    s = np.full(1, 0.0078125, dtype=np.float32)  # one scale for the whole weight
    out = tensor_module().quantized_linear(
        make(backend, x, F32), make(backend, w, DType.I8), make(backend, s, F32)
    )
    expected = (q.astype(np.int64) @ w.T.astype(np.int64)) / 16 * 0.0078125
    check_float(out, expected, F32, terms=4, what="quantized_linear")


def _stored_weight(
    rng: Any, value: str, n: int, k: int, blocks: int, affine: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray]:
    """Stored values (packed for 4-bit), scales, zero points and the dequantized ``[n, k]``
    float64 weight, for `blocks` scales a row (0: one scale for the whole weight)."""
    lo, hi = {"int8": (-128, 128), "int4": (-8, 8), "uint4": (0, 16)}[value]
    q = rng.integers(lo, hi, size=(n, k))
    size = k // max(blocks, 1)
    s_shape = (1,) if blocks == 0 else (n, blocks, 1)
    scales = rng.uniform(0.01, 0.1, size=s_shape).astype(np.float32)
    zp = rng.integers(lo, hi, size=s_shape) if affine else None
    per_value = np.broadcast_to(scales, (n, 1, 1)) if blocks == 0 else scales
    offsets = 0 if zp is None else np.broadcast_to(zp, per_value.shape)
    w = ((q.reshape(n, -1, size) - offsets) * per_value.astype(np.float64)).reshape(n, k)
    if value == "int8":
        stored = q.astype(np.int8)
    else:
        nibbles = q & 15
        stored = (nibbles[:, 0::2] | (nibbles[:, 1::2] << 4)).astype(np.uint8)
    return stored, scales, zp, w


@covers("dequantized_linear")
@pytest.mark.parametrize("value", ["int8", "int4", "uint4"])
@pytest.mark.parametrize(
    "m, k, n, blocks, affine",
    [(1, 64, 9, 2, False), (3, 32, 5, 0, True), (20, 96, 7, 3, True), (2, 64, 300, 1, False)],
    ids=str,
)
def test_dequantized_linear_matches_float_product(
    backend: Any, value: str, m: int, k: int, n: int, blocks: int, affine: bool, rng: Any
) -> None:
    """The product with the dequantized weight, per tensor, per row and per block, symmetric
    and affine, with batch dims, few rows (a decoding step) and many."""
    require_dtype(backend, DType.I8)
    require_dtype(backend, DType.U8)
    stored, scales, zp, w = _stored_weight(rng, value, n, k, blocks, affine)
    x = rng.standard_normal((m, 1, k)).astype(np.float32)
    bias = rng.standard_normal(n).astype(np.float32)
    zp_dtype = DType.U8 if value == "uint4" else DType.I8
    out = tensor_module().dequantized_linear(
        make(backend, x, F32),
        make(backend, stored, DType.I8 if value == "int8" else DType.U8),
        make(backend, scales, F32),
        None if zp is None else make(backend, zp, zp_dtype),
        value,
        make(backend, bias, F32),
    )
    expected = x.astype(np.float64) @ w.T + bias
    check_float(out, expected, F32, terms=k, what="dequantized_linear")


@covers("dequantized_linear")
def test_dequantized_linear_padded_rows(backend: Any, rng: Any) -> None:
    """Rows stored padded to whole blocks: the product stops at x's features."""
    require_dtype(backend, DType.U8)
    stored, scales, _, w = _stored_weight(rng, "int4", 4, 64, 2, False)
    x = rng.standard_normal((2, 50)).astype(np.float32)
    out = tensor_module().dequantized_linear(
        make(backend, x, F32), make(backend, stored, DType.U8), make(backend, scales, F32), None, "int4"
    )
    check_float(out, x.astype(np.float64) @ w[:, :50].T, F32, terms=50, what="dequantized_linear")


@covers("dequantized_linear")
def test_dequantized_linear_errors(backend: Any) -> None:
    from burn.errors import ShapeError

    require_dtype(backend, DType.I8)
    F = tensor_module()
    x = make(backend, np.ones((2, 8), dtype=np.float32), F32)
    w = make(backend, np.ones((3, 8), dtype=np.int8), DType.I8)
    one = make(backend, np.ones(1, dtype=np.float32), F32)
    with pytest.raises(ValueError, match="dequantized_linear: value"):
        F.dequantized_linear(x, w, one, None, "int3")
    with pytest.raises(ShapeError, match="dequantized_linear: x has 8 features"):
        F.dequantized_linear(x, make(backend, np.ones((3, 4), dtype=np.int8), DType.I8), one, None, "int8")
    with pytest.raises(ShapeError, match="dequantized_linear: scales"):
        F.dequantized_linear(x, w, make(backend, np.ones((3, 3, 1), dtype=np.float32), F32), None, "int8")
    with pytest.raises(ShapeError, match="dequantized_linear: bias"):
        F.dequantized_linear(x, w, one, None, "int8", make(backend, np.ones(2, dtype=np.float32), F32))


@covers("quantized_linear")
def test_quantized_linear_shape_errors(backend: Any) -> None:
    from burn.errors import ShapeError

    require_dtype(backend, DType.I8)
    F = tensor_module()
    x = make(backend, np.ones((2, 4), dtype=np.float32), F32)
    w = make(backend, np.ones((3, 5), dtype=np.int8), DType.I8)
    with pytest.raises(ShapeError, match="quantized_linear: x"):
        F.quantized_linear(x, w, make(backend, np.ones(3, dtype=np.float32), F32))


# -- burn.quantization's tensors on top of the ops --------------------------------------------
SCHEMES = [
    ("int8", "tensor", "symmetric"),
    ("int8", "channel", "symmetric"),
    ("int8", "block", "affine"),
    ("int4", "block", "symmetric"),
    ("int4", "channel", "affine"),
    ("uint4", "tensor", "affine"),
]


@pytest.mark.parametrize("scheme", SCHEMES, ids=lambda s: "-".join(s))
def test_quantized_tensor_round_trip(backend: Any, scheme: tuple[str, str, str], rng: Any) -> None:
    """Each scheme's stored integers and dequantized values against NumPy's, from the scales
    the backend found (themselves within float32 rounding of NumPy's). A backend without 8-bit
    ints stores the same integers in its int dtype."""
    from burn.quantization import QuantScheme, quantize_tensor, unpack

    value, level, mode = scheme
    s = QuantScheme(value, level, mode, axis=1, block_size=8)  # type: ignore[arg-type]
    x = rng.standard_normal((3, 4, 16)).astype(np.float32)
    q = quantize_tensor(make(backend, x, F32), s)
    scales = np.asarray(q.scales.to_data().array)
    zp = None if q.zero_points is None else np.asarray(q.zero_points.to_data().array).astype(np.int64)
    xb = x.reshape(3, 4, 2, 8) if level == "block" else x
    dims = {"tensor": (0, 1, 2), "channel": (0, 2), "block": (3,)}[level]
    qmin, qmax = s.range()
    if mode == "symmetric":
        np_scales = np.abs(xb).max(axis=dims, keepdims=True) / np.float32(qmax)
    else:
        lo, hi = (
            np.minimum(xb.min(axis=dims, keepdims=True), 0),
            np.maximum(xb.max(axis=dims, keepdims=True), 0),
        )
        np_scales = (hi - lo) / np.float32(qmax - qmin)
    np.testing.assert_allclose(scales.reshape(np_scales.shape), np_scales, rtol=tolerance(DType.F32)[0])
    expected = _reference(
        xb, scales.reshape(np_scales.shape), None if zp is None else zp.reshape(np_scales.shape), qmin, qmax
    )
    stored = unpack(q.values, signed=value == "int4") if s.packed else q.values
    got = np.asarray(stored.to_data().array).reshape(xb.shape)
    quotient = xb.astype(np.float64) / scales.reshape(np_scales.shape)
    clear = np.abs(np.abs(quotient - np.floor(quotient)) - 0.5) > 1e-4
    np.testing.assert_array_equal(got[clear], expected[clear])
    assert np.all(np.abs(got - expected) <= 1)
    shifted = got - (0 if zp is None else zp.reshape(np_scales.shape))
    deq = (shifted.astype(np.float32) * scales.reshape(np_scales.shape)).reshape(x.shape)
    check_exact(q.dequantize(), deq, F32, what=f"dequantize {s}")
    half_step = np.broadcast_to(scales.reshape(np_scales.shape) / 2, xb.shape).reshape(x.shape)
    assert np.all(np.abs(deq - x) <= half_step * (1 + 1e-5) + 1e-7)


@pytest.mark.parametrize("signed", [True, False], ids=["int4", "uint4"])
def test_pack_unpack_exact(backend: Any, signed: bool, rng: Any) -> None:
    from burn.quantization import pack, unpack

    def stored(dtype: DType) -> DType:  # the backend's int dtype where it lacks `dtype`
        return dtype if backend.capabilities.supports(dtype) else backend.int_dtype

    values = rng.integers(-8, 8, size=(3, 10)) if signed else rng.integers(0, 16, size=(3, 10))
    packed = pack(make(backend, values, backend.int_dtype))
    nibbles = (values & 15).reshape(3, 5, 2)
    check_exact(packed, nibbles[..., 0] | (nibbles[..., 1] << 4), stored(DType.U8), what="pack")
    check_exact(unpack(packed, signed=signed), values, stored(DType.I32), what="unpack")


# -- static quantization: calibrated input scale and zero point --------------------------------------
def _conv_reference(x: np.ndarray, w: np.ndarray, stride: int, padding: int, groups: int) -> np.ndarray:
    """float64 ``conv2d`` of ``x [N, C, H, W]`` with ``w [O, C/G, KH, KW]`` (zero padding)."""
    o, cg, kh, kw = w.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    win = np.lib.stride_tricks.sliding_window_view(xp, (kh, kw), axis=(2, 3))[:, :, ::stride, ::stride]
    per = o // groups
    outs = [
        np.einsum(
            "nchwij,ocij->nohw", win[:, g * cg : (g + 1) * cg], w[g * per : (g + 1) * per].astype(np.float64)
        )
        for g in range(groups)
    ]
    return np.concatenate(outs, axis=1)


def _on_grid(rng: Any, shape: tuple[int, ...], zp: int, step: float) -> np.ndarray:
    """Floats ``(q - zp) * step`` for integers q in [-127, 127]: they quantize exactly."""
    q = rng.integers(-127, 128, size=shape)
    return ((q - zp) * step).astype(np.float32)


@covers("static_quantized_linear")
@pytest.mark.parametrize("zp", [0, -20, 37], ids=lambda z: f"zp{z}")
def test_static_quantized_linear_on_the_grid(backend: Any, zp: int, rng: Any) -> None:
    """Inputs on the calibrated grid quantize exactly: the result is the integer product scaled
    (with the zero point taken out), up to the float rounding of the scalings."""
    require_dtype(backend, DType.I8)
    step = 2.0**-4
    x = _on_grid(rng, (2, 3, 40), zp, step)
    w = rng.integers(-127, 128, size=(6, 40)).astype(np.int8)
    s = rng.uniform(0.001, 0.02, size=6).astype(np.float32)
    bias = rng.standard_normal(6).astype(np.float32)
    F = tensor_module()
    out = F.static_quantized_linear(
        make(backend, x, F32),
        make(backend, w, DType.I8),
        make(backend, s, F32),
        make(backend, [step], F32),
        make(backend, [zp], DType.I8),
        make(backend, bias, F32),
    )
    expected = x.astype(np.float64) @ (w.astype(np.float64) * s[:, None]).T + bias
    assert out.shape == (2, 3, 6)
    check_float(out, expected, F32, terms=4, what="static_quantized_linear")


@covers("static_quantized_linear")
def test_static_quantized_linear_within_bound_and_saturates(backend: Any, rng: Any) -> None:
    """Inputs inside the calibrated range are off by at most half a step each
    (`quantized_linear_tolerance`); inputs beyond it saturate at the range's ends."""
    require_dtype(backend, DType.I8)
    m, k, n = 9, 70, 13
    x, w, s = _linear_inputs(rng, m, k, n)
    lo, hi = float(x.min()), float(x.max())
    step = np.float32((hi - lo) / 250)  # a little wider than the values: none saturates
    zp = int(np.clip(-127 - np.rint(lo / step), -127, 127))
    F = tensor_module()
    args = (
        make(backend, w, DType.I8),
        make(backend, s, F32),
        make(backend, [step], F32),
        make(backend, [zp], DType.I8),
    )
    out = F.static_quantized_linear(make(backend, x, F32), *args)
    w_deq = w.astype(np.float64) * s[:, None]
    expected = x.astype(np.float64) @ w_deq.T
    atol = np.array([quantized_linear_tolerance(float(step), ws) for ws in np.abs(w_deq).sum(axis=1)])
    got = np.asarray(out.to_data().array, dtype=np.float64)
    assert np.all(np.abs(got - expected) <= atol[None, :]), (
        f"max excess {np.max(np.abs(got - expected) - atol)}"
    )
    # A row far beyond the range: every input clamps to an end of the grid.
    big = np.where(np.arange(k) % 2 == 0, 1e3, -1e3).astype(np.float32)[None, :]
    clamped = np.where(big > 0, 127 - zp, -127 - zp) * np.float64(step)
    out_big = F.static_quantized_linear(make(backend, big, F32), *args)
    check_float(out_big, clamped @ w_deq.T, F32, terms=4, what="saturated static_quantized_linear")


@covers("static_quantized_conv2d")
@pytest.mark.parametrize(
    "n, c, o, groups, stride, padding, zp",
    [
        (2, 3, 8, 1, 1, 1, 0),
        (1, 4, 6, 2, 2, 0, -9),
        (2, 6, 6, 6, 1, 1, 25),
        (1, 4, 8, 4, 2, 1, 0),
        (20, 2, 3, 1, 1, 1, 4),
    ],
    ids=["plain", "grouped", "depthwise", "depthwise-x2", "many-rows"],
)
def test_static_quantized_conv2d_on_the_grid(
    backend: Any, n: int, c: int, o: int, groups: int, stride: int, padding: int, zp: int, rng: Any
) -> None:
    """Inputs on the grid: the integer convolution scaled; the padding is the zero point, so it
    contributes exactly 0 whatever the zero point."""
    require_dtype(backend, DType.I8)
    step = 2.0**-5
    x = _on_grid(rng, (n, c, 7, 6), zp, step)
    w = rng.integers(-127, 128, size=(o, c // groups, 3, 3)).astype(np.int8)
    s = rng.uniform(0.001, 0.02, size=o).astype(np.float32)
    bias = rng.standard_normal(o).astype(np.float32)
    F = tensor_module()
    out = F.static_quantized_conv2d(
        make(backend, x, F32),
        make(backend, w, DType.I8),
        make(backend, s, F32),
        make(backend, [step], F32),
        make(backend, [zp], DType.I8),
        make(backend, bias, F32),
        stride,
        padding,
        1,
        groups,
    )
    expected = _conv_reference(x, w.astype(np.float64) * s[:, None, None, None], stride, padding, groups)
    expected += bias[None, :, None, None]
    check_float(out, expected, F32, terms=4 * 9 * (c // groups), what="static_quantized_conv2d")


@covers("static_quantized_conv2d", "static_quantized_linear")
def test_static_quantized_ops_reject_bad_operands(backend: Any) -> None:
    F = tensor_module()
    x = make(backend, np.zeros((1, 2, 4, 4)), F32)
    w = make(
        backend,
        np.zeros((3, 2, 3, 3)),
        DType.I8 if backend.capabilities.supports(DType.I8) else backend.int_dtype,
    )
    s, zp = make(backend, [0.1], F32), make(backend, [0], backend.int_dtype)
    with pytest.raises(ShapeError, match="weight_scales must have shape"):
        F.static_quantized_conv2d(x, w, make(backend, np.ones(2), F32), s, zp)
    with pytest.raises(ShapeError, match="input_scale and input_zero_point"):
        F.static_quantized_conv2d(x, w, s, make(backend, [0.1, 0.2], F32), zp)
    with pytest.raises(ShapeError, match="groups=2 does not fit"):
        F.static_quantized_conv2d(x, w, s, s, zp, groups=2)
    with pytest.raises(ShapeError, match="do not multiply"):
        F.static_quantized_linear(make(backend, np.zeros((2, 5)), F32), w.reshape((3, 18)), s, s, zp)
    with pytest.raises(TypeError):
        F.static_quantized_linear(make(backend, np.zeros((2, 18)), F32), w.reshape((3, 18)), s, zp, zp)
