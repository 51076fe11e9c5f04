"""What a fused kernel computes for each element-wise IR op, written once for every C dialect.

Backends that generate fused kernels from a `burn.backend.ir.FusedBlock` (burn-opencl in OpenCL C,
burn-cuda in CUDA C++) take each op's C expression from `EXPRS`, which is the expression declared
at the op in the contract (``ew=`` in `burn.backend.ops`), so a fix to an op lands in one place. An
expression reads the op's tensor inputs ``a``, ``b``, ``c`` and scalars ``s0``, ``s1``, all in the
compute type ``T`` (a macro the generated code defines around each statement), and uses only what
both dialects accept: C operators, the math functions both have overloads of (``exp``, ``log``,
``log1p``, ``erf``, ``tanh``, ``sin``, ``cos``, ``pow``, ``fmod``) and the ``b_*`` helpers. A
`Dialect` supplies what differs: its prelude defines ``b_fabs``, ``b_sqrt``, ``b_rint``,
``b_floor``, ``b_ceil``, ``b_fmax``, ``b_fmin``, ``b_isnan``, ``b_isinf`` (pocl wants clang
builtins, CUDA its own functions), the function qualifier of the `FLOAT_HELPERS`, the C types of
each dtype and how a value is loaded and stored (OpenCL's ``half`` goes through ``vload_half``).

`op_code` turns a block's ops into C statements over registers; `REDUCE_UPDATES` are the
accumulation steps of the reductions that may end a block.

Example:
    >>> EXPRS["float_add_scalar"].expr
    'a + s0'
    >>> EXPRS["float_mask_where"].promote
    (True, False, True)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from burn.backend.contract import Elementwise
from burn.backend.ir import ELEMENTWISE, REDUCTIONS, FusedBlock, OpIR, written_scalars
from burn.foundations.dtype import DType

Shape = tuple[int, ...]


# How a fused kernel computes each element-wise op: its declaration's `Elementwise` facts
# (``expr``, ``promote``), the same objects burn-opencl's one-op kernels are generated from, so
# fused and unfused results agree by construction.
Expr = Elementwise
EXPRS: dict[str, Elementwise] = ELEMENTWISE

# Helpers of the float expressions, in the compute type ``T``; ``B_FN`` is the dialect's qualifier.
# b_pow: exponents 0, +-1, +-2, 3, 4 as multiplications and +-0.5 as a square root, with C's pow
# results on every input (-0, +-inf, NaN, negative bases included), the rest by pow. pocl's pow
# costs ~350 ns an element (x ** 2 was 1000x x * x). powf_scalar declares these exponents as
# literals (`Elementwise.literals`): generated kernels write them into the code, the compiler folds
# b_pow to its one branch and drops the pow call (a kernel holding one is not vectorized by pocl).
# The products round no worse than pow.
FLOAT_HELPERS = r"""
B_FN T b_rem(T a, T b) { T r = fmod(a, b); if (r != (T)0 && ((r < (T)0) != (b < (T)0))) r += b; return r; }
B_FN T b_sign(T a) { return b_isnan(a) ? a : (T)((a > (T)0) - (a < (T)0)); }
B_FN T b_sigmoid(T a) {
  if (a >= (T)0) return (T)1 / ((T)1 + exp(-a));
  T e = exp(a);
  return e / ((T)1 + e);
}
B_FN T b_softplus(T a, T beta) { T z = a * beta; return (b_fmax(z, (T)0) + log1p(exp(-b_fabs(z)))) / beta; }
B_FN T b_pow(T a, T s) {
  if (s == (T)2) return a * a;
  if (s == (T)1) return a;
  if (s == (T)0) return (T)1;
  if (s == (T)3) return a * a * a;
  if (s == (T)-1) return (T)1 / a;
  if (s == (T)-2) { T r = (T)1 / a; return r * r; }
  if (s == (T)4) { T q = a * a; return q * q; }
  if (s == (T)0.5 || s == (T)-0.5) {
    T r = b_isinf(a) ? b_fabs(a) : b_sqrt(a + (T)0);  /* -0 + 0 is +0: pow(-0, 0.5) is +0 */
    return s > (T)0 ? r : (T)1 / r;
  }
  return pow(a, s);
}
B_FN T b_gelu_grad(T x) {
  return (T)0.5 * ((T)1 + erf(x * (T)0.70710678118654752440))
         + x * exp((T)-0.5 * x * x) * (T)0.39894228040143267794;
}
"""

# Reductions that may end a block -> the accumulation of ``v`` into ``acc`` (max and min: NaN
# wins, as in the one-op kernels; the first element initialises ``acc``).
REDUCE_UPDATES: dict[str, str] = {
    "float_sum_dim": "acc += v;",
    "float_mean_dim": "acc += v;",
    "float_prod_dim": "acc *= v;",
    "float_max_dim": "if (v > acc || (b_isnan(v) && !b_isnan(acc))) acc = v;",
    "float_min_dim": "if (v < acc || (b_isnan(v) && !b_isnan(acc))) acc = v;",
}
assert set(REDUCE_UPDATES) == REDUCTIONS
# The reductions whose accumulator starts at the first element rather than at an identity.
REDUCE_FROM_FIRST = frozenset({"float_max_dim", "float_min_dim"})


@dataclass(frozen=True)
class Dialect:
    """What a C dialect's fused kernels spell differently.

    Attributes:
        name: for messages (``"OpenCL C"``, ``"CUDA C++"``).
        compute: the C type each dtype is computed in.
        storage: the C type each dtype is stored as in device memory.
        qualifier: what ``B_FN`` (the helpers' function qualifier) becomes.
        load: ``load(dtype, ptr, index)``: C expression reading an element as its compute type.
        store: ``store(dtype, ptr, index, value)``: C statement writing a compute-type value.
    """

    name: str
    compute: Mapping[DType, str]
    storage: Mapping[DType, str]
    qualifier: str
    load: Callable[[DType, str, str], str]
    store: Callable[[DType, str, str, str], str]

    def helpers(self, ctype: str) -> str:
        """`FLOAT_HELPERS` for the float compute type `ctype` (``"float"``, ``"double"``)."""
        return re.sub(r"\bT\b", ctype, FLOAT_HELPERS.replace("B_FN", self.qualifier))


def plain_load(dtype: DType, ptr: str, index: str) -> str:
    """``ptr[index]``: the load of a dtype stored as its compute type."""
    return f"{ptr}[{index}]"


def plain_store(dtype: DType, ptr: str, index: str, value: str) -> str:
    """``ptr[index] = value;``: the store of a dtype stored as its compute type."""
    return f"{ptr}[{index}] = {value};"


def compute_dtype(op: OpIR) -> DType:
    """The dtype `op` computes in: the widest of its promoted inputs (float16 with bfloat16: float32).

    Example:
        >>> from burn.backend.ir import TensorIR
        >>> a, b = TensorIR(0, (2,), DType.F32), TensorIR(1, (2,), DType.F64)
        >>> compute_dtype(OpIR("float_add", (a, b), (TensorIR(2, (2,), DType.F64),))).value
        'float64'
    """
    promote = EXPRS[op.op].promote
    compute = op.inputs[0].dtype
    for k in range(1, len(op.inputs)):
        other = op.inputs[k].dtype
        if promote[k] and other is not compute:
            if other.itemsize == compute.itemsize:
                compute = DType.F32 if compute.is_float else DType.I16
            elif other.itemsize > compute.itemsize:
                compute = other
    return compute


def float_types(block: FusedBlock, dialect: Dialect) -> list[str]:
    """The float compute types `block` computes in (sorted): the types to emit helpers for."""
    values = [t for op in block.ops for t in (*op.inputs, *op.outputs)]
    types = {dialect.compute[t.dtype] for t in values if t.dtype.is_float}
    types |= {dialect.compute[compute_dtype(op)] for op in block.ops if compute_dtype(op).is_float}
    if block.reduce is not None:
        types.add(dialect.compute[block.reduce.output.dtype])
    return sorted(types)


def scalar_dtypes(block: FusedBlock) -> list[DType]:
    """The dtype of each scalar kernel parameter that `op_code` declares, in order."""
    return [
        compute_dtype(op) for op in block.ops for lit in written_scalars(op.op, op.scalars) if lit is None
    ]


def scalar_values(block: FusedBlock) -> list[float]:
    """The value of each scalar kernel parameter that `op_code` declares, in order (the scalars
    not written into the code, `burn.backend.ir.written_scalars`)."""
    return [
        s for op in block.ops for s, lit in zip(op.scalars, written_scalars(op.op, op.scalars), strict=True)
        if lit is None
    ]


def op_code(
    block: FusedBlock, dialect: Dialect, var: dict[int, str], params: list[str], at: str
) -> list[str]:
    """C statements loading `block`'s inputs (input k from pointer ``x{k}`` at index ``x{k}{at}``)
    and computing its ops into registers ``v<id>`` (recorded in `var`); appends the ops' scalar
    parameters ``p0, p1..`` (typed as `scalar_dtypes`) to `params`.

    Example:
        >>> from burn.backend.ir import TensorIR
        >>> x, y = TensorIR(0, (4,), DType.F32), TensorIR(1, (4,), DType.F32)
        >>> block = FusedBlock((4,), (x,), (OpIR("float_mul_scalar", (x,), (y,), (2.0,)),), (y,))
        >>> c = Dialect("C", {DType.F32: "float"}, {DType.F32: "float"}, "", plain_load, plain_store)
        >>> params: list[str] = []
        >>> print("\\n".join(op_code(block, c, {}, params, "_i")))
        float v0 = x0[x0_i];
        float v1;
        #define T float
        { float a = (float)v0; T s0 = p0; v1 = (float)(a * s0); }
        #undef T
        >>> params
        ['float p0']
    """
    body = []
    for k, t in enumerate(block.inputs):
        var[t.id] = f"v{t.id}"
        body.append(f"{dialect.compute[t.dtype]} v{t.id} = {dialect.load(t.dtype, f'x{k}', f'x{k}{at}')};")
    nscalar = 0
    for op in block.ops:
        spec = EXPRS[op.op]
        ctype_op = dialect.compute[compute_dtype(op)]
        decls = []
        for k, src in enumerate(op.inputs):
            ctype = ctype_op if spec.promote[k] else dialect.compute[src.dtype]
            decls.append(f"{ctype} {'abc'[k]} = ({ctype}){var[src.id]};")
        for j, lit in enumerate(written_scalars(op.op, op.scalars)):
            if lit is not None:
                decls.append(f"T s{j} = (T){lit!r};")
                continue
            params.append(f"{ctype_op} p{nscalar}")
            decls.append(f"T s{j} = p{nscalar};")
            nscalar += 1
        out = op.outputs[0]
        ctype = dialect.compute[out.dtype]
        value = (
            f"({ctype})(({spec.expr}) ? 1 : 0)" if out.dtype is DType.BOOL else f"({ctype})({spec.expr})"
        )
        var[out.id] = f"v{out.id}"
        body.append(f"{ctype} v{out.id};")
        body.append(f"#define T {ctype_op}")
        body.append("{ " + " ".join(decls) + f" v{out.id} = {value}; }}")
        body.append("#undef T")
    return body


def aligned_strides(shape: Shape, strides: Shape, full: Shape) -> Shape:
    """Strides of a tensor of `shape` seen over the broadcast shape `full` (0 on broadcast dims).

    Example:
        >>> aligned_strides((3, 1), (1, 1), (2, 3, 4))
        (0, 1, 0)
    """
    off = len(full) - len(shape)
    out = [0] * len(full)
    for d, size in enumerate(shape):
        if size != 1:
            out[off + d] = strides[d]
    return tuple(out)


def c_strides(shape: Shape) -> Shape:
    """Element strides of a contiguous row-major tensor of `shape`.

    Example:
        >>> c_strides((2, 3, 4))
        (12, 4, 1)
    """
    out = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        out[d] = out[d + 1] * shape[d + 1]
    return tuple(out)


def collapse(shape: Shape, strides: Sequence[Shape]) -> tuple[Shape, list[Shape]]:
    """Merge adjacent dims that every operand walks contiguously, and drop size-1 dims: the fewer
    dims, and each operand's strides over them (the row-major element order is kept).

    Example:
        >>> collapse((2, 3, 4), [(12, 4, 1), (0, 4, 1)])
        ((2, 12), [(12, 1), (0, 1)])
    """
    dims: list[int] = []
    out: list[list[int]] = [[] for _ in strides]
    for d, size in enumerate(shape):
        if size == 1:
            continue
        if dims and all(out[k][-1] == s[d] * size for k, s in enumerate(strides)):
            dims[-1] *= size
            for k, s in enumerate(strides):
                out[k][-1] = s[d]
            continue
        dims.append(size)
        for k, s in enumerate(strides):
            out[k].append(s[d])
    return tuple(dims), [tuple(s) for s in out]


__all__ = [
    "EXPRS", "FLOAT_HELPERS", "REDUCE_FROM_FIRST", "REDUCE_UPDATES", "Dialect", "Expr", "aligned_strides",
    "c_strides", "collapse", "compute_dtype", "float_types", "op_code", "plain_load", "plain_store",
    "scalar_dtypes", "scalar_values",
]
