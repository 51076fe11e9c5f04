"""The blocked GEMM of `burn_ndarray.runtime.gemm`: blocks of columns (or rows) handed out one at
a time on numba's TBB pool, each one BLAS call; the product of every operand layout and dtype,
the same bits as the same blocks computed one after another, the BLAS's thread count restored,
and the paths that leave the product to one BLAS call."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import burn_ndarray
from burn_ndarray import NdArray
from burn_ndarray.runtime import blas, gemm, tbb


@pytest.fixture
def two_threads(threads: Any) -> Iterator[None]:
    if not tbb.ready() or not gemm._functions():
        pytest.skip("needs numba's TBB pool and NumPy's OpenBLAS")
    threads(2)
    yield


def _layouts(a: np.ndarray) -> dict[str, np.ndarray]:
    """`a` in C order, F order (a transposed view to CBLAS), and as a view with gaps (copied)."""
    gapped = np.repeat(a, 2, axis=1)[:, ::2]
    return {"C": a, "F": np.asfortranarray(a), "gapped": gapped}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(128, 256, 256), (129, 300, 255), (1000, 96, 100), (2048, 64, 64)])
def test_every_layout_matches_numpy(two_threads: None, dtype: Any, shape: tuple[int, int, int]) -> None:
    rows, inner, cols = shape
    rng = np.random.default_rng(0)
    lhs = rng.standard_normal((rows, inner)).astype(dtype)
    rhs = rng.standard_normal((inner, cols)).astype(dtype)
    want = lhs.astype(np.float64) @ rhs.astype(np.float64)
    tol = 1e-4 if dtype is np.float32 else 1e-12
    for a_name, a in _layouts(lhs).items():
        for b_name, b in _layouts(rhs).items():
            got = gemm.matmul(a, b)
            assert got is not None, (a_name, b_name)
            assert got.dtype == dtype and got.shape == (rows, cols) and got.flags.c_contiguous
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol * inner, err_msg=f"{a_name} @ {b_name}")


def test_same_bits_as_the_blocks_one_after_another(two_threads: None) -> None:
    rng = np.random.default_rng(1)
    lhs = rng.standard_normal((128, 256), dtype=np.float32)
    rhs = rng.standard_normal((256, 1000), dtype=np.float32)
    axis, width, blocks = gemm.cut(128, 1000, 2)
    assert (axis, blocks) == (1, 8)
    with blas.single_threaded():  # each block as one BLAS call on its calling thread, as there
        serial = np.concatenate([lhs @ rhs[:, i * width : (i + 1) * width] for i in range(blocks)], axis=1)
    for _ in range(5):  # whichever thread takes which block
        assert np.array_equal(gemm.matmul(lhs, rhs), serial)


def test_the_blas_count_is_restored(two_threads: None) -> None:
    functions = gemm._functions()
    before = functions["get"]()
    a = np.ones((256, 256), np.float32)
    assert gemm.matmul(a, a) is not None
    assert functions["get"]() == before


def test_cut_picks_columns_then_rows() -> None:
    assert gemm.cut(128, 1024, 2) == (1, 128, 8)
    assert gemm.cut(128, 256, 2) == (1, 64, 4)
    assert gemm.cut(4096, 64, 2) == (0, 512, 8)  # few columns, many rows: blocks of rows
    assert gemm.cut(64, 64, 2) == (1, 64, 1)  # one block: no split


def test_short_axes_are_recut_evenly_between_the_threads() -> None:
    # ViT-tiny at batch 1: [197, 768] @ [768, 192] in 2 blocks of 96 columns, not 3 of 64 (one
    # thread idle for a third); [197, 192] @ [192, 576] in 4 of 144, not 5 of 128.
    assert gemm.cut(197, 192, 2) == (1, 96, 2)
    assert gemm.cut(197, 576, 2) == (1, 144, 4)
    assert gemm.cut(197, 768, 2) == (1, 128, 6)  # already even
    assert gemm.cut(197, 576, 3) == (1, 64, 9)  # already a multiple of the threads
    assert gemm.even(320, 64, 5, 2) == (80, 4)
    assert gemm.even(1000, 64, 16, 2) == (64, 16)  # enough blocks per thread: left as cut


def test_an_evenly_recut_product_is_the_product(two_threads: None) -> None:
    rng = np.random.default_rng(4)
    lhs = rng.standard_normal((197, 768), dtype=np.float32)
    rhs = rng.standard_normal((768, 192), dtype=np.float32)
    got = gemm.matmul(lhs, rhs)
    assert got is not None
    np.testing.assert_allclose(got, lhs.astype(np.float64) @ rhs, rtol=1e-4, atol=1e-4 * 768)


def test_paths_left_to_one_blas_call(two_threads: None, threads: Any) -> None:
    a = np.ones((256, 256), np.float32)
    assert gemm.matmul(np.ones((8, 8), np.float32), np.ones((8, 8), np.float32)) is None  # small
    assert gemm.matmul(a, a.astype(np.float64)) is None  # mixed dtypes
    assert gemm.matmul(a.astype(np.int32), a.astype(np.int32)) is None  # not a float GEMM
    results: list[Any] = []
    worker = threading.Thread(target=lambda: results.append(gemm.matmul(a, a)))
    worker.start()
    worker.join()
    assert results == [None]  # off the main thread
    threads(1)
    assert gemm.matmul(a, a) is None


def test_float_matmul_takes_the_blocks_for_linear_shapes(two_threads: None) -> None:
    backend = NdArray()
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 64, 256), dtype=np.float32)  # [batch, seq, features] @ [in, out]
    w = rng.standard_normal((256, 512), dtype=np.float32)
    got = backend.float_matmul(x, w)
    np.testing.assert_allclose(got, x.astype(np.float64) @ w, rtol=1e-4, atol=1e-3)
    assert np.array_equal(got.reshape(128, 512), gemm.matmul(x.reshape(128, 256), w))
    assert burn_ndarray.get_num_threads() == 2


def test_product_into_rows_of_a_wider_buffer(two_threads: None) -> None:
    rng = np.random.default_rng(3)
    lhs = rng.standard_normal((256, 128), dtype=np.float32)
    rhs = rng.standard_normal((128, 300), dtype=np.float32)
    wide = np.full((256, 320), -1.0, np.float32)
    got = gemm.product(lhs, rhs, out=wide[:, :300])  # rows 320 apart: CBLAS's ldc
    assert np.shares_memory(got, wide)
    np.testing.assert_allclose(wide[:, :300], lhs.astype(np.float64) @ rhs, rtol=1e-4, atol=1e-3)
    assert (wide[:, 300:] == -1.0).all()  # nothing written past each row
    assert np.array_equal(wide[:, :300], gemm.matmul(lhs, rhs))


def test_product_of_small_or_mixed_operands_is_numpys(two_threads: None) -> None:
    small = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert np.array_equal(gemm.product(small, small.T), small @ small.T)
    a = np.ones((256, 256), np.float32)
    mixed = gemm.product(a, a.astype(np.float64))
    assert mixed.dtype == np.float64 and (mixed == 256).all()


def test_conv2d_gemm_takes_the_blocks(two_threads: None, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[int, int]] = []
    real = gemm.matmul

    def spy(lhs: Any, rhs: Any, out: Any = None) -> Any:
        calls.append((lhs.shape[0], rhs.shape[1]))
        return real(lhs, rhs, out)

    monkeypatch.setattr(gemm, "matmul", spy)
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 64, 32, 32), dtype=np.float32)
    w = rng.standard_normal((128, 64, 1, 1), dtype=np.float32)  # pointwise: [N*H*W, C] @ [C, O]
    got = NdArray().conv2d(x, w, None, (1, 1), (0, 0), (1, 1), 1)
    want = np.einsum("nchw,oc->nohw", x.astype(np.float64), w[:, :, 0, 0].astype(np.float64))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)
    assert calls == [(2 * 32 * 32, 128)]


def test_launch_hands_out_one_chunk_at_a_time_and_restores(two_threads: None) -> None:
    import numba

    from burn_ndarray.runtime.tbb_start import count_parts

    seen: list[int] = []

    def kernel(parts: int) -> None:
        seen.append(numba.get_parallel_chunksize())
        assert count_parts(parts) == parts

    before = numba.get_parallel_chunksize()
    tbb.launch(kernel, 8)
    assert seen == [1] and numba.get_parallel_chunksize() == before


def test_stacked_broadcasts_as_numpy_one_block_product_per_matrix(
    two_threads: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[int, int]] = []
    real = gemm.matmul

    def spy(lhs: Any, rhs: Any, out: Any = None) -> Any:
        calls.append((lhs.shape[0], rhs.shape[1]))
        return real(lhs, rhs, out)

    monkeypatch.setattr(gemm, "matmul", spy)
    rng = np.random.default_rng(5)
    a = rng.standard_normal((2, 1, 300, 128), dtype=np.float32)  # broadcast over the taps
    b = rng.standard_normal((2, 3, 128, 256), dtype=np.float32)
    got = gemm.stacked(a, b)
    np.testing.assert_allclose(got, np.matmul(a.astype(np.float64), b), rtol=1e-4, atol=1e-3)
    assert got.shape == (2, 3, 300, 256) and calls == [(300, 256)] * 6
    small = rng.standard_normal((4, 8, 8), dtype=np.float32)
    assert np.array_equal(gemm.stacked(small, small), np.matmul(small, small))  # NumPy's, as it is


def test_conv2d_input_gradient_at_two_threads_matches_one(two_threads: None, threads: Any) -> None:
    rng = np.random.default_rng(6)
    x = rng.standard_normal((4, 64, 32, 32), dtype=np.float32)
    w = rng.standard_normal((128, 64, 3, 3), dtype=np.float32)
    # Stride 2: the im2col path; per tap [4 * 16 * 16, 128] @ [128, 64], `MIN_MACS`: blocks.
    g = rng.standard_normal((4, 128, 16, 16), dtype=np.float32)
    two = NdArray().conv2d_x_backward(x, w, g, (2, 2), (1, 1), (1, 1), 1)
    threads(1)
    one = NdArray().conv2d_x_backward(x, w, g, (2, 2), (1, 1), (1, 1), 1)
    np.testing.assert_allclose(two, one, rtol=1e-5, atol=1e-4)
