"""Ops specific to the CuPy backend, on a real GPU (skipped with the probe's reason elsewhere):
fused kernels, atomics, cuBLAS, seeding, devices, DLPack. The conformance suite covers the rest."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from burn.foundations.distribution import Normal
from burn.foundations.dtype import DType


def test_batched_matmul_broadcasts(B: Any, up: Any, down: Any, rng: Any) -> None:
    a = rng.normal(size=(3, 1, 4, 5)).astype(np.float32)
    b = rng.normal(size=(2, 5, 6)).astype(np.float32)
    np.testing.assert_allclose(down(B.float_matmul(up(a), up(b))), a @ b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_fused_gelu_and_its_gradient(B: Any, up: Any, down: Any, dtype: str) -> None:
    x = np.linspace(-6, 6, 101).astype(dtype)
    w = x.astype(np.float64)
    cdf = np.array([0.5 * (1 + math.erf(v / math.sqrt(2))) for v in w])
    tol = 1e-2 if dtype == "float16" else 1e-6
    np.testing.assert_allclose(down(B.gelu(up(x))).astype(np.float64), w * cdf, rtol=tol, atol=tol)
    grad = cdf + w * np.exp(-0.5 * w * w) / math.sqrt(2 * math.pi)
    ones = np.ones_like(x)
    got = down(B.gelu_backward(up(x), up(ones))).astype(np.float64)
    np.testing.assert_allclose(got, grad, rtol=tol, atol=tol)


def test_sigmoid_is_stable_in_both_tails(B: Any, up: Any, down: Any) -> None:
    x = np.array([-1000.0, -30.0, 0.0, 30.0, 1000.0, np.nan])
    out = down(B.sigmoid(up(x)))
    np.testing.assert_allclose(out[:5], [0.0, 1 / (1 + math.exp(30)), 0.5, 1 / (1 + math.exp(-30)), 1.0])
    assert np.isnan(out[5])


def test_int_division_floors_and_by_zero_gives_zero(B: Any, up: Any) -> None:
    a = np.array([7, -7, 7, -7, 5], dtype=np.int32)
    b = np.array([2, 2, -2, -2, 0], dtype=np.int32)
    q = B.int_into_data(B.int_div(up(a), up(b))).array
    r = B.int_into_data(B.int_remainder(up(a), up(b))).array
    assert q.tolist() == [3, -4, -4, 3, 0] and r.tolist() == [1, 1, -1, -1, 0]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int8"])
def test_scatter_add_accumulates_repeats(B: Any, up: Any, dtype: str) -> None:
    tensor = np.zeros((2, 3), dtype=dtype)
    indices = np.array([[0, 0, 2], [1, 1, 1]])
    values = np.array([[1, 2, 3], [100, 100, 100]], dtype=dtype)
    expected = tensor.copy()
    np.add.at(expected, (np.arange(2)[:, None], indices), values)  # int8 wraps, as on the GPU
    out = B.int_scatter_add if "int" in dtype else B.float_scatter_add
    into = B.int_into_data if "int" in dtype else B.float_into_data
    got = into(out(1, up(tensor), up(indices), up(values))).array
    np.testing.assert_array_equal(got, expected)


def test_select_add_and_embedding_backward(B: Any, up: Any, down: Any, rng: Any) -> None:
    weights = rng.normal(size=(5, 3)).astype(np.float32)
    indices = np.array([[0, 4], [4, 4]])
    grad = rng.normal(size=(2, 2, 3)).astype(np.float32)
    expected = np.zeros_like(weights)
    np.add.at(expected, indices.reshape(-1), grad.reshape(-1, 3))
    got = down(B.embedding_backward(up(weights), up(grad), up(indices)))
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)


def test_stable_descending_sort_puts_nan_first(B: Any, up: Any, down: Any) -> None:
    x = np.array([1.0, np.nan, 3.0, 1.0, 3.0], dtype=np.float32)
    values, indices = B.float_sort_with_indices(up(x), 0, True)
    assert B.int_into_data(indices).array.tolist() == [1, 2, 4, 0, 3]
    assert np.isnan(down(values)[0])


def test_conv2d_matches_a_direct_sum(B: Any, up: Any, down: Any, rng: Any) -> None:
    x = rng.normal(size=(2, 4, 7, 6)).astype(np.float64)
    w = rng.normal(size=(6, 2, 3, 2)).astype(np.float64)
    out = down(B.conv2d(up(x), up(w), None, (2, 1), (1, 0), (1, 2), 2))
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (0, 0)))
    expected = np.zeros(out.shape)
    for o in range(6):
        g = o // 3
        for i in range(out.shape[2]):
            for j in range(out.shape[3]):
                patch = xp[:, 2 * g : 2 * g + 2, 2 * i : 2 * i + 3, j : j + 3 : 2]
                expected[:, o, i, j] = (patch * w[o]).sum(axis=(1, 2, 3))
    np.testing.assert_allclose(out, expected, rtol=1e-10, atol=1e-10)


def test_seed_reproduces_draws_per_device(B: Any) -> None:
    for device in B.devices():
        B.seed(7)
        a = B.float_into_data(B.float_random((64,), Normal(0, 1), device, DType.F32)).array
        B.seed(7)
        b = B.float_into_data(B.float_random((64,), Normal(0, 1), device, DType.F32)).array
        np.testing.assert_array_equal(a, b)


def test_every_gpu_is_a_device_and_sync_waits(B: Any) -> None:
    import cupy as cp

    assert [str(d) for d in B.devices()] == [f"cuda:{i}" for i in range(cp.cuda.runtime.getDeviceCount())]
    for d in B.devices():
        x = B.float_ones((256, 256), d, DType.F32)
        y = B.float_matmul(x, x)
        B.sync(d)
        assert B.float_device(y) == d
    B.sync()
    assert len(B.device_names()) == len(B.devices())


def test_dlpack_with_cupy_and_torch_shares_memory() -> None:
    import cupy as cp

    import burn
    from burn_cuda.dlpack import from_dlpack, to_cupy, to_torch

    a = cp.arange(6, dtype=cp.float32).reshape(2, 3)
    t = from_dlpack(a)
    assert t.backend.name == "cuda" and t.shape == (2, 3) and t.kind is burn.Float
    assert to_cupy(t).data.ptr == a.data.ptr  # zero copy both ways
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA here")
    tt = to_torch(t * 2)
    assert tt.is_cuda and tt.tolist() == [[0.0, 2.0, 4.0], [6.0, 8.0, 10.0]]
    back = from_dlpack(torch.ones(3, device="cuda", dtype=torch.int64))
    assert back.kind is burn.Int and back.to_data().array.tolist() == [1, 1, 1]


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("first", [True, False])
def test_fused_adam_matches_the_default_update(
    B: Any, up: Any, down: Any, rng: Any, dtype: str, first: bool
) -> None:
    from burn.backend.ops.optim import OptimOps

    p, g, m, v = (rng.normal(size=(37, 5)).astype(dtype) for _ in range(4))
    v = np.abs(v)
    moments = (None, None) if first else (up(m), up(v))
    args = (0.9, 0.999, 1e-3, 1e-8)
    fused = B.float_adam_step(up(p), up(g), *moments, *args)
    default = OptimOps.float_adam_step(B, up(p), up(g), *moments, *args)
    tol = 1e-3 if dtype == "float16" else 1e-6
    for got, want in zip(fused, default, strict=True):
        assert down(got).dtype == np.dtype(dtype)
        np.testing.assert_allclose(down(got), down(want), rtol=tol, atol=tol)
    # the moments are Adam's own: m = 0.9 m + 0.1 g, v = 0.999 v + 0.001 g^2 (zero before the first)
    m0, v0 = (0.0, 0.0) if first else (m.astype(np.float64), v.astype(np.float64))
    g64 = g.astype(np.float64)
    np.testing.assert_allclose(down(fused[1]), 0.9 * m0 + 0.1 * g64, rtol=tol, atol=tol)
    np.testing.assert_allclose(down(fused[2]), 0.999 * v0 + 0.001 * g64 * g64, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("first", [True, False])
@pytest.mark.parametrize("nesterov", [False, True])
@pytest.mark.parametrize("weight_decay", [None, 0.01])
def test_fused_sgd_momentum_matches_the_default_update(
    B: Any, up: Any, down: Any, rng: Any, dtype: str, first: bool, nesterov: bool, weight_decay: float | None
) -> None:
    from burn.backend.ops.optim import OptimOps

    p, g, v = (rng.normal(size=(37, 5)).astype(dtype) for _ in range(3))
    velocity = None if first else up(v)
    args = (0.9, 0.1, nesterov, weight_decay, 1e-2)
    fused = B.float_sgd_momentum_step(up(p), up(g), velocity, *args)
    default = OptimOps.float_sgd_momentum_step(B, up(p), up(g), velocity, *args)
    tol = 1e-3 if dtype == "float16" else 1e-6
    assert len(fused) == 2
    for got, want in zip(fused, default, strict=True):
        assert down(got).dtype == np.dtype(dtype) and down(got).shape == (37, 5)
        np.testing.assert_allclose(down(got), down(want), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("first", [True, False])
@pytest.mark.parametrize("centered", [False, True])
@pytest.mark.parametrize("momentum", [0.0, 0.9])
@pytest.mark.parametrize("weight_decay", [None, 0.01])
def test_fused_rmsprop_matches_the_default_update(
    B: Any,
    up: Any,
    down: Any,
    rng: Any,
    dtype: str,
    first: bool,
    centered: bool,
    momentum: float,
    weight_decay: float | None,
) -> None:
    from burn.backend.ops.optim import OptimOps

    p, g, b = (rng.normal(size=(37, 5)).astype(dtype) for _ in range(3))
    s = (np.abs(rng.normal(size=(37, 5))) + 1.0).astype(dtype)  # avg = s - a^2 stays positive
    a = (0.1 * rng.normal(size=(37, 5))).astype(dtype)
    s0, a0, b0 = (None, None, None) if first else (up(s), up(a), up(b))
    args = (0.9, 1e-5, centered, momentum, weight_decay, 1e-2)
    fused = B.float_rmsprop_step(up(p), up(g), s0, a0, b0, *args)
    default = OptimOps.float_rmsprop_step(B, up(p), up(g), s0, a0, b0, *args)
    assert (fused[2] is None) == (not centered) and (fused[3] is None) == (momentum == 0.0)
    tol = 1e-2 if dtype == "float16" else 1e-5
    for got, want in zip(fused, default, strict=True):
        if want is None:
            continue
        assert down(got).dtype == np.dtype(dtype) and down(got).shape == (37, 5)
        np.testing.assert_allclose(down(got), down(want), rtol=tol, atol=tol)
