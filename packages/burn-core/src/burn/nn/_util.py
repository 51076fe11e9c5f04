"""Helpers shared by the layers: the default device and host-side constants."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from burn.tensor.tensor import Tensor

if TYPE_CHECKING:
    from burn.backend.device import Device


def resolve_device(device: Device | None) -> Device:
    """`device`, or the default backend's default device when None."""
    if device is not None:
        return device
    from burn.plugins import default_backend

    return default_backend().default_device()


class HostConstant:
    """A constant NumPy array (sinusoid tables, loss weights...) that becomes a tensor on the
    backend, device and float dtype of the tensor it is combined with, once per combination.

    Layers keep constants on the host rather than as tensors: a tensor built at ``init`` would be
    stuck on one backend, and break after ``valid()`` moves the params to the inner backend.
    """

    __slots__ = ("_array", "_factory", "_cache", "_lock")

    def __init__(self, array: Any = None, *, factory: Callable[[], Any] | None = None) -> None:
        """Give the array, or a `factory` that computes it on first use (large tables)."""
        if (array is None) == (factory is None):
            raise ValueError("HostConstant needs exactly one of array and factory")
        self._array = None if array is None else np.ascontiguousarray(array)
        self._factory = factory
        self._cache: dict[tuple[Any, ...], Tensor] = {}
        self._lock = threading.Lock()

    @property
    def array(self) -> np.ndarray:
        array = self._array
        if array is None:
            with self._lock:
                if self._array is None:
                    assert self._factory is not None
                    self._array = np.ascontiguousarray(self._factory())
                array = self._array
        return array

    def like(self, x: Tensor) -> Tensor:
        """The constant as a Float tensor next to `x` (same backend, device and dtype)."""
        backend = x._b
        device = x.device
        dtype = x.dtype
        key = (id(backend), device, dtype)
        tensor = self._cache.get(key)
        if tensor is None or tensor._b is not backend:
            tensor = Tensor.from_data(self.array, device=device, dtype=dtype)
            with self._lock:
                self._cache[key] = tensor
        return tensor

    def __repr__(self) -> str:
        if self._array is None:
            return "HostConstant(<not computed yet>)"
        return f"HostConstant(shape={self._array.shape}, dtype={self._array.dtype})"

    def __deepcopy__(self, memo: dict[int, Any]) -> HostConstant:
        if self._array is None:
            return HostConstant(factory=self._factory)
        return HostConstant(self._array.copy())
