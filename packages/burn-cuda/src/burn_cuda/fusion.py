"""The fusion contract of burn-cuda: one CUDA kernel generated from a `FusedBlock`, run by CuPy.

Each op of the block becomes one C++ statement over values in registers, with the expression of
burn-core's table `burn.backend.fusion_exprs` (shared with burn-opencl's fused kernels); CUDA C++
differs only in its prelude (the ``b_*`` helpers on CUDA's math functions) and C types. A thread
computes one element of the block's shape and reads each input through broadcasting: *flat* when
every input is contiguous with the block's shape or holds one element and every output has the
block's shape, else *strided* with dims collapsed (CuPy views need no copy: a view's pointer is
its first element, its strides are passed in elements, negative ones included).

A block ending in a reduction (``block.reduce``) becomes one kernel where a thread owns an output
element (a chunk of 256 along a reduced dim longer than 1024, whose partial results one CuPy
reduction finishes) and walks the reduced dim, computing the block's ops at each element (its
prologue), writing the block's outputs as it goes and accumulating the reduced value.

Kernels are `cupy.RawKernel` objects built once per block signature and layout rank and kept
here; CuPy compiles each on first launch with NVRTC and caches the binary on disk
(``CUPY_CACHE_DIR``). The source generation (`source`, `reduce_source`) needs no GPU, nor CuPy.

Example:
    >>> from burn.backend.ir import FusedBlock, OpIR, TensorIR
    >>> from burn.foundations.dtype import DType
    >>> x, y = TensorIR(0, (8,), DType.F32), TensorIR(1, (8,), DType.F32)
    >>> block = FusedBlock((8,), (x,), (OpIR("float_exp", (x,), (y,)),), (y,))
    >>> 'extern "C" __global__ void burn_fused(' in source(block, -1)
    True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from burn.backend.fusion_exprs import (
    EXPRS,
    REDUCE_FROM_FIRST,
    REDUCE_UPDATES,
    Dialect,
    aligned_strides,
    c_strides,
    collapse,
    float_types,
    op_code,
    plain_load,
    plain_store,
    scalar_dtypes,
    scalar_values,
)
from burn.backend.ir import REDUCTIONS, FusedBlock
from burn.errors import DeviceError
from burn.foundations.dtype import DType
from burn_cuda._dtypes import NP_OF

Shape = tuple[int, ...]
Array = Any  # cupy.ndarray

# C++ type of each dtype fused kernels take (float16 is not fused: see `FusionOps.fusion_dtypes`).
CTYPES: dict[DType, str] = {
    DType.F64: "double",
    DType.F32: "float",
    DType.I64: "long long",
    DType.I32: "int",
    DType.I16: "short",
    DType.I8: "signed char",
    DType.U8: "unsigned char",
    DType.BOOL: "bool",
}
CUDA = Dialect("CUDA C++", CTYPES, CTYPES, "B_FN", plain_load, plain_store)
FUSION_OPS = frozenset(EXPRS)
FUSION_REDUCE_OPS = REDUCTIONS

THREADS = 256  # threads per block of every fused kernel
CHUNK = 256  # elements of a reduced dim per thread when the dim is split
SPLIT_ABOVE = 1024  # reduced dims longer than this are split into chunks

# The b_* names the shared expressions use, on CUDA's overloaded math functions.
PRELUDE = r"""
#define B_FN __device__ __forceinline__
typedef long long i64;
B_FN float b_fabs(float x) { return fabsf(x); }
B_FN float b_sqrt(float x) { return sqrtf(x); }
B_FN float b_rint(float x) { return rintf(x); }
B_FN float b_floor(float x) { return floorf(x); }
B_FN float b_ceil(float x) { return ceilf(x); }
B_FN float b_fmax(float x, float y) { return fmaxf(x, y); }
B_FN float b_fmin(float x, float y) { return fminf(x, y); }
B_FN double b_fabs(double x) { return fabs(x); }
B_FN double b_sqrt(double x) { return sqrt(x); }
B_FN double b_rint(double x) { return rint(x); }
B_FN double b_floor(double x) { return floor(x); }
B_FN double b_ceil(double x) { return ceil(x); }
B_FN double b_fmax(double x, double y) { return fmax(x, y); }
B_FN double b_fmin(double x, double y) { return fmin(x, y); }
#define b_isnan(x) isnan(x)
#define b_isinf(x) isinf(x)
"""


def _index_code(rank: int, operands: Sequence[str], flat: str) -> list[str]:
    """Statements turning the row-major index `flat` over dims ``d0..`` into each operand's element
    offset ``<op>_i`` from its strides ``<op>_s0..``."""
    lines = [f"i64 r_ = {flat};"] + [f"i64 {op}_i = 0;" for op in operands]
    for d in range(rank - 1, 0, -1):
        lines.append(f"{{ i64 c_ = r_ % d{d}; r_ /= d{d};")
        lines.extend(f"  {op}_i += c_ * {op}_s{d};" for op in operands)
        lines.append("}")
    if rank:
        lines.extend(f"{op}_i += r_ * {op}_s0;" for op in operands)
    return lines


def _index_params(rank: int, operands: Sequence[str]) -> list[str]:
    params = [f"i64 d{d}" for d in range(rank)]
    for op in operands:
        params.extend(f"i64 {op}_s{d}" for d in range(rank))
    return params


def _pointers(block: FusedBlock) -> list[str]:
    params = [f"{CTYPES[t.dtype]}* o{k}" for k, t in enumerate(block.outputs)]
    if block.reduce is not None:
        params.append(f"{CTYPES[block.reduce.output.dtype]}* r")
    params += [f"const {CTYPES[t.dtype]}* x{k}" for k, t in enumerate(block.inputs)]
    return params


def _program(block: FusedBlock, name: str, params: list[str], body: list[str]) -> str:
    helpers = [CUDA.helpers(t) for t in float_types(block, CUDA)]
    kernel = f'extern "C" __global__ void {name}({", ".join(params)}) {{\n  ' + "\n  ".join(body) + "\n}"
    return "\n".join([PRELUDE, *helpers, kernel])


def source(block: FusedBlock, rank: int) -> str:
    """CUDA C++ source of `block`'s element-wise kernel ``burn_fused``; rank -1 is the flat layout.

    Parameters: the outputs' and the inputs' pointers, ``n`` (elements of ``block.shape``), then
    (flat) each input's step 0 or 1, the ops' scalars, (strided) the collapsed dims and each
    operand's strides over them, outputs first.
    """
    nin, nout = len(block.inputs), len(block.outputs)
    names = [f"o{k}" for k in range(nout)] + [f"x{k}" for k in range(nin)]
    params = [*_pointers(block), "i64 n"]
    if rank < 0:
        params += [f"i64 x{k}_st" for k in range(nin)]
    body = ["i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;", "if (i >= n) return;"]
    if rank < 0:
        body.extend(f"i64 o{k}_i = i;" for k in range(nout))
        body.extend(f"i64 x{k}_i = i * x{k}_st;" for k in range(nin))
    else:
        body.extend(_index_code(rank, names, "i"))
    var: dict[int, str] = {}
    body.extend(op_code(block, CUDA, var, params, "_i"))
    body.extend(CUDA.store(t.dtype, f"o{k}", f"o{k}_i", var[t.id]) for k, t in enumerate(block.outputs))
    if rank >= 0:
        params += _index_params(rank, names)
    return _program(block, "burn_fused", params, body)


def reduce_source(block: FusedBlock, rank: int) -> str:
    """CUDA C++ source of the kernel ``burn_fused_reduce``: one thread per output element (and
    chunk ``c`` of ``C``) walks the reduced dim from ``c * Lc`` (``L`` long), computing `block`'s
    ops, storing its outputs and accumulating ``block.reduce.input`` into ``r``.

    Parameters: the outputs', the result's and the inputs' pointers, ``n`` (threads), ``C``,
    ``L``, ``Lc``, each operand's stride along the reduced dim, the mean's ``scale``, the ops'
    scalars, then the collapsed other dims and each operand's strides over them.
    """
    red = block.reduce
    if red is None:
        raise ValueError("reduce_source: the block has no reduction")
    nin, nout = len(block.inputs), len(block.outputs)
    acc_t = CTYPES[red.output.dtype]
    names = [f"o{k}" for k in range(nout)] + [f"x{k}" for k in range(nin)]
    params = [*_pointers(block), "i64 n", "i64 C", "i64 L", "i64 Lc"]
    params += [f"i64 {nm}_sd" for nm in names] + [f"{acc_t} scale"]
    body = [
        "i64 w = (i64)blockIdx.x * blockDim.x + threadIdx.x;",
        "if (w >= n) return;",
        "i64 other = w / C; i64 c = w - other * C;",
        *_index_code(rank, names, "other"),
        "i64 k0 = c * Lc; i64 k1 = k0 + Lc < L ? k0 + Lc : L;",
        f"{acc_t} acc = ({acc_t}){'1' if red.op == 'float_prod_dim' else '0'};",
        "for (i64 k = k0; k < k1; k++) {",
    ]
    body.extend(f"i64 {nm}_e = {nm}_i + k * {nm}_sd;" for nm in names)
    var: dict[int, str] = {}
    body.extend(op_code(block, CUDA, var, params, "_e"))
    body.extend(CUDA.store(t.dtype, f"o{k}", f"o{k}_e", var[t.id]) for k, t in enumerate(block.outputs))
    update = REDUCE_UPDATES[red.op]
    if red.op in REDUCE_FROM_FIRST:
        update = f"if (k == k0) acc = v; else {{ {update} }}"
    body.append(f"{{ {acc_t} v = ({acc_t}){var[red.input.id]}; {update} }}")
    body.append("}")
    if red.op == "float_mean_dim":
        body.append("acc *= scale;")
    body.append(CUDA.store(red.output.dtype, "r", "w", "acc"))
    params += _index_params(rank, names)
    return _program(block, "burn_fused_reduce", params, body)


# (kernel name, block signature, rank) -> cupy.RawKernel; CuPy keeps one module per device.
_KERNELS: dict[tuple[Any, ...], Any] = {}


def _kernel(name: str, block: FusedBlock, rank: int) -> Any:
    key = (name, block.signature(), rank)
    kernel = _KERNELS.get(key)
    if kernel is None:
        import cupy as cp

        text = source(block, rank) if name == "burn_fused" else reduce_source(block, rank)
        kernel = _KERNELS[key] = cp.RawKernel(text, name)
    return kernel


def _launch(kernel: Any, n: int, args: Sequence[Any]) -> None:
    """Launch `kernel` over `n` threads (blocks of `THREADS`) on the current device's stream."""
    kernel(((n + THREADS - 1) // THREADS,), (THREADS,), tuple(args))


def _strides(t: Array) -> Shape:
    """Element strides of a CuPy array (CuPy gives bytes)."""
    return tuple(s // t.itemsize for s in t.strides)


def _scalars(block: FusedBlock) -> list[Any]:
    values = scalar_values(block)
    return [NP_OF[d].type(v) for d, v in zip(scalar_dtypes(block), values, strict=True)]


class FusionOps:
    """`burn.backend.fusion.FusionBackend` for CUDA (mixed into `burn_cuda.Cuda`)."""

    capabilities: Any

    def fusion_ops(self) -> frozenset[str]:
        """The element-wise IR ops a fused CUDA kernel computes (all of them)."""
        return FUSION_OPS

    def fusion_dtypes(self) -> frozenset[DType]:
        """float32 and float64 are computed; bool and int inputs are read.

        float16 is left out: the one-op CuPy kernels round it to half between ops, fused ones would not.
        """
        return frozenset(CTYPES) & self.capabilities.dtypes

    def fusion_reduce_ops(self) -> frozenset[str]:
        """The reductions a fused CUDA kernel ends with (sum, mean, prod, max, min along a dim)."""
        return FUSION_REDUCE_OPS

    def fusion_execute(self, block: FusedBlock, inputs: Sequence[Array]) -> list[Array]:
        """Run `block` as one kernel over `inputs`; new contiguous arrays for ``block.outputs``
        (then the reduction's result when ``block.reduce`` is set)."""
        import cupy as cp

        ordinal = inputs[0].device.id
        for t in inputs:
            if t.device.id != ordinal:
                raise DeviceError(f"fused kernel: tensors on cuda:{ordinal} and cuda:{t.device.id}")
        with cp.cuda.Device(ordinal):
            outs = [cp.empty(t.shape, dtype=NP_OF[t.dtype]) for t in block.outputs]
            if block.reduce is not None:
                return [*outs, _execute_reduce(block, inputs, outs)]
            _execute(block, inputs, outs)
            return outs


def _execute(block: FusedBlock, inputs: Sequence[Array], outs: list[Array]) -> None:
    shape = block.shape
    n = 1
    for s in shape:
        n *= s
    if n == 0:
        return
    flat = all(t.shape == shape for t in block.outputs)
    steps = []
    if flat:
        for t in inputs:
            if t.size == 1:
                steps.append(0)
            elif t.flags.c_contiguous and t.shape == shape:
                steps.append(1)
            else:
                flat = False
                break
    tail: list[int] = []
    if flat:
        rank = -1
        head = [np.int64(s) for s in steps]
    else:
        strides = [aligned_strides(t.shape, c_strides(t.shape), shape) for t in block.outputs]
        strides += [aligned_strides(t.shape, _strides(t), shape) for t in inputs]
        dims, collapsed = collapse(shape, strides)
        rank = len(dims)
        head = []
        tail = [*dims]
        for walk in collapsed:
            tail.extend(walk)
    args = [*outs, *inputs, np.int64(n), *head, *_scalars(block), *(np.int64(v) for v in tail)]
    _launch(_kernel("burn_fused", block, rank), n, args)


def _execute_reduce(block: FusedBlock, inputs: Sequence[Array], outs: list[Array]) -> Array:
    """Launch `block`'s reduction kernel writing `outs`; the reduction's result (keepdim)."""
    import cupy as cp

    red = block.reduce
    assert red is not None
    shape, dim = block.shape, red.dim
    np_dtype = NP_OF[red.output.dtype]
    L = shape[dim]
    if L == 0 and red.op in REDUCE_FROM_FIRST:
        raise ValueError(f"{red.op}: cannot reduce an empty dim {dim} of shape {list(shape)}")
    chunks = 1 if L <= SPLIT_ABOVE else (L + CHUNK - 1) // CHUNK
    chunk = L if chunks == 1 else CHUNK
    other_shape = shape[:dim] + shape[dim + 1 :]
    if chunks == 1:
        result = cp.empty(red.output.shape, dtype=np_dtype)
    else:  # partial results of each chunk, the chunk dim last (the thread order)
        result = cp.empty((*other_shape, chunks), dtype=np_dtype)
    full = [aligned_strides(t.shape, c_strides(t.shape), shape) for t in block.outputs]
    full += [aligned_strides(t.shape, _strides(t), shape) for t in inputs]
    dims, collapsed = collapse(other_shape, [st[:dim] + st[dim + 1 :] for st in full])
    n = result.size
    if n == 0:
        return result.reshape(red.output.shape)
    scale = (1.0 / L if L else float("nan")) if red.op == "float_mean_dim" and chunks == 1 else 1.0
    args: list[Any] = [*outs, result, *inputs, *(np.int64(v) for v in (n, chunks, L, chunk))]
    args += [np.int64(st[dim]) for st in full]
    args += [np_dtype.type(scale), *_scalars(block), *(np.int64(d) for d in dims)]
    for walk in collapsed:
        args.extend(np.int64(s) for s in walk)
    _launch(_kernel("burn_fused_reduce", block, len(dims)), n, args)
    if chunks == 1:
        return result
    if red.op in ("float_sum_dim", "float_mean_dim"):
        values = result.sum(axis=-1)
    elif red.op == "float_prod_dim":
        values = result.prod(axis=-1)
    else:
        values = result.max(axis=-1) if red.op == "float_max_dim" else result.min(axis=-1)
    if red.op == "float_mean_dim":
        values *= np_dtype.type(1.0 / L)
    return cp.expand_dims(values, dim)


__all__ = ["CUDA", "FUSION_OPS", "FUSION_REDUCE_OPS", "FusionOps", "reduce_source", "source"]
