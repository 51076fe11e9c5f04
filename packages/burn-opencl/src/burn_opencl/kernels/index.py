"""Indexing kernels: gather/select (one kernel), scatter_add/select_add (one kernel), argwhere.

The adds are atomic-free and deterministic: one work-item owns one *line* of the output (every
coordinate but `dim` fixed) and adds the values of that line in order, so repeated indices
accumulate correctly without atomics (which OpenCL 1.2 lacks for floats).

Indices out of range are not checked on the device (a kernel cannot raise); negative ones count
from the end and the rest are clamped into range, so a bad index never reads or writes outside
the buffer.
"""

from __future__ import annotations

import numpy as np

from burn.foundations.dtype import DType
from burn_opencl.dtypes import COMPUTE, STORAGE, build_options, load, store
from burn_opencl.kernels import elementwise as ew
from burn_opencl.kernels.common import I64, LOCAL, collapse, global_size, index_code, index_params, new
from burn_opencl.tensor import CLTensor

_FIX_INDEX = "if (j_ < 0) j_ += size; j_ = j_ < 0 ? 0 : (j_ >= size ? size - 1 : j_);"


def _gather_source(xd: DType, idd: DType, rank: int) -> str:
    params = [
        f"__global {STORAGE[xd]}* o",
        f"__global const {STORAGE[xd]}* x",
        f"__global const {STORAGE[idd]}* ix",
        "long n",
        "long o_off",
        "long x_off",
        "long ix_off",
        "long size",
        "long x_sd",
    ]
    if rank:
        params.append(index_params(rank, ["o", "x", "ix"]))
    body = [
        "long i = get_global_id(0);",
        "GUARD(i, n);",
        index_code(rank, ["o", "x", "ix"]),
        "long j_ = (long)ix[ix_i];",
        _FIX_INDEX,
        store(xd, "o", "o_i", load(xd, "x", "x_i + j_ * x_sd")),
    ]
    return f"__kernel void gather({', '.join(params)}) {{\n  " + "\n  ".join(body) + "\n}"


def _gather(
    x: CLTensor, dim: int, ix: CLTensor, shape: tuple[int, ...], ix_strides: tuple[int, ...]
) -> CLTensor:
    """``out[p] = x[p with dim replaced by ix[p]]`` over `shape`, reading `ix` through `ix_strides`."""
    rt = x.rt
    out = new(rt, shape, x.dtype, "the result of gather/select")
    if out.n == 0:
        return out
    x_strides = tuple(0 if d == dim else s for d, s in enumerate(x.strides))
    dims, (os_, xs, ixs) = collapse(shape, [out.strides, x_strides, ix_strides])
    rank = len(dims)
    key = ("gather", x.dtype, ix.dtype, rank)
    kernel = rt.kernels.get((key, "gather"))
    if kernel is None:
        kernel = rt.kernel(
            key,
            "gather",
            lambda: _gather_source(x.dtype, ix.dtype, rank),
            build_options(x.dtype),
            [None] * 3 + [I64] * (6 + 4 * rank),
        )
    rt.launch(
        kernel,
        global_size(out.n),
        (LOCAL,),
        out.buf,
        x.buf,
        ix.buf,
        out.n,
        out.offset,
        x.offset,
        ix.offset,
        x.shape[dim],
        x.strides[dim],
        *dims,
        *os_,
        *xs,
        *ixs,
    )
    return out


def gather(dim: int, x: CLTensor, indices: CLTensor) -> CLTensor:
    """``out[i][j] = x[i][indices[i][j]]`` along `dim`; `indices` has `x`'s rank."""
    if len(indices.shape) != len(x.shape):
        raise ValueError(f"gather: indices of shape {indices.shape} need the rank of the tensor {x.shape}")
    return _gather(x, dim, indices, indices.shape, indices.strides)


def select(x: CLTensor, dim: int, indices: CLTensor) -> CLTensor:
    """Rows `indices` (1-D) of `dim`, in order, repeats allowed."""
    if len(indices.shape) != 1:
        raise ValueError(f"select: indices must be 1-D, got shape {indices.shape}")
    shape = x.shape[:dim] + (indices.shape[0],) + x.shape[dim + 1 :]
    ix_strides = tuple(indices.strides[0] if d == dim else 0 for d in range(len(shape)))
    return _gather(x, dim, indices, shape, ix_strides)


def _scatter_source(xd: DType, vd: DType, idd: DType, rank: int) -> str:
    t = COMPUTE[xd]
    params = [
        f"__global {STORAGE[xd]}* o",
        f"__global const {STORAGE[vd]}* v",
        f"__global const {STORAGE[idd]}* ix",
        "long n",
        "long L",
        "long o_off",
        "long v_off",
        "long ix_off",
        "long size",
        "long o_sd",
        "long v_sd",
        "long ix_sd",
    ]
    if rank:
        params.append(index_params(rank, ["o", "v", "ix"]))
    body = [
        "long i = get_global_id(0);",
        "GUARD(i, n);",
        index_code(rank, ["o", "v", "ix"]),
        "for (long k = 0; k < L; k++) {",
        "  long j_ = (long)ix[ix_i + k * ix_sd];",
        "  " + _FIX_INDEX,
        "  long p_ = o_i + j_ * o_sd;",
        f"  {t} acc_ = ({t}){load(xd, 'o', 'p_')} + ({t}){load(vd, 'v', 'v_i + k * v_sd')};",
        "  " + store(xd, "o", "p_", f"({t})acc_"),
        "}",
    ]
    return f"__kernel void scatter({', '.join(params)}) {{\n  " + "\n  ".join(body) + "\n}"


def _scatter_add(
    x: CLTensor,
    dim: int,
    ix: CLTensor,
    ix_strides: tuple[int, ...],
    values: CLTensor,
    line_shape: tuple[int, ...],
    v_strides: tuple[int, ...],
    length: int,
) -> CLTensor:
    """A copy of `x` plus, for each line (coordinates but `dim`) of `line_shape` and k < `length`,
    ``values[line, k]`` added at ``x[line, ix[line, k]]``."""
    rt = x.rt
    out = ew.run(ew.CAST, [x], x.dtype)
    lines = 1
    for d, s in enumerate(line_shape):
        if d != dim:
            lines *= s
    if lines == 0 or length == 0 or out.n == 0:
        return out
    others = [d for d in range(len(line_shape)) if d != dim]
    shape = tuple(line_shape[d] for d in others)
    dims, (os_, vs, ixs) = collapse(
        shape,
        [
            tuple(out.strides[d] for d in others),
            tuple(v_strides[d] for d in others),
            tuple(ix_strides[d] for d in others),
        ],
    )
    rank = len(dims)
    key = ("scatter", x.dtype, values.dtype, ix.dtype, rank)
    kernel = rt.kernels.get((key, "scatter"))
    if kernel is None:
        kernel = rt.kernel(
            key,
            "scatter",
            lambda: _scatter_source(x.dtype, values.dtype, ix.dtype, rank),
            build_options(x.dtype, values.dtype),
            [None] * 3 + [I64] * (9 + 4 * rank),
        )
    rt.launch(
        kernel,
        global_size(lines),
        (LOCAL,),
        out.buf,
        values.buf,
        ix.buf,
        lines,
        length,
        out.offset,
        values.offset,
        ix.offset,
        x.shape[dim],
        out.strides[dim],
        v_strides[dim],
        ix_strides[dim],
        *dims,
        *os_,
        *vs,
        *ixs,
    )
    return out


def scatter_add(dim: int, x: CLTensor, indices: CLTensor, values: CLTensor) -> CLTensor:
    """`x` plus `values` summed at the positions `indices` names along `dim` (same shapes as Burn)."""
    if len(indices.shape) != len(x.shape) or values.shape != indices.shape:
        raise ValueError(
            f"scatter_add: indices {indices.shape} and values {values.shape} must have one shape, "
            f"of the rank of "
            f"the tensor {x.shape}"
        )
    for d in range(len(x.shape)):
        if d != dim and indices.shape[d] > x.shape[d]:
            raise ValueError(f"scatter_add: indices {indices.shape} exceed the tensor {x.shape} in dim {d}")
    return _scatter_add(
        x, dim, indices, indices.strides, values, values.shape, values.strides, indices.shape[dim]
    )


def select_add(x: CLTensor, dim: int, indices: CLTensor, values: CLTensor) -> CLTensor:
    """`x` with `values` added at rows `indices` (1-D) of `dim`; repeated rows accumulate."""
    if len(indices.shape) != 1:
        raise ValueError(f"select_add: indices must be 1-D, got shape {indices.shape}")
    expected = x.shape[:dim] + (indices.shape[0],) + x.shape[dim + 1 :]
    if values.shape != expected:
        raise ValueError(f"select_add: values of shape {values.shape} should have shape {expected}")
    ix_strides = tuple(indices.strides[0] if d == dim else 0 for d in range(len(x.shape)))
    return _scatter_add(x, dim, indices, ix_strides, values, values.shape, values.strides, indices.shape[0])


# -- argwhere ---------------------------------------------------------------------------------------
_CHUNK = 1024


def _argwhere_source(od: DType, rank: int) -> str:
    dims = ", ".join(f"long d{d}" for d in range(rank))
    coords = []
    for d in range(rank - 1, -1, -1):
        coords.append(f"o[(pos_ * {rank}) + {d}] = ({COMPUTE[od]})(r_ % d{d}); r_ /= d{d};")
    return f"""
__kernel void count(__global long* counts, __global const uchar* m, long n, long nchunks) {{
  long c = get_global_id(0);
  GUARD(c, nchunks);
  long k1 = b_lmin(n, (c + 1) * {_CHUNK}); long acc = 0;
  for (long k = c * {_CHUNK}; k < k1; k++) acc += m[k] != 0;
  counts[c] = acc;
}}
__kernel void write(__global {STORAGE[od]}* o, __global const uchar* m, __global const long* starts, long n,
                    long nchunks{", " + dims if dims else ""}) {{
  long c = get_global_id(0);
  GUARD(c, nchunks);
  long k1 = b_lmin(n, (c + 1) * {_CHUNK}); long pos_ = starts[c];
  for (long k = c * {_CHUNK}; k < k1; k++) {{
    if (m[k] == 0) continue;
    long r_ = k;
    {" ".join(coords)}
    pos_++;
  }}
}}"""


def argwhere(mask: CLTensor, int_dtype: DType) -> CLTensor:
    """``[n_true, rank]`` coordinates of the true elements in row-major order (waits for the device:
    the result's shape depends on the data)."""
    rt = mask.rt
    rank = len(mask.shape)
    if not mask.contig or mask.offset:
        mask = ew.run(ew.CAST, [mask], DType.BOOL)
    n = mask.n
    if n == 0:
        return new(rt, (0, rank), int_dtype)
    key = ("argwhere", int_dtype, rank)
    kernels = rt.build(
        key,
        ("count", "write"),
        lambda: _argwhere_source(int_dtype, rank),
        build_options(int_dtype),
        lambda name: [None, None, I64, I64] if name == "count" else [None] * 3 + [I64] * (2 + rank),
    )
    nchunks = (n + _CHUNK - 1) // _CHUNK
    counts = new(rt, (nchunks,), DType.I64)
    rt.launch(kernels["count"], global_size(nchunks), (LOCAL,), counts.buf, mask.buf, n, nchunks)
    host = rt.download(counts.buf, np.empty(nchunks, np.int64))
    starts = np.zeros(nchunks, np.int64)
    np.cumsum(host[:-1], out=starts[1:])
    total = int(host.sum())
    out = new(rt, (total, rank), int_dtype, "the result of argwhere")
    if total and rank:
        starts_buf = rt.upload(starts)
        rt.launch(
            kernels["write"],
            global_size(nchunks),
            (LOCAL,),
            out.buf,
            mask.buf,
            starts_buf,
            n,
            nchunks,
            *mask.shape,
        )
    return out
