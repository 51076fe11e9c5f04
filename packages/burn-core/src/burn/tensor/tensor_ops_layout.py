"""Shape and indexing methods of `burn.Tensor` beyond the basics: movedim, roll, take,
mask_select, gather_nd/scatter_nd, the assign mode of scatter/select_assign, unfold, pad, one_hot,
tril/triu and their masks, eye, cartesian_grid, cross, dot.

Ops with a contract op of their own (`unfold`, `gather_nd`, `scatter_nd`, assign-mode `scatter`
and `select_assign`, `cross`) call it; the others are compositions of existing methods, so they
work (and differentiate) on every backend.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from burn.backend.ops.kinds import SCATTER_MODES
from burn.errors import ShapeError
from burn.foundations.kind import Bool, Float, Int, Kind
from burn.tensor._base import wrap
from burn.tensor._errors import expect_same, kind_error, note_failure
from burn.tensor.tensor_ops_math import MathOps

if TYPE_CHECKING:
    from burn.backend.base import Backend
    from burn.backend.device import Device
    from burn.tensor.tensor import Tensor

_NUMERIC = "a Float or Int tensor"
_PAD_MODES = ("constant", "reflect", "edge")


def _tensor_cls() -> Any:
    from burn.tensor.tensor import Tensor

    return Tensor


def _ints(op: str, what: str, values: Any) -> tuple[int, ...]:
    if isinstance(values, int):
        return (values,)
    try:
        return tuple(operator.index(v) for v in values)
    except TypeError:
        raise TypeError(f"{op}: {what} must be an int or a sequence of ints, got {values!r}") from None


def _pad_amounts(pads: Any, shape: tuple[int, ...]) -> tuple[int, ...]:
    """`pads` in either spelling as flat ``(before, after)`` ints from the last dim on."""
    items: list[Any] = list(pads) if not isinstance(pads, int) else [pads]
    if items and all(isinstance(p, (tuple, list)) for p in items):
        if any(len(p) != 2 for p in items):
            raise ShapeError(f"pad: each pair must be (before, after), got {items!r}")
        # Burn's pairs run in dim order over the last len(pads) dims: reverse into flat form
        flat = _ints("pad", "pads", [v for pair in reversed(items) for v in pair])
    else:
        flat = _ints("pad", "pads", items)
    rank = len(shape)
    if len(flat) % 2 or len(flat) // 2 > rank or any(p < 0 for p in flat):
        raise ShapeError(
            f"pad: pads {list(pads) if not isinstance(pads, int) else pads} must be non-negative "
            f"(before, after) pairs for at most {rank} dims (shape {shape})"
        )
    return flat


def _torch_pad_mode(mode: str) -> str:
    """The burn spelling of PyTorch's pad mode names burn lacks (``""`` for others)."""
    if mode == "replicate":
        return " (PyTorch's 'replicate' is burn's mode='edge')"
    if mode == "circular":
        return " (PyTorch's 'circular' has no burn mode: x.cat of slices of x does it)"
    return ""


def _check_mode(op: str, mode: str, allowed: Sequence[str]) -> None:
    if mode not in allowed:
        raise ValueError(f"{op}: unknown mode {mode!r}; expected one of {', '.join(allowed)}")


class LayoutOps(MathOps):
    """More shape and indexing methods (mixin of `burn.Tensor`)."""

    __slots__ = ()

    # -- dims ---------------------------------------------------------------------------------
    def unsqueeze_dims(self, dims: Sequence[int]) -> Tensor:
        """Insert size-1 dims at positions `dims` of the result (rank ``rank + len(dims)``),
        resolving positions as Burn does.

        A position repeated ``k`` times inserts ``k`` dims starting there (``[0, 0]`` on
        ``[5]`` gives ``[1, 1, 5]``). Negative positions count from the end of the result, and
        each further negative position counts one place further in: on ``[3, 4, 5]``,
        ``[0, -1, -1]`` gives ``[1, 3, 4, 5, 1, 1]`` (NumPy's ``expand_dims`` refuses the
        repeat). After sorting, a repeated position moves to the next free slot.

        Example:
            >>> Tensor.zeros((2, 3)).unsqueeze_dims([0, -1]).shape  # doctest: +SKIP
            (1, 2, 3, 1)
            >>> Tensor.zeros((4,)).unsqueeze_dims([-1, 0, 0]).shape  # doctest: +SKIP
            (1, 1, 4, 1)

        Raises:
            ShapeError: a position is out of range for the result's rank, before or after
                repeated positions are moved to the next slot.
        """
        shape = self.shape
        wanted = _ints("unsqueeze_dims", "dims", dims)
        rank = len(shape) + len(wanted)
        norm = []
        neg_offset = rank
        for d in wanted:
            if not -rank <= d < rank:
                raise ShapeError(
                    f"unsqueeze_dims: dim {d} is out of range for the result's rank {rank} (shape {shape})"
                )
            if d < 0:
                neg_offset -= 1  # each negative position counts from one place further in
                d += neg_offset + 1
            norm.append(d)
        norm.sort()
        for i in range(1, len(norm)):
            norm[i] = max(norm[i], norm[i - 1] + 1)  # k repeats occupy k consecutive slots
        if norm and norm[-1] >= rank:
            raise ShapeError(
                f"unsqueeze_dims: dims {list(wanted)} place a dim at {norm[-1]}, past the result's "
                f"rank {rank} (shape {shape})"
            )
        rest = iter(shape)
        slots = set(norm)
        return self.reshape(tuple(1 if i in slots else next(rest) for i in range(rank)))

    def movedim(self, source: int | Sequence[int], destination: int | Sequence[int]) -> Tensor:
        """Move dims `source` to positions `destination`; the other dims keep their order.

        Example:
            >>> Tensor.zeros((2, 3, 4)).movedim(0, -1).shape  # doctest: +SKIP
            (3, 4, 2)

        Raises:
            ShapeError: the lists differ in length, or a dim is out of range or repeated.
        """
        src = self._dims(_ints("movedim", "source", source), "movedim")
        dst = self._dims(_ints("movedim", "destination", destination), "movedim")
        if len(src) != len(dst):
            raise ShapeError(f"movedim: {len(src)} source dims but {len(dst)} destinations")
        rank = len(self.shape)
        order: list[int | None] = [None] * rank
        for s, d in zip(src, dst, strict=True):
            order[d] = s
        others = iter(d for d in range(rank) if d not in src)
        return self.permute(tuple(next(others) if o is None else o for o in order))

    def t(self) -> Tensor:
        """Swap the last two dims, as `transpose`; a tensor of rank 0 or 1 is returned as is
        (Burn's and PyTorch's ``t``)."""
        return self if len(self.shape) < 2 else self.transpose()  # type: ignore[return-value]

    def iter_dim(self, dim: int) -> Iterator[Tensor]:
        """The slices of `dim` one by one, each keeping `dim` with size 1 (Burn's `iter_dim`).

        Example:
            >>> [t.shape for t in Tensor.zeros((2, 3)).iter_dim(1)]  # doctest: +SKIP
            [(2, 1), (2, 1), (2, 1)]
        """
        d = self._dim(dim, "iter_dim")
        for i in range(self.shape[d]):
            yield self.narrow(d, i, 1)

    def empty_like(self) -> Tensor:
        """A tensor with unspecified contents and this tensor's shape, kind, dtype and device."""
        return _tensor_cls().empty(self.shape, **self._like())  # type: ignore[no-any-return, attr-defined]

    # -- rolling ------------------------------------------------------------------------------
    def roll_dim(self, shift: int, dim: int) -> Tensor:
        """Rotate the elements of `dim` by `shift` places (toward higher indices when positive;
        elements leaving the end come back at the start).

        Example:
            >>> Tensor.arange(5).roll_dim(2, 0).tolist()  # doctest: +SKIP
            [3, 4, 0, 1, 2]
        """
        return self.roll([shift], [dim])

    def roll(self, shifts: int | Sequence[int], dims: int | Sequence[int]) -> Tensor:
        """Rotate along each of `dims` by the matching entry of `shifts` (see `roll_dim`)."""
        shift_list = _ints("roll", "shifts", shifts)
        dim_list = self._dims(_ints("roll", "dims", dims), "roll")
        if len(shift_list) != len(dim_list):
            raise ShapeError(f"roll: {len(shift_list)} shifts for {len(dim_list)} dims")
        out: Tensor = self  # type: ignore[assignment]
        shape = self.shape
        for shift, d in zip(shift_list, dim_list, strict=True):
            n = shape[d]
            s = shift % n if n else 0
            if s:
                out = _tensor_cls().cat([out.narrow(d, n - s, s), out.narrow(d, 0, n - s)], d)
        return out

    # -- indexing -----------------------------------------------------------------------------
    def take(self, dim: int, indices: Any) -> Tensor:
        """Elements of `dim` picked by an Int tensor (or nested list) of any shape: the result
        replaces `dim` by the indices' dims (Burn's and NumPy's ``take`` along an axis).

        Example:
            >>> Tensor.arange(5).take(0, [[4, 0], [1, 1]]).tolist()  # doctest: +SKIP
            [[4, 0], [1, 1]]
        """
        idx = self._index_tensor("take", indices)
        d = self._dim(dim, "take")
        shape = self.shape
        picked = self.select(d, idx.reshape((-1,)) if len(idx.shape) != 1 else idx)
        return picked.reshape((*shape[:d], *idx.shape, *shape[d + 1 :]))

    def mask_select(self, mask: Tensor) -> Tensor:
        """1-D tensor of the elements where `mask` (Bool, broadcast with `self`) is true, in
        row-major order (PyTorch's ``masked_select``). Reads the mask on the host (the result's
        size depends on it).

        Example:
            >>> t = Tensor.from_data([[1.0, -2.0], [-3.0, 4.0]])  # doctest: +SKIP
            >>> t.mask_select(t > 0).tolist()  # doctest: +SKIP
            [1.0, 4.0]
        """
        m = self._mask("mask_select", mask)
        try:
            shape = tuple(np.broadcast_shapes(self.shape, m.shape))
        except ValueError:
            raise ShapeError(
                f"mask_select: tensor {self.shape} and mask {m.shape} do not broadcast"
            ) from None
        full = self.expand(shape) if self.shape != shape else self
        positions = m.expand(shape).argwhere() if m.shape != shape else m.argwhere()  # type: ignore[attr-defined]
        return full.gather_nd(positions)  # rank 0: positions [n, 0] pick the element n times

    def gather_nd(self, indices: Any) -> Tensor:
        """Elements or slices named by the last dim of `indices` (Int ``[..., K]``, ``K <=
        rank``): ``out[i...] = self[indices[i..., 0], ..., indices[i..., K-1]]``, shape
        ``indices.shape[:-1] + self.shape[K:]`` (Burn's and ONNX's ``gather_nd``).

        Example:
            >>> t = Tensor.from_data([[1, 2], [3, 4]])  # doctest: +SKIP
            >>> t.gather_nd([[1, 0], [0, 1]]).tolist(), t.gather_nd([[1]]).tolist()  # doctest: +SKIP
            ([3, 2], [[3, 4]])
        """
        idx = self._nd_indices("gather_nd", indices)
        try:
            p = self._kind_op("gather_nd")(self._p, idx._p)
        except Exception as exc:
            raise note_failure(exc, "gather_nd", self, idx)  # noqa: B904
        return wrap(p, self._b, self._k)

    def scatter_nd(self, indices: Any, values: Tensor, mode: str = "add") -> Tensor:
        """`self` with `values` combined into the elements or slices named by `indices` (as in
        `gather_nd`; `values` has shape ``indices.shape[:-1] + self.shape[K:]``).

        `mode`: ``"add"``, ``"mul"``, ``"max"``, ``"min"`` combine each update with the current
        value (repeated indices accumulate); ``"assign"`` replaces it (with repeated indices,
        the last update in row-major order wins).

        Example:
            >>> t = Tensor.zeros((3,))  # doctest: +SKIP
            >>> t.scatter_nd([[0], [2], [0]], Tensor.from_data([1.0, 2.0, 3.0])).tolist()  # doctest: +SKIP
            [4.0, 0.0, 2.0]
        """
        _check_mode("scatter_nd", mode, SCATTER_MODES)
        if self._k is Bool:
            raise kind_error("scatter_nd", self, _NUMERIC)
        idx = self._nd_indices("scatter_nd", indices)
        expect_same("scatter_nd", self, values, self._k, "values")
        shape = self.shape
        expected = (*idx.shape[:-1], *shape[idx.shape[-1] :])
        if values.shape != expected:
            raise ShapeError(
                f"scatter_nd: values of shape {values.shape} do not match indices {idx.shape} into "
                f"tensor {shape} (values should have shape {expected})"
            )
        try:
            p = self._kind_op("scatter_nd")(self._p, idx._p, values._p, mode)
        except Exception as exc:
            raise note_failure(exc, "scatter_nd", self, idx, values)  # noqa: B904
        return wrap(p, self._b, self._k)

    def _nd_indices(self, op: str, indices: Any) -> Tensor:
        idx = self._index_tensor(op, indices)
        if len(idx.shape) < 1 or idx.shape[-1] > len(self.shape):
            raise ShapeError(
                f"{op}: indices must have shape [..., K] with K <= rank {len(self.shape)}, got "
                f"{idx.shape} for a tensor of shape {self.shape}"
            )
        return idx

    def scatter(self, dim: int, indices: Any, values: Tensor, mode: str = "add") -> Tensor:
        """Along `dim`, combine `values` into the positions `indices` names (`indices` and
        `values` share a shape of the tensor's rank). `mode="add"` (the default, Burn's
        scatter) sums, OR-accumulating for Bool tensors; ``"assign"`` replaces, the last value
        winning for repeated indices.

        Example:
            >>> t = Tensor.zeros((3,))  # doctest: +SKIP
            >>> i, v = Tensor.from_data([2, 2]), Tensor.from_data([1.0, 5.0])  # doctest: +SKIP
            >>> t.scatter(0, i, v).tolist(), t.scatter(0, i, v, mode="assign").tolist()  # doctest: +SKIP
            ([0.0, 0.0, 6.0], [0.0, 0.0, 5.0])
        """
        _check_mode("scatter", mode, ("add", "assign"))
        if mode == "add":
            return super().scatter(dim, indices, values)
        idx = self._index_tensor("scatter", indices)
        expect_same("scatter", self, values, self._k, "values")
        d = self._dim(dim, "scatter")
        shape = self.shape
        if (
            idx.shape != values.shape
            or len(idx.shape) != len(shape)
            or any(i > n for j, (i, n) in enumerate(zip(idx.shape, shape, strict=True)) if j != d)
        ):
            raise ShapeError(
                f"scatter: indices {idx.shape} and values {values.shape} must have one shape, of the "
                f"rank of the tensor {shape} and no larger outside dim {dim}"
            )
        try:
            p = self._kind_op("scatter_assign")(d, self._p, idx._p, values._p)
        except Exception as exc:
            raise note_failure(exc, "scatter", self, idx, values)  # noqa: B904
        return wrap(p, self._b, self._k)

    def select_assign(self, dim: int, indices: Any, values: Tensor, mode: str = "add") -> Tensor:
        """Combine the rows of `values` into rows `indices` (1-D) of `dim`: ``"add"`` (default,
        as `select_add`; OR for Bool) accumulates repeats, ``"assign"`` replaces (last wins).

        Example:
            >>> t = Tensor.zeros((3, 2))  # doctest: +SKIP
            >>> t.select_assign(0, [2], Tensor.ones((1, 2)), mode="assign").tolist()  # doctest: +SKIP
            [[0.0, 0.0], [0.0, 0.0], [1.0, 1.0]]
        """
        _check_mode("select_assign", mode, ("add", "assign"))
        if mode == "add":
            return self.select_add(dim, indices, values)
        idx = self._index_tensor("select_assign", indices)
        expect_same("select_assign", self, values, self._k, "values")
        shape = self.shape
        d = self._dim(dim, "select_assign")
        expected = (*shape[:d], idx.shape[0] if idx.shape else -1, *shape[d + 1 :])
        if len(idx.shape) != 1 or values.shape != expected:
            raise ShapeError(
                f"select_assign: indices {idx.shape} (1-D) and values {values.shape} do not match "
                f"tensor {shape} along dim {dim} (values should have shape {expected})"
            )
        try:
            p = self._kind_op("select_assign")(self._p, d, idx._p, values._p)
        except Exception as exc:
            raise note_failure(exc, "select_assign", self, idx, values)  # noqa: B904
        return wrap(p, self._b, self._k)

    def argtopk(self, k: int, dim: int = -1) -> Tensor:
        """Int indices of the `k` largest values along `dim`, largest first (ties: lowest
        index first)."""
        d = self._topk_check("argtopk", k, dim)
        return self.argsort(d, descending=True).narrow(d, 0, k)

    # -- windows and padding ------------------------------------------------------------------
    def unfold(self, dim: int, size: int, step: int) -> Tensor:
        """Sliding windows along `dim`: `dim` becomes the number of windows ``(n - size) //
        step + 1`` and a last dim of `size` holds each window (Burn's and PyTorch's
        ``Tensor.unfold``).

        Example:
            >>> Tensor.arange(5).unfold(0, 2, 2).tolist()  # doctest: +SKIP
            [[0, 1], [2, 3]]
        """
        d = self._dim(dim, "unfold")
        if size < 1 or step < 1:
            raise ValueError(f"unfold: size and step must be >= 1, got size={size}, step={step}")
        return wrap(self._kind_op("unfold")(self._p, d, size, step), self._b, self._k)

    def pad(
        self, pads: Sequence[int] | Sequence[tuple[int, int]], value: Any = 0, mode: str = "constant"
    ) -> Tensor:
        """Pad dims with new elements, in either of two spellings.

        `pads` as flat ints holds ``(before, after)`` pairs starting from the last dim
        (``(left, right, top, bottom)`` pads the last two dims, as PyTorch's ``F.pad`` and
        Burn's 4-tuple). `pads` as a sequence of ``(before, after)`` pairs is Burn's spelling:
        the pairs are in dim order and apply to the last ``len(pads)`` dims (``[(1, 1), (2,
        2)]`` pads dim -2 by 1 and dim -1 by 2); earlier dims are left alone.

        The fill: `value` is a number (constant fill) or a `PadMode` (Burn's enum:
        ``PadMode.Constant(v)``, ``PadMode.Reflect``, ``PadMode.Edge``). `mode` is the
        keyword spelling: ``"constant"`` fills with `value`; ``"reflect"`` mirrors without
        repeating the edge (pads must be smaller than the dim); ``"edge"`` repeats the edge
        element (PyTorch's ``"replicate"``). PyTorch's ``F.pad(x, pads, "reflect")`` order,
        the mode third, works too: a `value` that names a mode while `mode` is left at
        ``"constant"`` is taken as the mode.

        Example:
            >>> Tensor.from_data([1, 2, 3]).pad((2, 1), mode="reflect").tolist()  # doctest: +SKIP
            [3, 2, 1, 2, 3, 2]
            >>> Tensor.from_data([1, 2, 3]).pad((1, 1), "edge").tolist()  # doctest: +SKIP
            [1, 1, 2, 3, 3]
            >>> Tensor.zeros((2, 3)).pad([(1, 0), (0, 2)], PadMode.Constant(5.0)).shape  # doctest: +SKIP
            (3, 5)

        Raises:
            ShapeError: more pairs than dims, a negative pad, or reflect/edge padding longer
                than the dim allows.
            TypeError: a `value` that is neither a number, a `PadMode` nor a mode name.
        """
        from burn.tensor.pad_mode import PadMode

        if isinstance(value, PadMode):
            if mode != "constant":
                raise TypeError(f"pad: give the mode once, as PadMode {value} or mode={mode!r}, not both")
            value, mode = value.value, value.kind
        elif isinstance(value, str):
            if mode == "constant" and value in _PAD_MODES:
                value, mode = 0, value  # PyTorch's positional order: pad(pads, mode)
            else:
                raise TypeError(
                    f"pad: value {value!r} is not a number; the mode is the keyword mode=, one of "
                    f"{', '.join(_PAD_MODES)}" + _torch_pad_mode(value)
                )
        if mode not in _PAD_MODES and _torch_pad_mode(mode):
            raise ValueError(f"pad: unknown mode {mode!r}" + _torch_pad_mode(mode))
        _check_mode("pad", mode, _PAD_MODES)
        shape = self.shape
        amounts = _pad_amounts(pads, shape)
        out: Tensor = self  # type: ignore[assignment]
        for j in range(len(amounts) // 2):
            d = len(shape) - 1 - j
            before, after = amounts[2 * j], amounts[2 * j + 1]
            if before or after:
                out = out._pad_dim(d, before, after, value, mode)
        return out

    def _pad_dim(self, d: int, before: int, after: int, value: Any, mode: str) -> Tensor:
        shape = self.shape
        n = shape[d]
        if mode == "constant":
            parts = []
            for size in (before, after):
                part = _tensor_cls().full(
                    (*shape[:d], size, *shape[d + 1 :]), value, **self._like()  # type: ignore[attr-defined]
                )
                parts.append(part)
            return _tensor_cls().cat([parts[0], self, parts[1]], d)  # type: ignore[no-any-return]
        if n == 0 or (mode == "reflect" and max(before, after) >= n):
            raise ShapeError(
                f"pad: {mode} padding ({before}, {after}) of dim {d} needs "
                f"{'more than ' + str(max(before, after)) if mode == 'reflect' else 'at least one'} "
                f"element(s), the dim has {n} (shape {shape})"
            )
        table = np.pad(np.arange(n), (before, after), mode="reflect" if mode == "reflect" else "edge")
        return self.select(d, table.tolist())

    # -- one-hot ------------------------------------------------------------------------------
    def one_hot(self, num_classes: int) -> Tensor:
        """A new last dim of `num_classes` with 1 at each element's class and 0 elsewhere, of
        this tensor's kind (Float class values are truncated). Checks the classes on the host.

        Example:
            >>> Tensor.from_data([0, 2]).one_hot(3).tolist()  # doctest: +SKIP
            [[1, 0, 0], [0, 0, 1]]

        Raises:
            ValueError: a class is outside ``[0, num_classes)``.
        """
        return self._one_hot("one_hot", num_classes, 1, 0, -1, negatives=False)

    def one_hot_fill(
        self, num_classes: int, on_value: float = 1.0, off_value: float = 0.0, axis: int = -1
    ) -> Tensor:
        """Like `one_hot`, with `on_value`/`off_value` and the class dim inserted at `axis` of
        the result; negative classes count from the end (``-1`` is ``num_classes - 1``), as in
        Burn and ONNX ``OneHot``.

        Example:
            >>> Tensor.from_data([-1, 0]).float().one_hot_fill(2, 5.0, -1.0).tolist()  # doctest: +SKIP
            [[-1.0, 5.0], [5.0, -1.0]]
        """
        return self._one_hot("one_hot_fill", num_classes, on_value, off_value, axis, negatives=True)

    def _one_hot(
        self, op: str, num_classes: int, on: Any, off: Any, axis: int, *, negatives: bool
    ) -> Tensor:
        if self._k is Bool:
            raise kind_error(op, self, _NUMERIC)
        if num_classes < 1:
            raise ValueError(f"{op}: num_classes must be >= 1, got {num_classes}")
        if self._k is Int:  # Int results: integral fill values only (1.0 is fine, 0.5 is not)
            for v in (on, off):
                if float(v) != int(v):
                    raise ValueError(f"{op}: an Int tensor cannot hold the fill value {v!r}")
            on, off = int(on), int(off)
        classes = self.int() if self._k is Float else self  # type: ignore[attr-defined]
        if classes.num_elements():
            low, high = int(classes.min().tolist()[0]), int(classes.max().tolist()[0])
            lowest = -num_classes if negatives else 0
            if low < lowest or high >= num_classes:
                raise ValueError(
                    f"{op}: classes must lie in [{lowest}, {num_classes}), got values in [{low}, {high}]"
                )
            if negatives and low < 0:
                classes = classes.mask_where(classes < 0, classes + num_classes)
        rank = len(self.shape) + 1
        if not -rank <= axis < rank:
            raise ShapeError(f"{op}: axis {axis} is out of range for the result's rank {rank}")
        arange = _tensor_cls().arange(num_classes, device=self.device, backend=self._b)
        hot = classes.unsqueeze_dim(-1).equal(arange)
        out = _tensor_cls().full(hot.shape, off, **self._like()).mask_fill(hot, on)  # type: ignore[attr-defined]
        return out.movedim(-1, axis) if axis not in (-1, rank - 1) else out

    # -- triangles and masks ------------------------------------------------------------------
    @classmethod
    def _tri_mask(
        cls, op: str, shape: Sequence[int], offset: int, device: Device | None, backend: Any, keep: str
    ) -> Tensor:
        from burn.tensor._creation import resolve_backend

        dims = _ints(op, "shape", shape)
        if len(dims) < 2:
            raise ShapeError(f"{op}: needs a shape of rank >= 2, got {dims}")
        b, dev = resolve_backend(op, device, backend)
        tensor = _tensor_cls()
        rows = tensor.arange(dims[-2], device=dev, backend=b).unsqueeze_dim(1)
        cols = tensor.arange(dims[-1], device=dev, backend=b).unsqueeze_dim(0)
        diff = cols - rows - offset  # j - i - offset
        masked = diff > 0 if keep == "lower" else diff < 0 if keep == "upper" else diff.not_equal(0)
        return masked.expand(dims)  # type: ignore[no-any-return]

    @classmethod
    def tril_mask(
        cls, shape: Sequence[int], offset: int = 0, device: Device | None = None, *, backend: Any = None
    ) -> Tensor:
        """Bool mask over the last two dims of `shape`, true *above* diagonal `offset` (where
        ``col - row > offset``): ``t.mask_fill(mask, 0)`` keeps the lower triangle (Burn's
        convention: true marks what to mask).

        Example:
            >>> Tensor.tril_mask((2, 2)).tolist()  # doctest: +SKIP
            [[False, True], [False, False]]
        """
        return cls._tri_mask("tril_mask", shape, offset, device, backend, "lower")

    @classmethod
    def triu_mask(
        cls, shape: Sequence[int], offset: int = 0, device: Device | None = None, *, backend: Any = None
    ) -> Tensor:
        """Bool mask, true *below* diagonal `offset` (``col - row < offset``): masking it keeps
        the upper triangle."""
        return cls._tri_mask("triu_mask", shape, offset, device, backend, "upper")

    @classmethod
    def diag_mask(
        cls, shape: Sequence[int], offset: int = 0, device: Device | None = None, *, backend: Any = None
    ) -> Tensor:
        """Bool mask, true everywhere but on diagonal `offset` (``col - row != offset``)."""
        return cls._tri_mask("diag_mask", shape, offset, device, backend, "diag")

    def _tri(self, op: str, diagonal: int, keep: str) -> Tensor:
        shape = self.shape
        if len(shape) < 2:
            raise ShapeError(f"{op}: needs rank >= 2, got shape {shape}")
        mask = self._tri_mask(op, shape[-2:], diagonal, self.device, self._b, keep)
        return self.mask_fill(mask, False if self._k is Bool else 0)

    def tril(self, diagonal: int = 0) -> Tensor:
        """Keep the elements on and below diagonal `diagonal` of the last two dims, zero (False)
        the others; ``diagonal > 0`` keeps more, ``< 0`` fewer.

        Example:
            >>> Tensor.ones((2, 2)).tril().tolist()  # doctest: +SKIP
            [[1.0, 0.0], [1.0, 1.0]]
        """
        return self._tri("tril", diagonal, "lower")

    def triu(self, diagonal: int = 0) -> Tensor:
        """Keep the elements on and above diagonal `diagonal` of the last two dims."""
        return self._tri("triu", diagonal, "upper")

    # -- creation -----------------------------------------------------------------------------
    @classmethod
    def eye(
        cls,
        size: int,
        columns: int | None = None,
        device: Device | None = None,
        *,
        dtype: Any = None,
        kind: Kind = Float,
        backend: Backend | str | None = None,
    ) -> Tensor:
        """The identity matrix ``[size, columns or size]`` (ones on the main diagonal).

        Example:
            >>> Tensor.eye(2, kind=burn.Int).tolist()  # doctest: +SKIP
            [[1, 0], [0, 1]]
        """
        tensor = _tensor_cls()
        shape = (size, size if columns is None else columns)
        zeros = tensor.zeros(shape, device, dtype=dtype, kind=kind, backend=backend)
        mask = cls._tri_mask("eye", shape, 0, zeros.device, zeros.backend, "diag")
        return zeros.mask_fill(mask.bool_not(), True if zeros.kind is Bool else 1)  # type: ignore[no-any-return]

    @classmethod
    def cartesian_grid(
        cls, shape: Sequence[int], device: Device | None = None, *, backend: Backend | str | None = None
    ) -> Tensor:
        """Int ``[*shape, len(shape)]``: at each position, its own coordinates.

        Example:
            >>> Tensor.cartesian_grid((2, 2)).tolist()  # doctest: +SKIP
            [[[0, 0], [0, 1]], [[1, 0], [1, 1]]]
        """
        from burn.tensor._creation import resolve_backend

        dims = _ints("cartesian_grid", "shape", shape)
        b, dev = resolve_backend("cartesian_grid", device, backend)
        tensor = _tensor_cls()
        if not dims:
            return tensor.zeros((0,), dev, kind=Int, backend=b)  # type: ignore[no-any-return]
        axes = []
        for d, n in enumerate(dims):
            view = [1] * len(dims)
            view[d] = n
            axes.append(tensor.arange(n, device=dev, backend=b).reshape(tuple(view)).expand(dims))
        return tensor.stack(axes, -1)  # type: ignore[no-any-return]

    # -- products -----------------------------------------------------------------------------
    def cross(self, other: Tensor, dim: int = -1) -> Tensor:
        """Cross product of 3-vectors along `dim` (size 3 there); the operands broadcast.

        Example:
            >>> a, b = Tensor.from_data([1.0, 0.0, 0.0]), Tensor.from_data([0.0, 1.0, 0.0])  # doctest: +SKIP
            >>> a.cross(b).tolist()  # doctest: +SKIP
            [0.0, 0.0, 1.0]
        """
        if self._k is Bool:
            raise kind_error("cross", self, _NUMERIC)
        expect_same("cross", self, other, self._k, "other")
        try:
            shape = tuple(np.broadcast_shapes(self.shape, other.shape))
        except ValueError:
            raise ShapeError(f"cross: shapes {self.shape} and {other.shape} do not broadcast") from None
        a = self.expand(shape) if self.shape != shape else self
        b = other.expand(shape) if other.shape != shape else other
        d = a._dim(dim, "cross")
        if shape[d] != 3:
            raise ShapeError(f"cross: dim {dim} must have size 3, got shape {shape}")
        return wrap(a._kind_op("cross")(a._p, b._p, d), self._b, self._k)

    def dot(self, other: Tensor) -> Tensor:
        """Dot product of two 1-D tensors of one length, shape ``(1,)`` (as Burn).

        Example:
            >>> Tensor.from_data([1, 2]).dot(Tensor.from_data([3, 4])).tolist()  # doctest: +SKIP
            [11]
        """
        expect_same("dot", self, other, self._k, "other")
        if len(self.shape) != 1 or self.shape != other.shape:
            raise ShapeError(f"dot: needs two 1-D tensors of one length, got {self.shape} and {other.shape}")
        return (self * other).sum()  # type: ignore[no-any-return, operator]
