"""Pure shape logic for `Tensor.slice` ranges and `Tensor.__getitem__` keys.

Everything here works on shapes and Python objects only; the tensor mixin turns the resulting
plan into at most one backend slice, one flip, one select and one reshape.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from burn.errors import ShapeError
from burn.tensor._base import TensorBase

Shape = tuple[int, ...]


def normalize_range(op: str, r: Any, n: int, dim: int) -> tuple[slice, bool]:
    """One entry of a `slice()` range list as ``slice(start, stop, step)`` with
    ``0 <= start <= stop <= n`` and ``step >= 1`` (out-of-range ends clamp, like Python), and
    whether the selected elements are then reversed (a negative step).

    A Python `slice` follows Python (``slice(None, None, -1)`` reverses the dim); a
    ``(start, end, step)`` triple follows Burn's ``s![start..end; step]``: the range
    ``start..end`` walked with ``|step|``, from its end when `step` is negative.
    """
    if r is None:
        return slice(0, n, 1), False
    if isinstance(r, slice):
        if r.step is not None and r.step == 0:
            raise ValueError(f"{op}: dim {dim}: the step of {r} must not be zero")
        picked = range(*r.indices(n))
    elif isinstance(r, (tuple, list)) and len(r) in (2, 3):
        step = 1 if len(r) == 2 else r[2]
        if not isinstance(step, numbers.Integral) or step == 0:
            raise ValueError(f"{op}: dim {dim}: the step of {tuple(r)} must be a non-zero int")
        start, stop, _ = slice(r[0], r[1]).indices(n)
        picked = range(start, max(start, stop))[:: int(step)]
    else:
        raise TypeError(
            f"{op}: dim {dim}: each range must be a (start, end) pair, a (start, end, step) "
            f"triple, a slice or None, got {r!r}"
        )
    if picked.step > 0:
        return slice(picked.start, max(picked.start, picked.stop), picked.step), False
    if not picked:
        return slice(0, 0, 1), False
    # Negative step: the same elements in ascending order, reversed afterwards by a flip.
    return slice(picked[-1], picked[0] + 1, -picked.step), len(picked) > 1


def normalize_ranges(op: str, ranges: Any, shape: Shape) -> tuple[tuple[slice, ...], tuple[int, ...]]:
    """A range list (one entry per leading dim) as one concrete ascending slice per dim of
    `shape`, and the dims whose selection is then reversed (negative steps)."""
    if isinstance(ranges, slice) or ranges is None:
        ranges = (ranges,)
    elif not isinstance(ranges, Sequence) or isinstance(ranges, str):
        raise TypeError(
            f"{op}: ranges must be a sequence of (start, end) pairs, slices or None, got {ranges!r}"
        )
    if len(ranges) > len(shape):
        raise ShapeError(f"{op}: {len(ranges)} ranges for a tensor of rank {len(shape)} (shape {shape})")
    parts = [
        normalize_range(op, ranges[d] if d < len(ranges) else None, n, d) for d, n in enumerate(shape)
    ]
    return tuple(s for s, _ in parts), tuple(d for d, (_, flip) in enumerate(parts) if flip)


def is_full(slices: tuple[slice, ...], shape: Shape) -> bool:
    """Whether normalized `slices` take every element of `shape`."""
    for s, n in zip(slices, shape):  # noqa: B905 - one slice per dim by construction
        if s.start != 0 or s.stop != n or s.step != 1:
            return False
    return True


def region_shape(slices: tuple[slice, ...]) -> Shape:
    """The shape selected by normalized slices."""
    return tuple(len(range(s.start, s.stop, s.step)) for s in slices)


@dataclass(slots=True)
class IndexPlan:
    """What `t[key]` does: slice, then flip, then select, then reshape (each optional)."""

    slices: tuple[slice, ...] | None
    flips: tuple[int, ...]
    select: tuple[int, Any] | None  # (dim, list of ints or Int tensor)
    out_shape: Shape | None  # final shape when ints drop dims or None adds them


def _is_int(item: Any) -> bool:
    if item.__class__ is int:  # the common case, before the slow ABC check
        return True
    return isinstance(item, numbers.Integral) and not isinstance(item, (bool, np.bool_))


def plan_getitem(key: Any, shape: Shape) -> IndexPlan:
    """Parse a NumPy-style basic index (ints, slices, None, ``...``) plus at most one 1-D index
    list or Int tensor (which becomes a `select`).

    Raises:
        IndexError: too many indices, an int out of range, several ellipses.
        TypeError: unsupported index types (bool masks, floats, several index lists).
    """
    if key.__class__ is not tuple:
        key = (key,)
    rank = len(shape)
    n_ellipsis = 0
    consumed = 0
    for item in key:
        if item is Ellipsis:
            n_ellipsis += 1
        elif item is not None:
            consumed += 1
    if n_ellipsis > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if consumed > rank:
        raise IndexError(f"too many indices for a tensor of rank {rank} (shape {shape}): {key!r}")
    whole = slice(None)
    items: list[Any] = []
    for item in key:
        if item is Ellipsis:
            items.extend([whole] * (rank - consumed))
        else:
            items.append(item)
    if not n_ellipsis:  # trailing dims not named by the key are taken whole
        items.extend([whole] * (rank - consumed))

    slices: list[slice] = []
    flips: list[int] = []
    select: tuple[int, Any] | None = None
    out: list[int] = []
    reshape = False
    full = True  # whether every dim is taken whole (then no backend slice is needed)
    dim = 0
    for item in items:
        if item is None:
            out.append(1)
            reshape = True
            continue
        n = shape[dim]
        if item.__class__ is slice:
            start, stop, step = item.indices(n)
            if step > 0:
                stop = max(start, stop)
                s = slice(start, stop, step)
                size = len(range(start, stop, step))
            else:
                picked = range(start, stop, step)
                size = len(picked)
                # Negative step: take the same elements in ascending order, then flip the dim.
                s = slice(picked[-1], picked[0] + 1, -step) if size else slice(0, 0, 1)
                if size > 1:
                    flips.append(dim)
            if full and (s.start != 0 or s.stop != n or s.step != 1):
                full = False
            slices.append(s)
            out.append(size)
        elif _is_int(item):
            i = int(item)
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of range for dim {dim} of size {n} (shape {shape})")
            i = i + n if i < 0 else i
            slices.append(slice(i, i + 1, 1))
            reshape = True
            full = full and n == 1
        elif isinstance(item, (TensorBase, list, tuple, np.ndarray)):
            if select is not None:
                raise TypeError(
                    "only one index list or tensor per subscript is supported; chain select() calls instead"
                )
            select = (dim, _index_list(item, n, dim))
            slices.append(slice(0, n, 1))
            out.append(-1)  # filled by the caller from the select's result
        else:
            raise TypeError(
                f"unsupported index {item!r} of type {type(item).__name__}: use ints, slices, None, "
                "..., or one 1-D list/Int tensor (boolean masks: use mask_where, nonzero or argwhere)"
            )
        dim += 1
    return IndexPlan(
        slices=None if full else tuple(slices),
        flips=tuple(flips),
        select=select,
        out_shape=tuple(out) if reshape else None,
    )


def _index_list(item: Any, n: int, dim: int) -> Any:
    """A 1-D index list with negatives resolved, or the Int tensor itself."""
    if isinstance(item, TensorBase):
        return item
    array = np.asarray(item)
    if array.dtype == np.bool_:
        raise TypeError("boolean mask indexing is not supported: use mask_where, nonzero or argwhere")
    if array.size == 0:
        array = array.astype(np.int64)
    if array.ndim != 1 or array.dtype.kind not in "iu":
        raise TypeError(f"an index list must be a flat list of ints, got {item!r}")
    if ((array < -n) | (array >= n)).any():
        raise IndexError(f"index list {array.tolist()} is out of range for dim {dim} of size {n}")
    return [int(i) + n if i < 0 else int(i) for i in array]
