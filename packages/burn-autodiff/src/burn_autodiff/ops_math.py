"""Forward side of the float ops of `burn.backend.math_ops` that get a rule of their own.

The defaults of those ops are compositions (a Newton-refined ``atan``, ``fmod`` from
``remainder``...): differentiating through them would be correct but wasteful, and for the
inverse trigonometric functions it would differentiate the refinement steps too. Here each op
runs on the inner backend (one kernel where it has one) and records one node whose rule lives
in `burn_autodiff.rules`.

The cumulative extrema record the position each output came from (a gather, like ``max_dim``).
``float_cumprod`` runs the inner kernel when untracked; tracked, it records burn-core's default
composition (a log-step scan of products), whose gradient is exact where inputs are zero, which
the closed form ``reverse_cumsum(g * out) / x`` is not.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from burn_autodiff import rules as R
from burn_autodiff.node import ADTensor as AD
from burn_autodiff.node import Node
from burn_autodiff.ops_composed import inner_or_default, records_no_node

if TYPE_CHECKING:
    from burn.backend import Backend

Shape = tuple[int, ...]


class AutodiffMathOps:
    """Math float ops of `Autodiff` with a dedicated backward rule (mixed into it)."""

    _in: Backend
    _shapes: Callable[[Any, Any], tuple[Shape | None, Shape | None]]  # provided by AutodiffFloatOps

    def _unary(self, tensor: AD, op: str, rule: Any, keep: str) -> AD:
        """Run inner `op`; record `rule` saving the input (`keep` "x") or the output ("out")."""
        x = tensor.p
        out = getattr(self._in, op)(x)
        n = tensor.node
        if n is None:
            return AD(out, None)
        return AD(out, Node((n,), rule, (x if keep == "x" else out,)))

    def float_tan(self, tensor: AD) -> AD:
        return self._unary(tensor, "float_tan", R.tan, "out")

    def float_sinh(self, tensor: AD) -> AD:
        return self._unary(tensor, "float_sinh", R.sinh, "x")

    def float_cosh(self, tensor: AD) -> AD:
        return self._unary(tensor, "float_cosh", R.cosh, "x")

    def float_asin(self, tensor: AD) -> AD:
        return self._unary(tensor, "float_asin", R.asin, "x")

    def float_acos(self, tensor: AD) -> AD:
        return self._unary(tensor, "float_acos", R.acos, "x")

    def float_atan(self, tensor: AD) -> AD:
        return self._unary(tensor, "float_atan", R.atan, "x")

    def float_asinh(self, tensor: AD) -> AD:
        return self._unary(tensor, "float_asinh", R.asinh, "x")

    def float_acosh(self, tensor: AD) -> AD:
        return self._unary(tensor, "float_acosh", R.acosh, "x")

    def float_atanh(self, tensor: AD) -> AD:
        return self._unary(tensor, "float_atanh", R.atanh, "x")

    def float_trunc(self, tensor: AD) -> AD:
        out = self._in.float_trunc(tensor.p)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), R.zero, ()))

    def float_atan2(self, lhs: AD, rhs: AD) -> AD:
        a, b = lhs.p, rhs.p
        out = self._in.float_atan2(a, b)
        na, nb = lhs.node, rhs.node
        if na is None and nb is None:
            return AD(out, None)
        return AD(out, Node((na, nb), R.atan2, (a, b, *self._shapes(a, b))))

    def float_fmod(self, lhs: AD, rhs: AD) -> AD:
        a, b = lhs.p, rhs.p
        out = self._in.float_fmod(a, b)
        na, nb = lhs.node, rhs.node
        if na is None and nb is None:
            return AD(out, None)
        keep = nb is not None  # only the divisor's gradient needs the operands
        saved = (a if keep else None, b if keep else None, *self._shapes(a, b))
        return AD(out, Node((na, nb), R.fmod, saved))

    def float_fmod_scalar(self, lhs: AD, rhs: float) -> AD:
        out = self._in.float_fmod_scalar(lhs.p, rhs)
        n = lhs.node
        return AD(out, None if n is None else Node((n,), R.identity, ()))

    # -- cumulative ops -----------------------------------------------------------------------
    @records_no_node
    def float_cumprod(self, tensor: AD, dim: int) -> AD:
        out: AD = inner_or_default(self, "float_cumprod", tensor, dim)  # tracked: the composition
        return out

    def _cum_extremum(self, tensor: AD, dim: int, op: str) -> AD:
        i = self._in
        x = tensor.p
        out = getattr(i, op)(x, dim)
        n = tensor.node
        if n is None:
            return AD(out, None)
        # out[j] comes from the last i <= j where x[i] == out[i] (where the running extremum was
        # last reached): a running max of those positions, 0 elsewhere (x[0] == out[0]).
        shape = i.float_shape(x)
        device, int_dtype = i.float_device(x), i.int_dtype
        positions = i.int_arange(0, shape[dim], 1, device, int_dtype)
        positions = i.int_reshape(positions, tuple(m if d == dim else 1 for d, m in enumerate(shape)))
        reached = i.bool_into_int(i.float_equal(x, out), int_dtype)
        indices = i.int_cummax(i.int_mul(reached, positions), dim)
        return AD(out, Node((n,), R.gather, (shape, dim, indices)))

    def float_cummax(self, tensor: AD, dim: int) -> AD:
        return self._cum_extremum(tensor, dim, "float_cummax")

    def float_cummin(self, tensor: AD, dim: int) -> AD:
        return self._cum_extremum(tensor, dim, "float_cummin")
