"""Row chains on a CPU device: fused blocks joined across their sum / mean along the last dim,
run as one kernel in which each work-item computes one row with explicit float8 vectors.

burn-fusion hands a *row chain* (`FusionOps.fusion_execute_rows`) when ops keep reading a block's
values after a reduction along its last dim: a layer norm's ``y - mean``, ``c * c``,
``var.mean_dim``, ``c * rstd * gamma + beta``. Each `FusedBlock` of the chain is a *stage*: its
ops, then its reduction; a later stage reads earlier stages' values and reductions by their ids.
The kernel walks the row once per stage, eight floats at a time (``vload8``), keeping the values a
later stage reads in a private array of the row (the row stays in the core's L1), and the
reduced value of each stage in a register; so the chain reads its inputs and writes its live
outputs once, in one launch. Values that vary only per row (a reduction, ``(var + eps) ** -0.5``)
are computed once per row as scalars, with the one-op kernels' expressions.

Why explicit vectors on pocl: pocl vectorizes a work-group across work-items; a work-item per row
makes every load a gather (issue 35: a GELU prologue over [1024, 1024] at 8-20 ms), a work-group
per row splits the kernel at each barrier into scalar rounds (8-17 ms; 10 ms for the whole chain
written so, measured again 2026-11-28), while one work-item per row on float8 values ran the
whole GELU + layer norm chain in 1.1 ms against 2.4 ms for the six kernels of the stage-by-stage
path (`bench/pocl_fusion.py profile`). pocl's vector builtins (``fmin``, ``rint``, ``copysign``
on float8) are out-of-line calls (the same kernel written with them: 2.4 ms), so the float8
``b_exp`` / ``b_tanh`` below use the same arithmetic as the float ones of
`burn_opencl.dtypes.PRELUDE` with the clamps, the rounding and the sign as vector operators and
bit operations: results are the float helpers' lane by lane.

Only float32 chains of the ops in `VECTOR_OPS` (per-row values: any fused op) whose reductions are
sums, means, maxima or minima along the last dim, of a length that is a multiple of 8 up to
`MAX_ROW`, with inputs read contiguously per row, per column, per row value or as one value, are run here;
`fusion_execute_rows` answers None for the others and burn-fusion runs the stages one by one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from burn.backend.fusion_exprs import EXPRS, aligned_strides, c_strides, compute_dtype
from burn.backend.ir import FusedBlock, OpIR, written_scalars
from burn.foundations.dtype import DType
from burn_opencl.dtypes import build_options
from burn_opencl.fusion import OPENCL
from burn_opencl.kernels.common import I64, new
from burn_opencl.tensor import CLTensor

WIDTH = 8  # floats per vector: one AVX2 register
MAX_ROW = 8192  # the longest row: a private float8 array per carried value holds it
MAX_CARRIED_BYTES = 64 * 1024  # private arrays of one work-item (pocl keeps them on its stack)
ROW_REDUCE_OPS = frozenset({"float_sum_dim", "float_mean_dim", "float_max_dim", "float_min_dim"})
# Per reduction: the accumulator's start, its float8 update by ``v`` and the combine of its lanes.
# max and min: NaN wins, as in the one-op kernels (an infinite start is what their first element
# gives: max(-inf, x) is x for every x but NaN).
_ROW_REDUCE = {
    "float_sum_dim": ("(float8)0.0f", "acc += v;", "B_HSUM(acc)"),
    "float_mean_dim": ("(float8)0.0f", "acc += v;", "B_HSUM(acc)"),
    "float_max_dim": (
        "(float8)(-INFINITY)", "acc = (v > acc || (v != v && acc == acc)) ? v : acc;", "b_hmax(acc)"
    ),
    "float_min_dim": (
        "(float8)INFINITY", "acc = (v < acc || (v != v && acc == acc)) ? v : acc;", "b_hmin(acc)"
    ),
}
# Ops whose `EXPRS` expression computes lane by lane on float8 values (with the overloads of
# `VECTOR_PRELUDE`); powf_scalar only with the exponents that are products (`_vector_expr`).
VECTOR_OPS = frozenset({
    "float_abs", "float_add", "float_add_scalar", "float_sub", "float_sub_scalar", "float_mul",
    "float_mul_scalar", "float_div", "float_div_scalar", "float_neg", "float_recip", "float_exp",
    "float_tanh", "float_sqrt", "float_clamp", "float_clamp_max", "float_clamp_min", "float_cast",
    "float_powf_scalar",
})
_POWERS = {0.0: "((T)1)", 1.0: "(a)", 2.0: "(a * a)", 3.0: "(a * a * a)", 4.0: "((a * a) * (a * a))",
           -1.0: "((T)1 / a)", -2.0: "(((T)1 / a) * ((T)1 / a))"}

# float8 overloads of the helpers the VECTOR_OPS expressions call. 12582912 = 1.5 * 2^23: adding
# and subtracting it rounds to the nearest integer (ties to even, as rint) for |x| < 2^22.
VECTOR_PRELUDE = r"""
B_OVL float8 b_fabs(float8 x) { return as_float8(as_int8(x) & 0x7fffffff); }
B_OVL float8 b_sqrt(float8 x) { return sqrt(x); }
B_OVL float8 b_exp(float8 x) {
  float8 c = x > 89.0f ? (float8)89.0f : (x < -104.0f ? (float8)-104.0f : x);
  float8 k = (c * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float8 r = (c - k * 0.693145751953125f) - k * 1.42860682030941723212e-6f;
  float8 p = 1.0f + r * (1.0f + r * (0.5f + r * (0.16666666666666666f + r * (0.041666666666666664f
            + r * (0.008333333333333333f + r * (0.001388888888888889f + r * 0.0001984126984126984f))))));
  int8 n = convert_int8(k);
  int8 h = n >> 1;
  float8 y = p * as_float8((h + 127) << 23) * as_float8((n - h + 127) << 23);
  return x != x ? x : y;
}
B_OVL float8 b_tanh(float8 x) {
  float8 ax = as_float8(as_int8(x) & 0x7fffffff);
  float8 t = 2.0f * (ax < 10.0f ? ax : (float8)10.0f);
  float8 k = (t * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float8 r = (t - k * 0.693145751953125f) - k * 1.42860682030941723212e-6f;
  float8 p = r + r * r * (0.5f + r * (0.16666666666666666f + r * (0.041666666666666664f
            + r * (0.008333333333333333f + r * (0.001388888888888889f + r * (0.0001984126984126984f
            + r * 0.0000248015873015873f))))));
  float8 s = as_float8((convert_int8(k) + 127) << 23);
  float8 e = s * p + (s - 1.0f);
  float8 y = e / (e + 2.0f);
  float8 signed_y = as_float8(as_int8(y) | (as_int8(x) & (int)0x80000000));
  return x != x ? x : signed_y;
}
#define B_HSUM(v) (((v).s0 + (v).s1) + ((v).s2 + (v).s3) + (((v).s4 + (v).s5) + ((v).s6 + (v).s7)))
B_OVL float b_hmax(float8 v) {
  float a[8]; vstore8(v, 0, a); float m = a[0];
  for (int i = 1; i < 8; i++) if (a[i] > m || (a[i] != a[i] && m == m)) m = a[i];
  return m;
}
B_OVL float b_hmin(float8 v) {
  float a[8]; vstore8(v, 0, a); float m = a[0];
  for (int i = 1; i < 8; i++) if (a[i] < m || (a[i] != a[i] && m == m)) m = a[i];
  return m;
}
"""


def row_chain_fits(op: str, shape: tuple[int, ...], dim: int, dtype: DType) -> bool:
    """Whether a block of `shape` may go on past reduction `op` along `dim` (see the module).

    Example:
        >>> row_chain_fits("float_mean_dim", (1024, 1024), 1, DType.F32)
        True
        >>> row_chain_fits("float_prod_dim", (1024, 1024), 1, DType.F32), row_chain_fits(
        ...     "float_sum_dim", (1024, 1024), 0, DType.F32)
        (False, False)
    """
    if op not in ROW_REDUCE_OPS or dtype is not DType.F32 or not shape or dim != len(shape) - 1:
        return False
    length = shape[-1]
    return length % WIDTH == 0 and 0 < length <= MAX_ROW


def _input_kind(t: CLTensor, shape: tuple[int, ...]) -> str | None:
    """How a row reads `t`: ``full`` (its own row), ``col`` (one row for all), ``row`` (one value
    per row), ``one`` (one value); None when it is read another way (strided, other broadcasts)."""
    if t.n == 1:
        return "one"
    if t.contig and t.shape == shape:
        return "full"
    aligned = aligned_strides(t.shape, t.strides, shape)
    full = c_strides(shape)
    if aligned == full:
        return "full"
    if aligned[-1] == 1 and not any(aligned[:-1]):
        return "col"
    rows = c_strides(shape[:-1])
    per_row = tuple(s if n != 1 else 0 for s, n in zip(rows, shape[:-1], strict=True))
    if aligned[-1] == 0 and aligned[:-1] == per_row:
        return "row" if t.n == _numel(shape[:-1]) else None
    return None


def _numel(shape: tuple[int, ...]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def _vector_expr(op: OpIR) -> str | None:
    """The op's expression on float8 values, or None when it has none."""
    if op.op not in VECTOR_OPS:
        return None
    if op.op == "float_powf_scalar":
        return _POWERS.get(op.scalars[0])
    return EXPRS[op.op].expr


def _chain_key(
    blocks: Sequence[FusedBlock], inputs: Sequence[int], kinds: Sequence[str]
) -> tuple[dict[int, int], tuple[Any, ...], list[float]]:
    """One pass over a float32 row chain: the local number of each value (its inputs 0.., then
    each stage's op outputs and its reduction, in order), the signature its kernel depends on
    (in local numbers, so equal chains of other values share one kernel), and the scalar
    arguments (those not written as literals), in the order `_source` declares them.

    The signature holds no dtypes (the caller checked float32): it is hashed once per launch, and
    hashing a DType is a Python-level call."""
    local = {i: k for k, i in enumerate(inputs)}
    scalars: list[float] = []
    stages = []
    for block in blocks:
        ops = []
        for op in block.ops:
            written: tuple[float | None, ...] = ()
            if op.scalars:
                written = written_scalars(op.op, op.scalars)
                scalars.extend(v for v, lit in zip(op.scalars, written, strict=True) if lit is None)
            ops.append((op.op, tuple([local[t.id] for t in op.inputs]), written))
            for t in op.outputs:
                local[t.id] = len(local)
        red = block.reduce
        if red is not None:
            local[red.output.id] = len(local)
        outputs = tuple([local[t.id] for t in block.outputs])
        stages.append((tuple(ops), outputs, None if red is None else (red.op, local[red.input.id])))
    return local, (tuple(kinds), tuple(stages)), scalars


def _source(
    blocks: Sequence[FusedBlock], kinds: Sequence[str], local: Mapping[int, int], length: int
) -> str | None:
    """Program text of the kernel ``rows`` of a chain (values named by their local numbers), or
    None when the chain holds what it cannot compute (see the module)."""
    lanes: dict[int, str] = {k: ("s" if kind in ("row", "one") else "v") for k, kind in enumerate(kinds)}
    stage_of: dict[int, int] = {}
    outputs: list[int] = []
    reductions: list[int] = []
    for k, block in enumerate(blocks):
        for op in block.ops:
            values = (*op.inputs, *op.outputs)
            if compute_dtype(op) is not DType.F32 or any(t.dtype is not DType.F32 for t in values):
                return None
            lane = "v" if any(lanes[local[t.id]] == "v" for t in op.inputs) else "s"
            if lane == "v" and _vector_expr(op) is None:
                return None
            lanes[local[op.outputs[0].id]] = lane
            stage_of[local[op.outputs[0].id]] = k
        red = block.reduce
        if red is not None:
            if lanes.get(local[red.input.id]) != "v" or red.op not in ROW_REDUCE_OPS:
                return None
            lanes[local[red.output.id]] = "s"
            stage_of[local[red.output.id]] = k
            reductions.append(local[red.output.id])
        for t in block.outputs:
            want = blocks[0].shape if lanes[local[t.id]] == "v" else blocks[0].shape[:-1] + (1,)
            if t.shape != want:  # a vector value over the whole block, a scalar one per row
                return None
            outputs.append(local[t.id])
    # Vector values a later stage reads are kept in private arrays of the row.
    carried: set[int] = set()
    for k, block in enumerate(blocks):
        reads = [t for op in block.ops for t in op.inputs]
        if block.reduce is not None:
            reads.append(block.reduce.input)
        for t in reads:
            i = local[t.id]
            if lanes[i] == "v" and stage_of.get(i, k) < k:
                carried.add(i)
    if len(carried) * length * 4 > MAX_CARRIED_BYTES:
        return None
    n8 = length // WIDTH
    params = [f"__global float* o{j}" for j in range(len(outputs))]
    params += [f"__global float* r{j}" for j in range(len(reductions))]
    params += [f"__global const float* x{i}" for i in range(len(kinds))]
    params += ["long R"] + [f"long x{i}_off" for i in range(len(kinds))]
    body = ["long row = get_global_id(0);", "if (row >= R) return;"]
    body += [f"float v{i};" for i in reductions]
    for i, kind in enumerate(kinds):
        if kind == "full":
            body.append(f"__global const float* p{i} = x{i} + x{i}_off + row * {length};")
        elif kind == "col":
            body.append(f"__global const float* p{i} = x{i} + x{i}_off;")
        else:
            body.append(f"float v{i} = x{i}[x{i}_off{' + row' if kind == 'row' else ''}];")
    body.extend(f"float8 c{i}[{n8}];" for i in sorted(carried))
    out_index = {i: j for j, i in enumerate(outputs)}
    nscalar = 0
    for k, block in enumerate(blocks):
        loop: list[str] = []
        loaded: set[int] = set()

        def load(i: int, k: int = k, loop: list[str] = loop, loaded: set[int] = loaded) -> None:
            if lanes[i] != "v" or i in loaded:
                return
            if i < len(kinds):
                loop.append(f"float8 v{i} = vload8(k, p{i});")
            elif stage_of[i] < k:
                loop.append(f"float8 v{i} = c{i}[k];")
            else:
                return
            loaded.add(i)

        for op in block.ops:
            for t in op.inputs:
                load(local[t.id])
            out = local[op.outputs[0].id]
            vector = lanes[out] == "v"
            ctype = "float8" if vector else "float"
            expr = _vector_expr(op) if vector else EXPRS[op.op].expr
            decls = [f"{ctype} {'abc'[j]} = ({ctype})v{local[t.id]};" for j, t in enumerate(op.inputs)]
            for j, lit in enumerate(written_scalars(op.op, op.scalars)):
                if lit is not None:
                    decls.append(f"T s{j} = (T){lit!r};")
                else:
                    decls.append(f"T s{j} = (T)q{nscalar};")
                    nscalar += 1
            stmt = [f"{ctype} v{out};", f"#define T {ctype}",
                    "{ " + " ".join(decls) + f" v{out} = ({ctype})({expr}); }}", "#undef T"]
            if vector:
                loop.extend(stmt)
                if out in carried:
                    loop.append(f"c{out}[k] = v{out};")
                if out in out_index:
                    loop.append(f"vstore8(v{out}, k, o{out_index[out]} + row * {length});")
            else:
                body.extend(stmt)
                if out in out_index:
                    body.append(f"o{out_index[out]}[row] = v{out};")
        red = block.reduce
        if red is not None:
            src = local[red.input.id]
            load(src)
            start, update, _ = _ROW_REDUCE[red.op]
            loop.append(f"{{ float8 v = v{src}; {update} }}")
            body.append(f"{{ float8 acc = {start};")
        if loop:
            body.append(f"for (int k = 0; k < {n8}; k++) {{")
            body.extend("  " + line for line in loop)
            body.append("}")
        if red is not None:
            dst = local[red.output.id]
            scale = f" * {1.0 / length!r}f" if red.op == "float_mean_dim" else ""
            body.append(f"v{dst} = {_ROW_REDUCE[red.op][2]}{scale}; }}")
            body.append(f"r{reductions.index(dst)}[row] = v{dst};")
    params += [f"float q{j}" for j in range(nscalar)]
    code = "\n  ".join(body)
    kernel = f"__kernel void rows({', '.join(params)}) {{\n  {code}\n}}"
    return "\n".join([OPENCL.helpers("float"), VECTOR_PRELUDE, kernel])


# Chain signature -> its source (None for chains this module does not run, asked once) and its
# kernel per runtime: one lookup per launch.
_SOURCES: dict[tuple[Any, ...], tuple[str | None, dict[Any, Any]]] = {}


def execute_rows(blocks: Sequence[FusedBlock], values: Mapping[int, CLTensor]) -> dict[int, CLTensor] | None:
    """Run the row chain `blocks` over the inputs `values` (by id) as one kernel: every block's
    outputs and reductions by id, or None when the chain is not one this module runs."""
    shape = blocks[0].shape
    first = next(iter(values.values()), None)
    if first is None or not first.rt.is_cpu or any(b.shape != shape for b in blocks):
        return None
    reductions = [b.reduce.output for b in blocks if b.reduce is not None]
    if not reductions or any(
        not row_chain_fits(b.reduce.op, shape, b.reduce.dim, b.reduce.output.dtype)
        for b in blocks if b.reduce is not None
    ):
        return None
    f32 = DType.F32
    for b in blocks:  # op outputs and the inputs (below) float32: so is every value of the chain
        for op in b.ops:
            for out in op.outputs:
                if out.dtype is not f32:
                    return None
    kinds = []
    for t in values.values():
        kind = _input_kind(t, shape) if t.dtype is f32 else None
        if kind is None:
            return None
        kinds.append(kind)
    length = shape[-1]
    local, chain, scalars = _chain_key(blocks, list(values), kinds)
    signature = (chain, length)
    rt = first.rt
    entry = _SOURCES.get(signature)
    if entry is None:
        entry = _SOURCES[signature] = (_source(blocks, kinds, local, length), {})
    source, kernels = entry
    if source is None:
        return None
    kernel = kernels.get(rt)
    if kernel is None:
        outputs = sum(len(b.outputs) for b in blocks)
        types: list[Any] = [None] * (outputs + len(reductions) + len(values)) + [I64] * (1 + len(values))
        types += [np.float32] * len(scalars)
        kernel = rt.kernel(("rows", signature), "rows", lambda: source, build_options(f32), types)
        kernels[rt] = kernel
    outs = [new(rt, t.shape, t.dtype, "the result of a fused kernel") for b in blocks for t in b.outputs]
    reds = [new(rt, t.shape, t.dtype, "the result of a fused reduction") for t in reductions]
    ins = list(values.values())
    rows = _numel(shape[:-1])
    args = [*(o.buf for o in outs), *(r.buf for r in reds), *(t.buf for t in ins), rows]
    args += [t.offset for t in ins] + scalars
    with rt.lock:
        kernel(rt.queue, (rows,), (1,), *args)
    found = {t.id: o for t, o in zip((t for b in blocks for t in b.outputs), outs, strict=True)}
    found.update((t.id, r) for t, r in zip(reductions, reds, strict=True))
    return found
