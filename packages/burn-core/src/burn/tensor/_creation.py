"""Argument resolution for creation ops: which backend and device, which kind and dtype, and
host data as a NumPy array."""

from __future__ import annotations

import numbers
import operator
from typing import TYPE_CHECKING, Any

import numpy as np

from burn.errors import DeviceError, DTypeError, KindError, ShapeError
from burn.foundations.data import TensorData
from burn.foundations.dtype import DType
from burn.foundations.kind import Bool, Float, Int, Kind
from burn.tensor._base import TensorBase

if TYPE_CHECKING:
    from burn.backend.base import Backend
    from burn.backend.device import Device


def resolve_backend(op: str, device: Device | None, backend: Backend | str | None) -> tuple[Backend, Device]:
    """The backend (`backend`, else the device's owner, else the default backend) and device
    (`device`, else the backend's default device)."""
    if isinstance(backend, str):
        from burn.plugins import backend as by_name

        backend = by_name(backend)
    if backend is None:
        if device is not None:
            backend = device.owner
            if backend is None:
                raise DeviceError(f"{op}: device {device} has no owner backend; pass backend=... as well")
        else:
            from burn.plugins import default_backend

            backend = default_backend()
    if device is None:
        return backend, backend.default_device()
    if device.owner is backend:
        return backend, device
    # Devices compare by physical identity: autodiff(ndarray) accepts ndarray's device; re-own it.
    for own in backend.devices():
        if own == device:
            return backend, own
    raise DeviceError(
        f"{op}: device {device} does not belong to backend {backend.name!r} "
        f"(its devices: {', '.join(str(d) for d in backend.devices())})"
    )


def resolve_dtype(op: str, backend: Backend, kind: Kind | None, dtype: Any) -> tuple[Kind, DType]:
    """Kind and dtype from the arguments: the dtype decides the kind; a kind alone takes the
    backend's default dtype for it. At least one of them must be given."""
    if dtype is not None:
        try:
            dt = DType.from_any(dtype)
        except ValueError as exc:
            raise DTypeError(f"{op}: {exc}") from None
        of = Kind.of(dt)
        if kind is not None and kind is not of:
            raise DTypeError(f"{op}: dtype {dt.value} is not a {kind.name} dtype")
        if not backend.capabilities.supports(dt):
            declared = ", ".join(d.value for d in DType if backend.capabilities.supports(d))
            raise DTypeError(
                f"{op}: backend {backend.name!r} does not support {dt.value} (it declares {declared})"
            )
        return of, dt
    if kind is Float:
        return Float, backend.float_dtype
    if kind is Int:
        return Int, backend.int_dtype
    if kind is Bool:
        return Bool, DType.BOOL
    raise KindError(f"{op}: kind must be burn.Float, burn.Int or burn.Bool, got {kind!r}")


def host_array(op: str, data: Any) -> np.ndarray:
    """`data` (TensorData, NumPy array, tensor, nested lists, scalar, ``__array__`` or
    ``__dlpack__`` object on the CPU) as a NumPy array. May alias the caller's memory."""
    if isinstance(data, TensorData):
        return data.array
    if isinstance(data, np.ndarray):
        return data
    if isinstance(data, TensorBase):
        return data.to_data().array  # type: ignore[attr-defined, no-any-return]
    if hasattr(data, "__array__") or isinstance(data, (list, tuple, numbers.Number, np.generic)):
        array = np.asarray(data)
    elif hasattr(data, "__dlpack__"):
        try:
            array = np.from_dlpack(data)
        except (BufferError, RuntimeError, TypeError) as exc:
            raise TypeError(
                f"{op}: cannot read {type(data).__name__} through DLPack on the CPU: {exc}"
            ) from exc
    else:
        raise TypeError(
            f"{op}: cannot make a tensor from {type(data).__name__}; pass a TensorData, a NumPy "
            "array, nested lists or a number"
        )
    if array.dtype.kind not in "fiub" and array.dtype.name != "bfloat16":
        raise DTypeError(f"{op}: data of dtype {array.dtype} has no burn dtype (numbers or booleans only)")
    return array


def kind_of_array(op: str, array: np.ndarray) -> Kind:
    """The kind host data naturally has: floats -> Float, integers -> Int, booleans -> Bool."""
    k = array.dtype.kind
    if k == "f" or array.dtype.name == "bfloat16":
        return Float
    if k in "iu":
        return Int
    if k == "b":
        return Bool
    raise DTypeError(f"{op}: data of dtype {array.dtype} has no burn dtype (numbers or booleans only)")


def owned_data(array: np.ndarray, dtype: DType, source: Any) -> TensorData:
    """`array` in `dtype` as a TensorData that does not share memory with the caller's data:
    tensors are immutable, so a later write to the caller's array must not show through."""
    target = dtype.numpy
    if array.dtype != target or not array.flags.c_contiguous:
        # A conversion copies anyway (np.ascontiguousarray would also turn rank 0 into rank 1).
        array = np.array(array, dtype=target, order="C")
    elif not isinstance(source, (list, tuple, numbers.Number)):  # arrays built from Python data are ours
        array = array.copy()
    data = TensorData.__new__(TensorData)
    data.array = array
    data.dtype = dtype
    return data


def as_shape(op: str, shape: Any) -> tuple[int, ...]:
    """A creation shape: an int or a sequence of non-negative ints."""
    try:
        dims = (
            (operator.index(shape),)
            if isinstance(shape, numbers.Integral)
            else tuple(operator.index(s) for s in shape)
        )
    except TypeError:
        raise TypeError(f"{op}: a shape must be an int or a sequence of ints, got {shape!r}") from None
    if any(d < 0 for d in dims):
        raise ShapeError(f"{op}: negative size in shape {dims}")
    return dims


def fill_value(op: str, kind: Kind, value: Any) -> Any:
    """`value` as the Python type of `kind`'s elements."""
    if kind is Float:
        if isinstance(value, numbers.Real):
            return float(value)
    elif kind is Int:
        if isinstance(value, numbers.Integral):
            return int(value)
        if isinstance(value, numbers.Real):
            raise KindError(f"{op}: an Int tensor cannot hold the float {value!r}")
    elif isinstance(value, (bool, np.bool_)) or (isinstance(value, numbers.Integral) and value in (0, 1)):
        return bool(value)
    raise TypeError(f"{op}: cannot fill a {kind.name} tensor with {value!r}")
