"""Kind-generic bodies shared by the float, int and bool families' defaults: nd indexing
(gather_nd, scatter_nd), the assign mode of scatter/select, unfold, cross, and the log-step scan
of the cumulative ops. Not a family: these are helpers the family ops call with their kind.

Scatter modes other than ``add`` have no primitive of their own: updates are sorted by target
(a stable sort, so "last write wins" is well defined for ``assign``), each run of equal targets is
reduced with a segmented Hillis-Steele scan (``log2(n)`` passes of slice + mask_where), and the last
element of each run is added into zeros with one ``select_add``. Everything is differentiable
through the ops it is made of.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from burn.backend.contract import default, required  # noqa: F401
from burn.backend.tables import int_table

if TYPE_CHECKING:
    from burn.backend.base import Backend

P = Any  # an opaque primitive
Shape = tuple[int, ...]
ScatterMode = Literal["add", "mul", "max", "min", "assign"]

SCATTER_MODES: tuple[str, ...] = ("add", "mul", "max", "min", "assign")


def _strides(shape: Shape) -> list[int]:
    """Row-major strides (in elements) of `shape`."""
    out = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        out[d] = out[d + 1] * shape[d + 1]
    return out


def _whole(shape: Shape) -> list[slice]:
    return [slice(0, n, 1) for n in shape]


def scan(b: Backend, x: P, dim: int, combine: Callable[[P, P], P], shape: Shape, cat: Any, slc: Any) -> P:
    """Inclusive scan along `dim` (Hillis-Steele): ``out[i] = combine(x[i], out[i - 1])``.

    `combine(later, earlier)` must be associative. ``ceil(log2 n)`` steps, each one combine of
    two slices and a ``cat``; `cat`/`slc` are the kind's ``*_cat``/``*_slice`` ops.
    """
    n = shape[dim]
    full = [slice(0, m, 1) for m in shape]

    def part(start: int, stop: int) -> tuple[slice, ...]:
        region = list(full)
        region[dim] = slice(start, stop, 1)
        return tuple(region)

    step = 1
    while step < n:
        head = slc(x, part(0, step))
        tail = combine(slc(x, part(step, n)), slc(x, part(0, n - step)))
        x = cat([head, tail], dim)
        step *= 2
    return x


class KindOps:
    """Kind-generic bodies of the float, int and bool defaults (not ops: helpers they call)."""

    # -- helpers (not ops) --------------------------------------------------------------------
    def _lop(self, kind: str, op: str) -> Any:
        return getattr(self, f"{kind}_{op}")

    def _kind_zeros(self, kind: str, like: P, shape: Shape) -> P:
        b: Any = self
        if kind == "float":
            return b.float_zeros(shape, b.float_device(like), b.float_get_dtype(like))
        return b.int_zeros(shape, b.int_device(like), b.int_get_dtype(like))

    def _segment_reduce(self, kind: str, base: P, targets: P, updates: P, mode: str) -> P:
        """`base` (``[M, *rest]``) combined with the `updates` (``[n, *rest]``) that 1-D int
        `targets` send to its rows, per `mode` (see the module docstring)."""
        b: Any = self
        shape = self._lop(kind, "shape")(base)
        n = b.int_shape(targets)[0]
        if n == 0:
            return base
        if mode == "add":
            return self._lop(kind, "select_add")(base, 0, targets, updates)
        rest = tuple(shape[1:])
        ushape = self._lop(kind, "shape")(updates)
        k_slice, k_cat = self._lop(kind, "slice"), self._lop(kind, "cat")
        k_where = self._lop(kind, "mask_where")

        def rows(t: P, lo: int, hi: int, tshape: Shape) -> P:
            return k_slice(t, (slice(lo, hi, 1), *_whole(tshape[1:])))

        def column(mask: P, m: int) -> P:  # a [m] bool as [m, 1, ..., 1] to broadcast over rest
            return b.bool_reshape(mask, (m,) + (1,) * len(rest))

        ts, perm = b.int_sort_with_indices(targets, 0, False)
        vs = self._lop(kind, "select")(updates, 0, perm)
        step = 1
        while mode != "assign" and step < n:  # segmented inclusive scan over runs of equal targets
            same = b.int_equal(
                b.int_slice(ts, (slice(step, n, 1),)), b.int_slice(ts, (slice(0, n - step, 1),))
            )
            hi, lo = rows(vs, step, n, ushape), rows(vs, 0, n - step, ushape)
            if mode == "mul":
                combined = self._lop(kind, "mul")(hi, lo)
            else:  # max / min: keep `lo` where it wins
                wins = self._lop(kind, "greater" if mode == "max" else "lower")(lo, hi)
                combined = k_where(hi, wins, lo)
            vs = k_cat([rows(vs, 0, step, ushape), k_where(hi, column(same, n - step), combined)], 0)
            step *= 2
        last = b.int_not_equal(b.int_slice(ts, (slice(0, n - 1, 1),)), b.int_slice(ts, (slice(1, n, 1),)))
        last = b.bool_cat([last, b.bool_ones((1,), b.int_device(targets))], 0)
        zeros_u = self._kind_zeros(kind, updates, tuple(ushape))
        contrib = k_where(zeros_u, b.bool_expand(column(last, n), tuple(ushape)), vs)
        agg = self._lop(kind, "select_add")(self._kind_zeros(kind, base, tuple(shape)), 0, ts, contrib)
        hits = b.int_select_add(
            b.int_zeros((shape[0],), b.int_device(targets), b.int_dtype),
            0,
            ts,
            b.bool_into_int(last, b.int_dtype),
        )
        hit = b.bool_expand(column(b.int_greater_elem(hits, 0), shape[0]), tuple(shape))
        if mode == "mul":
            agg = self._lop(kind, "mul")(base, agg)
        elif mode in ("max", "min"):
            wins = self._lop(kind, "greater" if mode == "max" else "lower")(base, agg)
            agg = k_where(agg, wins, base)
        return k_where(base, hit, agg)

    def _flat_nd_index(self, shape: Shape, indices: P) -> tuple[P, int, Shape]:
        """1-D int flat row numbers for the ``[..., K]`` `indices` into ``shape[:K]``, the number
        of rows ``prod(shape[:K])``, and the leading shape ``indices.shape[:-1]``."""
        b: Any = self
        ishape = b.int_shape(indices)
        k = ishape[-1]
        lead = tuple(ishape[:-1])
        n = math.prod(lead)
        strides = _strides(tuple(shape[:k]))
        pairs = b.int_reshape(indices, (n, k))
        flat = b.int_zeros((n, 1), b.int_device(indices), b.int_get_dtype(indices))
        for j in range(k):
            column = b.int_slice(pairs, (slice(0, n, 1), slice(j, j + 1, 1)))
            flat = b.int_add(flat, b.int_mul_scalar(column, strides[j]) if strides[j] != 1 else column)
        return b.int_reshape(flat, (n,)), math.prod(shape[:k]), lead

    def _as_int(self, tensor: P) -> P:
        b: Any = self
        return b.bool_into_int(tensor, b.int_dtype)

    def _as_bool(self, tensor: P) -> P:
        b: Any = self
        return b.int_not_equal_elem(tensor, 0)

    # -- unfold -------------------------------------------------------------------------------
    def _unfold(self, kind: str, tensor: P, dim: int, size: int, step: int) -> P:
        shape = tuple(self._lop(kind, "shape")(tensor))
        n = shape[dim]
        windows = (n - size) // step + 1 if n >= size else 0
        table = (np.arange(windows)[:, None] * step + np.arange(size)[None, :]).reshape(-1)
        device = self._lop(kind, "device")(tensor)
        picked = self._lop(kind, "select")(tensor, dim, int_table(self, table, device))  # type: ignore[arg-type]
        split = self._lop(kind, "reshape")(picked, (*shape[:dim], windows, size, *shape[dim + 1 :]))
        rank = len(shape) + 1
        axes = (*range(dim + 1), *range(dim + 2, rank), dim + 1)
        return self._lop(kind, "permute")(split, axes)

    # -- gather_nd / scatter_nd ---------------------------------------------------------------
    def _gather_nd(self, kind: str, tensor: P, indices: P) -> P:
        shape = tuple(self._lop(kind, "shape")(tensor))
        flat, rows, lead = self._flat_nd_index(shape, indices)
        k = self._index_depth(indices)
        table = self._lop(kind, "reshape")(tensor, (rows, *shape[k:]))
        return self._lop(kind, "reshape")(self._lop(kind, "select")(table, 0, flat), (*lead, *shape[k:]))

    def _index_depth(self, indices: P) -> int:
        b: Any = self
        return int(b.int_shape(indices)[-1])

    def _scatter_nd(self, kind: str, tensor: P, indices: P, values: P, mode: str) -> P:
        shape = tuple(self._lop(kind, "shape")(tensor))
        flat, rows, lead = self._flat_nd_index(shape, indices)
        k = self._index_depth(indices)
        reshape = self._lop(kind, "reshape")
        base = reshape(tensor, (rows, *shape[k:]))
        updates = reshape(values, (math.prod(lead), *shape[k:]))
        return reshape(self._segment_reduce(kind, base, flat, updates, mode), shape)

    # -- assign modes of scatter / select, bool scatter / select ------------------------------
    def _scatter_assign(self, kind: str, dim: int, tensor: P, indices: P, values: P) -> P:
        b: Any = self
        shape = tuple(self._lop(kind, "shape")(tensor))
        ishape = tuple(b.int_shape(indices))
        strides = _strides(shape)
        grid = np.indices(ishape, dtype=np.int64)
        offset = sum(
            (grid[d] * strides[d] for d in range(len(shape)) if d != dim), np.zeros(ishape, np.int64)
        )
        offsets = int_table(self, np.asarray(offset), b.int_device(indices))  # type: ignore[arg-type]
        n = math.prod(ishape)
        flat = b.int_reshape(b.int_add(b.int_mul_scalar(indices, strides[dim]), offsets), (n,))
        reshape = self._lop(kind, "reshape")
        base = reshape(tensor, (math.prod(shape),))
        out = self._segment_reduce(kind, base, flat, reshape(values, (n,)), "assign")
        return reshape(out, shape)

    def _select_assign(self, kind: str, tensor: P, dim: int, indices: P, values: P) -> P:
        swap = self._lop(kind, "swap_dims")
        front = swap(tensor, 0, dim) if dim else tensor
        rows = swap(values, 0, dim) if dim else values
        out = self._segment_reduce(kind, front, indices, rows, "assign")
        return swap(out, 0, dim) if dim else out

    # -- cross product ------------------------------------------------------------------------
    def _cross(self, kind: str, lhs: P, rhs: P, dim: int) -> P:
        shape = tuple(self._lop(kind, "shape")(lhs))
        k_slice, mul, sub = self._lop(kind, "slice"), self._lop(kind, "mul"), self._lop(kind, "sub")

        def part(t: P, i: int) -> P:
            whole = _whole(shape)
            return k_slice(t, tuple(slice(i, i + 1, 1) if d == dim else s for d, s in enumerate(whole)))

        a = [part(lhs, i) for i in range(3)]
        c = [part(rhs, i) for i in range(3)]
        return self._lop(kind, "cat")(
            [
                sub(mul(a[1], c[2]), mul(a[2], c[1])),
                sub(mul(a[2], c[0]), mul(a[0], c[2])),
                sub(mul(a[0], c[1]), mul(a[1], c[0])),
            ],
            dim,
        )
