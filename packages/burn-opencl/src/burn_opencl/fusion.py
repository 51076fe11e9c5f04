"""The fusion contract of burn-opencl: one OpenCL kernel generated from a `FusedBlock`.

Each op of the block becomes one C statement over values in registers, with the expression of
burn-core's table `burn.backend.fusion_exprs` (shared with burn-cuda's fused kernels), which
equals the one-op kernels' (`burn_opencl.kernels.elementwise`), so fused and unfused
results agree (up to the rounding of values that the unfused kernels store between ops). The
kernel reads each input through broadcasting, as the one-op kernels do: *flat* when every input
is contiguous with the block's shape or holds one element and every output has the block's
shape, else *strided* with dims collapsed (on a grid of work-items where the innermost dim is
long enough, `burn_opencl.kernels.common.grid_local`). Programs are built once per block signature, dtypes
and layout rank, kept in the device's kernel cache and, by pyopencl and pocl, on disk.

A block ending in a reduction (``block.reduce``) along a strided dim becomes a reduction kernel
shaped like `burn_opencl.kernels.reduce`'s: one work-item per output element (per chunk of a long
dim) walks the reduced dim, computing the block's ops at each element (its prologue), writing the
block's outputs as it goes and accumulating the reduced value; chunk partials of a long dim are
reduced again by `burn_opencl.kernels.reduce`. Along a contiguous dim it runs as the element-wise
kernel above, also writing the reduced value, then `burn_opencl.kernels.reduce` (`_execute_reduce`
says why).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from burn.backend.fusion_exprs import (
    EXPRS,
    REDUCE_FROM_FIRST,
    REDUCE_UPDATES,
    Dialect,
    aligned_strides,
    float_types,
    op_code,
    scalar_dtypes,
    scalar_values,
)
from burn.backend.ir import FusedBlock
from burn.errors import DeviceError
from burn.foundations.dtype import DType
from burn_opencl.dtypes import COMPUTE, SCALAR_NP, STORAGE, build_options, load, store
from burn_opencl.kernels import elementwise as ew
from burn_opencl.kernels import reduce as rd
from burn_opencl.kernels.common import (
    I64,
    LOCAL,
    c_strides,
    collapse,
    global_size,
    grid_index_code,
    grid_inner,
    grid_local,
    grid_size,
    index_code,
    index_params,
    new,
)
from burn_opencl.tensor import CLTensor

Shape = tuple[int, ...]

# The C expression of each op is burn-core's (`burn.backend.fusion_exprs`), shared with burn-cuda;
# OpenCL C differs in its builtins (the b_* helpers of `burn_opencl.dtypes.PRELUDE`) and half loads.
OPENCL = Dialect("OpenCL C", COMPUTE, STORAGE, "B_OVL", load, store)
FUSION_OPS = frozenset(EXPRS)
# Reductions a fused kernel ends with -> the op of `burn_opencl.kernels.reduce` it mirrors.
_REDUCE = {
    "float_sum_dim": "sum", "float_mean_dim": "mean", "float_prod_dim": "prod",
    "float_max_dim": "max", "float_min_dim": "min",
}
FUSION_REDUCE_OPS = frozenset(_REDUCE)

def _source(block: FusedBlock, rank: int, grid: tuple[int | None, ...] | None = None) -> str:
    """Program text of `block`'s kernel ``fused``; rank -1 is the flat layout, `grid` the grid one
    of a strided rank (with the operands' literal innermost strides)."""
    nin, nout = len(block.inputs), len(block.outputs)
    parts = [OPENCL.helpers(t) for t in float_types(block, OPENCL)]
    names = [f"o{k}" for k in range(nout)] + [f"x{k}" for k in range(nin)]
    params = [f"__global {STORAGE[t.dtype]}* o{k}" for k, t in enumerate(block.outputs)]
    params += [f"__global const {STORAGE[t.dtype]}* x{k}" for k, t in enumerate(block.inputs)]
    params += ["long n"] + [f"long {nm}_off" for nm in names]
    if rank < 0:
        params += [f"long x{k}_st" for k in range(nin)]
    if grid is not None:
        body = [grid_index_code(rank, names, grid)]
    else:
        body = ["long i = get_global_id(0);", "GUARD(i, n);"]
    if rank < 0:
        body.extend(f"long o{k}_i = o{k}_off + i;" for k in range(nout))
        body.extend(f"long x{k}_i = x{k}_off + i * x{k}_st;" for k in range(nin))
    elif grid is None:
        body.append(index_code(rank, names))
    var: dict[int, str] = {}
    body.extend(op_code(block, OPENCL, var, params, "_i"))
    for k, t in enumerate(block.outputs):
        body.append(store(t.dtype, f"o{k}", f"o{k}_i", var[t.id]))
    if rank >= 0:
        params.append(index_params(rank, names))
    signature = ", ".join(p for p in params if p)
    parts.append(f"__kernel void fused({signature}) {{\n  " + "\n  ".join(body) + "\n}")
    return "\n".join(parts)


def _reduce_source(block: FusedBlock, rank: int) -> str:
    """Program text of the kernel ``fused_red``: `block`'s ops computed along the reduced dim of
    each work-item's line (chunk), its outputs stored, ``block.reduce.input`` accumulated."""
    red = block.reduce
    assert red is not None
    nin, nout = len(block.inputs), len(block.outputs)
    op = _REDUCE[red.op]
    acc_t = COMPUTE[red.output.dtype]
    names = [f"o{k}" for k in range(nout)] + [f"x{k}" for k in range(nin)]
    params = [f"__global {STORAGE[t.dtype]}* o{k}" for k, t in enumerate(block.outputs)]
    params.append(f"__global {STORAGE[red.output.dtype]}* r")
    params += [f"__global const {STORAGE[t.dtype]}* x{k}" for k, t in enumerate(block.inputs)]
    params += ["long n", "long C", "long L", "long Lc"]
    params += [f"long {nm}_off" for nm in names] + [f"long {nm}_sd" for nm in names]
    params.append(f"{acc_t} scale")
    body = [
        "long w = get_global_id(0);",
        "GUARD(w, n);",
        "long other = w / C; long c = w - other * C;",
        index_code(rank, names, flat="other"),
        "long k0 = c * Lc; long k1 = b_lmin(L, k0 + Lc);",
        f"{acc_t} acc = ({acc_t}){'1' if op == 'prod' else '0'};",
        "for (long k = k0; k < k1; k++) {",
    ]
    body.extend(f"long {nm}_e = {nm}_i + k * {nm}_sd;" for nm in names)
    var: dict[int, str] = {}
    body.extend(op_code(block, OPENCL, var, params, "_e"))
    body.extend(store(t.dtype, f"o{k}", f"o{k}_e", var[t.id]) for k, t in enumerate(block.outputs))
    update = REDUCE_UPDATES[red.op]
    if red.op in REDUCE_FROM_FIRST:
        update = f"if (k == k0) acc = v; else {{ {update} }}"
    body.append(f"{{ {acc_t} v = ({acc_t}){var[red.input.id]}; {update} }}")
    body.append("}")
    if op == "mean":
        body.append("acc *= scale;")
    body.append(store(red.output.dtype, "r", "w", f"(({acc_t})acc)"))
    params.append(index_params(rank, names))
    signature = ", ".join(p for p in params if p)
    kernel = f"__kernel void fused_red({signature}) {{\n  " + "\n  ".join(body) + "\n}"
    return "\n".join([*(OPENCL.helpers(t) for t in float_types(block, OPENCL)), kernel])


def _arg_types(block: FusedBlock, rank: int) -> list[Any]:
    nin, nout = len(block.inputs), len(block.outputs)
    args: list[Any] = [None] * (nout + nin) + [I64] * (1 + nout + nin)
    if rank < 0:
        args += [I64] * nin
    args += [SCALAR_NP[COMPUTE[d]] for d in scalar_dtypes(block)]
    if rank >= 0:
        args += [I64] * (rank * (1 + nout + nin))
    return args


class FusionOps:
    """`burn.backend.fusion.FusionBackend` for OpenCL (mixed into `burn_opencl.OpenCL`)."""

    capabilities: Any

    def fusion_ops(self) -> frozenset[str]:
        """The element-wise IR ops a fused OpenCL kernel computes."""
        return FUSION_OPS

    def fusion_dtypes(self) -> frozenset[DType]:
        """float32 and float64 (where declared) are computed; bool and int inputs are read.

        float16 is left out: the one-op kernels round it to half between ops, fused ones would not.
        """
        kept = {DType.F32, DType.F64, DType.BOOL, DType.I64, DType.I32, DType.I16, DType.I8, DType.U8}
        return frozenset(kept & self.capabilities.dtypes)

    def fusion_reduce_ops(self) -> frozenset[str]:
        """The reductions a fused OpenCL kernel ends with (sum, mean, prod, max, min along a dim)."""
        return FUSION_REDUCE_OPS

    def fusion_rows(self, op: str, shape: tuple[int, ...], dim: int, dtype: DType) -> bool:
        """Whether ops may go on reading a block of `shape` after its reduction `op` along `dim`,
        the block and those ops then run as a row chain (`fusion_execute_rows`)."""
        from burn_opencl.fusion_rows import row_chain_fits  # it builds on this module's dialect

        return row_chain_fits(op, shape, dim, dtype)

    def fusion_execute_rows(
        self, blocks: Sequence[FusedBlock], values: Mapping[int, CLTensor]
    ) -> dict[int, CLTensor] | None:
        """Run a row chain as one kernel (`burn_opencl.fusion_rows`): each block's outputs and its
        reduction's result by id; None when the chain is not one it runs (the caller then runs the
        blocks one by one with `fusion_execute`)."""
        from burn_opencl.fusion_rows import execute_rows  # it builds on this module's dialect

        return execute_rows(blocks, values)

    def fusion_execute(self, block: FusedBlock, inputs: Sequence[CLTensor]) -> list[CLTensor]:
        """Run `block` as one kernel over `inputs`; new contiguous tensors for ``block.outputs``
        (then the reduction's result when ``block.reduce`` is set)."""
        rt = inputs[0].rt
        for t in inputs:
            if t.rt is not rt:
                raise DeviceError(f"fused kernel: tensors on {rt.device} and {t.rt.device}")
        if block.reduce is not None:
            return _execute_reduce(block, inputs)
        return _execute_elementwise(block, inputs)


def _execute_elementwise(block: FusedBlock, inputs: Sequence[CLTensor]) -> list[CLTensor]:
    """Launch `block` (no reduction) as ``fused``; its outputs."""
    rt = inputs[0].rt
    outs = [new(rt, t.shape, t.dtype, "the result of a fused kernel") for t in block.outputs]
    shape = block.shape
    n = 1
    for s in shape:
        n *= s
    if n == 0:
        return outs
    scalars = scalar_values(block)
    flat = all(t.shape == shape for t in block.outputs)
    steps = []
    if flat:
        for t in inputs:
            if t.n == 1:
                steps.append(0)
            elif t.contig and t.shape == shape:
                steps.append(1)
            else:
                flat = False
                break
    offsets = [0] * len(outs) + [t.offset for t in inputs]
    local = None
    grid = None
    if flat:
        rank = -1
        tail: list[Any] = [*steps, *scalars]
    else:
        strides = [aligned_strides(t.shape, c_strides(t.shape), shape) for t in block.outputs]
        strides += [aligned_strides(t.shape, t.strides, shape) for t in inputs]
        dims, collapsed = collapse(shape, strides)
        rank = len(dims)
        local = grid_local(dims)
        grid = None if local is None else grid_inner(collapsed)
        tail = [*scalars, *dims]
        for walk in collapsed:
            tail.extend(walk)
    key = ("fused", block.signature(), rank, grid)
    kernel = rt.kernels.get((key, "fused"))
    if kernel is None:
        dtypes = [t.dtype for t in (*block.inputs, *block.outputs)]
        kernel = rt.kernel(
            key, "fused", lambda: _source(block, rank, grid), build_options(*dtypes),
            _arg_types(block, rank),
        )
    args = [*(o.buf for o in outs), *(t.buf for t in inputs), n, *offsets, *tail]
    with rt.lock:
        if local is None:
            kernel(rt.queue, global_size(n), (LOCAL,), *args)
        else:
            kernel(rt.queue, grid_size(dims, local), local, *args)
    return outs


def _execute_reduce(block: FusedBlock, inputs: Sequence[CLTensor]) -> list[CLTensor]:
    """Run `block` ending in a reduction: its outputs, then the reduction's result (keepdim).

    Along a contiguous reduced dim (every operand's stride along it 0 or 1) with ops in the
    prologue, the block runs as two kernels: its ops as a ``fused`` kernel that also writes the
    reduced value, then `burn_opencl.kernels.reduce`. In ``fused_red`` adjacent work-items walk
    lines a whole line apart, so pocl gathers every load and runs the prologue scalar: issue 35's
    GELU prologue over [1024, 1024] took 8-20 ms there and 2.4 ms as the two kernels (best of 12,
    load 6.4). A work-group per line, combining in local memory, was no better on pocl 3.0
    (8-17 ms: the rounds of its walk, split at barriers, ran mostly scalar). Along a strided dim
    adjacent work-items walk adjacent lines, their loads are contiguous, and one kernel serves.
    """
    red = block.reduce
    assert red is not None
    rt = inputs[0].rt
    shape, dim, dtype = block.shape, red.dim, red.output.dtype
    full = [aligned_strides(t.shape, c_strides(t.shape), shape) for t in block.outputs]
    full += [aligned_strides(t.shape, t.strides, shape) for t in inputs]
    if block.ops and all(st[dim] in (0, 1) for st in full):
        if red.input in block.inputs:  # reduced as read: the ops only make the outputs
            made = _execute_elementwise(dataclasses.replace(block, reduce=None), inputs)
            reduced = inputs[block.inputs.index(red.input)]
        else:
            written = block.outputs if red.input in block.outputs else (*block.outputs, red.input)
            made = _execute_elementwise(dataclasses.replace(block, outputs=written, reduce=None), inputs)
            reduced = made[written.index(red.input)]
        line, _ = rd.reduce_dim(_REDUCE[red.op], reduced, dim)
        return [*made[: len(block.outputs)], line]
    outs = [new(rt, t.shape, t.dtype, "the result of a fused kernel") for t in block.outputs]
    L = shape[dim]
    chunks = 1 if L <= rd.SPLIT_ABOVE else (L + rd.CHUNK - 1) // rd.CHUNK
    chunk = L if chunks == 1 else rd.CHUNK
    other_shape = shape[:dim] + shape[dim + 1 :]
    op = _REDUCE[red.op]
    if chunks == 1:
        result = new(rt, red.output.shape, dtype, f"the result of {red.op}")
    else:  # partial results of each chunk, the chunk dim last (the work-item order)
        result = new(rt, (*other_shape, chunks), dtype, f"the result of {red.op}")
    dims, collapsed = collapse(other_shape, [st[:dim] + st[dim + 1 :] for st in full])
    rank = len(dims)
    key = ("fused_red", block.signature(), rank)
    kernel = rt.kernels.get((key, "fused_red"))
    if kernel is None:
        nnames = len(outs) + len(inputs)
        types: list[Any] = [None] * (nnames + 1) + [I64] * (4 + 2 * nnames) + [SCALAR_NP[COMPUTE[dtype]]]
        types += [SCALAR_NP[COMPUTE[d]] for d in scalar_dtypes(block)]
        types += [I64] * (rank * (1 + nnames))
        dtypes = [t.dtype for t in (*block.inputs, *block.outputs, red.output)]
        kernel = rt.kernel(
            key, "fused_red", lambda: _reduce_source(block, rank), build_options(*dtypes), types
        )
    n = result.n
    scale = 1.0 / L if op == "mean" and chunks == 1 else 1.0
    args: list[Any] = [*(o.buf for o in outs), result.buf, *(t.buf for t in inputs), n, chunks, L, chunk]
    args += [0] * len(outs) + [t.offset for t in inputs]
    args += [st[dim] for st in full]
    args += [scale, *scalar_values(block), *dims]
    for walk in collapsed:
        args.extend(walk)
    with rt.lock:
        kernel(rt.queue, global_size(n), (LOCAL,), *args)
    if chunks == 1:
        return [*outs, result]
    first = "sum" if op == "mean" else op
    values, _ = rd.reduce_dim(first, result, len(other_shape))
    values = rd._keepdim(values, shape, dim)
    if op == "mean":
        return [*outs, ew.run(ew.OPS["float_mul_scalar"], [values], dtype, (1.0 / L,), compute=dtype)]
    return [*outs, values]

