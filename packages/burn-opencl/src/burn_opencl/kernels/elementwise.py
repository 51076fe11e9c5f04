"""Elementwise kernels: one generated kernel per op, dtypes and layout, with broadcasting and strides.

Each op is a C expression over its inputs ``a``, ``b``, ``c`` (in the compute type ``T``), its
scalar arguments ``s0``, ``s1`` and the flat output index ``i``. Ops of one `group` share a
program: pocl compiles a program once and each kernel on first launch, so a group costs one
compiler run however many of its ops are used.

Layouts: *flat* when every input is contiguous with the output's shape or holds one element
(its stride is then 1 or 0); otherwise *strided*, with the dims collapsed as far as every operand
allows and one kernel per remaining rank, launched on a *grid* (`burn_opencl.kernels.common.
grid_local`: no index division) where the innermost dim is long enough.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from burn.backend.contract import Elementwise
from burn.backend.fusion_exprs import FLOAT_HELPERS
from burn.backend.ir import ELEMENTWISE
from burn.errors import DeviceError
from burn.foundations.dtype import DType
from burn_opencl.dtypes import COMPUTE, SCALAR_NP, STORAGE, build_options, load, store, wider
from burn_opencl.kernels.common import (
    I64,
    LOCAL,
    broadcast_shape,
    broadcast_strides,
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


@dataclass(frozen=True)
class Ew:
    """An elementwise op.

    Attributes:
        name: kernel name.
        expr: C expression of the result, in the compute type.
        arity: number of tensor inputs.
        group: ops compiled into one program (same arity, scalars and type signature).
        nscalars: number of scalar arguments.
        promote: per input, whether it is converted to the compute type (False: read as is, e.g.
            a bool mask).
        int_scalars: scalars are passed as ``long`` and converted in the kernel (int ops).
        literals: values of the first scalars written into the kernel's code (not arguments).
    """

    name: str
    expr: str
    arity: int
    group: str
    nscalars: int = 0
    promote: tuple[bool, ...] = (True, True, True)
    int_scalars: bool = False
    literals: tuple[float, ...] = ()

    @property
    def cname(self) -> str:
        return "k_" + self.name


def _ops(group: str, arity: int, table: dict[str, str], **kw: Any) -> dict[str, Ew]:
    return {name: Ew(name, expr, arity, group, **kw) for name, expr in table.items()}


# -- helpers emitted into every program, specialised to its compute type T ------------------------
# The float helpers of the expressions are the fused kernels' (`burn.backend.fusion_exprs`).
_FLOAT_HELPERS = FLOAT_HELPERS.replace("B_FN", "inline")
_INT_HELPERS = r"""
inline T b_idiv(T a, T b) {
  if (b == (T)0) return (T)0;
  if (b == (T)-1) return (T)((T)0 - a);
  T q = a / b;
  if ((a % b != (T)0) && ((a < (T)0) != (b < (T)0))) q -= (T)1;
  return q;
}
inline T b_irem(T a, T b) {
  if (b == (T)0 || b == (T)-1) return (T)0;
  T r = a % b;
  if (r != (T)0 && ((r < (T)0) != (b < (T)0))) r += b;
  return r;
}
"""

def _group(spec: Elementwise) -> str:
    """Contract ops with one kernel signature share a program (inputs, scalars, bool result)."""
    kinds = "".join(k[0] for k in spec.kinds)
    promote = "".join("p" if spec.promote[k] else "r" for k in range(spec.arity))
    return f"{kinds}{promote}_s{spec.nscalars}_{spec.result}"


# The one-op kernels of the contract's element-wise ops, by contract op name, from the
# expressions declared at each op (`burn.backend.contract.Elementwise`): the table burn-opencl's
# and burn-cuda's fused kernels are generated from too, so fused and unfused results agree.
# Casts have a kernel of their own (`CAST`, below).
OPS: dict[str, Ew] = {
    name: Ew(name, spec.expr, spec.arity, _group(spec), spec.nscalars, spec.promote)
    for name, spec in ELEMENTWISE.items()
    if spec.result != "cast"
}
# The contract ops' kernels with the scalar ``s0`` written into the code, for the values each
# declares (`burn.backend.contract.Elementwise.literals`): powf_scalar's 2.0 folds to ``a * a``.
# One program per op, a kernel per value (pocl compiles a kernel on its first launch).
LITERAL: dict[tuple[str, float], Ew] = {
    (name, value): Ew(
        f"{name}_{k}", spec.expr, spec.arity, f"{_group(spec)}_{name}", spec.nscalars, spec.promote,
        literals=(value,),
    )
    for name, spec in ELEMENTWISE.items()
    for k, value in enumerate(spec.literals)
}
# Kernels of burn-opencl's own compositions (not contract ops), in the programs of the contract
# ops with their signature.
OWN: dict[str, Ew] = {
    "rsub_s": Ew("rsub_s", "s0 - a", 1, _group(ELEMENTWISE["float_sub_scalar"]), 1),
    "exp_sub": Ew("exp_sub", "exp(a - b)", 2, _group(ELEMENTWISE["float_sub"])),
}
# log_softmax's last step: x - max - log(sum(exp(x - max))).
LOG_SOFTMAX_OUT = Ew("log_softmax_out", "a - b - log(c)", 3, "ft")
INT_COMPARE_SCALAR = _ops(
    "icmps",
    1,
    {
        "eq_s": "a == s0",
        "ne_s": "a != s0",
        "gt_s": "a > s0",
        "ge_s": "a >= s0",
        "lt_s": "a < s0",
        "le_s": "a <= s0",
    },
    nscalars=1,
    int_scalars=True,
)
INT_UNARY = _ops(
    "iu",
    1,
    {
        "abs": "a < (T)0 ? (T)((T)0 - a) : a",
        "neg": "(T)((T)0 - a)",
        "sign": "(T)((a > (T)0) - (a < (T)0))",
    },
)
INT_SCALAR = _ops(
    "ius",
    1,
    {
        "add_s": "a + s0",
        "sub_s": "a - s0",
        "mul_s": "a * s0",
        "div_s": "b_idiv(a, s0)",
        "rem_s": "b_irem(a, s0)",
        "clamp_min": "a < s0 ? s0 : a",
        "clamp_max": "a > s0 ? s0 : a",
    },
    nscalars=1,
    int_scalars=True,
)
INT_SCALAR2 = _ops("ius2", 1, {"clamp": "a < s0 ? s0 : (a > s1 ? s1 : a)"}, nscalars=2, int_scalars=True)
INT_BINARY = _ops(
    "ib",
    2,
    {
        "add": "a + b",
        "sub": "a - b",
        "mul": "a * b",
        "div": "b_idiv(a, b)",
        "rem": "b_irem(a, b)",
    },
)
# bool_not_equal is a default of the contract (not element-wise there): one kernel here.
BOOL_NE = Ew("bool_ne", "a != b", 2, _group(ELEMENTWISE["bool_equal"]))
CAST = Ew("cast", "a", 1, "cast")
MASK_WHERE = Ew("mask_where", "b ? c : a", 3, "mw", promote=(True, False, True))
MASK_FILL = Ew("mask_fill", "b ? s0 : a", 2, "mf", nscalars=1, promote=(True, False))
INT_MASK_FILL = Ew("mask_fill", "b ? s0 : a", 2, "imf", nscalars=1, promote=(True, False), int_scalars=True)
FILL = Ew("fill", "s0", 0, "fill", nscalars=1)
INT_FILL = Ew("fill", "s0", 0, "ifill", nscalars=1, int_scalars=True)
ARANGE = Ew("arange", "s0 + (T)i * s1", 0, "arange", nscalars=2, int_scalars=True)

GROUPS: dict[str, list[Ew]] = {}
for _table in (
    OPS,
    {f"{name}_{value}": op for (name, value), op in LITERAL.items()},
    OWN,
    INT_COMPARE_SCALAR,
    INT_UNARY,
    INT_SCALAR,
    INT_SCALAR2,
    INT_BINARY,
    {
        "bool_ne": BOOL_NE,
        "cast": CAST,
        "log_softmax_out": LOG_SOFTMAX_OUT,
        "mask_where": MASK_WHERE,
        "mask_fill": MASK_FILL,
        "imask_fill": INT_MASK_FILL,
        "fill": FILL,
        "ifill": INT_FILL,
        "arange": ARANGE,
    },
):
    for _op in _table.values():
        GROUPS.setdefault(_op.group, []).append(_op)


def _source(
    group: str,
    ins: tuple[DType, ...],
    out: DType,
    compute: DType,
    rank: int,
    grid: tuple[int | None, ...] | None = None,
) -> str:
    """Program text of every op of `group` for these dtypes; rank -1 is the flat layout, `grid`
    the grid one of a strided rank (with the operands' literal innermost strides)."""
    t = COMPUTE[compute]
    is_float = compute.is_float
    helpers = _FLOAT_HELPERS if is_float else (_INT_HELPERS if compute.is_int else "")
    parts = [f"#define T {t}", helpers]
    names = ["o"] + [f"x{k}" for k in range(len(ins))]
    for op in GROUPS[group]:
        params = [f"__global {STORAGE[out]}* o"]
        params += [f"__global const {STORAGE[d]}* x{k}" for k, d in enumerate(ins)]
        params += ["long n"] + [f"long {nm}_off" for nm in names]
        if rank < 0:
            params += [f"long x{k}_st" for k in range(len(ins))]
        stype = "long" if op.int_scalars else t
        written = len(op.literals)
        params += [f"{stype} s{j}_" for j in range(written, op.nscalars)]
        if rank >= 0:
            params.append(index_params(rank, names))
        if grid is not None:
            body = [grid_index_code(rank, names, grid)]
        else:
            body = ["long i = get_global_id(0);", "GUARD(i, n);"]
        if rank < 0:
            body.append("long o_i = o_off + i;")
            body.extend(f"long x{k}_i = x{k}_off + i * x{k}_st;" for k in range(len(ins)))
        elif grid is None:
            body.append(index_code(rank, names))
        body.extend(f"T s{j} = (T){op.literals[j]!r};" for j in range(written))
        body.extend(f"T s{j} = (T)s{j}_;" for j in range(written, op.nscalars))
        for k, d in enumerate(ins):
            var = "abc"[k]
            if op.promote[k]:
                body.append(f"T {var} = (T){load(d, f'x{k}', f'x{k}_i')};")
            else:
                body.append(f"{COMPUTE[d]} {var} = {load(d, f'x{k}', f'x{k}_i')};")
        value = (
            f"(({COMPUTE[out]})(({op.expr}) ? 1 : 0))"
            if out is DType.BOOL
            else f"(({COMPUTE[out]})({op.expr}))"
        )
        body.append(store(out, "o", "o_i", value))
        parts.append(
            f"__kernel void k_{op.name}({', '.join(p for p in params if p)}) {{\n  "
            + "\n  ".join(body)
            + "\n}"
        )
    return "\n".join(parts)


def _arg_types(group: str, nins: int, compute: DType, rank: int) -> Any:
    def types(name: str) -> list[Any]:
        op = next(o for o in GROUPS[group] if "k_" + o.name == name)
        stype = I64 if op.int_scalars else SCALAR_NP[COMPUTE[compute]]
        args: list[Any] = [None] * (1 + nins) + [I64] * (2 + nins)
        if rank < 0:
            args += [I64] * nins
        args += [stype] * (op.nscalars - len(op.literals))
        if rank >= 0:
            args += [I64] * (rank * (2 + nins))
        return args

    return types


def run(
    op: Ew,
    ins: Sequence[CLTensor],
    out_dtype: DType | None = None,
    scalars: Sequence[Any] = (),
    compute: DType | None = None,
    out: CLTensor | None = None,
    shape: tuple[int, ...] | None = None,
    rt: Any = None,
) -> CLTensor:
    """Apply `op` elementwise, broadcasting `ins`.

    Args:
        op: the op.
        ins: input tensors (all on one device).
        out_dtype: result dtype; default the wider promoted input dtype.
        scalars: values of the op's scalar arguments.
        compute: dtype whose compute type the op runs in; default the wider promoted input.
        out: write into this (possibly strided) view instead of a new tensor; it must have the
            broadcast shape.
        shape: output shape when there are no inputs.
        rt: the runtime when there are no inputs.
    """
    if scalars and (op.name, scalars[0]) in LITERAL:
        op = LITERAL[op.name, scalars[0]]
        scalars = scalars[1:]
    if ins:
        first = ins[0]
        rt = first.rt
        out_shape = first.shape
        for t in ins:
            if t.rt is not rt:
                raise DeviceError(f"{op.name}: tensors on {first.rt.device} and {t.rt.device}")
            if t.shape != out_shape:
                out_shape = broadcast_shape(op.name, [x.shape for x in ins])
                break
        if compute is None:
            compute = first.dtype
            for k in range(1, len(ins)):
                if op.promote[k]:
                    compute = wider(compute, ins[k].dtype)
    else:
        assert shape is not None and compute is not None
        out_shape = shape
    if out_dtype is None:
        out_dtype = compute
    if out is None:
        out = new(rt, out_shape, out_dtype, f"the result of {op.name}")
    elif out.shape != out_shape:
        raise ValueError(f"{op.name}: cannot write shape {out_shape} into a view of shape {out.shape}")
    n = out.n
    if n == 0:
        return out
    dtypes = tuple(t.dtype for t in ins)
    flat = out.contig
    if flat:
        steps = []
        for t in ins:
            if t.n == 1:
                steps.append(0)
            elif t.contig and t.shape == out_shape:
                steps.append(1)
            else:
                flat = False
                break
    if flat:
        key: tuple[Any, ...] = (op.group, dtypes, out_dtype, compute, -1, None)
        kernel = rt.kernels.get((key, op.cname))
        if kernel is None:
            kernel = rt.build(
                key,
                [o.cname for o in GROUPS[op.group]],
                lambda: _source(op.group, dtypes, out_dtype, compute, -1),
                build_options(compute, out_dtype, *dtypes),
                _arg_types(op.group, len(ins), compute, -1),
            )[op.cname]
        args = [out.buf, *[t.buf for t in ins], n, out.offset, *[t.offset for t in ins], *steps, *scalars]
    else:
        dims, strides = collapse(out_shape, [out.strides] + [broadcast_strides(t, out_shape) for t in ins])
        rank = len(dims)
        local = grid_local(dims)
        grid = None if local is None else grid_inner(strides)
        key = (op.group, dtypes, out_dtype, compute, rank, grid)
        kernel = rt.kernels.get((key, op.cname))
        if kernel is None:
            kernel = rt.build(
                key,
                [o.cname for o in GROUPS[op.group]],
                lambda: _source(op.group, dtypes, out_dtype, compute, rank, grid),
                build_options(compute, out_dtype, *dtypes),
                _arg_types(op.group, len(ins), compute, rank),
            )[op.cname]
        args = [out.buf, *[t.buf for t in ins], n, out.offset, *[t.offset for t in ins], *scalars, *dims]
        for s in strides:
            args.extend(s)
        if local is not None:
            with rt.lock:
                kernel(rt.queue, grid_size(dims, local), local, *args)
            return out
    with rt.lock:
        kernel(rt.queue, global_size(n), (LOCAL,), *args)
    return out
