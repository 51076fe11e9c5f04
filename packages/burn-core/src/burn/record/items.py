"""What a record holds: `ParamRecord`, `ModuleRecord`, and nested data with tensors (`Record`).

A module record maps each param path (``layers.0.weight``) to a `ParamRecord` (its id and its
tensor). Other records (optimizer and scheduler state, checkpoints) are nested Python data:
dict / list / tuple / int / float / str / bool / None / bytes, tensors (`Tensor`, `TensorData` or
NumPy arrays) and module records anywhere inside. Tensors in a record made by
`Module.into_record` are the params' own tensors (no copy); records loaded from a file hold
`TensorData` in the saved dtype, converted to a backend when loaded into a module.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Union

import numpy as np

from burn.foundations.data import TensorData
from burn.foundations.dtype import DType, from_numpy_dtype, to_numpy_dtype
from burn.record.errors import RecordError

if TYPE_CHECKING:
    from burn.tensor.tensor import Tensor

Record = Union[  # noqa: UP007 - a runtime alias documenting what recorders accept
    "ModuleRecord",
    "ParamRecord",
    "Tensor",
    TensorData,
    np.ndarray,
    dict[Any, Any],
    list[Any],
    tuple[Any, ...],
    int,
    float,
    str,
    bool,
    bytes,
    None,
]
"""Anything a recorder can write: see the module docstring."""

TensorLike = Union["Tensor", TensorData, np.ndarray]  # noqa: UP007

_LITTLE = sys.byteorder == "little"
_tensor_type: type[Tensor] | None = None


def tensor_type() -> type[Tensor]:
    """`burn.Tensor`, imported on first use (records are imported by burn's own __init__)."""
    global _tensor_type
    if _tensor_type is None:
        from burn.tensor.tensor import Tensor

        _tensor_type = Tensor
    return _tensor_type


def is_tensor(value: object) -> bool:
    """Whether `value` is recorded as a tensor (a `Tensor`, `TensorData` or NumPy array)."""
    return isinstance(value, (TensorData, np.ndarray)) or isinstance(value, tensor_type())


def tensor_meta(value: TensorLike) -> tuple[DType, tuple[int, ...]]:
    """The dtype and shape of a tensor-like value, without touching its contents."""
    if isinstance(value, np.ndarray):
        return from_numpy_dtype(value.dtype), tuple(value.shape)
    return value.dtype, tuple(value.shape)


def host_data(value: TensorLike) -> TensorData:
    """The contents on the host (no copy for `TensorData` or a host backend's tensors)."""
    if isinstance(value, TensorData):
        return value
    if isinstance(value, np.ndarray):
        data = TensorData.__new__(TensorData)
        data.array = _c_contiguous(value)
        data.dtype = from_numpy_dtype(value.dtype)
        return data
    return value.to_data()  # type: ignore[union-attr]


def _c_contiguous(array: np.ndarray) -> np.ndarray:
    # np.ascontiguousarray would turn a rank-0 array into rank 1.
    return array if array.flags.c_contiguous else np.array(array, order="C")


def saved_array(value: TensorLike, dtype: DType, path: str) -> np.ndarray:
    """The contents as a C-contiguous little-endian array of `dtype`: the only place where a
    tensor is converted for writing (one tensor at a time).

    Ints narrowed to a smaller type are range-checked, so a step counter never wraps silently.
    """
    array = host_data(value).array
    target = to_numpy_dtype(dtype)
    if array.dtype != target:
        if dtype.is_int and array.size and array.dtype.kind in "iu":
            info = np.iinfo(target)
            low, high = int(array.min()), int(array.max())
            if low < info.min or high > info.max:
                raise RecordError(
                    f"int values in [{low}, {high}] do not fit in {dtype.value}; "
                    "save with wider precision settings (FullPrecisionSettings or DoublePrecisionSettings)",
                    path=path,
                )
        array = array.astype(target)
    if not _LITTLE:  # pragma: no cover - files are little-endian; only big-endian hosts swap
        array = array.astype(array.dtype.newbyteorder("<"))
    return _c_contiguous(array)


class ParamRecord:
    """One saved param: its `ParamId` (16 hex digits, or None when the source had none, e.g. a
    PyTorch file: loading then keeps the module's id) and its tensor.

    Example:
        >>> rec = ParamRecord("00000000000000ff", TensorData([1.0, 2.0], dtype="float32"))
        >>> rec.shape, rec.dtype
        ((2,), burn.float32)
    """

    __slots__ = ("id", "tensor")

    def __init__(self, id: str | None, tensor: TensorLike) -> None:
        self.id = id
        self.tensor = tensor

    @property
    def shape(self) -> tuple[int, ...]:
        return tensor_meta(self.tensor)[1]

    @property
    def dtype(self) -> DType:
        return tensor_meta(self.tensor)[0]

    def to_data(self) -> TensorData:
        """The values on the host."""
        return host_data(self.tensor)

    def __repr__(self) -> str:
        return f"ParamRecord(id={self.id}, shape={list(self.shape)}, dtype={self.dtype.value})"


class ModuleRecord(Mapping[str, ParamRecord]):
    """A module's params by path, in the module's depth-first order.

    Example:
        >>> rec = ModuleRecord({"linear.weight": ParamRecord(None, TensorData([[1.0]], dtype="float32")),
        ...                     "linear.bias": ParamRecord(None, TensorData([0.0], dtype="float32"))})
        >>> list(rec), rec.num_params()
        (['linear.weight', 'linear.bias'], 2)
        >>> list(rec.sub("linear"))
        ['weight', 'bias']
    """

    __slots__ = ("_params",)

    def __init__(self, params: Mapping[str, ParamRecord] | Iterable[tuple[str, ParamRecord]] = ()) -> None:
        items = params.items() if isinstance(params, Mapping) else params
        self._params: dict[str, ParamRecord] = {}
        for path, param in items:
            if not isinstance(path, str) or not isinstance(param, ParamRecord):
                raise TypeError(
                    f"ModuleRecord maps str paths to ParamRecord, got {path!r}: {type(param).__name__}"
                )
            self._params[path] = param

    def __getitem__(self, path: str) -> ParamRecord:
        return self._params[path]

    def __iter__(self) -> Iterator[str]:
        return iter(self._params)

    def __len__(self) -> int:
        return len(self._params)

    def sub(self, prefix: str) -> ModuleRecord:
        """The params under ``prefix.``, with the prefix removed (to load into a submodule)."""
        head = prefix + "."
        return ModuleRecord(
            (path[len(head) :], p) for path, p in self._params.items() if path.startswith(head)
        )

    def num_params(self) -> int:
        """Number of scalar values in all params, those without a gradient included (what a
        file of the record stores: `Module.num_params(trainable=False)`)."""
        total = 0
        for param in self._params.values():
            n = 1
            for d in param.shape:
                n *= d
            total += n
        return total

    def nested(self) -> dict[str, Any]:
        """The params as nested dicts by field name (``{"layers": {"0": {"weight": ...}}}``)."""
        root: dict[str, Any] = {}
        for path, param in self._params.items():
            node = root
            *parents, leaf = path.split(".")
            for name in parents:
                node = node.setdefault(name, {})
            node[leaf] = param
        return root

    def __repr__(self) -> str:
        body = ", ".join(f"{path}: {list(p.shape)}" for path, p in self._params.items())
        return f"ModuleRecord({{{body}}})"


def map_tensors(record: Any, fn: Callable[[Any], Any]) -> Any:
    """`record` with every tensor (`Tensor`, `TensorData`, NumPy array) replaced by ``fn(tensor)``;
    containers are rebuilt, other values kept.

    Example:
        >>> out = map_tensors({"m": [TensorData([1, 2], dtype="int64")], "step": 3}, lambda t: t.shape)
        >>> out
        {'m': [(2,)], 'step': 3}
    """
    if isinstance(record, ModuleRecord):
        return ModuleRecord((k, ParamRecord(p.id, fn(p.tensor))) for k, p in record.items())
    if isinstance(record, ParamRecord):
        return ParamRecord(record.id, fn(record.tensor))
    if is_tensor(record):
        return fn(record)
    if isinstance(record, dict):
        return {k: map_tensors(v, fn) for k, v in record.items()}
    if isinstance(record, list):
        return [map_tensors(v, fn) for v in record]
    if isinstance(record, tuple):
        return tuple(map_tensors(v, fn) for v in record)
    return record
