"""burn-cuda's own calls into the cuBLAS library that CuPy loaded: GEMMs a CUDA graph can capture.

CuPy's binding refuses every cuBLAS call while a stream is being captured (it checks before it
sets the handle's stream), so through ``cupy.matmul`` no training step with a matmul could become
a CUDA graph. cuBLAS itself supports capture when the handle's stream is set and a workspace is
given up front (``cublasSetStream`` resets the workspace to a default pool that cuBLAS may grow
while capturing). Here each thread keeps one handle per device; its stream is set when the
current stream changes, followed by that stream's workspace, allocated once outside any pool.

Scalars are passed by host pointer (cuBLAS' default pointer mode): alpha 1 and beta 0 are
constants, so a captured call stays right on replay. `burn_cuda._gemm` calls this only while a
stream is being captured; eager matmuls stay ``cupy.matmul``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import threading
from typing import Any

import cupy as cp
import numpy as np

from burn_cuda._dtypes import BF16, BFLOAT16
from burn_cuda._gemm_plan import GemmCall

Array = Any

CUDA_R_16F, CUDA_R_16BF, CUDA_R_32F, CUDA_R_64F = 2, 14, 0, 1
COMPUTE_32F, COMPUTE_32F_FAST_TF32, COMPUTE_64F = 68, 77, 70
GEMM_DEFAULT = -1

# Per dtype: cudaDataType, cublasComputeType (float16 accumulates in float32), alpha, beta.
_TF32 = os.environ.get("CUPY_TF32", "0") != "0"  # CuPy's switch for TF32 in float32 matmul
_SCALARS = {t: (np.ones(1, t), np.zeros(1, t)) for t in (np.float32, np.float64)}  # kept alive
_ONE32, _ZERO32 = (s.ctypes.data for s in _SCALARS[np.float32])  # host addresses of alpha, beta
_ONE64, _ZERO64 = (s.ctypes.data for s in _SCALARS[np.float64])
TYPES: dict[np.dtype, tuple[int, int, int, int]] = {
    np.dtype(np.float16): (CUDA_R_16F, COMPUTE_32F, _ONE32, _ZERO32),
    np.dtype(np.float32): (CUDA_R_32F, COMPUTE_32F_FAST_TF32 if _TF32 else COMPUTE_32F, _ONE32, _ZERO32),
    np.dtype(np.float64): (CUDA_R_64F, COMPUTE_64F, _ONE64, _ZERO64),
}
if BFLOAT16:
    TYPES[np.dtype(BF16)] = (CUDA_R_16BF, COMPUTE_32F, _ONE32, _ZERO32)

_p, _i, _ll = ctypes.c_void_p, ctypes.c_int, ctypes.c_longlong


class CublasError(RuntimeError):
    """A cuBLAS call returned a status other than success."""


def _loaded_path() -> str | None:
    """The path of the libcublas this process loaded (CuPy's), from the memory map."""
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                parts = line.split(None, 5)
                if len(parts) == 6 and os.path.basename(parts[5].strip()).startswith("libcublas.so"):
                    return parts[5].strip()
    except OSError:
        pass
    return None


class _Library:
    """The entry points used, with their C signatures."""

    def __init__(self, lib: ctypes.CDLL) -> None:
        self.create = lib.cublasCreate_v2
        self.create.argtypes, self.create.restype = [ctypes.POINTER(_p)], _i
        self.set_stream = lib.cublasSetStream_v2
        self.set_stream.argtypes, self.set_stream.restype = [_p, _p], _i
        self.set_workspace = getattr(lib, "cublasSetWorkspace_v2", None)  # cuBLAS >= 11.x
        if self.set_workspace is not None:
            self.set_workspace.argtypes, self.set_workspace.restype = [_p, _p, ctypes.c_size_t], _i
        self.gemm = lib.cublasGemmEx
        self.gemm.argtypes = [_p, _i, _i, _i, _i, _i, _p, _p, _i, _i, _p, _i, _i, _p, _p, _i, _i, _i, _i]
        self.gemm.restype = _i
        self.gemm_batched = lib.cublasGemmStridedBatchedEx
        self.gemm_batched.argtypes = [
            _p, _i, _i, _i, _i, _i, _p, _p, _i, _i, _ll, _p, _i, _i, _ll, _p, _p, _i, _i, _ll, _i, _i, _i,
        ]  # fmt: skip
        self.gemm_batched.restype = _i


_library: list[_Library | None] = []
_library_lock = threading.Lock()


def library() -> _Library | None:
    """cuBLAS' entry points, or None where the library or a symbol cannot be found (the GEMM
    then goes through ``cupy.matmul``)."""
    if not _library:
        with _library_lock:
            if not _library:
                cp.cuda.device.get_cublas_handle()  # CuPy loads cuBLAS on its first use
                path = _loaded_path() or ctypes.util.find_library("cublas")
                try:
                    _library.append(_Library(ctypes.CDLL(path)) if path else None)
                except (OSError, AttributeError):
                    _library.append(None)
    return _library[0]


def _check(status: int, what: str) -> None:
    if status != 0:
        raise CublasError(f"cuda: cuBLAS {what} failed with status {status}")


class _ThreadState(threading.local):
    def __init__(self) -> None:
        self.handles: dict[int, int] = {}  # device -> cublasHandle_t
        self.streams: dict[int, int] = {}  # device -> stream the handle is set to
        self.workspaces: dict[tuple[int, int], Any] = {}  # (device, stream) -> cupy.cuda.Memory


_state = _ThreadState()


def _workspace_size(device: int) -> int:
    # cuBLAS' guidance: 32 MiB on Hopper and later, 4 MiB before.
    major = int(cp.cuda.Device(device).compute_capability) // 10  # "90" on Hopper
    return (32 if major >= 9 else 4) * 1024 * 1024


def handle(lib: _Library, device: int) -> int:
    """This thread's handle for `device`, set to the current stream and its workspace."""
    h = _state.handles.get(device)
    if h is None:
        out = _p()
        _check(lib.create(ctypes.byref(out)), "handle creation")
        h = _state.handles[device] = int(out.value or 0)
    stream = cp.cuda.get_current_stream().ptr
    if _state.streams.get(device) != stream:
        _check(lib.set_stream(h, stream), "set stream")
        if lib.set_workspace is not None:
            key = (device, stream)
            space = _state.workspaces.get(key)
            if space is None:
                space = _state.workspaces[key] = cp.cuda.Memory(_workspace_size(device))
            _check(lib.set_workspace(h, space.ptr, space.size), "set workspace")
        _state.streams[device] = stream
    return h


def gemm(lib: _Library, call: GemmCall, a: Array, b: Array, out: Array) -> None:
    """Run `call` (from `_gemm_plan.plan`) writing `out`, on the current stream."""
    dtype_code, compute, one, zero = TYPES[out.dtype]
    h = handle(lib, out.device.id)
    c = call
    if c.batch == 1:
        status = lib.gemm(
            h, c.trans_first, c.trans_second, c.m, c.n, c.k, one,
            b.data.ptr, dtype_code, c.ld_first, a.data.ptr, dtype_code, c.ld_second,
            zero, out.data.ptr, dtype_code, c.ld_out, compute, GEMM_DEFAULT,
        )  # fmt: skip
    else:
        status = lib.gemm_batched(
            h, c.trans_first, c.trans_second, c.m, c.n, c.k, one,
            b.data.ptr, dtype_code, c.ld_first, c.stride_first,
            a.data.ptr, dtype_code, c.ld_second, c.stride_second,
            zero, out.data.ptr, dtype_code, c.ld_out, c.stride_out,
            c.batch, compute, GEMM_DEFAULT,
        )  # fmt: skip
    if status != 0:
        _check(status, f"GEMM ({c.n}x{c.k} @ {c.k}x{c.m}, batch {c.batch}, {out.dtype})")
