"""The direct grouped convolutions (`ops.grouped`, `kernels.grouped`) against the im2col + GEMM
path they replace: which convolutions take them, the same results to rounding in float32 and
float64, conv1d through them, and the same bits at any thread count on either pool (the weight
gradient: the same within rounding)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn_ndarray import NdArray
from burn_ndarray.ops import conv, grouped
from burn_ndarray.runtime import tbb

Pair = tuple[int, int]
# (x shape, weight shape, stride, padding, dilation, groups)
CASES: list[tuple[tuple[int, ...], tuple[int, ...], Pair, Pair, Pair, int]] = [
    ((2, 16, 12, 11), (16, 1, 3, 3), (1, 1), (1, 1), (1, 1), 16),  # depthwise
    ((2, 8, 13, 12), (16, 1, 3, 3), (2, 2), (1, 1), (1, 1), 8),  # channel multiplier 2, stride 2
    ((1, 12, 15, 16), (12, 1, 7, 7), (1, 1), (3, 3), (1, 1), 12),  # ConvNeXt's 7x7
    ((1, 6, 14, 13), (6, 1, 3, 5), (2, 1), (2, 1), (2, 2), 6),  # dilation, uneven kernel, padding
    ((2, 16, 9, 9), (32, 2, 3, 3), (1, 2), (0, 2), (1, 1), 8),  # C/G = 2, O/G = 4
    ((1, 16, 8, 10), (16, 8, 2, 3), (2, 1), (1, 0), (1, 2), 2),  # C/G = 8: the largest direct one
    ((1, 6, 5, 5), (6, 1, 5, 5), (3, 3), (0, 0), (1, 1), 6),  # one output per channel
]
BACKWARD = (conv.conv2d_x_backward, conv.conv2d_weight_backward)


def _gemm_path(monkeypatch: pytest.MonkeyPatch, fn: Any, *args: Any) -> Any:
    with monkeypatch.context() as m:
        m.setattr(grouped, "MAX_GROUP_CHANNELS", 0)
        return fn(*args)


def _spy(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    for name in ("conv", "x_grad", "weight_grad"):
        real = getattr(grouped, name)
        monkeypatch.setattr(grouped, name, lambda *a, _r=real, _n=name: calls.append(_n) or _r(*a))
    return calls


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("x_shape", "w_shape", "stride", "padding", "dilation", "groups"), CASES)
def test_matches_im2col_gemm(
    rng: Any, monkeypatch: pytest.MonkeyPatch, dtype: Any, x_shape: Any, w_shape: Any, stride: Pair,
    padding: Pair, dilation: Pair, groups: int,
) -> None:  # fmt: skip
    x = rng.standard_normal(x_shape).astype(dtype)
    w = rng.standard_normal(w_shape).astype(dtype)
    b = rng.standard_normal(w_shape[0]).astype(dtype)
    hyper = (stride, padding, dilation, groups)
    tol = {"rtol": 1e-5, "atol": 1e-5} if dtype == np.float32 else {"rtol": 1e-12, "atol": 1e-12}
    calls = _spy(monkeypatch)
    y = conv.conv2d(x, w, b, *hyper)
    assert y.dtype == dtype
    np.testing.assert_allclose(y, _gemm_path(monkeypatch, conv.conv2d, x, w, b, *hyper), **tol)
    g = rng.standard_normal(y.shape).astype(dtype)
    for backward in BACKWARD:
        got = backward(x, w, g, *hyper)
        assert got.dtype == dtype and got.shape == (x_shape if backward is BACKWARD[0] else w_shape)
        np.testing.assert_allclose(got, _gemm_path(monkeypatch, backward, x, w, g, *hyper), **tol)
    # x_grad calls conv itself for stride 1 (the flipped-filter forward sum)
    assert calls[:2] == ["conv", "x_grad"] and calls[-1] == "weight_grad"


def test_which_convolutions_run_direct(rng: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _spy(monkeypatch)
    x = rng.standard_normal((1, 32, 6, 6)).astype(np.float32)
    for w, groups in (((8, 32, 3, 3), 1), ((32, 16, 3, 3), 2)):  # one group; C/G = 16: GEMMs
        conv.conv2d(x, rng.standard_normal(w).astype(np.float32), None, (1, 1), (1, 1), (1, 1), groups)
    assert calls == []
    x16 = x.astype(np.float16)  # float16 computes in float32 here, and returns float16
    w16 = rng.standard_normal((32, 1, 3, 3)).astype(np.float16)
    assert conv.conv2d(x16, w16, None, (1, 1), (1, 1), (1, 1), 32).dtype == np.float16
    assert calls == ["conv"]


def test_conv1d_runs_direct(rng: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """conv1d is conv2d of height 1 (forward here, both gradients in autodiff's rule)."""
    calls = _spy(monkeypatch)
    x = rng.standard_normal((2, 8, 30)).astype(np.float32)
    w = rng.standard_normal((16, 1, 5)).astype(np.float32)
    y = NdArray().conv1d(x, w, None, 2, 2, 1, 8)
    want = _gemm_path(monkeypatch, NdArray().conv1d, x, w, None, 2, 2, 1, 8)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)
    assert y.shape == (2, 16, 15) and calls == ["conv"]


# (x shape, weight shape, the forward's and weight gradient's hyper-parameters, the input
# gradient's): per-position kernels (C/G = 2, O/G = 4), then the row kernels (depthwise, the
# input gradient at stride 2)
THREAD_CASES = {
    "positions": ((3, 12, 11, 10), (24, 2, 3, 3), ((2, 1), (1, 1), (1, 1), 6), ((2, 1), (1, 1), (1, 1), 6)),
    "rows": ((3, 16, 11, 10), (16, 1, 3, 3), ((1, 1), (1, 1), (1, 1), 16), ((2, 2), (1, 1), (1, 1), 16)),
}


@pytest.mark.parametrize("native", [True, False])
@pytest.mark.parametrize("kernels", list(THREAD_CASES))
def test_same_bits_at_every_thread_count(
    rng: Any, monkeypatch: pytest.MonkeyPatch, threads: Any, native: bool, kernels: str
) -> None:
    """Rows split between threads from 256 multiply-adds each, on the TBB pool or the Python pool."""
    monkeypatch.setattr(grouped, "NATIVE_WORK_PER_THREAD", 1 << 8)
    monkeypatch.setattr(grouped, "WORK_PER_THREAD", 1 << 8)
    if not native:
        monkeypatch.setattr(tbb, "ready", lambda: False)
    x_shape, w_shape, sums, strided = THREAD_CASES[kernels]
    x = rng.standard_normal(x_shape).astype(np.float32)
    w = rng.standard_normal(w_shape).astype(np.float32)
    g_sums, g_strided = (
        rng.standard_normal(conv.conv2d(x, w, None, *hyper).shape).astype(np.float32)
        for hyper in (sums, strided)
    )
    results = []
    for count in (1, 2, 3):
        threads(count)
        results.append([
            conv.conv2d(x, w, None, *sums), conv.conv2d_x_backward(x, w, g_strided, *strided),
            conv.conv2d_weight_backward(x, w, g_sums, *sums),
        ])  # fmt: skip
    for y, dx, dw in results[1:]:
        assert np.array_equal(y, results[0][0]) and np.array_equal(dx, results[0][1])
        np.testing.assert_allclose(dw, results[0][2], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    ("x_shape", "w_shape", "stride", "padding", "dilation"),
    [
        ((2, 16, 12, 11), (16, 1, 3, 3), (1, 1), (1, 1), (1, 1)),  # EfficientNet-like, stride 1
        ((2, 16, 15, 13), (16, 1, 3, 3), (2, 2), (1, 1), (1, 1)),  # MobileNet-like, odd width
        ((1, 5, 10, 14), (5, 1, 3, 4), (1, 3), (1, 2), (2, 2)),  # stride 3 phases, dilation
    ],
)
def test_rows_match_the_per_position_kernels(
    rng: Any, monkeypatch: pytest.MonkeyPatch, dtype: Any, x_shape: Any, w_shape: Any, stride: Pair,
    padding: Pair, dilation: Pair,
) -> None:  # fmt: skip
    """Depthwise with at most `MAX_ROW_CHANNELS` channels over whole rows (forward and weight
    gradient at width stride 1, the input gradient at any stride) against the per-position sums."""
    x = rng.standard_normal(x_shape).astype(dtype)
    w = rng.standard_normal(w_shape).astype(dtype)
    b = rng.standard_normal(w_shape[0]).astype(dtype)
    hyper = (stride, padding, dilation, x_shape[1])
    tol = {"rtol": 1e-5, "atol": 1e-5} if dtype == np.float32 else {"rtol": 1e-12, "atol": 1e-12}

    def per_position(fn: Any, *args: Any) -> Any:
        with monkeypatch.context() as m:
            m.setattr(grouped, "MAX_ROW_CHANNELS", 0)
            return fn(*args)

    y = conv.conv2d(x, w, b, *hyper)
    np.testing.assert_allclose(y, per_position(conv.conv2d, x, w, b, *hyper), **tol)
    g = rng.standard_normal(y.shape).astype(dtype)
    for backward in BACKWARD:
        got = backward(x, w, g, *hyper)
        assert got.dtype == dtype
        np.testing.assert_allclose(got, per_position(backward, x, w, g, *hyper), **tol)
