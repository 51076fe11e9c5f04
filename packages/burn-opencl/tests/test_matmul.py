"""The three GEMM kernels (naive, tiled, packed) against NumPy: odd sizes, strides, batch broadcast."""

from __future__ import annotations

import numpy as np
import pytest

CASES = [
    ((3, 5), (5, 7), False),
    ((2, 33, 17), (17, 65), False),
    ((4, 1, 9, 10), (3, 10, 40), True),
    ((40, 70), (70, 64), True),
    ((2, 3, 4, 5), (2, 3, 5, 6), False),
    ((1, 0), (0, 3), False),
]


@pytest.mark.parametrize("mode", ["naive", "tiled", "packed"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matmul_modes(B, up, down, rng, monkeypatch, mode, dtype):
    monkeypatch.setenv("BURN_OPENCL_GEMM", mode)
    for ash, bsh, transposed in CASES:
        a = rng.standard_normal(ash).astype(dtype)
        b = rng.standard_normal(bsh).astype(dtype)
        ta = up(a)
        if transposed:  # feed A as a transposed view of its transpose: strides (1, M)
            ta = B.float_swap_dims(
                up(np.ascontiguousarray(np.swapaxes(a, -1, -2))), len(ash) - 1, len(ash) - 2
            )
        out = down(B.float_matmul(ta, up(b)))
        tol = 1e-4 if dtype == np.float32 else 1e-12
        np.testing.assert_allclose(out, a @ b, rtol=tol, atol=tol, err_msg=f"{mode} {ash} @ {bsh}")


def test_matmul_mismatch_raises(B, up):
    with pytest.raises(ValueError, match="do not match"):
        B.float_matmul(up(np.zeros((2, 3), np.float32)), up(np.zeros((4, 2), np.float32)))


def test_matmul_mixed_precision(B, up, down):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.arange(6, dtype=np.float64).reshape(3, 2)
    out = B.float_matmul(up(a), up(b))
    assert B.float_get_dtype(out).value == "float64"
    np.testing.assert_array_equal(down(out), a @ b)


# Register blocks of other devices (AVX-512: 8x2x16 / 8x2x8, SSE/NEON: 6x2x4, 128-bit doubles,
# scalar), run here through the override, so each kernel variant is checked on this device too.
BLOCKS = ["6x2x8", "8x2x16", "6x2x4", "4x3x2", "3x1x1"]
PACKED_CASES = [
    ((1, 1), (1, 1)),  # one partial block
    ((7, 1), (1, 17)),  # K = 1
    ((13, 29), (29, 31)),  # odd sizes: partial row and column panels
    ((48, 64), (64, 32)),  # exact multiples of the blocks: the unmasked store
    ((3, 50, 20), (20, 33)),  # batched A, broadcast B
    ((20, 33), (2, 33, 19)),  # broadcast A, batched B
    ((2, 1, 9, 12), (1, 3, 12, 40)),  # broadcast batch dims on both sides
]


@pytest.mark.parametrize("block", BLOCKS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_packed_blocks(B, up, down, rng, monkeypatch, block, dtype):
    monkeypatch.setenv("BURN_OPENCL_GEMM", "packed")
    monkeypatch.setenv("BURN_OPENCL_GEMM_BLOCK", block)
    from burn_opencl.kernels import matmul

    tol = 1e-4 if dtype == np.float32 else 1e-12
    if int(block.split("x")[2]) * np.dtype(dtype).itemsize > 32 and matmul._is_pocl(B.runtime().cl_device):
        # pocl compiles kernels without avx512f: a forced 512-bit block fails to build or aborts
        # (block_for never picks one there).
        pytest.skip("pocl builds no 512-bit vector kernels")
    for ash, bsh in PACKED_CASES:
        a = rng.standard_normal(ash).astype(dtype)
        b = rng.standard_normal(bsh).astype(dtype)
        out = down(B.float_matmul(up(a), up(b)))
        np.testing.assert_allclose(out, a @ b, rtol=tol, atol=tol, err_msg=f"{block} {ash} @ {bsh}")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_packed_strided_inputs(B, up, down, rng, monkeypatch, dtype):
    """Transposed A and B (strides (1, M)), and a B with a column stride of 2 (a sliced view)."""
    monkeypatch.setenv("BURN_OPENCL_GEMM", "packed")
    a = rng.standard_normal((2, 37, 23)).astype(dtype)
    b = rng.standard_normal((2, 23, 70)).astype(dtype)
    ta = B.float_swap_dims(up(np.ascontiguousarray(np.swapaxes(a, -1, -2))), 1, 2)
    tb = B.float_swap_dims(up(np.ascontiguousarray(np.swapaxes(b, -1, -2))), 1, 2)
    tol = 1e-4 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(down(B.float_matmul(ta, tb)), a @ b, rtol=tol, atol=tol)
    wide = rng.standard_normal((23, 140)).astype(dtype)
    sliced = B.float_slice(up(wide), (slice(0, 23), slice(0, 140, 2)))
    np.testing.assert_allclose(
        down(B.float_matmul(up(a[0]), sliced)), a[0] @ wide[:, ::2], rtol=tol, atol=tol
    )


def test_packed_large_uses_l2_groups(B, up, down, rng, monkeypatch):
    """Wide enough that B's column panels are walked in several L2-sized groups, the last partial."""
    monkeypatch.setenv("BURN_OPENCL_GEMM", "packed")
    a = rng.standard_normal((70, 1100)).astype(np.float32)
    b = rng.standard_normal((1100, 250)).astype(np.float32)
    np.testing.assert_allclose(down(B.float_matmul(up(a), up(b))), a @ b, rtol=1e-3, atol=1e-3)


class _FakeDevice:
    def __init__(self, f: int, d: int) -> None:
        self.preferred_vector_width_float = f
        self.preferred_vector_width_double = d


class _FakePlatform:
    name = "Portable Computing Language"


class _FakeRuntime:
    def __init__(self, f: int, d: int, pocl: bool = False) -> None:
        self.cl_device = _FakeDevice(f, d)
        if pocl:
            self.cl_device.platform = _FakePlatform()  # type: ignore[attr-defined]


@pytest.mark.no_device
@pytest.mark.parametrize(
    ("f", "d", "want_f", "want_d"),
    [
        (8, 4, (6, 2, 8), (6, 2, 4)),  # AVX2
        (16, 8, (8, 2, 16), (8, 2, 8)),  # AVX-512
        (4, 2, (6, 2, 4), (6, 2, 2)),  # SSE / NEON
        (1, 1, (6, 2, 4), (6, 2, 2)),  # devices answering 1: still 128-bit vectors
        (32, 16, (8, 2, 16), (8, 2, 8)),  # never wider than 512 bits
    ],
)
def test_block_for_device(monkeypatch, f, d, want_f, want_d):
    from burn_opencl.kernels import matmul

    monkeypatch.delenv("BURN_OPENCL_GEMM_BLOCK", raising=False)
    rt = _FakeRuntime(f, d)
    got = [matmul.block_for(rt, t) for t in ("float", "double")]  # type: ignore[arg-type]
    assert [(b.rm, b.nv, b.v) for b in got] == [want_f, want_d]


@pytest.mark.no_device
def test_pocl_blocks_stay_at_256_bits(monkeypatch):
    """pocl prefers 512-bit vectors on an AVX-512 CPU but compiles without avx512f."""
    from burn_opencl.kernels import matmul

    monkeypatch.delenv("BURN_OPENCL_GEMM_BLOCK", raising=False)
    monkeypatch.setattr(matmul, "_BLOCKS", {})
    rt = _FakeRuntime(16, 8, pocl=True)
    got = [matmul.block_for(rt, t) for t in ("float", "double")]  # type: ignore[arg-type]
    assert [(b.rm, b.nv, b.v) for b in got] == [(6, 2, 8), (6, 2, 4)]


@pytest.mark.no_device
def test_block_override_is_checked(monkeypatch):
    from burn_opencl.kernels import matmul

    monkeypatch.setenv("BURN_OPENCL_GEMM_BLOCK", "6x2")
    with pytest.raises(ValueError, match="RMxNVxV"):
        matmul.block_for(_FakeRuntime(8, 4), "float")  # type: ignore[arg-type]


def test_packed_kernels_fall_back_to_256_bit_vectors(monkeypatch):
    """A driver that cannot build the preferred 512-bit block gets the 256-bit one, remembered."""
    from burn_opencl.kernels import matmul
    from burn_opencl.runtime import KernelBuildError

    class Rt:
        cl_device = "driver without avx512f"
        built: list = []

        def build(self, key, names, source, options, arg_types):
            blk = key[-1]
            self.built.append(blk)
            if blk.v * 4 > 32:
                raise KernelBuildError("no 512-bit vectors here")
            return dict.fromkeys(names, blk)

    monkeypatch.delenv("BURN_OPENCL_GEMM_BLOCK", raising=False)
    monkeypatch.setattr(matmul, "block_for", lambda rt, t: matmul.Block(8, 2, 16))
    monkeypatch.setattr(matmul, "_BLOCKS", {})
    rt = Rt()
    blk, kernels = matmul._packed_kernels(rt, np.float32, np.float32, "float", [])  # type: ignore[arg-type]
    assert blk == matmul.Block(6, 2, 8) and kernels["mm"] == blk
    assert rt.built == [matmul.Block(8, 2, 16), matmul.Block(6, 2, 8)]
    assert matmul._BLOCKS[("driver without avx512f", "float")] == matmul.Block(6, 2, 8)
