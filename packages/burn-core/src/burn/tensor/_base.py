"""The storage every tensor has (`TensorBase`), the fast result constructor `wrap`, and metadata.

`Tensor` is assembled from a chain of mixins, each adding one group of ops on top of the previous
one (host -> arithmetic -> comparison -> reduction -> shape -> indexing -> casts/autodiff), so a
group may use the groups below it with full type information. Every mixin declares
``__slots__ = ()``: a tensor is exactly three slots, ``_p`` (the backend's opaque primitive),
``_b`` (the backend instance) and ``_k`` (the kind singleton).
"""

from __future__ import annotations

import math
import operator
from typing import TYPE_CHECKING, Any

from burn.errors import ShapeError
from burn.foundations.dtype import DType
from burn.foundations.kind import Float, Int, Kind

if TYPE_CHECKING:
    from burn.backend.base import Backend
    from burn.backend.device import Device
    from burn.tensor.tensor import Tensor

_new = object.__new__
# The concrete Tensor class; burn.tensor.tensor sets it once the class exists. A module global
# (not an import) because the mixins are defined before Tensor and `wrap` is on every op's path.
_cls: type = object


def wrap(p: Any, b: Backend, k: Kind) -> Tensor:
    """A tensor around primitive `p` without running any check (the hot path of every op)."""
    t: Any = _new(_cls)
    t._p = p
    t._b = b
    t._k = k
    return t  # type: ignore[no-any-return]


class TensorBase:
    """Slots and metadata shared by every tensor; see `burn.Tensor` for the public API."""

    __slots__ = ("_p", "_b", "_k")

    _p: Any
    _b: Backend
    _k: Kind

    # -- metadata -----------------------------------------------------------------------------
    @property
    def kind(self) -> Kind:
        """`burn.Float`, `burn.Int` or `burn.Bool`."""
        return self._k

    @property
    def backend(self) -> Backend:
        """The backend instance holding this tensor."""
        return self._b

    @property
    def dtype(self) -> DType:
        """The element type (one of the dtypes the backend declares)."""
        k = self._k
        if k is Float:
            return self._b.float_get_dtype(self._p)
        if k is Int:
            return self._b.int_get_dtype(self._p)
        return DType.BOOL

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape, as a tuple of ints."""
        k = self._k
        if k is Float:
            return self._b.float_shape(self._p)
        if k is Int:
            return self._b.int_shape(self._p)
        return self._b.bool_shape(self._p)

    @property
    def dims(self) -> int:
        """The rank (number of dimensions); `ndim` is an alias."""
        return len(self.shape)

    ndim = dims

    @property
    def device(self) -> Device:
        """The device the data lives on."""
        k = self._k
        if k is Float:
            return self._b.float_device(self._p)
        if k is Int:
            return self._b.int_device(self._p)
        return self._b.bool_device(self._p)

    def num_elements(self) -> int:
        """The number of elements (1 for a rank-0 tensor)."""
        return math.prod(self.shape)

    # -- helpers for the op mixins ------------------------------------------------------------
    def _dim(self, dim: int, op: str) -> int:
        """`dim` normalized to ``0 <= dim < rank``; ShapeError naming `op` when out of range."""
        k = self._k  # the shape is read inline: this runs on every op taking a dim
        if k is Float:
            shape = self._b.float_shape(self._p)
        elif k is Int:
            shape = self._b.int_shape(self._p)
        else:
            shape = self._b.bool_shape(self._p)
        rank = len(shape)
        if dim.__class__ is not int:
            dim = operator.index(dim)
        if 0 <= dim < rank:
            return dim
        if -rank <= dim < 0:
            return dim + rank
        raise ShapeError(f"{op}: dim {dim} is out of range for a tensor of rank {rank} (shape {shape})")

    def _dims(self, dims: Any, op: str) -> tuple[int, ...]:
        """Several dims normalized; duplicates are a ShapeError."""
        if isinstance(dims, int):
            dims = (dims,)
        out = tuple(self._dim(d, op) for d in dims)
        if len(set(out)) != len(out):
            raise ShapeError(f"{op}: repeated dims {tuple(dims)} for a tensor of shape {self.shape}")
        return out
