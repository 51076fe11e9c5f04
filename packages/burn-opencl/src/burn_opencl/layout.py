"""Layout ops shared by every kind: host exchange, views (reshape, permute, flip, expand, slice),
copies (contiguous, slice_assign, cat, repeat) and moves between devices."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from burn.errors import DTypeError, ShapeError
from burn.foundations.data import TensorData
from burn.foundations.dtype import DType
from burn_opencl import pinned
from burn_opencl.kernels import elementwise as ew
from burn_opencl.kernels.common import new
from burn_opencl.runtime import Runtime
from burn_opencl.tensor import CLTensor, c_strides, numel

_COPY = ew.CAST


def from_numpy(rt: Runtime, array: np.ndarray, dtype: DType) -> CLTensor:
    shape = tuple(array.shape)
    if not array.flags.c_contiguous:
        array = np.ascontiguousarray(array)  # (turns 0-d into 1-d: the shape is kept above)
    return CLTensor(rt, pinned.upload(rt, array), shape, dtype)  # asynchronous from pinned memory


def from_data(rt: Runtime, data: TensorData, kind: str, supported: frozenset[DType]) -> CLTensor:
    dtype = data.dtype
    ok = dtype.is_float if kind == "float" else (dtype.is_int if kind == "int" else dtype.is_bool)
    if not ok:
        raise DTypeError(f"{kind}_from_data: data of dtype {dtype.value} is not a {kind} type")
    if dtype not in supported:
        raise DTypeError(f"{kind}_from_data: {rt.device} does not support {dtype.value}")
    return from_numpy(rt, data.array, dtype)


def contiguous(t: CLTensor) -> CLTensor:
    """`t` itself when row-major from offset 0, else a compact copy."""
    if t.contig and t.offset == 0:
        return t
    return ew.run(_COPY, [t], t.dtype)


def into_data(t: CLTensor) -> TensorData:
    t = contiguous(t)
    out = np.empty(t.shape, dtype=t.dtype.numpy)
    t.rt.download(t.buf, out)
    return TensorData.from_numpy(out)


def to_device(t: CLTensor, rt: Runtime) -> CLTensor:
    if t.rt is rt:
        return t
    return from_numpy(rt, into_data(t).array, t.dtype)


def reshape(t: CLTensor, shape: Sequence[int]) -> CLTensor:
    shape = tuple(int(s) for s in shape)
    if -1 in shape:
        known = 1
        for s in shape:
            if s != -1:
                known *= s
        if shape.count(-1) > 1 or known == 0 or t.n % known:
            raise ShapeError(f"reshape: cannot reshape {t.shape} into {shape}")
        shape = tuple(t.n // known if s == -1 else s for s in shape)
    if numel(shape) != t.n:
        raise ShapeError(f"reshape: cannot reshape {t.shape} ({t.n} elements) into {shape}")
    if not t.contig:
        t = ew.run(_COPY, [t], t.dtype)
    return CLTensor(t.rt, t.buf, shape, t.dtype, c_strides(shape), t.offset)


def permute(t: CLTensor, axes: Sequence[int]) -> CLTensor:
    if sorted(axes) != list(range(len(t.shape))):
        raise ShapeError(f"permute: axes {tuple(axes)} are not a permutation of the dims of {t.shape}")
    return t.view(tuple(t.shape[a] for a in axes), tuple(t.strides[a] for a in axes), t.offset)


def flip(t: CLTensor, axes: Sequence[int]) -> CLTensor:
    strides = list(t.strides)
    offset = t.offset
    for a in set(axes):
        if t.shape[a] > 1:
            offset += (t.shape[a] - 1) * strides[a]
            strides[a] = -strides[a]
    return t.view(t.shape, tuple(strides), offset)


def expand(t: CLTensor, shape: Sequence[int]) -> CLTensor:
    shape = tuple(shape)
    lead = len(shape) - len(t.shape)
    if lead < 0:
        raise ShapeError(f"expand: cannot expand {t.shape} to the lower rank {shape}")
    out_shape = []
    strides = []
    for d, size in enumerate(shape):
        if d < lead:
            if size < 0:
                raise ShapeError(f"expand: -1 is not allowed for a new leading dim ({t.shape} -> {shape})")
            out_shape.append(size)
            strides.append(0)
            continue
        have = t.shape[d - lead]
        if size == -1 or size == have:
            out_shape.append(have)
            strides.append(t.strides[d - lead])
        elif have == 1:
            out_shape.append(size)
            strides.append(0)
        else:
            raise ShapeError(f"expand: cannot expand {t.shape} to {shape}")
    return t.view(tuple(out_shape), tuple(strides), t.offset)


def slice_(t: CLTensor, slices: Sequence[slice]) -> CLTensor:
    shape = list(t.shape)
    strides = list(t.strides)
    offset = t.offset
    for d, s in enumerate(slices):
        start, stop, step = s.indices(t.shape[d])
        size = len(range(start, stop, step))
        if size:
            offset += start * strides[d]
        shape[d] = size
        strides[d] *= step
    return t.view(tuple(shape), tuple(strides), offset)


def slice_assign(t: CLTensor, slices: Sequence[slice], value: CLTensor) -> CLTensor:
    out = ew.run(_COPY, [t], t.dtype)
    region = slice_(out, slices)
    if region.n == 0:
        return out
    if value.shape != region.shape:
        value = expand(value, region.shape)
    ew.run(_COPY, [value], t.dtype, compute=value.dtype, out=region)
    return out


def cat(tensors: Sequence[CLTensor], dim: int) -> CLTensor:
    first = tensors[0]
    dtype = first.dtype
    total = 0
    for t in tensors:
        if len(t.shape) != len(first.shape) or any(
            a != b for d, (a, b) in enumerate(zip(t.shape, first.shape, strict=True)) if d != dim
        ):
            raise ShapeError(f"cat: shapes {[x.shape for x in tensors]} differ outside dim {dim}")
        total += t.shape[dim]
    shape = first.shape[:dim] + (total,) + first.shape[dim + 1 :]
    out = new(first.rt, shape, dtype, "the result of cat")
    start = 0
    for t in tensors:
        size = t.shape[dim]
        if size and t.n:
            region = slice_(
                out, [slice(start, start + size) if d == dim else slice(None) for d in range(len(shape))]
            )
            ew.run(_COPY, [t], dtype, compute=t.dtype, out=region)
        start += size
    return out


def repeat_dim(t: CLTensor, dim: int, times: int) -> CLTensor:
    # A stride-0 dim of `times` in front of `dim`, copied once: one launch whatever `times` is.
    shape = t.shape[:dim] + (times,) + t.shape[dim:]
    strides = t.strides[:dim] + (0,) + t.strides[dim:]
    copy = ew.run(_COPY, [t.view(shape, strides, t.offset)], t.dtype)
    return reshape(copy, t.shape[:dim] + (t.shape[dim] * times,) + t.shape[dim + 1 :])


def cast(t: CLTensor, dtype: DType) -> CLTensor:
    if t.dtype is dtype:
        return t
    return ew.run(_COPY, [t], dtype)
