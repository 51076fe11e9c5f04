"""`burn.Tensor`: one tensor type over every backend, with Burn's op names and semantics."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from burn.errors import BackendMismatchError, DeviceError, KindError, ShapeError
from burn.foundations.distribution import Distribution
from burn.foundations.dtype import DType
from burn.foundations.kind import Bool, Float, Int, Kind
from burn.tensor import _base
from burn.tensor._base import TensorBase, wrap
from burn.tensor._creation import (
    as_shape,
    fill_value,
    host_array,
    kind_of_array,
    owned_data,
    resolve_backend,
    resolve_dtype,
)
from burn.tensor._errors import describe
from burn.tensor._hints import HintsMixin, shape_as_varargs
from burn.tensor.tensor_ops_layout import LayoutOps

if TYPE_CHECKING:
    from burn.backend.base import Backend
    from burn.backend.device import Device

ShapeLike = Sequence[int] | int


class Tensor(LayoutOps, HintsMixin):
    """An immutable n-dimensional array on a backend, of kind `burn.Float`, `burn.Int` or
    `burn.Bool`. Every op returns a new tensor; ops dispatch to the backend's ``float_*``,
    ``int_*`` or ``bool_*`` ops by kind.

    Create tensors with the classmethods (`from_data`, `zeros`, `ones`, `full`, `empty`,
    `arange`, `random`); ``Tensor(data, ...)`` is shorthand for `from_data`.

    Example:
        >>> import burn
        >>> x = burn.Tensor.from_data([[1.0, 2.0], [3.0, 4.0]])  # doctest: +SKIP
        >>> y = (x @ x.transpose() + 1).sum_dim(-1)  # doctest: +SKIP
        >>> y.shape, y.kind, y.dtype  # doctest: +SKIP
        ((2, 1), burn.Float, burn.float32)
        >>> x[0, ::-1].tolist()  # doctest: +SKIP
        [2.0, 1.0]

    Errors name the op and what was wrong: mixing backends raises `BackendMismatchError`,
    devices `DeviceError`, kinds `KindError`, shapes `ShapeError`.
    """

    __slots__ = ()

    def __init__(
        self,
        data: Any,
        device: Device | None = None,
        *,
        dtype: DType | str | None = None,
        kind: Kind | None = None,
        backend: Backend | str | None = None,
    ) -> None:
        t = Tensor.from_data(data, device, dtype=dtype, kind=kind, backend=backend)
        self._p, self._b, self._k = t._p, t._b, t._k

    # -- creation -----------------------------------------------------------------------------
    @classmethod
    def from_data(
        cls,
        data: Any,
        device: Device | None = None,
        *,
        dtype: DType | str | None = None,
        kind: Kind | None = None,
        backend: Backend | str | None = None,
    ) -> Tensor:
        """A tensor holding `data`: a `TensorData`, NumPy array, nested lists, a Python scalar
        (rank 0), or anything with ``__array__``/``__dlpack__`` on the CPU. The data is copied.

        The backend is `backend`, else `device`'s owner, else `burn.default_backend()`. The
        kind comes from `kind`, else `dtype`, else the data: floats give Float in the backend's
        `float_dtype` (unless `dtype` is given), integers Int in its `int_dtype`, booleans Bool.

        Example:
            >>> Tensor.from_data([[1, 2], [3, 4]]).kind  # doctest: +SKIP
            burn.Int
            >>> Tensor.from_data(np.zeros(3), dtype="float64").dtype  # doctest: +SKIP
            burn.float64

        Raises:
            DTypeError: the backend does not declare `dtype`, or `kind` and `dtype` disagree.
            DeviceError: `device` does not belong to `backend`.
        """
        b, dev = resolve_backend("from_data", device, backend)
        array = host_array("from_data", data)
        if kind is None and dtype is None:
            kind = kind_of_array("from_data", array)
        k, dt = resolve_dtype("from_data", b, kind, dtype)
        td = owned_data(array, dt, data)
        if k is Float:
            return wrap(b.float_from_data(td, dev), b, Float)
        if k is Int:
            return wrap(b.int_from_data(td, dev), b, Int)
        return wrap(b.bool_from_data(td, dev), b, Bool)

    @classmethod
    def _filled(
        cls,
        op: str,
        shape: ShapeLike,
        value: Any,
        device: Device | None,
        dtype: Any,
        kind: Kind,
        backend: Any,
    ) -> Tensor:
        if isinstance(device, int):  # Tensor.zeros(2, 3): PyTorch's spelling of the shape
            shape_as_varargs(op, shape, device)
        b, dev = resolve_backend(op, device, backend)
        k, dt = resolve_dtype(op, b, kind if dtype is None else None, dtype)
        if dtype is not None and kind is not Float and kind is not k:
            raise KindError(f"{op}: dtype {dt.value} is not a {kind.name} dtype")
        dims = as_shape(op, shape)
        if k is Float:
            if value is None:
                return wrap(b.float_empty(dims, dev, dt), b, Float)
            return wrap(b.float_full(dims, fill_value(op, k, value), dev, dt), b, Float)
        if k is Int:
            if value is None:
                return wrap(b.int_empty(dims, dev, dt), b, Int)
            return wrap(b.int_full(dims, fill_value(op, k, value), dev, dt), b, Int)
        if value is None:
            return wrap(b.bool_empty(dims, dev), b, Bool)
        return wrap(b.bool_full(dims, fill_value(op, k, value), dev), b, Bool)

    @classmethod
    def zeros(
        cls,
        shape: ShapeLike,
        device: Device | None = None,
        *,
        dtype: Any = None,
        kind: Kind = Float,
        backend: Backend | str | None = None,
    ) -> Tensor:
        """A tensor of zeros (False for Bool). `dtype`, when given, decides the kind.

        Example:
            >>> Tensor.zeros((2, 3), kind=burn.Int).tolist()  # doctest: +SKIP
            [[0, 0, 0], [0, 0, 0]]
        """
        return cls._filled("zeros", shape, 0, device, dtype, kind, backend)

    @classmethod
    def ones(
        cls,
        shape: ShapeLike,
        device: Device | None = None,
        *,
        dtype: Any = None,
        kind: Kind = Float,
        backend: Backend | str | None = None,
    ) -> Tensor:
        """A tensor of ones (True for Bool)."""
        return cls._filled("ones", shape, 1, device, dtype, kind, backend)

    @classmethod
    def empty(
        cls,
        shape: ShapeLike,
        device: Device | None = None,
        *,
        dtype: Any = None,
        kind: Kind = Float,
        backend: Backend | str | None = None,
    ) -> Tensor:
        """A tensor with unspecified contents (backends may give zeros)."""
        return cls._filled("empty", shape, None, device, dtype, kind, backend)

    @classmethod
    def full(
        cls,
        shape: ShapeLike,
        value: Any,
        device: Device | None = None,
        *,
        dtype: Any = None,
        kind: Kind = Float,
        backend: Backend | str | None = None,
    ) -> Tensor:
        """A tensor with every element equal to `value` (an int for Int, a bool for Bool)."""
        return cls._filled("full", shape, value, device, dtype, kind, backend)

    @classmethod
    def arange(
        cls,
        start: int,
        end: int | None = None,
        step: int = 1,
        device: Device | None = None,
        *,
        dtype: Any = None,
        backend: Backend | str | None = None,
    ) -> Tensor:
        """Int tensor ``start, start + step, ...`` below `end` (``arange(5)`` is 0..4), as Burn.

        Example:
            >>> Tensor.arange(1, 7, 2).tolist()  # doctest: +SKIP
            [1, 3, 5]
        """
        if end is None:
            start, end = 0, start
        if step == 0:
            raise ValueError("arange: step must not be 0")
        b, dev = resolve_backend("arange", device, backend)
        k, dt = resolve_dtype("arange", b, Int if dtype is None else None, dtype)
        if k is not Int:
            raise KindError(
                f"arange: gives Int tensors; dtype {dt.value} is not an int dtype (use .float() after)"
            )
        return wrap(b.int_arange(int(start), int(end), int(step), dev, dt), b, Int)

    @classmethod
    def random(
        cls,
        shape: ShapeLike,
        distribution: Distribution | None = None,
        device: Device | None = None,
        *,
        dtype: Any = None,
        kind: Kind = Float,
        backend: Backend | str | None = None,
    ) -> Tensor:
        """Samples of `distribution` (default ``Uniform(0, 1)``) from the backend's seeded
        generator (``backend.seed(n)``). Int draws integers; Bool is ``draw != 0``.

        Example:
            >>> Tensor.random((2, 2), burn.Normal(0.0, 1.0)).shape  # doctest: +SKIP
            (2, 2)
        """
        dist = Distribution.default() if distribution is None else distribution  # type: ignore[attr-defined]
        if not isinstance(dist, Distribution):
            raise TypeError(f"random: distribution must be a burn.Distribution, got {dist!r}")
        b, dev = resolve_backend("random", device, backend)
        k, dt = resolve_dtype("random", b, kind if dtype is None else None, dtype)
        dims = as_shape("random", shape)
        if k is Float:
            return wrap(b.float_random(dims, dist, dev, dt), b, Float)
        if k is Int:
            return wrap(b.int_random(dims, dist, dev, dt), b, Int)
        draw = b.float_random(dims, dist, dev, b.float_dtype)
        return wrap(b.float_not_equal_elem(draw, 0.0), b, Bool)

    def _like(self) -> dict[str, Any]:
        return {"device": self.device, "dtype": self.dtype, "kind": self._k, "backend": self._b}

    def zeros_like(self) -> Tensor:
        """Zeros with this tensor's shape, kind, dtype, device and backend."""
        return Tensor.zeros(self.shape, **self._like())

    def ones_like(self) -> Tensor:
        """Ones with this tensor's shape, kind, dtype, device and backend."""
        return Tensor.ones(self.shape, **self._like())

    def full_like(self, value: Any) -> Tensor:
        """`value` everywhere, with this tensor's shape, kind, dtype, device and backend."""
        return Tensor.full(self.shape, value, **self._like())

    def random_like(self, distribution: Distribution | None = None) -> Tensor:
        """Random samples with this tensor's shape, kind, dtype, device and backend."""
        return Tensor.random(self.shape, distribution, **self._like())

    # -- joining ------------------------------------------------------------------------------
    @staticmethod
    def cat(tensors: Sequence[Tensor], dim: int) -> Tensor:
        """Concatenate along `dim`; all tensors share backend, kind, device, and every other dim.

        Example:
            >>> Tensor.cat([Tensor.zeros((1, 2)), Tensor.ones((2, 2))], 0).shape  # doctest: +SKIP
            (3, 2)
        """
        tensors = _check_join("cat", tensors)
        first = tensors[0]
        shapes = [t.shape for t in tensors]
        d = first._dim(dim, "cat")
        ref = shapes[0]
        for t, s in zip(tensors, shapes, strict=True):
            if len(s) != len(ref) or any(
                a != c for i, (a, c) in enumerate(zip(s, ref, strict=True)) if i != d
            ):
                raise ShapeError(
                    f"cat: shapes {shapes} differ outside dim {dim} ({describe(t)} vs {describe(first)})"
                )
        if len(tensors) == 1:
            return first
        prims = [t._p for t in tensors]
        return wrap(first._kind_op("cat")(prims, d), first._b, first._k)

    @staticmethod
    def stack(tensors: Sequence[Tensor], dim: int) -> Tensor:
        """Join same-shaped tensors along a new dim `dim`.

        Example:
            >>> Tensor.stack([Tensor.zeros(3), Tensor.ones(3)], -1).shape  # doctest: +SKIP
            (3, 2)
        """
        tensors = _check_join("stack", tensors)
        shapes = [t.shape for t in tensors]
        if any(s != shapes[0] for s in shapes):
            raise ShapeError(f"stack: all tensors need one shape, got {shapes}")
        return Tensor.cat([t.unsqueeze_dim(dim) for t in tensors], dim)

    # -- autodiff -----------------------------------------------------------------------------
    @classmethod
    def from_inner(cls, tensor: Tensor, backend: Backend | None = None) -> Tensor:
        """Wrap a tensor of an inner backend into its autodiff backend (not requiring grad).

        `backend` defaults to ``burn.backend(f"autodiff({inner.name})", **inner.options())``.
        """
        if backend is None:
            from burn.plugins import backend as by_name

            inner = tensor._b
            backend = by_name(f"autodiff({inner.name})", **inner.options())
        if backend.inner is not tensor._b:
            raise BackendMismatchError(
                f"from_inner: the tensor's backend {tensor._b.name!r} is not the inner backend of "
                f"{backend.name!r} (which wraps {backend.inner.name!r})"
            )
        if tensor._k is Float:
            return wrap(backend.float_from_inner(tensor._p), backend, Float)
        return wrap(tensor._p, backend, tensor._k)


def _check_join(op: str, tensors: Sequence[Tensor]) -> list[Tensor]:
    """The tensors of `cat`/`stack` as a list, checked for one backend, kind and device."""
    tensors = list(tensors)
    if not tensors:
        raise ValueError(f"{op}: needs at least one tensor")
    first = tensors[0]
    for t in tensors:
        if not isinstance(t, TensorBase):
            raise TypeError(f"{op}: expects burn.Tensor values, got {type(t).__name__}")
        if t._b is not first._b:
            raise BackendMismatchError(
                f"{op}: tensors of two backends, {first._b.name!r} and {t._b.name!r} "
                f"({describe(first)}; {describe(t)})"
            )
        if t._k is not first._k:
            raise KindError(f"{op}: tensors of two kinds ({describe(first)}; {describe(t)})")
    devices = {t.device for t in tensors}
    if len(devices) > 1:
        raise DeviceError(f"{op}: tensors on several devices: {', '.join(sorted(map(str, devices)))}")
    return tensors


_base._cls = Tensor
