"""Indexing (gather, scatter, select, masks, nonzero), `__getitem__`, and sorting."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from burn.errors import KindError, ShapeError
from burn.foundations.data import TensorData
from burn.foundations.kind import Bool, Float, Int
from burn.tensor._base import TensorBase, wrap
from burn.tensor._errors import describe, expect_same, kind_error, note_failure
from burn.tensor._indexing import plan_getitem
from burn.tensor._scalars import scalar_operand
from burn.tensor.tensor_ops_shape import ShapeOps

if TYPE_CHECKING:
    from burn.tensor.tensor import Tensor

_NUMERIC = "a Float or Int tensor"


class IndexOps(ShapeOps):
    """Indexing and sorting ops (mixin of `burn.Tensor`)."""

    __slots__ = ()

    def _index_tensor(self, op: str, indices: Any) -> Tensor:
        """`indices` as an Int tensor of this backend (Python lists are uploaded)."""
        if isinstance(indices, TensorBase):
            expect_same(op, self, indices, Int, "indices")
            return indices  # type: ignore[return-value]
        array = np.asarray(indices)
        if array.size == 0:
            array = array.astype(np.int64)
        if array.dtype.kind not in "iu":
            raise TypeError(f"{op}: indices must be an Int tensor or a list of ints, got {indices!r}")
        b = self._b
        data = TensorData(array, b.int_dtype)
        return wrap(b.int_from_data(data, self.device), b, Int)

    # -- gather / scatter ---------------------------------------------------------------------
    def gather(self, dim: int, indices: Any) -> Tensor:
        """``out[..., i, ...] = self[..., indices[..., i, ...], ...]`` along `dim`; `indices`
        is an Int tensor of the same rank.

        Example:
            >>> t = Tensor.from_data([[1.0, 2.0], [3.0, 4.0]])  # doctest: +SKIP
            >>> t.gather(1, Tensor.from_data([[1], [0]])).tolist()  # doctest: +SKIP
            [[2.0], [3.0]]
        """
        idx = self._index_tensor("gather", indices)
        d = self._dim(dim, "gather")
        if len(idx.shape) != len(self.shape):
            raise ShapeError(
                f"gather: indices of shape {idx.shape} must have the rank of the tensor {self.shape}"
            )
        try:
            p = self._kind_op("gather")(d, self._p, idx._p)
        except Exception as exc:
            raise note_failure(exc, "gather", self, idx)  # noqa: B904
        return wrap(p, self._b, self._k)

    def scatter(self, dim: int, indices: Any, values: Tensor) -> Tensor:
        """`self` plus `values` summed into the positions `indices` names along `dim` (Burn's
        scatter adds; `scatter_add` is an alias; Bool tensors OR-accumulate, as Burn's).
        `indices` and `values` have the same shape."""
        idx = self._index_tensor("scatter", indices)
        expect_same("scatter", self, values, self._k, "values")
        d = self._dim(dim, "scatter")
        if idx.shape != values.shape or len(idx.shape) != len(self.shape):
            raise ShapeError(
                f"scatter: indices {idx.shape} and values {values.shape} must have one shape, of the "
                f"rank of the tensor {self.shape}"
            )
        try:
            p = self._kind_op("scatter_add")(d, self._p, idx._p, values._p)
        except Exception as exc:
            raise note_failure(exc, "scatter", self, idx, values)  # noqa: B904
        return wrap(p, self._b, self._k)

    scatter_add = scatter

    def select(self, dim: int, indices: Any) -> Tensor:
        """Rows `indices` (a 1-D Int tensor or list of ints, repeats allowed) of `dim`, in order.

        Example:
            >>> Tensor.arange(5).select(0, [4, 0]).tolist()  # doctest: +SKIP
            [4, 0]
        """
        idx = self._index_tensor("select", indices)
        d = self._dim(dim, "select")
        if len(idx.shape) != 1:
            raise ShapeError(f"select: indices must be 1-D, got shape {idx.shape}")
        try:
            p = self._kind_op("select")(self._p, d, idx._p)
        except Exception as exc:
            raise note_failure(exc, "select", self, idx)  # noqa: B904
        return wrap(p, self._b, self._k)

    def select_add(self, dim: int, indices: Any, values: Tensor) -> Tensor:
        """`self` with `values` added at rows `indices` of `dim` (repeats accumulate; Bool
        tensors OR-accumulate, as Burn's); `select_assign` also has an ``"assign"`` mode."""
        idx = self._index_tensor("select_add", indices)
        expect_same("select_add", self, values, self._k, "values")
        shape = self.shape
        d = self._dim(dim, "select_add")
        expected = (*shape[:d], idx.shape[0] if idx.shape else -1, *shape[d + 1 :])
        if len(idx.shape) != 1 or values.shape != expected:
            raise ShapeError(
                f"select_add: indices {idx.shape} (1-D) and values {values.shape} do not match tensor "
                f"{shape} along dim {dim} (values should have shape {expected})"
            )
        try:
            p = self._kind_op("select_add")(self._p, d, idx._p, values._p)
        except Exception as exc:
            raise note_failure(exc, "select_add", self, idx, values)  # noqa: B904
        return wrap(p, self._b, self._k)

    select_assign = select_add

    # -- masks --------------------------------------------------------------------------------
    def _mask(self, op: str, mask: Any) -> TensorBase:
        expect_same(op, self, mask, Bool, "mask")
        return mask  # type: ignore[no-any-return]

    def mask_fill(self, mask: Tensor, value: Any) -> Tensor:
        """`value` (a Python number) where `mask` is true, else `self`.

        Example:
            >>> t = Tensor.from_data([1.0, -2.0])  # doctest: +SKIP
            >>> t.mask_fill(t < 0, 0.0).tolist()  # doctest: +SKIP
            [1.0, 0.0]
        """
        m = self._mask("mask_fill", mask)
        b = self._b
        k = self._k
        if k is Bool:
            if not isinstance(value, (bool, np.bool_, int)) or value not in (0, 1):
                raise KindError(f"mask_fill: a Bool tensor needs a bool value, got {value!r}")
        else:
            s = scalar_operand("mask_fill", self, value)
        try:
            if k is Float:
                p = b.float_mask_fill(self._p, m._p, s)
            elif k is Int:
                p = b.int_mask_fill(self._p, m._p, s)
            else:
                p = b.bool_or(self._p, m._p) if value else b.bool_and(self._p, b.bool_not(m._p))
        except Exception as exc:
            raise self._mask_error("mask_fill", m, exc)  # noqa: B904
        return wrap(p, b, k)

    def mask_where(self, mask: Tensor, value: Tensor) -> Tensor:
        """`value` (a tensor of the same kind) where `mask` is true, else `self` (broadcasting)."""
        m = self._mask("mask_where", mask)
        expect_same("mask_where", self, value, self._k, "value")
        try:
            p = self._kind_op("mask_where")(self._p, m._p, value._p)
        except Exception as exc:
            raise self._mask_error("mask_where", m, exc, value)  # noqa: B904
        return wrap(p, self._b, self._k)

    def _mask_error(self, op: str, mask: TensorBase, exc: BaseException, value: Any = None) -> BaseException:
        shapes = [self.shape, mask.shape] + ([value.shape] if value is not None else [])
        try:
            np.broadcast_shapes(*shapes)
        except ValueError:
            err = ShapeError(
                f"{op}: shapes {', '.join(map(str, shapes))} (tensor, mask, value) do not broadcast"
            )
            err.__cause__ = exc
            return err
        return note_failure(exc, op, self, mask, value)

    def argwhere(self) -> Tensor:
        """Int ``[n, rank]``: the positions of the true (nonzero) elements, row-major."""
        t = self if self._k is Bool else self.not_equal(0)
        return wrap(self._b.bool_argwhere(t._p), self._b, Int)

    def nonzero(self) -> list[Tensor]:
        """One 1-D Int tensor per dim with the coordinates of the true (nonzero) elements."""
        positions = self.argwhere()
        n = positions.shape[0]
        return [positions.narrow(1, d, 1).reshape((n,)) for d in range(len(self.shape))]

    # -- __getitem__ --------------------------------------------------------------------------
    def __getitem__(self, key: Any) -> Tensor:
        """NumPy-style indexing: ints drop the dim, slices (a negative step flips), None adds a
        dim, ``...`` fills, and one 1-D list/Int tensor selects rows of its dim, which stays in
        place (as in PyTorch; NumPy moves it first when an int and a slice separate them).

        Example:
            >>> t = Tensor.arange(6).reshape((2, 3))  # doctest: +SKIP
            >>> t[1, ::-1].tolist(), t[:, [2, 0]].tolist(), t[None, 0].shape  # doctest: +SKIP
            ([5, 4, 3], [[2, 0], [5, 3]], (1, 3))
        """
        if key.__class__ is int:  # t[i], the most common index: skip the general parser
            shape = self.shape
            if shape and -shape[0] <= key < shape[0]:
                i = key + shape[0] if key < 0 else key
                rows = (slice(i, i + 1, 1),) + tuple(slice(0, n, 1) for n in shape[1:])
                return self._slice(rows).reshape(shape[1:])
        plan = plan_getitem(key, self.shape)  # also raises the errors of the fast path above
        out: Tensor = self  # type: ignore[assignment]
        if plan.slices is not None:
            out = out._slice(plan.slices)
        if plan.flips:
            out = out.flip(plan.flips)
        selected = -1
        if plan.select is not None:
            dim, indices = plan.select
            if isinstance(indices, TensorBase):
                idx = self._index_tensor("__getitem__", indices)
                if len(idx.shape) != 1:
                    raise TypeError(f"an index tensor must be 1-D, got shape {idx.shape} ({describe(idx)})")
                n = out.shape[dim]
                idx = idx.mask_where(idx < 0, idx + n)  # negative indices count from the end
            else:
                idx = self._index_tensor("__getitem__", indices)
            out = out.select(dim, idx)
            selected = idx.shape[0]
        if plan.out_shape is not None:
            out = out.reshape(tuple(selected if s == -1 else s for s in plan.out_shape))
        return out

    # -- sorting ------------------------------------------------------------------------------
    def _sort_dim(self, op: str, dim: int) -> int:
        if self._k is Bool:
            raise kind_error(op, self, _NUMERIC, "convert with .int() first")
        return self._dim(dim, op)

    def sort(self, dim: int = -1, descending: bool = False) -> Tensor:
        """Values sorted along `dim` (stable; NaNs last when ascending)."""
        d = self._sort_dim("sort", dim)
        return wrap(self._kind_op("sort")(self._p, d, descending), self._b, self._k)

    def sort_with_indices(self, dim: int = -1, descending: bool = False) -> tuple[Tensor, Tensor]:
        """``(values, indices)`` of a stable sort along `dim`."""
        d = self._sort_dim("sort_with_indices", dim)
        values, indices = self._kind_op("sort_with_indices")(self._p, d, descending)
        return wrap(values, self._b, self._k), wrap(indices, self._b, Int)

    def argsort(self, dim: int = -1, descending: bool = False) -> Tensor:
        """Int indices that sort `self` along `dim` (stable)."""
        d = self._sort_dim("argsort", dim)
        return wrap(self._kind_op("argsort")(self._p, d, descending), self._b, Int)

    def _topk_check(self, op: str, k: int, dim: int) -> int:
        d = self._sort_dim(op, dim)
        n = self.shape[d]
        if not 0 <= k <= n:
            raise ShapeError(f"{op}: k={k} is out of range for dim {dim} of size {n} (shape {self.shape})")
        return d

    def topk(self, k: int, dim: int = -1) -> Tensor:
        """The `k` largest values along `dim`, largest first."""
        d = self._topk_check("topk", k, dim)
        return self.sort(d, descending=True).narrow(d, 0, k)

    def topk_with_indices(self, k: int, dim: int = -1) -> tuple[Tensor, Tensor]:
        """``(values, indices)`` of the `k` largest values along `dim`, largest first."""
        d = self._topk_check("topk_with_indices", k, dim)
        values, indices = self.sort_with_indices(d, descending=True)
        return values.narrow(d, 0, k), indices.narrow(d, 0, k)
