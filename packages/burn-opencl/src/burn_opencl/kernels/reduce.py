"""Reductions along one dim (sum, prod, mean, max, min, argmax, argmin, any, all) and cumsum.

One work-item reduces one output element, walking the reduced dim with its stride, so any
strided view reduces without a copy. Long dims are split into chunks reduced in parallel, then
the partial results are reduced again (recursively): this keeps all compute units busy for full
reductions and bounds float rounding error like a two-level pairwise sum.
"""

from __future__ import annotations

from typing import Any

from burn.foundations.dtype import DType
from burn_opencl.dtypes import COMPUTE, SCALAR_NP, STORAGE, build_options, load, store
from burn_opencl.kernels.common import I64, LOCAL, collapse, global_size, index_code, index_params, new
from burn_opencl.tensor import CLTensor, c_strides

CHUNK = 256  # elements per work-item when a dim is split
SPLIT_ABOVE = 1024  # dims longer than this are split

_FLOAT_MAX = "if (v > acc || (b_isnan(v) && !b_isnan(acc))) acc = v;"
_FLOAT_MIN = "if (v < acc || (b_isnan(v) && !b_isnan(acc))) acc = v;"
_FLOAT_ARGMAX = "if (v > acc || (b_isnan(v) && !b_isnan(acc))) { acc = v; best = vi; }"
_FLOAT_ARGMIN = "if (v < acc || (b_isnan(v) && !b_isnan(acc))) { acc = v; best = vi; }"

# op -> (init, update for floats, update for ints/bool, finish)
_OPS: dict[str, tuple[str, str, str]] = {
    "sum": ("(T)0", "acc += v;", "acc += v;"),
    "mean": ("(T)0", "acc += v;", "acc += v;"),
    "prod": ("(T)1", "acc *= v;", "acc *= v;"),
    "max": ("FIRST", _FLOAT_MAX, "if (v > acc) acc = v;"),
    "min": ("FIRST", _FLOAT_MIN, "if (v < acc) acc = v;"),
    "argmax": ("FIRST", _FLOAT_ARGMAX, "if (v > acc) { acc = v; best = vi; }"),
    "argmin": ("FIRST", _FLOAT_ARGMIN, "if (v < acc) { acc = v; best = vi; }"),
    "any": ("(T)0", "", "acc = acc || v;"),
    "all": ("(T)1", "", "acc = acc && v;"),
}
ARG_OPS = frozenset({"argmax", "argmin"})


# Sums and products along a contiguous dim (stride 1) of a float32 tensor read their line
# eight elements at a time (vload8 into eight accumulators, combined pairwise at the end): pocl
# cannot vectorize a work-item's walk across work-items whose lines are a line apart (every load
# a gather), but it keeps a work-item's own float8 arithmetic in vector registers. Rows of 1024 x
# 1024 float32: 0.54 ms against 1.03 (best of 15, load 6.4); eight partial sums also round less.
# Not float64: a double8 is passed in memory without AVX-512 (clang warns of the ABI change).
VEC_OPS = frozenset({"sum", "mean", "prod"})
VEC_DTYPES = frozenset({DType.F32})


def _source(
    op: str, xd: DType, od: DType, idx_out: DType | None, idx_in: bool, rank: int, vec: bool = False
) -> str:
    t = COMPUTE[xd]
    init, fupd, iupd = _OPS[op]
    update = fupd if xd.is_float else iupd
    params = [f"__global {STORAGE[od]}* o"]
    if idx_out is not None:
        params.append(f"__global {STORAGE[idx_out]}* oi")
    params.append(f"__global const {STORAGE[xd]}* x")
    if idx_in:
        params.append("__global const long* xi")
    params += ["long n", "long C", "long L", "long Lc", "long x_off", "long x_sd", f"{t} scale"]
    if rank:
        params.append(index_params(rank, ["x"]))
    body = [
        "long w = get_global_id(0);",
        "GUARD(w, n);",
        "long other = w / C; long c = w - other * C;",
        index_code(rank, ["x"], flat="other"),
        "long k0 = c * Lc; long k1 = b_lmin(L, k0 + Lc);",
    ]
    vi = "xi[x_i + k * x_sd]" if idx_in else "k"
    if init == "FIRST":
        body.append(f"T acc = (T){load(xd, 'x', 'x_i + k0 * x_sd')};")
        body.append(f"long best = {'xi[x_i + k0 * x_sd]' if idx_in else 'k0'};")
    else:
        body.append(f"T acc = {init};")
        body.append("long best = 0;")
    if vec:  # x_sd is 1 (see `VEC_OPS`)
        mul = op == "prod"
        body += [
            "__global const T* p = x + x_i + k0;",
            "long m = (k1 - k0) / 8;",
            f"T8 a8 = (T8)({'1' if mul else '0'});",
            f"for (long k = 0; k < m; k++) a8 {'*' if mul else '+'}= vload8(k, p);",
            "{ T4 a4 = a8.lo {0} a8.hi; T2 a2 = a4.lo {0} a4.hi; acc = a2.x {0} a2.y; }".replace(
                "{0}", "*" if mul else "+"
            ),
            "k0 += m * 8;",
        ]
    body.append(
        f"for (long k = k0; k < k1; k++) {{ T v = (T){load(xd, 'x', 'x_i + k * x_sd')}; "
        f"long vi = {vi}; {update} }}"
    )
    if op == "mean":
        body.append("acc *= scale;")
    cast = f"(({COMPUTE[od]})(acc ? 1 : 0))" if od is DType.BOOL else f"(({COMPUTE[od]})acc)"
    body.append(store(od, "o", "w", cast))
    if idx_out is not None:
        body.append(f"oi[w] = ({COMPUTE[idx_out]})best;")
    vectors = f"#define T2 {t}2\n#define T4 {t}4\n#define T8 {t}8\n" if vec else ""
    head = f"#define T {t}\n{vectors}__kernel void red({', '.join(params)}) {{\n  "
    return head + "\n  ".join(body) + "\n}"


def _launch(
    op: str,
    x: CLTensor,
    dim: int,
    xi: CLTensor | None,
    chunks: int,
    chunk: int,
    od: DType,
    idx_out: DType | None,
    scale: float,
) -> tuple[CLTensor, CLTensor | None]:
    """One reduction pass. With one chunk the result has `x`'s shape with `dim` of size 1; with
    several, the other dims followed by one dim of `chunks` partial results (the work-item order)."""
    rt = x.rt
    L = x.shape[dim]
    other_shape = x.shape[:dim] + x.shape[dim + 1 :]
    other_strides = x.strides[:dim] + x.strides[dim + 1 :]
    dims, (xs,) = collapse(other_shape, [other_strides])
    out_shape = x.shape[:dim] + (1,) + x.shape[dim + 1 :] if chunks == 1 else other_shape + (chunks,)
    out = new(rt, out_shape, od, f"the result of {op}")
    out_i = new(rt, out_shape, idx_out, f"the indices of {op}") if idx_out is not None else None
    n = out.n
    if n == 0:
        return out, out_i
    rank = len(dims)
    vec = op in VEC_OPS and x.dtype in VEC_DTYPES and x.strides[dim] == 1 and L >= 8
    key = ("red", op, x.dtype, od, idx_out, xi is not None, rank, vec)
    kernel = rt.kernels.get((key, "red"))
    if kernel is None:
        stype = SCALAR_NP[COMPUTE[x.dtype]]
        types = (
            [None] * (2 + (idx_out is not None) + (xi is not None)) + [I64] * 6 + [stype] + [I64] * (2 * rank)
        )
        kernel = rt.kernel(
            key,
            "red",
            lambda: _source(op, x.dtype, od, idx_out, xi is not None, rank, vec),
            build_options(x.dtype, od),
            types,
        )
    args: list[Any] = [out.buf]
    if out_i is not None:
        args.append(out_i.buf)
    args.append(x.buf)
    if xi is not None:
        args.append(xi.buf)
    args += [n, chunks, L, chunk, x.offset, x.strides[dim], scale if x.dtype.is_float else 0, *dims, *xs]
    with rt.lock:
        kernel(rt.queue, global_size(n), (LOCAL,), *args)
    return out, out_i


def _keepdim(t: CLTensor, shape: tuple[int, ...], dim: int) -> CLTensor:
    """A contiguous ``other + (1,)`` result viewed with the size-1 dim back at `dim`."""
    kept = shape[:dim] + (1,) + shape[dim + 1 :]
    return CLTensor(t.rt, t.buf, kept, t.dtype, c_strides(kept), t.offset)


def reduce_dim(
    op: str, x: CLTensor, dim: int, out_dtype: DType | None = None, idx_dtype: DType | None = None
) -> tuple[CLTensor, CLTensor | None]:
    """Reduce `x` along `dim`, keeping it with size 1.

    Args:
        op: one of ``sum mean prod max min argmax argmin any all``.
        out_dtype: dtype of the values (default `x`'s; argmax/argmin: their index dtype).
        idx_dtype: for max/min, also return the first extremum's index in this dtype.

    Returns:
        The values and, when `idx_dtype` is given, the indices.
    """
    L = x.shape[dim]
    if L == 0 and op not in ("sum", "prod", "any", "all"):
        raise ValueError(f"{op}: cannot reduce the empty dim {dim} of shape {x.shape}")
    final = out_dtype or x.dtype
    arg = op in ARG_OPS or idx_dtype is not None
    base = ("argmax" if op in ("argmax", "max") else "argmin") if arg else op
    scale = 1.0 / L if op == "mean" and L else 0.0
    if L <= SPLIT_ABOVE:
        if base in ARG_OPS:
            values, indices = _launch(base, x, dim, None, 1, max(L, 1), x.dtype, idx_dtype or final, scale)
            return (indices, None) if op in ARG_OPS else (values, indices)  # type: ignore[return-value]
        return _launch(op, x, dim, None, 1, max(L, 1), final, None, scale)
    chunks = (L + CHUNK - 1) // CHUNK
    last = len(x.shape) - 1  # partial results put their chunk dim last
    if base in ARG_OPS:
        values, indices = _launch(base, x, dim, None, chunks, CHUNK, x.dtype, DType.I64, 0.0)
        assert indices is not None
        values, indices = _finish_arg(base, values, indices, idx_dtype or final)
        if op in ARG_OPS:
            return _keepdim(indices, x.shape, dim), None
        return _keepdim(values, x.shape, dim), _keepdim(indices, x.shape, dim)
    partial_dtype = DType.F32 if x.dtype is DType.F16 else x.dtype
    first = "sum" if op == "mean" else op
    partial, _ = _launch(first, x, dim, None, chunks, CHUNK, partial_dtype, None, 0.0)
    values, _ = reduce_dim(first, partial, last, final if op != "mean" else partial_dtype)
    values = _keepdim(values, x.shape, dim)
    if op == "mean":
        from burn_opencl.kernels import elementwise as ew

        return ew.run(ew.OPS["float_mul_scalar"], [values], final, (1.0 / L,), compute=partial_dtype), None
    return values, None


def _finish_arg(
    base: str, values: CLTensor, indices: CLTensor, idx_dtype: DType
) -> tuple[CLTensor, CLTensor]:
    """Reduce partial (value, index) pairs along their last dim until one is left per output."""
    while True:
        last = len(values.shape) - 1
        L = values.shape[last]
        chunks = 1 if L <= SPLIT_ABOVE else (L + CHUNK - 1) // CHUNK
        idx = idx_dtype if chunks == 1 else DType.I64
        values, out_i = _launch(
            base, values, last, indices, chunks, CHUNK if chunks > 1 else L, values.dtype, idx, 0.0
        )
        assert out_i is not None
        indices = out_i
        if chunks == 1:
            return values, indices


# -- cumulative sum ---------------------------------------------------------------------------------
def _cumsum_source(xd: DType, rank: int) -> str:
    params = [
        f"__global {STORAGE[xd]}* o",
        f"__global const {STORAGE[xd]}* x",
        "long n",
        "long L",
        "long x_off",
        "long x_sd",
        "long o_off",
        "long o_sd",
    ]
    if rank:
        params.append(index_params(rank, ["x", "o"]))
    body = [
        "long w = get_global_id(0);",
        "GUARD(w, n);",
        index_code(rank, ["x", "o"], flat="w"),
        "T acc = (T)0;",
        f"for (long k = 0; k < L; k++) {{ acc += (T){load(xd, 'x', 'x_i + k * x_sd')}; "
        f"{store(xd, 'o', 'o_i + k * o_sd', f'({COMPUTE[xd]})acc')} }}",
    ]
    return (
        f"#define T {COMPUTE[xd]}\n__kernel void cumsum({', '.join(params)}) {{\n  "
        + "\n  ".join(body)
        + "\n}"
    )


def cumsum(x: CLTensor, dim: int) -> CLTensor:
    """Inclusive cumulative sum along `dim` (one work-item per line)."""
    rt = x.rt
    out = new(rt, x.shape, x.dtype, "the result of cumsum")
    if out.n == 0:
        return out
    other_shape = x.shape[:dim] + x.shape[dim + 1 :]
    dims, (xs, os) = collapse(
        other_shape, [x.strides[:dim] + x.strides[dim + 1 :], out.strides[:dim] + out.strides[dim + 1 :]]
    )
    rank = len(dims)
    key = ("cumsum", x.dtype, rank)
    kernel = rt.kernels.get((key, "cumsum"))
    if kernel is None:
        kernel = rt.kernel(
            key,
            "cumsum",
            lambda: _cumsum_source(x.dtype, rank),
            build_options(x.dtype),
            [None, None] + [I64] * (6 + 3 * rank),
        )
    n = out.n // x.shape[dim]
    with rt.lock:
        kernel(
            rt.queue,
            global_size(n),
            (LOCAL,),
            out.buf,
            x.buf,
            n,
            x.shape[dim],
            x.offset,
            x.strides[dim],
            0,
            out.strides[dim],
            *dims,
            *xs,
            *os,
        )
    return out
