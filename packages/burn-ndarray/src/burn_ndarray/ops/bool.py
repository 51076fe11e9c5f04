"""The bool family (`burn.backend.ops.bool`) on NumPy bool arrays: the shared bodies
(`burn.backend.xp.bool`) plus a branch-free mask select and Burn's OR-accumulating scatter and
select (``bool_scatter_add``, ``bool_select_add``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from burn.backend.xp.bool import BOOL_UFUNCS, XpBoolOps
from burn.backend.xp.tensor_common import bind_ufuncs, check_bounds
from burn.errors import ShapeError
from burn_ndarray.ops import kinds
from burn_ndarray.ops.kinds import KindOps, linear_index

Array = Any


def bool_or_scatter(self: Any, dim: int, tensor: Array, indices: Array, values: Array) -> Array:
    """OR-accumulate: every true value sets its target (setting is idempotent, so repeats and
    their order do not matter)."""
    shape = tuple(tensor.shape)
    if indices.shape != values.shape or indices.ndim != len(shape):
        raise ShapeError(
            f"scatter_add: indices {indices.shape} and values {values.shape} must have one shape, "
            f"of the tensor's rank ({shape})"
        )
    check_bounds("scatter_add", indices, shape[dim])
    out = np.array(tensor, order="C")
    flat = linear_index(indices, dim, shape).ravel()
    out.reshape(-1)[flat[np.asarray(values).ravel()]] = True
    return out


def bool_or_select(self: Any, tensor: Array, dim: int, indices: Array, values: Array) -> Array:
    check_bounds("select_add", indices, tensor.shape[dim])
    out = np.array(tensor)
    # Unbuffered: `out[idx] |= v` would let a later false row undo an earlier true one.
    np.logical_or.at(np.moveaxis(out, dim, 0), indices, np.moveaxis(np.asarray(values), dim, 0))
    return out


@bind_ufuncs(np, BOOL_UFUNCS)
class BoolOps(KindOps, XpBoolOps):
    """The ``bool_*`` ops of `burn_ndarray.NdArray`."""

    def bool_mask_where(self, tensor: Array, mask: Array, value: Array) -> Array:
        # Logical ops never branch (np.where does, and crawls on random masks).
        return (value & mask) | (tensor & ~mask)

    # -- kind-generic bodies (`kinds`), and OR-accumulating scatter / select ------------------
    bool_into_data = kinds.into_data
    bool_device = kinds.device
    bool_to_device = kinds.to_device
    bool_unfold = kinds.unfold
    bool_gather_nd = kinds.gather_nd
    bool_scatter_assign = kinds.scatter_assign
    bool_select_assign = kinds.select_assign
    bool_scatter_add = bool_or_scatter
    bool_select_add = bool_or_select
