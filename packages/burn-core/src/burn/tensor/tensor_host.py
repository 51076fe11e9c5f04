"""Host exchange and Python protocols: `to_data`, NumPy/DLPack export, scalars, `repr`, devices."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, NoReturn

import numpy as np

from burn.errors import DeviceError, ShapeError
from burn.foundations.data import TensorData
from burn.foundations.kind import Bool, Float, Int
from burn.tensor._base import TensorBase, wrap

if TYPE_CHECKING:
    from burn.backend.device import Device
    from burn.tensor.tensor import Tensor

# Above this many elements `repr` shows only the metadata (it would copy the data to the host).
_REPR_MAX_ELEMENTS = 100_000
_DLPACK_CPU = 1


def _readonly(array: np.ndarray) -> np.ndarray:
    # The host array may be the backend's own buffer (NumPy backends): hand out a read-only view
    # so user code cannot mutate a tensor, which would break the value semantics of tensors.
    if not array.flags.writeable:
        return array
    view = array.view()
    view.flags.writeable = False
    return view


class HostOps(TensorBase):
    """Host exchange and Python protocols (mixin of `burn.Tensor`)."""

    __slots__ = ()

    # NumPy defers to our reflected operators (``array + tensor`` -> ``Tensor.__radd__``), which
    # refuse host arrays instead of silently converting the tensor to NumPy.
    __array_ufunc__ = None

    # -- host data ----------------------------------------------------------------------------
    def to_data(self) -> TensorData:
        """The contents on the host as a `TensorData` in the tensor's own dtype.

        Example:
            >>> t = Tensor.from_data([[1.0, 2.0]])  # doctest: +SKIP
            >>> t.to_data().shape  # doctest: +SKIP
            (1, 2)
        """
        data = self._into_data()
        out = TensorData.__new__(TensorData)
        out.array = _readonly(data.array)
        out.dtype = data.dtype
        return out

    into_data = to_data

    def _into_data(self) -> TensorData:
        """The backend's `TensorData`, whose array may be the backend's own buffer."""
        k = self._k
        if k is Float:
            return self._b.float_into_data(self._p)
        if k is Int:
            return self._b.int_into_data(self._p)
        return self._b.bool_into_data(self._p)

    def to_numpy(self) -> np.ndarray:
        """A read-only NumPy array with the contents (``np.array(t)`` gives a writable copy)."""
        return self.to_data().array

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        array = self.to_data().array
        if dtype is not None and np.dtype(dtype) != array.dtype:
            return array.astype(dtype)
        if copy:
            return array.copy()
        return array

    def tolist(self) -> Any:
        """Nested Python lists (a Python scalar for rank 0)."""
        return self.to_data().to_list()

    def into_scalar(self) -> Any:
        """The single element as a Python `float`, `int` or `bool`; `item` is an alias.

        Raises:
            ShapeError: the tensor does not have exactly one element.
        """
        array = self.to_data().array
        if array.size != 1:
            raise ShapeError(
                f"into_scalar: a tensor of shape {array.shape} has {array.size} elements; "
                "only one-element tensors convert to a Python scalar"
            )
        value = array.reshape(-1)[0]
        k = self._k
        if k is Float:
            return float(value)
        if k is Int:
            return int(value)
        return bool(value)

    item = into_scalar

    def __float__(self) -> float:
        return float(self.into_scalar())

    def __int__(self) -> int:
        return int(self.into_scalar())

    def __bool__(self) -> bool:
        if self.num_elements() != 1:
            raise ShapeError(
                f"the truth value of a tensor of shape {self.shape} is ambiguous; use .any() or .all()"
            )
        return bool(self.into_scalar())

    def __len__(self) -> int:
        shape = self.shape
        if not shape:
            raise TypeError("len() of a rank-0 tensor")
        return shape[0]

    def __iter__(self) -> Iterator[Tensor]:
        for i in range(len(self)):
            yield self[i]  # type: ignore[index]

    # -- DLPack: the backend's own buffer when it lives on an accelerator, else the host array --
    def _accelerator_array(self) -> Any:
        """The primitive itself when the backend declares ``dlpack`` and the buffer is not in host
        memory (a CuPy array on a GPU): exported without a copy. None otherwise."""
        t: Any = self
        while t._b.ad_enabled:  # a decorator's float primitive wraps the inner backend's
            t = t.inner()
        p = t._p
        if not t._b.capabilities.has("dlpack") or not hasattr(p, "__dlpack_device__"):
            return None
        return p if p.__dlpack_device__()[0] != _DLPACK_CPU else None

    def __dlpack__(self, **kwargs: Any) -> Any:
        kwargs = {k: v for k, v in kwargs.items() if v is not None}
        device_array = self._accelerator_array()
        if device_array is not None:
            return device_array.__dlpack__(**kwargs)
        # Zero copy where the host array is the backend's buffer: consumers must not write to it
        # (as with any immutable array exported through DLPack).
        array = self._into_data().array
        if not array.flags.writeable:  # NumPy cannot export read-only arrays to every consumer
            array = array.copy()
        return array.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        device_array = self._accelerator_array()
        if device_array is not None:
            return tuple(device_array.__dlpack_device__())  # type: ignore[return-value]
        return (_DLPACK_CPU, 0)

    # -- identity and value semantics --------------------------------------------------------
    def __setitem__(self, key: Any, value: Any) -> NoReturn:
        raise TypeError(
            "burn tensors are immutable values: use t = t.slice_assign(ranges, value) "
            "(or mask_where/mask_fill/select_add) to get a new tensor"
        )

    def __copy__(self) -> Tensor:
        return self  # type: ignore[return-value]  # immutable: a copy is the value itself

    def __deepcopy__(self, memo: dict[int, Any]) -> Tensor:
        return self  # type: ignore[return-value]

    def __reduce__(self) -> tuple[Any, ...]:
        return (_unpickle, (self.to_data(), self._b.name, self._b.options(), self._k.name))

    # -- devices ------------------------------------------------------------------------------
    def to_device(self, device: Device) -> Tensor:
        """The same values on another device of the same backend.

        Raises:
            DeviceError: `device` is not one of this backend's devices.
        """
        b = self._b
        target = next((d for d in b.devices() if d == device), None)
        if target is None:
            raise DeviceError(
                f"to_device: device {device} is not a device of backend {b.name!r} "
                f"(it has {', '.join(str(d) for d in b.devices())}); burn does not move tensors "
                "between backends implicitly"
            )
        k = self._k
        if k is Float:
            p = b.float_to_device(self._p, target)
        elif k is Int:
            p = b.int_to_device(self._p, target)
        else:
            p = b.bool_to_device(self._p, target)
        return wrap(p, b, k)

    # -- printing -----------------------------------------------------------------------------
    def __repr__(self) -> str:
        try:
            shape = self.shape
            meta = f"shape={shape}, dtype={self.dtype.value}, device={self.device}"
            if self._k is Float and self._b.ad_enabled and self._b.float_is_require_grad(self._p):
                meta += ", require_grad=True"
            n = self.num_elements()
            if n > _REPR_MAX_ELEMENTS:
                return f"Tensor(<{n} elements>, {meta})"
            array = self.to_data().array
            if array.dtype.kind == "V":  # bfloat16: print through float32
                array = array.astype(np.float32)
            values = np.array2string(array, separator=", ", prefix="Tensor(", threshold=1000, edgeitems=3)
            return f"Tensor({values}, {meta})"
        except Exception as exc:  # repr must not raise, even for a broken backend
            return f"<burn.Tensor {self._k.name} of backend {self._b.name!r} (repr failed: {exc!r})>"

    __str__ = __repr__


def _unpickle(data: TensorData, backend_name: str, options: dict[str, Any], kind_name: str) -> Tensor:
    import burn.plugins
    from burn.tensor.tensor import Tensor

    backend = burn.plugins.backend(backend_name, **options)
    kind = {"Float": Float, "Int": Int, "Bool": Bool}[kind_name]
    return Tensor.from_data(data, dtype=data.dtype, kind=kind, backend=backend)
