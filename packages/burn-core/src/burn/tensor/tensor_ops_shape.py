"""Shape ops: reshape, permutations, expand, (un)squeeze, slicing, splitting, repeating.

Every kind has these ops in the contract (``float_reshape``, ``int_reshape``, ``bool_reshape``...).
The hot ones (reshape, swap_dims, permute, slice) dispatch with identity checks on the kind; the
others go through `_kind_op`, a `getattr` on the kind's prefix, which is fine off the hot path.
"""

from __future__ import annotations

import builtins
import math
import operator
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Never

from burn.errors import ShapeError
from burn.foundations.kind import Bool, Float, Int
from burn.tensor._base import TensorBase, wrap
from burn.tensor._errors import expect_same, note_failure
from burn.tensor._hints import dim_given
from burn.tensor._indexing import is_full, normalize_ranges, region_shape
from burn.tensor._scalars import scalar_operand
from burn.tensor.tensor_ops_reduce import ReduceOps

if TYPE_CHECKING:
    from burn.tensor.tensor import Tensor


def _as_shape(op: str, shape: Any) -> tuple[int, ...]:
    if shape.__class__ is tuple:
        return shape  # type: ignore[no-any-return]
    if isinstance(shape, int):
        return (shape,)
    try:
        return tuple(operator.index(s) for s in shape)
    except TypeError:
        raise TypeError(f"{op}: a shape must be a sequence of ints, got {shape!r}") from None


class ShapeOps(ReduceOps):
    """Shape ops (mixin of `burn.Tensor`)."""

    __slots__ = ()

    def _kind_op(self, name: str) -> Any:
        """The backend's op `name` for this tensor's kind (``float_<name>``...), bound."""
        return getattr(self._b, self._k.prefix + name)

    # -- reshape and permutations -------------------------------------------------------------
    def reshape(self, shape: Sequence[int] | int, *more: int) -> Tensor:
        """The same elements in row-major order with another shape; one entry may be -1, and
        (Burn's rule, for a tensor with elements) a 0 keeps the size of the dim at that
        position. In an empty tensor, 0 is a size-0 dim, as in NumPy. The sizes may also be
        given one by one, as in PyTorch: ``x.reshape(2, -1)`` is ``x.reshape((2, -1))``.

        Example:
            >>> Tensor.arange(6).reshape((2, -1)).shape  # doctest: +SKIP
            (2, 3)
            >>> Tensor.arange(6).reshape(3, 2).shape  # doctest: +SKIP
            (3, 2)
            >>> Tensor.zeros((2, 6)).reshape((0, 2, -1)).shape  # doctest: +SKIP
            (2, 2, 3)

        Raises:
            ShapeError: the element counts differ or the shape is malformed.
        """
        if more:
            shape = _as_shape("reshape", (shape, *more))  # PyTorch's varargs: the same shape
        elif shape.__class__ is not tuple:
            shape = _as_shape("reshape", shape)
        b = self._b
        k = self._k
        try:
            if k is Float:
                p = b.float_reshape(self._p, shape)
            elif k is Int:
                p = b.int_reshape(self._p, shape)
            else:
                p = b.bool_reshape(self._p, shape)
        except Exception as exc:
            # A 0 in the target never fits a tensor with elements: it means "keep this dim"
            # (Burn). Resolved here, off the hot path, only once the plain reshape has failed.
            kept = self._keep_zeros(shape)  # type: ignore[arg-type]
            if kept is None:
                raise self._reshape_error(shape, exc)  # type: ignore[arg-type]  # noqa: B904
            return self.reshape(kept)
        return wrap(p, b, k)

    def _keep_zeros(self, shape: tuple[int, ...]) -> tuple[int, ...] | None:
        """`shape` with each 0 replaced by the size of that dim of `self`, when `self` has
        elements and `shape` has a 0 (None otherwise)."""
        old = self.shape
        if 0 not in shape or 0 in old:
            return None
        if any(i >= len(old) for i, s in enumerate(shape) if s == 0):
            raise ShapeError(
                f"reshape: a 0 in {shape} keeps the size of that dim, but shape {old} has no dim "
                f"{max(i for i, s in enumerate(shape) if s == 0)}"
            )
        return tuple(old[i] if s == 0 else s for i, s in enumerate(shape))

    def _reshape_error(self, shape: tuple[int, ...], exc: BaseException) -> BaseException:
        old = self.shape
        n = math.prod(old)
        unknown = sum(1 for s in shape if s == -1)
        if unknown > 1 or any(s < -1 for s in shape):
            msg = f"reshape: invalid target shape {shape} (sizes must be >= 0, with at most one -1)"
        else:
            known = math.prod(s for s in shape if s != -1)
            if (unknown and (known == 0 or n % known)) or (not unknown and known != n):
                msg = f"reshape: cannot reshape shape {old} ({n} elements) to {shape}"
            else:
                return note_failure(exc, "reshape", self)
        err = ShapeError(msg)
        err.__cause__ = exc
        return err

    def swap_dims(self, dim1: int, dim2: int) -> Tensor:
        """Swap two dims (a view where the backend allows)."""
        b = self._b
        k = self._k
        rank = len(b.float_shape(self._p) if k is Float else self.shape)
        d1 = dim1 + rank if -rank <= dim1 < 0 else dim1
        d2 = dim2 + rank if -rank <= dim2 < 0 else dim2
        if not (0 <= d1 < rank and 0 <= d2 < rank):
            self._dim(dim1, "swap_dims")  # raises the error naming the bad dim
            self._dim(dim2, "swap_dims")
        if d1 == d2:
            return self  # type: ignore[return-value]
        if k is Float:
            return wrap(b.float_swap_dims(self._p, d1, d2), b, k)
        if k is Int:
            return wrap(b.int_swap_dims(self._p, d1, d2), b, k)
        return wrap(b.bool_swap_dims(self._p, d1, d2), b, k)

    def transpose(self, *dims: int) -> Tensor:
        """Swap the last two dims (rank >= 2), as Burn's ``transpose()``; given two dims, swap
        those (PyTorch's ``x.transpose(1, 2)``, Burn's `swap_dims`).

        Example:
            >>> Tensor.zeros((2, 3, 4)).transpose().shape  # doctest: +SKIP
            (2, 4, 3)
            >>> Tensor.zeros((2, 3, 4)).transpose(0, 1).shape  # doctest: +SKIP
            (3, 2, 4)
        """
        if dims:
            if len(dims) != 2:
                raise TypeError(
                    f"transpose{dims}: give no dim (swap the last two) or two dims to swap; "
                    f"Burn's spelling for the second is x.swap_dims(dim1, dim2)"
                )
            return self.swap_dims(dims[0], dims[1])
        rank = len(self.shape)
        if rank < 2:
            raise ShapeError(f"transpose: needs rank >= 2, got shape {self.shape}")
        return self.swap_dims(rank - 2, rank - 1)

    def permute(self, axes: Sequence[int] | int, *more: int) -> Tensor:
        """Reorder the dims: dim ``i`` of the result is dim ``axes[i]`` of `self`. The dims may
        also be given one by one, as in PyTorch: ``x.permute(0, 2, 1)``.

        Example:
            >>> Tensor.zeros((2, 3, 4)).permute((0, 2, 1)).shape  # doctest: +SKIP
            (2, 4, 3)
            >>> Tensor.zeros((2, 3, 4)).permute(2, 0, 1).shape  # doctest: +SKIP
            (4, 2, 3)
        """
        if more or isinstance(axes, int):
            axes = (axes, *more)  # type: ignore[arg-type]  # PyTorch's varargs
        shape = self.shape
        rank = len(shape)
        norm = tuple(a + rank if -rank <= a < 0 else a for a in axes)
        if sorted(norm) != list(range(rank)):
            raise ShapeError(f"permute: {tuple(axes)} is not a permutation of the dims of shape {shape}")
        b = self._b
        k = self._k
        if k is Float:
            return wrap(b.float_permute(self._p, norm), b, k)
        if k is Int:
            return wrap(b.int_permute(self._p, norm), b, k)
        return wrap(b.bool_permute(self._p, norm), b, k)

    def flip(self, axes: Sequence[int] | int) -> Tensor:
        """Reverse the order of elements along each dim in `axes`."""
        dims = self._dims(axes, "flip")
        if not dims:
            return self  # type: ignore[return-value]
        return wrap(self._kind_op("flip")(self._p, dims), self._b, self._k)

    def expand(self, shape: Sequence[int]) -> Tensor:
        """Broadcast to `shape` (may add leading dims); -1 keeps an existing dim's size.

        Raises:
            ShapeError: a dim of size other than 1 would change, or the rank would shrink.
        """
        old = self.shape
        new = _as_shape("expand", shape)
        offset = len(new) - len(old)
        if offset < 0:
            raise ShapeError(f"expand: cannot expand shape {old} to the lower-rank shape {new}")
        resolved = []
        for i, size in enumerate(new):
            current = old[i - offset] if i >= offset else None
            if size == -1:
                if current is None:
                    raise ShapeError(f"expand: -1 at position {i} of {new} names no existing dim of {old}")
                size = current
            if size < 0 or (current is not None and current != 1 and current != size):
                raise ShapeError(f"expand: cannot expand shape {old} to {new}")
            resolved.append(size)
        target = tuple(resolved)
        if target == old:
            return self  # type: ignore[return-value]
        return wrap(self._kind_op("expand")(self._p, target), self._b, self._k)

    # -- adding and removing dims -------------------------------------------------------------
    def squeeze(self, dim: int) -> Tensor:
        """Remove `dim`, which must have size 1."""
        shape = self.shape
        d = self._dim(dim, "squeeze")
        if shape[d] != 1:
            raise ShapeError(f"squeeze: dim {dim} of shape {shape} has size {shape[d]}, not 1")
        return self.reshape(shape[:d] + shape[d + 1 :])

    def squeeze_dims(self, dims: Sequence[int]) -> Tensor:
        """Remove several size-1 dims; an empty `dims` removes every size-1 dim."""
        shape = self.shape
        if not dims:
            return self.reshape(tuple(n for n in shape if n != 1))
        drop = set(self._dims(dims, "squeeze_dims"))
        bad = [d for d in drop if shape[d] != 1]
        if bad:
            raise ShapeError(f"squeeze_dims: dims {sorted(bad)} of shape {shape} do not have size 1")
        return self.reshape(tuple(n for d, n in enumerate(shape) if d not in drop))

    def unsqueeze(self, *torch_dim: Never) -> Tensor:
        """Add a leading dim of size 1 (PyTorch's ``x.unsqueeze(d)`` is `unsqueeze_dim`: a dim given
        here raises a TypeError that says so)."""
        if torch_dim:
            dim_given("unsqueeze", torch_dim, {})
        return self.reshape((1, *self.shape))

    def unsqueeze_dim(self, dim: int) -> Tensor:
        """Insert a dim of size 1 at position `dim` (``-1`` appends one)."""
        shape = self.shape
        rank = len(shape)
        if not -rank - 1 <= dim <= rank:
            raise ShapeError(f"unsqueeze_dim: dim {dim} is out of range for shape {shape} (rank {rank})")
        d = dim + rank + 1 if dim < 0 else dim
        return self.reshape((*shape[:d], 1, *shape[d:]))

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor:
        """Merge dims ``start_dim..=end_dim`` into one (a rank-0 tensor becomes shape ``(1,)``)."""
        shape = self.shape
        if not shape:
            return self.reshape((1,))
        s = self._dim(start_dim, "flatten")
        e = self._dim(end_dim, "flatten")
        if s > e:
            raise ShapeError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim} (shape {shape})")
        return self.reshape((*shape[:s], math.prod(shape[s : e + 1]), *shape[e + 1 :]))

    # -- slicing ------------------------------------------------------------------------------
    def slice(self, ranges: Sequence[Any]) -> Tensor:
        """The region given by one range per leading dim: a ``(start, end)`` pair, a
        ``(start, end, step)`` triple (Burn's ``s![start..end; step]``: a negative step walks the
        range from its end), a Python `slice` (Python's meaning: ``slice(None, None, -1)``
        reverses), or None (whole dim). Negative indices count from the end and out-of-range
        ends clamp, as in Python slicing. Negative steps become a positive slice and a flip.

        Example:
            >>> t = Tensor.arange(12).reshape((3, 4))  # doctest: +SKIP
            >>> t.slice([(0, 2), slice(1, None, 2)]).tolist()  # doctest: +SKIP
            [[1, 3], [5, 7]]
            >>> t.slice([None, (0, 4, -2)]).tolist()  # doctest: +SKIP
            [[3, 1], [7, 5], [11, 9]]
        """
        shape = self.shape
        slices, flips = normalize_ranges("slice", ranges, shape)
        out = self if is_full(slices, shape) else self._slice(slices)
        return out.flip(flips) if flips else out  # type: ignore[return-value]

    def _slice(self, slices: tuple[builtins.slice, ...]) -> Tensor:  # `slice` is a method here
        b = self._b
        k = self._k
        if k is Float:
            return wrap(b.float_slice(self._p, slices), b, k)
        if k is Int:
            return wrap(b.int_slice(self._p, slices), b, k)
        return wrap(b.bool_slice(self._p, slices), b, k)

    def slice_assign(self, ranges: Sequence[Any], value: Any) -> Tensor:
        """A new tensor equal to `self` with the region `ranges` (as in `slice`, negative steps
        included: the value's first element goes to the range's first position) replaced by
        `value`: a tensor of the same kind broadcastable to the region, or a Python number.

        Example:
            >>> t = Tensor.zeros((2, 3))  # doctest: +SKIP
            >>> t.slice_assign([(0, 1)], Tensor.ones((1, 3))).tolist()  # doctest: +SKIP
            [[1.0, 1.0, 1.0], [0.0, 0.0, 0.0]]
        """
        shape = self.shape
        slices, flips = normalize_ranges("slice_assign", ranges, shape)
        region = region_shape(slices)
        if not isinstance(value, TensorBase):
            value = self._full_region(region, value)
        expect_same("slice_assign", self, value, self._k, "value")
        if value.shape != region:
            try:
                value = value.expand(region)  # type: ignore[attr-defined]
            except ShapeError:
                raise ShapeError(
                    f"slice_assign: value of shape {value.shape} does not fit the region {region} "
                    f"selected by {list(slices)} in shape {shape}"
                ) from None
        if flips:  # the region is written in ascending order: reverse the value to match
            value = value.flip(flips)  # type: ignore[attr-defined]
        try:
            p = self._kind_op("slice_assign")(self._p, slices, value._p)
        except Exception as exc:
            raise note_failure(exc, "slice_assign", self, value)  # noqa: B904
        return wrap(p, self._b, self._k)

    def _full_region(self, region: tuple[int, ...], value: Any) -> Tensor:
        b = self._b
        k = self._k
        if k is Bool:
            if not isinstance(value, (bool, int)):
                raise TypeError(f"slice_assign: a Bool tensor needs a bool value, got {value!r}")
            p = b.bool_ones(region, self.device) if value else b.bool_zeros(region, self.device)
            return wrap(p, b, k)
        s = scalar_operand("slice_assign", self, value)
        if k is Float:
            return wrap(b.float_full(region, s, self.device, self.dtype), b, k)
        return wrap(b.int_full(region, s, self.device, self.dtype), b, k)

    def narrow(self, dim: int, start: int, length: int) -> Tensor:
        """Elements ``start .. start + length`` of `dim` (negative `start` counts from the end)."""
        shape = self.shape
        d = self._dim(dim, "narrow")
        n = shape[d]
        begin = start + n if start < 0 else start
        if begin < 0 or length < 0 or begin + length > n:
            raise ShapeError(
                f"narrow: start {start} and length {length} do not fit dim {dim} of shape {shape}"
            )
        slices = tuple(
            slice(begin, begin + length, 1) if i == d else slice(0, m, 1) for i, m in enumerate(shape)
        )
        return self._slice(slices) if begin or length != n else self  # type: ignore[return-value]

    def _split_at(self, d: int, sizes: Sequence[int]) -> list[Tensor]:
        out = []
        begin = 0
        for size in sizes:
            out.append(self.narrow(d, begin, size))
            begin += size
        return out

    def chunk(self, chunks: int, dim: int) -> list[Tensor]:
        """Split `dim` into at most `chunks` pieces of ``ceil(n / chunks)`` elements (the last
        one smaller), as PyTorch and Burn do; there may be fewer than `chunks` pieces."""
        if chunks < 1:
            raise ValueError(f"chunk: chunks must be >= 1, got {chunks}")
        d = self._dim(dim, "chunk")
        n = self.shape[d]
        if n == 0:
            return [self] * chunks  # type: ignore[list-item]
        size = -(-n // chunks)
        return self._split_at(d, [min(size, n - start) for start in range(0, n, size)])

    def split(self, split_size: int, dim: int) -> list[Tensor]:
        """Split `dim` into pieces of `split_size` elements (the last one may be smaller).

        An empty `dim` gives one empty piece (PyTorch's answer; Burn's is no piece), and there
        a `split_size` of 0 is accepted, as Burn does.

        Example:
            >>> [p.tolist() for p in Tensor.arange(5).split(2, 0)]  # doctest: +SKIP
            [[0, 1], [2, 3], [4]]

        Raises:
            ValueError: `split_size` < 1 on a non-empty dim.
        """
        d = self._dim(dim, "split")
        n = self.shape[d]
        if split_size < 0 or (split_size == 0 and n != 0):
            raise ValueError(
                f"split: split_size must be >= 1 (0 only for an empty dim), got {split_size} "
                f"for dim {dim} of size {n}"
            )
        if n == 0:
            return [self]  # type: ignore[list-item]
        return self._split_at(d, [min(split_size, n - start) for start in range(0, n, split_size)])

    def split_with_sizes(self, sizes: Sequence[int], dim: int) -> list[Tensor]:
        """Split `dim` into pieces of the given sizes, which must add up to its size. A size of
        0 gives an empty piece in its place, so piece ``i`` always has ``sizes[i]`` elements
        (PyTorch's and ONNX ``Split``'s answer; Burn skips zero sizes).

        Example:
            >>> [p.tolist() for p in Tensor.arange(3).split_with_sizes([0, 1, 2], 0)]  # doctest: +SKIP
            [[], [0], [1, 2]]

        Raises:
            ShapeError: a negative size, or sizes that do not add up to the dim's size.
        """
        shape = self.shape
        d = self._dim(dim, "split_with_sizes")
        if any(s < 0 for s in sizes) or sum(sizes) != shape[d]:
            raise ShapeError(
                f"split_with_sizes: sizes {list(sizes)} must be >= 0 and add up to size {shape[d]} of "
                f"dim {dim} (shape {shape})"
            )
        return self._split_at(d, sizes)

    # -- repeating ----------------------------------------------------------------------------
    def repeat_dim(self, dim: int, times: int) -> Tensor:
        """Tile `dim` `times` times (``[a, b]`` -> ``[a, b, a, b]``)."""
        d = self._dim(dim, "repeat_dim")
        if times < 0:
            raise ValueError(f"repeat_dim: times must be >= 0, got {times}")
        if times == 1:
            return self  # type: ignore[return-value]
        return wrap(self._kind_op("repeat_dim")(self._p, d, times), self._b, self._k)

    def repeat(self, sizes: Sequence[int]) -> Tensor:
        """Tile dim ``i`` ``sizes[i]`` times, keeping the rank (Burn's rule): missing trailing
        sizes count as 1, and sizes past the rank must be 1. PyTorch's ``repeat`` adds leading
        dims for extra sizes; here add them first with `unsqueeze_dims`.

        Example:
            >>> Tensor.from_data([[1, 2]]).repeat((2, 1)).tolist()  # doctest: +SKIP
            [[1, 2], [1, 2]]

        Raises:
            ShapeError: a size past the rank is not 1.
        """
        shape = self.shape
        sizes = tuple(sizes)
        if any(s != 1 for s in sizes[len(shape) :]):
            raise ShapeError(
                f"repeat: {len(sizes)} sizes {list(sizes)} for a tensor of rank {len(shape)} (shape "
                f"{shape}); sizes past the rank must be 1 (the rank is kept, as in Burn): add dims "
                "first with unsqueeze_dims"
            )
        out: Tensor = self  # type: ignore[assignment]
        for d, times in enumerate(sizes[: len(shape)]):
            if times != 1:
                out = out.repeat_dim(d, times)
        return out
