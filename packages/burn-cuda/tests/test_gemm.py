"""burn-cuda's own cuBLAS GEMM call (`_gemm.cublas_matmul`) on a real GPU: every layout the plan
passes without a copy, broadcasting, float16/32/64, and capture inside a CUDA graph (which
``cupy.matmul`` refuses); eager matmuls stay ``cupy.matmul``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

LAYOUTS = [
    ((4, 5), (5, 6), False, False),
    ((5, 4), (5, 6), True, False),  # a is a transposed view
    ((4, 5), (6, 5), False, True),
    ((5, 4), (6, 5), True, True),
    ((3, 4, 5), (3, 5, 6), False, False),
    ((3, 5, 4), (5, 6), True, False),
    ((4, 5), (2, 3, 5, 6), False, False),
    ((2, 1, 4, 5), (3, 5, 6), False, False),
    ((1, 64), (64, 1), False, False),
    ((300, 257), (257, 129), False, False),
]


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize(("a_shape", "b_shape", "ta", "tb"), LAYOUTS)
def test_matches_numpy_in_every_layout(
    rng: Any, dtype: str, a_shape: tuple[int, ...], b_shape: tuple[int, ...], ta: bool, tb: bool
) -> None:
    import cupy as cp

    from burn_cuda import _gemm

    a = rng.standard_normal(a_shape).astype(dtype)
    b = rng.standard_normal(b_shape).astype(dtype)
    da, db = cp.asarray(a), cp.asarray(b)
    if ta:
        a, da = a.swapaxes(-1, -2), da.swapaxes(-1, -2)
    if tb:
        b, db = b.swapaxes(-1, -2), db.swapaxes(-1, -2)
    got = _gemm.cublas_matmul(da, db)
    want = np.matmul(a.astype(np.float64), b.astype(np.float64))
    tol = {"float16": 2e-2, "float32": 1e-4, "float64": 1e-12}[dtype]
    assert got.dtype == np.dtype(dtype) and got.flags.c_contiguous
    np.testing.assert_allclose(cp.asnumpy(got).astype(np.float64), want, rtol=tol, atol=tol * a_shape[-1])


def test_empty_and_integer_products() -> None:
    import cupy as cp

    from burn_cuda import _gemm

    z = _gemm.cublas_matmul(cp.ones((3, 0), np.float32), cp.ones((0, 4), np.float32))
    assert z.shape == (3, 4) and float(z.sum()) == 0.0
    i = _gemm.cublas_matmul(cp.arange(6).reshape(2, 3), cp.arange(6).reshape(3, 2))  # cupy.matmul
    assert cp.asnumpy(i).tolist() == (np.arange(6).reshape(2, 3) @ np.arange(6).reshape(3, 2)).tolist()


def test_the_direct_call_is_found_and_is_recorded_in_a_graph(rng: Any) -> None:
    import cupy as cp

    from burn_cuda import _cublas, _gemm

    assert _cublas.library() is not None, "libcublas not found in the process: matmul fell back"
    a = cp.asarray(rng.standard_normal((64, 32)).astype(np.float32))
    b = cp.asarray(rng.standard_normal((32, 16)).astype(np.float32))
    eager = _gemm.matmul(a, b)
    assert cp.array_equal(eager, cp.matmul(a, b))  # eager: cupy.matmul itself
    stream = cp.cuda.Stream(non_blocking=False)
    with stream:
        with _gemm.direct_calls():
            _gemm.matmul(a, b)  # warm: handle, stream, workspace
        stream.synchronize()
        stream.begin_capture(cp.cuda.runtime.streamCaptureModeRelaxed)
        out = _gemm.matmul(a, b)  # capturing: the direct call
        graph = stream.end_capture()
    a[...] = 2 * a  # the graph reads the buffers when it runs
    graph.launch(stream)
    stream.synchronize()
    np.testing.assert_allclose(cp.asnumpy(out), cp.asnumpy(a) @ cp.asnumpy(b), rtol=1e-4, atol=1e-4)
