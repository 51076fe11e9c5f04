"""Forward side of the float ops of `burn.backend.layout_ops`: unfold, gather_nd, scatter_nd,
the assign mode of scatter and select, cross.

Each op runs on the inner backend and, when an input is tracked, records one node with a rule
from `burn_autodiff.rules` (a scatter of the gradient for the gathers, a gather of it for the
scatters). burn-core's defaults of these ops are long chains (sorts, segmented scans, index
tables) that would otherwise all be recorded. A ``scatter_nd`` that multiplies or keeps the
maximum or minimum has no rule: tracked, it records burn-core's composition, whose gradient
handles repeated indices and ties exactly (see `burn_autodiff.ops_composed`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from burn_autodiff import rules as R
from burn_autodiff.node import ADTensor as AD
from burn_autodiff.node import Node
from burn_autodiff.ops_composed import inner_or_default

if TYPE_CHECKING:
    from burn.backend import Backend

_SCATTER_RULES = {"add": R.scatter_nd_add, "assign": R.scatter_nd_assign}


class AutodiffLayoutOps:
    """Layout and indexing float ops of `Autodiff` (mixed into it)."""

    _in: Backend

    def float_unfold(self, tensor: AD, dim: int, size: int, step: int) -> AD:
        i = self._in
        x = tensor.p
        out = i.float_unfold(x, dim, size, step)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), R.unfold, (i.float_shape(x), dim, size, step)))

    def float_gather_nd(self, tensor: AD, indices: Any) -> AD:
        i = self._in
        x = tensor.p
        out = i.float_gather_nd(x, indices)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), R.gather_nd, (i.float_shape(x), indices)))

    def float_scatter_nd(self, tensor: AD, indices: Any, values: AD, mode: str) -> AD:
        na, nb = tensor.node, values.node
        rule = _SCATTER_RULES.get(mode)
        if rule is None and (na is not None or nb is not None):
            composed: AD = inner_or_default(self, "float_scatter_nd", tensor, indices, values, mode)
            return composed
        i = self._in
        v = values.p
        out = i.float_scatter_nd(tensor.p, indices, v, mode)
        if na is None and nb is None:
            return AD(out, None)
        return AD(out, Node((na, nb), rule, (indices, i.float_shape(v))))

    def float_scatter_assign(self, dim: int, tensor: AD, indices: Any, values: AD) -> AD:
        out = self._in.float_scatter_assign(dim, tensor.p, indices, values.p)
        na, nb = tensor.node, values.node
        if na is None and nb is None:
            return AD(out, None)
        return AD(out, Node((na, nb), R.scatter_assign, (dim, indices)))

    def float_select_assign(self, tensor: AD, dim: int, indices: Any, values: AD) -> AD:
        i = self._in
        v = values.p
        out = i.float_select_assign(tensor.p, dim, indices, v)
        na, nb = tensor.node, values.node
        if na is None and nb is None:
            return AD(out, None)
        return AD(out, Node((na, nb), R.select_assign, (dim, indices, i.float_shape(v))))

    def float_cross(self, lhs: AD, rhs: AD, dim: int) -> AD:
        a, b = lhs.p, rhs.p
        out = self._in.float_cross(a, b, dim)
        na, nb = lhs.node, rhs.node
        if na is None and nb is None:
            return AD(out, None)
        # d/da needs b and d/db needs a: keep only the operands a needed gradient reads
        saved = (a if nb is not None else None, b if na is not None else None, dim)
        return AD(out, Node((na, nb), R.cross, saved))
