"""The fusion contract of burn-opencl: one OpenCL kernel generated from a `FusedBlock`.

Each op of the block becomes one C statement over values in registers, using the same
expressions as the one-op kernels (`burn_opencl.kernels.elementwise`), so fused and unfused
results agree (up to the rounding of values that the unfused kernels store between ops). The
kernel reads each input through broadcasting, as the one-op kernels do: *flat* when every input
is contiguous with the block's shape or holds one element and every output has the block's
shape, else *strided* with dims collapsed. Programs are built once per block signature, dtypes
and layout rank, kept in the device's kernel cache and, by pyopencl and pocl, on disk.

A block ending in a reduction (``block.reduce``) becomes a reduction kernel shaped like
`burn_opencl.kernels.reduce`'s: one work-item per output element (per chunk of a long dim) walks
the reduced dim, computing the block's ops at each element (its prologue), writing the block's
outputs as it goes and accumulating the reduced value; chunk partials of a long dim are reduced
again by `burn_opencl.kernels.reduce`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from burn.backend.ir import FusedBlock, OpIR
from burn.errors import DeviceError
from burn.tensor.dtype import DType
from burn_opencl.dtypes import COMPUTE, SCALAR_NP, STORAGE, build_options, load, store, wider
from burn_opencl.kernels import elementwise as ew
from burn_opencl.kernels import reduce as rd
from burn_opencl.kernels.common import (
    I64,
    LOCAL,
    c_strides,
    collapse,
    global_size,
    index_code,
    index_params,
    new,
)
from burn_opencl.tensor import CLTensor

Shape = tuple[int, ...]

# IR op -> the one-op kernel's op, whose C expression and operand promotion the fused kernel uses.
_FROM: dict[str, ew.Ew] = {
    **{f"float_{k}": ew.FLOAT_UNARY[k] for k in (
        "exp", "log", "sqrt", "abs", "sin", "cos", "tanh", "erf", "round", "floor", "ceil", "neg",
        "recip", "log1p", "sign",
    )},
    **{k: ew.FLOAT_UNARY[k] for k in ("relu", "gelu", "sigmoid", "log_sigmoid", "silu")},
    "float_add_scalar": ew.FLOAT_SCALAR["add_s"],
    "float_sub_scalar": ew.FLOAT_SCALAR["sub_s"],
    "float_mul_scalar": ew.FLOAT_SCALAR["mul_s"],
    "float_div_scalar": ew.FLOAT_SCALAR["div_s"],
    "float_remainder_scalar": ew.FLOAT_SCALAR["rem_s"],
    "float_powf_scalar": ew.FLOAT_SCALAR["pow_s"],
    "float_clamp_min": ew.FLOAT_SCALAR["clamp_min"],
    "float_clamp_max": ew.FLOAT_SCALAR["clamp_max"],
    "leaky_relu": ew.FLOAT_SCALAR["leaky_relu"],
    "softplus": ew.FLOAT_SCALAR["softplus"],
    "float_clamp": ew.FLOAT_SCALAR2["clamp"],
    "hard_sigmoid": ew.FLOAT_SCALAR2["hard_sigmoid"],
    "float_add": ew.FLOAT_BINARY["add"],
    "float_sub": ew.FLOAT_BINARY["sub"],
    "float_mul": ew.FLOAT_BINARY["mul"],
    "float_div": ew.FLOAT_BINARY["div"],
    "float_remainder": ew.FLOAT_BINARY["rem"],
    "float_powf": ew.FLOAT_BINARY["pow"],
    "relu_backward": ew.FLOAT_BINARY["relu_backward"],
    "sigmoid_backward": ew.FLOAT_BINARY["sigmoid_backward"],
    "gelu_backward": ew.FLOAT_BINARY["gelu_backward"],
    "float_is_nan": ew.FLOAT_TEST["is_nan"],
    "float_is_inf": ew.FLOAT_TEST["is_inf"],
    "float_equal": ew.COMPARE["eq"],
    "float_not_equal": ew.COMPARE["ne"],
    "float_greater": ew.COMPARE["gt"],
    "float_greater_equal": ew.COMPARE["ge"],
    "float_lower": ew.COMPARE["lt"],
    "float_lower_equal": ew.COMPARE["le"],
    "float_equal_elem": ew.COMPARE_SCALAR["eq_s"],
    "float_not_equal_elem": ew.COMPARE_SCALAR["ne_s"],
    "float_greater_elem": ew.COMPARE_SCALAR["gt_s"],
    "float_greater_equal_elem": ew.COMPARE_SCALAR["ge_s"],
    "float_lower_elem": ew.COMPARE_SCALAR["lt_s"],
    "float_lower_equal_elem": ew.COMPARE_SCALAR["le_s"],
    "bool_not": ew.BOOL_UNARY["not"],
    "bool_and": ew.BOOL_BINARY["and"],
    "bool_or": ew.BOOL_BINARY["or"],
    "bool_equal": ew.BOOL_BINARY["eq"],
    "float_mask_where": ew.MASK_WHERE,
    "float_mask_fill": ew.MASK_FILL,
    "float_cast": ew.CAST,
    "int_into_float": ew.CAST,
    "bool_into_float": ew.CAST,
}
FUSION_OPS = frozenset(_FROM)
# Reductions a fused kernel ends with -> the op of `burn_opencl.kernels.reduce` it mirrors.
_REDUCE = {
    "float_sum_dim": "sum", "float_mean_dim": "mean", "float_prod_dim": "prod",
    "float_max_dim": "max", "float_min_dim": "min",
}
FUSION_REDUCE_OPS = frozenset(_REDUCE)

# The float helpers of the one-op kernels, written once per float compute type as overloads.
_HELPERS = {
    t: re.sub(r"\bT\b", t, ew._FLOAT_HELPERS.replace("inline T ", "B_OVL T ")) for t in ("float", "double")
}


def _compute(op: OpIR, spec: ew.Ew) -> DType:
    """The dtype `op` computes in: as `elementwise.run`, the wider of its promoted inputs."""
    compute = op.inputs[0].dtype
    for k in range(1, len(op.inputs)):
        if spec.promote[k]:
            compute = wider(compute, op.inputs[k].dtype)
    return compute


def _source(block: FusedBlock, rank: int) -> str:
    """Program text of `block`'s kernel ``fused``; rank -1 is the flat layout."""
    nin, nout = len(block.inputs), len(block.outputs)
    parts = _helpers(block)
    names = [f"o{k}" for k in range(nout)] + [f"x{k}" for k in range(nin)]
    params = [f"__global {STORAGE[t.dtype]}* o{k}" for k, t in enumerate(block.outputs)]
    params += [f"__global const {STORAGE[t.dtype]}* x{k}" for k, t in enumerate(block.inputs)]
    params += ["long n"] + [f"long {nm}_off" for nm in names]
    if rank < 0:
        params += [f"long x{k}_st" for k in range(nin)]
    body = ["long i = get_global_id(0);", "GUARD(i, n);"]
    if rank < 0:
        body.extend(f"long o{k}_i = o{k}_off + i;" for k in range(nout))
        body.extend(f"long x{k}_i = x{k}_off + i * x{k}_st;" for k in range(nin))
    else:
        body.append(index_code(rank, names))
    var: dict[int, str] = {}
    body.extend(_op_code(block, var, params, "_i"))
    for k, t in enumerate(block.outputs):
        body.append(store(t.dtype, f"o{k}", f"o{k}_i", var[t.id]))
    if rank >= 0:
        params.append(index_params(rank, names))
    signature = ", ".join(p for p in params if p)
    parts.append(f"__kernel void fused({signature}) {{\n  " + "\n  ".join(body) + "\n}")
    return "\n".join(parts)


def _op_code(block: FusedBlock, var: dict[int, str], params: list[str], at: str) -> list[str]:
    """C statements loading `block`'s inputs (input k at ``x{k}{at}``) and computing its ops into
    registers ``v<id>`` (recorded in `var`); appends the ops' scalar parameters to `params`."""
    body = []
    for k, t in enumerate(block.inputs):
        var[t.id] = f"v{t.id}"
        body.append(f"{COMPUTE[t.dtype]} v{t.id} = {load(t.dtype, f'x{k}', f'x{k}{at}')};")
    nscalar = 0
    for op in block.ops:
        spec = _FROM[op.op]
        compute = _compute(op, spec)
        ctype_op = COMPUTE[compute]
        decls = []
        for k, src in enumerate(op.inputs):
            ctype = ctype_op if spec.promote[k] else COMPUTE[src.dtype]
            decls.append(f"{ctype} {'abc'[k]} = ({ctype}){var[src.id]};")
        for j in range(len(op.scalars)):
            params.append(f"{ctype_op} p{nscalar}")
            decls.append(f"T s{j} = p{nscalar};")
            nscalar += 1
        out = op.outputs[0]
        ctype = COMPUTE[out.dtype]
        value = (
            f"({ctype})(({spec.expr}) ? 1 : 0)" if out.dtype is DType.BOOL else f"({ctype})({spec.expr})"
        )
        var[out.id] = f"v{out.id}"
        body.append(f"{ctype} v{out.id};")
        body.append(f"#define T {ctype_op}")
        body.append("{ " + " ".join(decls) + f" v{out.id} = {value}; }}")
        body.append("#undef T")
    return body


def _helpers(block: FusedBlock) -> list[str]:
    floats = {COMPUTE[t.dtype] for op in block.ops for t in (*op.inputs, *op.outputs)}
    if block.reduce is not None:
        floats.add(COMPUTE[block.reduce.output.dtype])
    return [_HELPERS[t] for t in sorted(floats & set(_HELPERS))]


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
    body.extend(_op_code(block, var, params, "_e"))
    body.extend(store(t.dtype, f"o{k}", f"o{k}_e", var[t.id]) for k, t in enumerate(block.outputs))
    update = rd._OPS[op][1]
    if op in ("max", "min"):
        update = f"if (k == k0) acc = v; else {{ {update} }}"
    body.append(f"{{ {acc_t} v = ({acc_t}){var[red.input.id]}; {update} }}")
    body.append("}")
    if op == "mean":
        body.append("acc *= scale;")
    body.append(store(red.output.dtype, "r", "w", f"(({acc_t})acc)"))
    params.append(index_params(rank, names))
    signature = ", ".join(p for p in params if p)
    kernel = f"__kernel void fused_red({signature}) {{\n  " + "\n  ".join(body) + "\n}"
    return "\n".join([*_helpers(block), kernel])


def _arg_types(block: FusedBlock, rank: int) -> list[Any]:
    nin, nout = len(block.inputs), len(block.outputs)
    args: list[Any] = [None] * (nout + nin) + [I64] * (1 + nout + nin)
    if rank < 0:
        args += [I64] * nin
    for op in block.ops:
        np_type = SCALAR_NP[COMPUTE[_compute(op, _FROM[op.op])]]
        args += [np_type] * len(op.scalars)
    if rank >= 0:
        args += [I64] * (rank * (1 + nout + nin))
    return args


def _aligned_strides(shape: Shape, strides: Shape, full: Shape) -> Shape:
    """Strides of a tensor of `shape` seen over the broadcast shape `full` (0 on broadcast dims)."""
    off = len(full) - len(shape)
    out = [0] * len(full)
    for d, size in enumerate(shape):
        if size != 1:
            out[off + d] = strides[d]
    return tuple(out)


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

    def fusion_execute(self, block: FusedBlock, inputs: Sequence[CLTensor]) -> list[CLTensor]:
        """Run `block` as one kernel over `inputs`; new contiguous tensors for ``block.outputs``
        (then the reduction's result when ``block.reduce`` is set)."""
        rt = inputs[0].rt
        for t in inputs:
            if t.rt is not rt:
                raise DeviceError(f"fused kernel: tensors on {rt.device} and {t.rt.device}")
        outs = [new(rt, t.shape, t.dtype, "the result of a fused kernel") for t in block.outputs]
        if block.reduce is not None:
            return [*outs, _execute_reduce(block, inputs, outs)]
        shape = block.shape
        n = 1
        for s in shape:
            n *= s
        if n == 0:
            return outs
        scalars = [s for op in block.ops for s in op.scalars]
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
        if flat:
            rank = -1
            tail: list[Any] = [*steps, *scalars]
        else:
            strides = [_aligned_strides(t.shape, c_strides(t.shape), shape) for t in block.outputs]
            strides += [_aligned_strides(t.shape, t.strides, shape) for t in inputs]
            dims, collapsed = collapse(shape, strides)
            rank = len(dims)
            tail = [*scalars, *dims]
            for walk in collapsed:
                tail.extend(walk)
        key = ("fused", block.signature(), rank)
        kernel = rt.kernels.get((key, "fused"))
        if kernel is None:
            dtypes = [t.dtype for t in (*block.inputs, *block.outputs)]
            kernel = rt.kernel(
                key, "fused", lambda: _source(block, rank), build_options(*dtypes), _arg_types(block, rank)
            )
        args = [*(o.buf for o in outs), *(t.buf for t in inputs), n, *offsets, *tail]
        with rt.lock:
            kernel(rt.queue, global_size(n), (LOCAL,), *args)
        return outs


def _execute_reduce(block: FusedBlock, inputs: Sequence[CLTensor], outs: list[CLTensor]) -> CLTensor:
    """Launch `block`'s reduction kernel writing `outs`; the reduction's result (keepdim)."""
    red = block.reduce
    assert red is not None
    rt = inputs[0].rt
    shape, dim, dtype = block.shape, red.dim, red.output.dtype
    L = shape[dim]
    chunks = 1 if L <= rd.SPLIT_ABOVE else (L + rd.CHUNK - 1) // rd.CHUNK
    chunk = L if chunks == 1 else rd.CHUNK
    other_shape = shape[:dim] + shape[dim + 1 :]
    op = _REDUCE[red.op]
    if chunks == 1:
        result = new(rt, red.output.shape, dtype, f"the result of {red.op}")
    else:  # partial results of each chunk, the chunk dim last (the work-item order)
        result = new(rt, (*other_shape, chunks), dtype, f"the result of {red.op}")
    full = [_aligned_strides(t.shape, c_strides(t.shape), shape) for t in block.outputs]
    full += [_aligned_strides(t.shape, t.strides, shape) for t in inputs]
    dims, collapsed = collapse(other_shape, [st[:dim] + st[dim + 1 :] for st in full])
    rank = len(dims)
    key = ("fused_red", block.signature(), rank)
    kernel = rt.kernels.get((key, "fused_red"))
    if kernel is None:
        nnames = len(outs) + len(inputs)
        types: list[Any] = [None] * (nnames + 1) + [I64] * (4 + 2 * nnames) + [SCALAR_NP[COMPUTE[dtype]]]
        types += [SCALAR_NP[COMPUTE[_compute(o, _FROM[o.op])]] for o in block.ops for _ in o.scalars]
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
    args += [scale, *(s for o in block.ops for s in o.scalars), *dims]
    for walk in collapsed:
        args.extend(walk)
    with rt.lock:
        kernel(rt.queue, global_size(n), (LOCAL,), *args)
    if chunks == 1:
        return result
    first = "sum" if op == "mean" else op
    values, _ = rd.reduce_dim(first, result, len(other_shape))
    values = rd._keepdim(values, shape, dim)
    if op == "mean":
        return ew.run(ew.FLOAT_SCALAR["mul_s"], [values], dtype, (1.0 / L,), compute=dtype)
    return values
