"""Forward side of the float ops: compute on the inner backend, record a node when tracked.

Each op unwraps its `ADTensor` inputs, calls the inner backend, and, only when an input carries
a node (needs a gradient), records ``Node(parents, rule, saved)`` with the rule from
`burn_autodiff.rules` and what that rule needs. Untracked inputs cost one ``is None`` check.
Ops whose result has no gradient (comparisons, argmax, casts to int, host exchange) compute on
the inner primitives and return the inner result.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from burn_autodiff import rules as R
from burn_autodiff.node import ADTensor as AD
from burn_autodiff.node import Node

if TYPE_CHECKING:
    from burn.backend import Backend, Device
    from burn.foundations.data import TensorData
    from burn.foundations.distribution import Distribution
    from burn.foundations.dtype import DType

Shape = tuple[int, ...]
_SAME = (None, None)  # both operands had the output's shape: nothing to un-broadcast


class AutodiffFloatOps:
    """The float op family of `Autodiff` (mixed into it; see `burn.backend.float_ops`)."""

    _in: Backend
    _own_device: Callable[[Device], Device]  # provided by Autodiff
    _inner_device: Callable[[Device], Device]

    def _shapes(self, a: Any, b: Any) -> tuple[Shape | None, Shape | None]:
        """Input shapes for un-broadcasting, or `_SAME` when no broadcast happened."""
        shape = self._in.float_shape
        sa = shape(a)
        sb = shape(b)
        return _SAME if sa == sb else (sa, sb)

    # -- host exchange, metadata, creation ----------------------------------------------------
    def float_from_data(self, data: TensorData, device: Device) -> AD:
        return AD(self._in.float_from_data(data, self._inner_device(device)), None)

    def float_into_data(self, tensor: AD) -> TensorData:
        return self._in.float_into_data(tensor.p)

    def float_device(self, tensor: AD) -> Device:
        return self._own_device(self._in.float_device(tensor.p))

    def float_to_device(self, tensor: AD, device: Device) -> AD:
        i = self._in
        x = tensor.p
        out = i.float_to_device(x, self._inner_device(device))
        n = tensor.node
        return AD(out, None if n is None else Node((n,), R.to_device, (i.float_device(x),)))

    def float_shape(self, tensor: AD) -> Shape:
        return self._in.float_shape(tensor.p)

    def float_get_dtype(self, tensor: AD) -> DType:
        return self._in.float_get_dtype(tensor.p)

    def float_cast(self, tensor: AD, dtype: DType) -> AD:
        i = self._in
        x = tensor.p
        out = i.float_cast(x, dtype)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), R.cast, (i.float_get_dtype(x),)))

    def float_into_int(self, tensor: AD, dtype: DType) -> Any:
        return self._in.float_into_int(tensor.p, dtype)

    def float_full(self, shape: Shape, value: float, device: Device, dtype: DType) -> AD:
        return AD(self._in.float_full(shape, value, self._inner_device(device), dtype), None)

    def float_zeros(self, shape: Shape, device: Device, dtype: DType) -> AD:
        return AD(self._in.float_zeros(shape, self._inner_device(device), dtype), None)

    def float_ones(self, shape: Shape, device: Device, dtype: DType) -> AD:
        return AD(self._in.float_ones(shape, self._inner_device(device), dtype), None)

    def float_empty(self, shape: Shape, device: Device, dtype: DType) -> AD:
        return AD(self._in.float_empty(shape, self._inner_device(device), dtype), None)

    def float_random(self, shape: Shape, distribution: Distribution, device: Device, dtype: DType) -> AD:
        return AD(self._in.float_random(shape, distribution, self._inner_device(device), dtype), None)

    # -- arithmetic ---------------------------------------------------------------------------
    def float_add(self, lhs: AD, rhs: AD) -> AD:
        a, b = lhs.p, rhs.p
        out = self._in.float_add(a, b)
        na, nb = lhs.node, rhs.node
        if na is None and nb is None:
            return AD(out, None)
        return AD(out, Node((na, nb), R.add, self._shapes(a, b)))

    def float_sub(self, lhs: AD, rhs: AD) -> AD:
        a, b = lhs.p, rhs.p
        out = self._in.float_sub(a, b)
        na, nb = lhs.node, rhs.node
        if na is None and nb is None:
            return AD(out, None)
        return AD(out, Node((na, nb), R.sub, self._shapes(a, b)))

    def float_mul(self, lhs: AD, rhs: AD) -> AD:
        a, b = lhs.p, rhs.p
        out = self._in.float_mul(a, b)
        na, nb = lhs.node, rhs.node
        if na is None and nb is None:
            return AD(out, None)
        # keep only what the needed gradients use: dx needs y, dy needs x
        saved = (a if nb is not None else None, b if na is not None else None, *self._shapes(a, b))
        return AD(out, Node((na, nb), R.mul, saved))

    def float_div(self, lhs: AD, rhs: AD) -> AD:
        a, b = lhs.p, rhs.p
        out = self._in.float_div(a, b)
        na, nb = lhs.node, rhs.node
        if na is None and nb is None:
            return AD(out, None)
        return AD(out, Node((na, nb), R.div, (a if nb is not None else None, b, *self._shapes(a, b))))

    def float_remainder(self, lhs: AD, rhs: AD) -> AD:
        a, b = lhs.p, rhs.p
        out = self._in.float_remainder(a, b)
        na, nb = lhs.node, rhs.node
        if na is None and nb is None:
            return AD(out, None)
        keep = nb is not None
        saved = (a if keep else None, b if keep else None, *self._shapes(a, b))
        return AD(out, Node((na, nb), R.remainder, saved))

    def float_powf(self, lhs: AD, rhs: AD) -> AD:
        a, b = lhs.p, rhs.p
        out = self._in.float_powf(a, b)
        na, nb = lhs.node, rhs.node
        if na is None and nb is None:
            return AD(out, None)
        saved = (a, b, out if nb is not None else None, *self._shapes(a, b))
        return AD(out, Node((na, nb), R.powf, saved))

    def float_matmul(self, lhs: AD, rhs: AD) -> AD:
        a, b = lhs.p, rhs.p
        i = self._in
        out = i.float_matmul(a, b)
        na, nb = lhs.node, rhs.node
        if na is None and nb is None:
            return AD(out, None)
        # dX needs Y and X's shape, dY needs X and Y's shape: keep an operand or just its shape
        saved: tuple[Any, ...]
        if na is None:
            saved = (a, None, None, i.float_shape(b))
        elif nb is None:
            saved = (None, b, i.float_shape(a), None)
        else:
            saved = (a, b, None, None)
        return AD(out, Node((na, nb), R.matmul, saved))

    def float_add_scalar(self, lhs: AD, rhs: float) -> AD:
        out = self._in.float_add_scalar(lhs.p, rhs)
        n = lhs.node
        return AD(out, None if n is None else Node((n,), R.identity, ()))

    def float_sub_scalar(self, lhs: AD, rhs: float) -> AD:
        out = self._in.float_sub_scalar(lhs.p, rhs)
        n = lhs.node
        return AD(out, None if n is None else Node((n,), R.identity, ()))

    def float_mul_scalar(self, lhs: AD, rhs: float) -> AD:
        out = self._in.float_mul_scalar(lhs.p, rhs)
        n = lhs.node
        return AD(out, None if n is None else Node((n,), R.mul_scalar, (rhs,)))

    def float_div_scalar(self, lhs: AD, rhs: float) -> AD:
        out = self._in.float_div_scalar(lhs.p, rhs)
        n = lhs.node
        return AD(out, None if n is None else Node((n,), R.div_scalar, (rhs,)))

    def float_remainder_scalar(self, lhs: AD, rhs: float) -> AD:
        out = self._in.float_remainder_scalar(lhs.p, rhs)
        n = lhs.node
        return AD(out, None if n is None else Node((n,), R.identity, ()))

    def float_powf_scalar(self, lhs: AD, rhs: float) -> AD:
        x = lhs.p
        out = self._in.float_powf_scalar(x, rhs)
        n = lhs.node
        return AD(out, None if n is None else Node((n,), R.powf_scalar, (x, rhs)))

    # -- unary math ---------------------------------------------------------------------------
    def float_exp(self, tensor: AD) -> AD:
        out = self._in.float_exp(tensor.p)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), R.exp, (out,)))

    def float_log(self, tensor: AD) -> AD:
        x = tensor.p
        out = self._in.float_log(x)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), R.log, (x,)))

    def float_log1p(self, tensor: AD) -> AD:
        x = tensor.p
        out = self._in.float_log1p(x)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), R.log1p, (x,)))

    def float_sqrt(self, tensor: AD) -> AD:
        out = self._in.float_sqrt(tensor.p)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), R.sqrt, (out,)))

    def float_abs(self, tensor: AD) -> AD:
        x = tensor.p
        out = self._in.float_abs(x)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), R.abs_, (x,)))

    def float_sin(self, tensor: AD) -> AD:
        x = tensor.p
        out = self._in.float_sin(x)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), R.sin, (x,)))

    def float_cos(self, tensor: AD) -> AD:
        x = tensor.p
        out = self._in.float_cos(x)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), R.cos, (x,)))

    def float_tanh(self, tensor: AD) -> AD:
        out = self._in.float_tanh(tensor.p)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), R.tanh, (out,)))

    def float_erf(self, tensor: AD) -> AD:
        x = tensor.p
        out = self._in.float_erf(x)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), R.erf, (x,)))

    def float_round(self, tensor: AD) -> AD:
        out = self._in.float_round(tensor.p)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), R.zero, ()))

    def float_floor(self, tensor: AD) -> AD:
        out = self._in.float_floor(tensor.p)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), R.zero, ()))

    def float_ceil(self, tensor: AD) -> AD:
        out = self._in.float_ceil(tensor.p)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), R.zero, ()))

    def float_sign(self, tensor: AD) -> AD:
        out = self._in.float_sign(tensor.p)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), R.zero, ()))

    def float_neg(self, tensor: AD) -> AD:
        out = self._in.float_neg(tensor.p)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), R.neg, ()))

    def float_recip(self, tensor: AD) -> AD:
        out = self._in.float_recip(tensor.p)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), R.recip, (out,)))

    def float_clamp_min(self, tensor: AD, min: float) -> AD:
        x = tensor.p
        out = self._in.float_clamp_min(x, min)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), R.clamp_min, (x, min)))

    def float_clamp_max(self, tensor: AD, max: float) -> AD:
        x = tensor.p
        out = self._in.float_clamp_max(x, max)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), R.clamp_max, (x, max)))

    def float_clamp(self, tensor: AD, min: float, max: float) -> AD:
        x = tensor.p
        out = self._in.float_clamp(x, min, max)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), R.clamp, (x, min, max)))

    # -- comparisons and tests: no gradient, inner bool primitives ----------------------------
    def float_equal(self, lhs: AD, rhs: AD) -> Any:
        return self._in.float_equal(lhs.p, rhs.p)

    def float_not_equal(self, lhs: AD, rhs: AD) -> Any:
        return self._in.float_not_equal(lhs.p, rhs.p)

    def float_greater(self, lhs: AD, rhs: AD) -> Any:
        return self._in.float_greater(lhs.p, rhs.p)

    def float_greater_equal(self, lhs: AD, rhs: AD) -> Any:
        return self._in.float_greater_equal(lhs.p, rhs.p)

    def float_lower(self, lhs: AD, rhs: AD) -> Any:
        return self._in.float_lower(lhs.p, rhs.p)

    def float_lower_equal(self, lhs: AD, rhs: AD) -> Any:
        return self._in.float_lower_equal(lhs.p, rhs.p)

    def float_equal_elem(self, lhs: AD, rhs: float) -> Any:
        return self._in.float_equal_elem(lhs.p, rhs)

    def float_not_equal_elem(self, lhs: AD, rhs: float) -> Any:
        return self._in.float_not_equal_elem(lhs.p, rhs)

    def float_greater_elem(self, lhs: AD, rhs: float) -> Any:
        return self._in.float_greater_elem(lhs.p, rhs)

    def float_greater_equal_elem(self, lhs: AD, rhs: float) -> Any:
        return self._in.float_greater_equal_elem(lhs.p, rhs)

    def float_lower_elem(self, lhs: AD, rhs: float) -> Any:
        return self._in.float_lower_elem(lhs.p, rhs)

    def float_lower_equal_elem(self, lhs: AD, rhs: float) -> Any:
        return self._in.float_lower_equal_elem(lhs.p, rhs)

    def float_is_nan(self, tensor: AD) -> Any:
        return self._in.float_is_nan(tensor.p)

    def float_is_inf(self, tensor: AD) -> Any:
        return self._in.float_is_inf(tensor.p)

    # -- reductions ---------------------------------------------------------------------------
    def float_sum(self, tensor: AD) -> AD:
        i = self._in
        x = tensor.p
        out = i.float_sum(x)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), R.sum_, (i.float_shape(x),)))

    def float_sum_dim(self, tensor: AD, dim: int) -> AD:
        i = self._in
        x = tensor.p
        out = i.float_sum_dim(x, dim)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), R.sum_dim, (i.float_shape(x),)))

    def float_mean(self, tensor: AD) -> AD:
        i = self._in
        x = tensor.p
        out = i.float_mean(x)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), R.mean, (i.float_shape(x),)))

    def float_mean_dim(self, tensor: AD, dim: int) -> AD:
        i = self._in
        x = tensor.p
        out = i.float_mean_dim(x, dim)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), R.mean_dim, (i.float_shape(x), dim)))

    def float_prod(self, tensor: AD) -> AD:
        x = tensor.p
        out = self._in.float_prod(x)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), R.prod, (x,)))

    def float_prod_dim(self, tensor: AD, dim: int) -> AD:
        x = tensor.p
        out = self._in.float_prod_dim(x, dim)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), R.prod_dim, (x, dim)))

    def float_cumsum(self, tensor: AD, dim: int) -> AD:
        out = self._in.float_cumsum(tensor.p, dim)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), R.cumsum, (dim,)))

    def float_argmax(self, tensor: AD, dim: int) -> Any:
        return self._in.float_argmax(tensor.p, dim)

    def float_argmin(self, tensor: AD, dim: int) -> Any:
        return self._in.float_argmin(tensor.p, dim)

    def _extremum_dim(self, tensor: AD, dim: int, op: str, rule: Any) -> tuple[AD, Any]:
        i = self._in
        x = tensor.p
        out, indices = getattr(i, op)(x, dim)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), rule, (i.float_shape(x), dim, indices))), indices

    def float_max_dim(self, tensor: AD, dim: int) -> AD:
        if tensor.node is None:
            return AD(self._in.float_max_dim(tensor.p, dim), None)
        return self._extremum_dim(tensor, dim, "float_max_dim_with_indices", R.max_dim)[0]

    def float_min_dim(self, tensor: AD, dim: int) -> AD:
        if tensor.node is None:
            return AD(self._in.float_min_dim(tensor.p, dim), None)
        return self._extremum_dim(tensor, dim, "float_min_dim_with_indices", R.min_dim)[0]

    def float_max_dim_with_indices(self, tensor: AD, dim: int) -> tuple[AD, Any]:
        return self._extremum_dim(tensor, dim, "float_max_dim_with_indices", R.max_dim)

    def float_min_dim_with_indices(self, tensor: AD, dim: int) -> tuple[AD, Any]:
        return self._extremum_dim(tensor, dim, "float_min_dim_with_indices", R.min_dim)

    def _extremum(self, tensor: AD, op: str) -> AD:
        i = self._in
        x = tensor.p
        n = tensor.node
        if n is None:
            return AD(getattr(i, op)(x), None)
        shape = i.float_shape(x)
        flat = i.float_reshape(x, (-1,) if shape != () else (1,))
        out, indices = getattr(i, op + "_dim_with_indices")(flat, 0)
        return AD(out, Node((n,), R.max_full, (shape, indices)))

    def float_max(self, tensor: AD) -> AD:
        return self._extremum(tensor, "float_max")

    def float_min(self, tensor: AD) -> AD:
        return self._extremum(tensor, "float_min")

    # -- shape ops ----------------------------------------------------------------------------
    def float_reshape(self, tensor: AD, shape: Shape) -> AD:
        i = self._in
        x = tensor.p
        out = i.float_reshape(x, shape)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), R.reshape, (i.float_shape(x),)))

    def float_permute(self, tensor: AD, axes: Shape) -> AD:
        out = self._in.float_permute(tensor.p, axes)
        n = tensor.node
        if n is None:
            return AD(out, None)
        inverse = [0] * len(axes)
        for position, axis in enumerate(axes):
            inverse[axis] = position
        return AD(out, Node((n,), R.permute, (tuple(inverse),)))

    def float_swap_dims(self, tensor: AD, dim1: int, dim2: int) -> AD:
        out = self._in.float_swap_dims(tensor.p, dim1, dim2)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), R.swap_dims, (dim1, dim2)))

    def float_flip(self, tensor: AD, axes: Shape) -> AD:
        out = self._in.float_flip(tensor.p, axes)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), R.flip, (axes,)))

    def float_expand(self, tensor: AD, shape: Shape) -> AD:
        i = self._in
        x = tensor.p
        out = i.float_expand(x, shape)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), R.expand, (i.float_shape(x),)))

    def float_slice(self, tensor: AD, slices: tuple[slice, ...]) -> AD:
        i = self._in
        x = tensor.p
        out = i.float_slice(x, slices)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), R.slice_, (i.float_shape(x), slices)))

    def float_slice_assign(self, tensor: AD, slices: tuple[slice, ...], value: AD) -> AD:
        i = self._in
        v = value.p
        out = i.float_slice_assign(tensor.p, slices, v)
        na, nb = tensor.node, value.node
        if na is None and nb is None:
            return AD(out, None)
        return AD(out, Node((na, nb), R.slice_assign, (slices, i.float_shape(v))))

    def float_cat(self, tensors: Sequence[AD], dim: int) -> AD:
        i = self._in
        prims = [t.p for t in tensors]
        out = i.float_cat(prims, dim)
        parents = tuple(t.node for t in tensors)
        if all(n is None for n in parents):
            return AD(out, None)
        sizes = tuple(i.float_shape(p)[dim] for p in prims)
        return AD(out, Node(parents, R.cat, (dim, sizes)))

    def float_repeat_dim(self, tensor: AD, dim: int, times: int) -> AD:
        i = self._in
        x = tensor.p
        out = i.float_repeat_dim(x, dim, times)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), R.repeat_dim, (i.float_shape(x), dim, times)))

    # -- indexing -----------------------------------------------------------------------------
    def float_gather(self, dim: int, tensor: AD, indices: Any) -> AD:
        i = self._in
        x = tensor.p
        out = i.float_gather(dim, x, indices)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), R.gather, (i.float_shape(x), dim, indices)))

    def float_scatter_add(self, dim: int, tensor: AD, indices: Any, values: AD) -> AD:
        out = self._in.float_scatter_add(dim, tensor.p, indices, values.p)
        na, nb = tensor.node, values.node
        if na is None and nb is None:
            return AD(out, None)
        return AD(out, Node((na, nb), R.scatter_add, (dim, indices)))

    def float_select(self, tensor: AD, dim: int, indices: Any) -> AD:
        i = self._in
        x = tensor.p
        out = i.float_select(x, dim, indices)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), R.select, (i.float_shape(x), dim, indices)))

    def float_select_add(self, tensor: AD, dim: int, indices: Any, values: AD) -> AD:
        out = self._in.float_select_add(tensor.p, dim, indices, values.p)
        na, nb = tensor.node, values.node
        if na is None and nb is None:
            return AD(out, None)
        return AD(out, Node((na, nb), R.select_add, (dim, indices)))

    def float_mask_where(self, tensor: AD, mask: Any, value: AD) -> AD:
        i = self._in
        x, v = tensor.p, value.p
        out = i.float_mask_where(x, mask, v)
        na, nb = tensor.node, value.node
        if na is None and nb is None:
            return AD(out, None)
        return AD(out, Node((na, nb), R.mask_where, (mask, i.float_shape(x), i.float_shape(v))))

    def float_mask_fill(self, tensor: AD, mask: Any, value: float) -> AD:
        i = self._in
        x = tensor.p
        out = i.float_mask_fill(x, mask, value)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), R.mask_fill, (mask, i.float_shape(x))))

    # -- sorting ------------------------------------------------------------------------------
    def float_sort_with_indices(self, tensor: AD, dim: int, descending: bool) -> tuple[AD, Any]:
        i = self._in
        x = tensor.p
        out, indices = i.float_sort_with_indices(x, dim, descending)
        n = tensor.node
        return AD(out, None if n is None else Node((n,), R.sort, (i.float_shape(x), dim, indices))), indices

    def float_sort(self, tensor: AD, dim: int, descending: bool) -> AD:
        if tensor.node is None:
            return AD(self._in.float_sort(tensor.p, dim, descending), None)
        return self.float_sort_with_indices(tensor, dim, descending)[0]

    def float_argsort(self, tensor: AD, dim: int, descending: bool) -> Any:
        return self._in.float_argsort(tensor.p, dim, descending)

    def float_adam_step(
        self,
        param: AD,
        grad: AD,
        moment_1: AD | None,
        moment_2: AD | None,
        beta_1: float,
        beta_2: float,
        step_size: float,
        epsilon: float,
    ) -> tuple[AD, AD, AD]:
        scalars = (beta_1, beta_2, step_size, epsilon)
        operands = (param, grad, moment_1, moment_2)
        if any(a is not None and a.node is not None for a in operands):
            from burn.backend.ops.optim import OptimOps

            backend: Any = self  # a tracked operand: the default composition records its nodes
            composed: tuple[AD, AD, AD] = OptimOps.float_adam_step(backend, *operands, *scalars)
            return composed
        m_in = None if moment_1 is None else moment_1.p
        v_in = None if moment_2 is None else moment_2.p
        new, m, v = self._in.float_adam_step(param.p, grad.p, m_in, v_in, *scalars)
        return AD(new, None), AD(m, None), AD(v, None)

    def float_sgd_momentum_step(
        self,
        param: AD,
        grad: AD,
        velocity: AD | None,
        momentum: float,
        dampening: float,
        nesterov: bool,
        weight_decay: float | None,
        lr: float,
    ) -> tuple[AD, AD]:
        scalars = (momentum, dampening, nesterov, weight_decay, lr)
        if any(a is not None and a.node is not None for a in (param, grad, velocity)):
            from burn.backend.ops.optim import OptimOps

            backend: Any = self  # a tracked operand: the default composition records its nodes
            composed: tuple[AD, AD] = OptimOps.float_sgd_momentum_step(
                backend, param, grad, velocity, *scalars
            )
            return composed
        v_in = None if velocity is None else velocity.p
        new, v = self._in.float_sgd_momentum_step(param.p, grad.p, v_in, *scalars)
        return AD(new, None), AD(v, None)

    def float_rmsprop_step(
        self,
        param: AD,
        grad: AD,
        square_avg: AD | None,
        grad_avg: AD | None,
        momentum_buffer: AD | None,
        alpha: float,
        epsilon: float,
        centered: bool,
        momentum: float,
        weight_decay: float | None,
        lr: float,
    ) -> tuple[AD, AD, AD | None, AD | None]:
        scalars = (alpha, epsilon, centered, momentum, weight_decay, lr)
        operands = (param, grad, square_avg, grad_avg, momentum_buffer)
        if any(a is not None and a.node is not None for a in operands):
            from burn.backend.ops.optim import OptimOps

            backend: Any = self  # a tracked operand: the default composition records its nodes
            composed: tuple[AD, AD, AD | None, AD | None] = OptimOps.float_rmsprop_step(
                backend, param, grad, square_avg, grad_avg, momentum_buffer, *scalars
            )
            return composed
        s_in = None if square_avg is None else square_avg.p
        a_in = None if grad_avg is None else grad_avg.p
        b_in = None if momentum_buffer is None else momentum_buffer.p
        new, s, a, b = self._in.float_rmsprop_step(param.p, grad.p, s_in, a_in, b_in, *scalars)
        return (
            AD(new, None),
            AD(s, None),
            None if a is None else AD(a, None),
            None if b is None else AD(b, None),
        )

    # Buffer reuse (burn.foundations.ownership) is for backends whose primitives are plain buffers:
    # an autodiff primitive carries its graph node and the inner arrays saved for backward, so
    # the handed-over variants are the tracked ops themselves (and the feature is not declared).
    float_add_owned = float_add
    float_sub_owned = float_sub
    float_mul_owned = float_mul
    float_div_owned = float_div
    float_add_scalar_owned = float_add_scalar
    float_sub_scalar_owned = float_sub_scalar
    float_mul_scalar_owned = float_mul_scalar
    float_div_scalar_owned = float_div_scalar
    float_exp_owned = float_exp
    float_log_owned = float_log
    float_sqrt_owned = float_sqrt
    float_neg_owned = float_neg
    float_tanh_owned = float_tanh
