"""Reductions: full reductions give shape ``(1,)``; ``*_dim`` reductions keep the reduced dim."""

from __future__ import annotations

from typing import TYPE_CHECKING, Never

from burn.foundations.kind import Bool, Float, Int
from burn.tensor import autocast as _amp
from burn.tensor._base import wrap
from burn.tensor._errors import kind_error
from burn.tensor._hints import dim_given
from burn.tensor.tensor_ops_compare import CompareOps

if TYPE_CHECKING:
    from burn.tensor.tensor import Tensor

_NUMERIC = "a Float or Int tensor"
_BOOL_HINT = "convert with .int() first (e.g. mask.int().sum() counts true values)"


class ReduceOps(CompareOps):
    """Reduction ops (mixin of `burn.Tensor`)."""

    __slots__ = ()

    # -- full reductions ----------------------------------------------------------------------
    def sum(self, *torch_dim: Never, **torch_kwargs: Never) -> Tensor:
        """Sum of all elements, shape ``(1,)``. (PyTorch's ``x.sum(1)`` is `sum_dim`: a dim given
        here raises a TypeError that says so.)

        Example:
            >>> Tensor.from_data([[1, 2], [3, 4]]).sum().tolist()  # doctest: +SKIP
            [10]
        """
        if torch_dim or torch_kwargs:
            dim_given("sum", torch_dim, torch_kwargs)
        if _amp.active:
            self = _amp.full_precision("sum", self)  # noqa: PLW0642
        k = self._k
        if k is Float:
            return wrap(self._b.float_sum(self._p), self._b, Float)
        if k is Int:
            return wrap(self._b.int_sum(self._p), self._b, Int)
        raise kind_error("sum", self, _NUMERIC, _BOOL_HINT)

    def mean(self, *torch_dim: Never, **torch_kwargs: Never) -> Tensor:
        """Mean of all elements, shape ``(1,)`` (Int: floor of the mean, as Burn). The mean of
        an empty Float tensor is NaN; of an empty Int tensor, an error (no int is right).
        (PyTorch's ``x.mean(1)`` is `mean_dim`: a dim given here raises a TypeError that says so.)"""
        if torch_dim or torch_kwargs:
            dim_given("mean", torch_dim, torch_kwargs)
        if _amp.active:
            self = _amp.full_precision("mean", self)  # noqa: PLW0642
        k = self._k
        if k is Float:
            return wrap(self._b.float_mean(self._p), self._b, Float)
        if k is Int:
            if 0 in self.shape:
                raise ValueError(f"mean: an empty Int tensor (shape {self.shape}) has no mean")
            return wrap(self._b.int_mean(self._p), self._b, Int)
        raise kind_error("mean", self, _NUMERIC, _BOOL_HINT)

    def prod(self, *torch_dim: Never, **torch_kwargs: Never) -> Tensor:
        """Product of all elements, shape ``(1,)``. (PyTorch's ``x.prod(1)`` is `prod_dim`.)"""
        if torch_dim or torch_kwargs:
            dim_given("prod", torch_dim, torch_kwargs)
        if _amp.active:
            self = _amp.full_precision("prod", self)  # noqa: PLW0642
        k = self._k
        if k is Float:
            return wrap(self._b.float_prod(self._p), self._b, Float)
        if k is Int:
            return wrap(self._b.int_prod(self._p), self._b, Int)
        raise kind_error("prod", self, _NUMERIC, _BOOL_HINT)

    def max(self, *torch_dim: Never, **torch_kwargs: Never) -> Tensor:
        """Largest element, shape ``(1,)``. (PyTorch's ``x.max(dim=1)`` is `max_dim_with_indices`,
        or `max_dim` for the values alone: a dim given here raises a TypeError that says so.)

        Example:
            >>> Tensor.from_data([[1, 5], [3, 4]]).max().tolist()  # doctest: +SKIP
            [5]
        """
        if torch_dim or torch_kwargs:
            dim_given("max", torch_dim, torch_kwargs)
        k = self._k
        if k is Float:
            return wrap(self._b.float_max(self._p), self._b, Float)
        if k is Int:
            return wrap(self._b.int_max(self._p), self._b, Int)
        raise kind_error("max", self, _NUMERIC, "use any() for Bool tensors")

    def min(self, *torch_dim: Never, **torch_kwargs: Never) -> Tensor:
        """Smallest element, shape ``(1,)``. (PyTorch's ``x.min(dim=1)`` is `min_dim_with_indices`,
        or `min_dim` for the values alone.)"""
        if torch_dim or torch_kwargs:
            dim_given("min", torch_dim, torch_kwargs)
        k = self._k
        if k is Float:
            return wrap(self._b.float_min(self._p), self._b, Float)
        if k is Int:
            return wrap(self._b.int_min(self._p), self._b, Int)
        raise kind_error("min", self, _NUMERIC, "use all() for Bool tensors")

    # -- reductions along one dim (kept with size 1) ------------------------------------------
    def sum_dim(self, dim: int) -> Tensor:
        """Sum along `dim`, which is kept with size 1.

        Example:
            >>> Tensor.from_data([[1, 2], [3, 4]]).sum_dim(-1).tolist()  # doctest: +SKIP
            [[3], [7]]
        """
        if _amp.active:
            self = _amp.full_precision("sum_dim", self)  # noqa: PLW0642
        k = self._k
        if k is Float:
            return wrap(self._b.float_sum_dim(self._p, self._dim(dim, "sum_dim")), self._b, Float)
        if k is Int:
            return wrap(self._b.int_sum_dim(self._p, self._dim(dim, "sum_dim")), self._b, Int)
        raise kind_error("sum_dim", self, _NUMERIC, _BOOL_HINT)

    def mean_dim(self, dim: int) -> Tensor:
        """Mean along `dim` (kept with size 1); NaN where `dim` is empty (Float), an error for
        Int (see `mean`)."""
        if _amp.active:
            self = _amp.full_precision("mean_dim", self)  # noqa: PLW0642
        k = self._k
        if k is Float:
            return wrap(self._b.float_mean_dim(self._p, self._dim(dim, "mean_dim")), self._b, Float)
        if k is Int:
            d = self._dim(dim, "mean_dim")
            shape = self.shape
            if shape[d] == 0 and 0 not in shape[:d] + shape[d + 1 :]:
                raise ValueError(f"mean_dim: dim {dim} of the Int tensor of shape {shape} is empty: no mean")
            return wrap(self._b.int_mean_dim(self._p, d), self._b, Int)
        raise kind_error("mean_dim", self, _NUMERIC, _BOOL_HINT)

    def prod_dim(self, dim: int) -> Tensor:
        """Product along `dim` (kept with size 1)."""
        if _amp.active:
            self = _amp.full_precision("prod_dim", self)  # noqa: PLW0642
        k = self._k
        if k is Float:
            return wrap(self._b.float_prod_dim(self._p, self._dim(dim, "prod_dim")), self._b, Float)
        if k is Int:
            return wrap(self._b.int_prod_dim(self._p, self._dim(dim, "prod_dim")), self._b, Int)
        raise kind_error("prod_dim", self, _NUMERIC, _BOOL_HINT)

    def max_dim(self, dim: int) -> Tensor:
        """Largest values along `dim` (kept with size 1)."""
        k = self._k
        if k is Float:
            return wrap(self._b.float_max_dim(self._p, self._dim(dim, "max_dim")), self._b, Float)
        if k is Int:
            return wrap(self._b.int_max_dim(self._p, self._dim(dim, "max_dim")), self._b, Int)
        raise kind_error("max_dim", self, _NUMERIC, "use any_dim() for Bool tensors")

    def min_dim(self, dim: int) -> Tensor:
        """Smallest values along `dim` (kept with size 1)."""
        k = self._k
        if k is Float:
            return wrap(self._b.float_min_dim(self._p, self._dim(dim, "min_dim")), self._b, Float)
        if k is Int:
            return wrap(self._b.int_min_dim(self._p, self._dim(dim, "min_dim")), self._b, Int)
        raise kind_error("min_dim", self, _NUMERIC, "use all_dim() for Bool tensors")

    def max_dim_with_indices(self, dim: int) -> tuple[Tensor, Tensor]:
        """``(values, indices)`` of the largest values along `dim` (first one on ties)."""
        k = self._k
        b = self._b
        if k is Float:
            values, indices = b.float_max_dim_with_indices(self._p, self._dim(dim, "max_dim_with_indices"))
        elif k is Int:
            values, indices = b.int_max_dim_with_indices(self._p, self._dim(dim, "max_dim_with_indices"))
        else:
            raise kind_error("max_dim_with_indices", self, _NUMERIC)
        return wrap(values, b, k), wrap(indices, b, Int)

    def min_dim_with_indices(self, dim: int) -> tuple[Tensor, Tensor]:
        """``(values, indices)`` of the smallest values along `dim` (first one on ties)."""
        k = self._k
        b = self._b
        if k is Float:
            values, indices = b.float_min_dim_with_indices(self._p, self._dim(dim, "min_dim_with_indices"))
        elif k is Int:
            values, indices = b.int_min_dim_with_indices(self._p, self._dim(dim, "min_dim_with_indices"))
        else:
            raise kind_error("min_dim_with_indices", self, _NUMERIC)
        return wrap(values, b, k), wrap(indices, b, Int)

    def argmax(self, dim: int) -> Tensor:
        """Int indices of the first maximum along `dim` (kept with size 1)."""
        k = self._k
        if k is Float:
            return wrap(self._b.float_argmax(self._p, self._dim(dim, "argmax")), self._b, Int)
        if k is Int:
            return wrap(self._b.int_argmax(self._p, self._dim(dim, "argmax")), self._b, Int)
        raise kind_error("argmax", self, _NUMERIC, _BOOL_HINT)

    def argmin(self, dim: int) -> Tensor:
        """Int indices of the first minimum along `dim` (kept with size 1)."""
        k = self._k
        if k is Float:
            return wrap(self._b.float_argmin(self._p, self._dim(dim, "argmin")), self._b, Int)
        if k is Int:
            return wrap(self._b.int_argmin(self._p, self._dim(dim, "argmin")), self._b, Int)
        raise kind_error("argmin", self, _NUMERIC, _BOOL_HINT)

    def cumsum(self, dim: int) -> Tensor:
        """Cumulative sum along `dim` (same shape)."""
        if _amp.active:
            self = _amp.full_precision("cumsum", self)  # noqa: PLW0642
        k = self._k
        if k is Float:
            return wrap(self._b.float_cumsum(self._p, self._dim(dim, "cumsum")), self._b, Float)
        if k is Int:
            return wrap(self._b.int_cumsum(self._p, self._dim(dim, "cumsum")), self._b, Int)
        raise kind_error("cumsum", self, _NUMERIC, _BOOL_HINT)

    def var(self, dim: int) -> Tensor:
        """Unbiased variance along `dim` (divides by ``n - 1``; kept with size 1). Float only."""
        return self._var(dim, "var", 1)

    def var_bias(self, dim: int) -> Tensor:
        """Biased (population) variance along `dim` (divides by ``n``; kept with size 1)."""
        return self._var(dim, "var_bias", 0)

    def _var(self, dim: int, op: str, correction: int) -> Tensor:
        if self._k is not Float:
            raise kind_error(op, self, "a Float tensor", "convert with .float() first")
        if _amp.active:
            self = _amp.full_precision("var", self)  # noqa: PLW0642
        d = self._dim(dim, op)
        # Composed of tensor ops (not backend primitives) so autodiff backends differentiate it.
        centered = self - self.mean_dim(d)
        return (centered * centered).sum_dim(d) / (self.shape[d] - correction)

    # -- logical reductions -------------------------------------------------------------------
    def _truth(self) -> Tensor:
        """Bool tensor of nonzero elements (the tensor itself when Bool)."""
        if self._k is Bool:
            return self  # type: ignore[return-value]
        return self.not_equal(0)

    def any(self) -> Tensor:
        """Bool ``(1,)``: whether any element is true (nonzero, for Float/Int tensors)."""
        t = self._truth()
        return wrap(self._b.bool_any(t._p), self._b, Bool)

    def all(self) -> Tensor:
        """Bool ``(1,)``: whether every element is true (nonzero, for Float/Int tensors)."""
        t = self._truth()
        return wrap(self._b.bool_all(t._p), self._b, Bool)

    def any_dim(self, dim: int) -> Tensor:
        """Bool: whether any element along `dim` is true (kept with size 1)."""
        t = self._truth()
        return wrap(self._b.bool_any_dim(t._p, self._dim(dim, "any_dim")), self._b, Bool)

    def all_dim(self, dim: int) -> Tensor:
        """Bool: whether every element along `dim` is true (kept with size 1)."""
        t = self._truth()
        return wrap(self._b.bool_all_dim(t._p, self._dim(dim, "all_dim")), self._b, Bool)
