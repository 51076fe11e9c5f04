"""The int ops of `Autodiff` that need wrapping: those taking a device or returning a float
primitive. Every other int op runs on the inner backend's primitives unchanged, bound straight
to the inner's method (`burn_autodiff.backend.PASS_THROUGH`): no gradient flows through ints.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from burn_autodiff.node import ADTensor as AD

if TYPE_CHECKING:
    from burn.backend import Backend, Device
    from burn.foundations.data import TensorData
    from burn.foundations.distribution import Distribution
    from burn.foundations.dtype import DType

Shape = tuple[int, ...]


class AutodiffIntOps:
    """The wrapped int ops of `Autodiff` (mixed into it; see `burn.backend.ops.int`)."""

    _in: Backend
    _own_device: Callable[[Device], Device]  # provided by Autodiff
    _inner_device: Callable[[Device], Device]

    def int_into_float(self, tensor: Any, dtype: DType) -> AD:
        return AD(self._in.int_into_float(tensor, dtype), None)

    def int_device(self, tensor: Any) -> Device:
        return self._own_device(self._in.int_device(tensor))

    def int_from_data(self, data: TensorData, device: Device) -> Any:
        return self._in.int_from_data(data, self._inner_device(device))

    def int_to_device(self, tensor: Any, device: Device) -> Any:
        return self._in.int_to_device(tensor, self._inner_device(device))

    def int_full(self, shape: Shape, value: int, device: Device, dtype: DType) -> Any:
        return self._in.int_full(shape, value, self._inner_device(device), dtype)

    def int_zeros(self, shape: Shape, device: Device, dtype: DType) -> Any:
        return self._in.int_zeros(shape, self._inner_device(device), dtype)

    def int_ones(self, shape: Shape, device: Device, dtype: DType) -> Any:
        return self._in.int_ones(shape, self._inner_device(device), dtype)

    def int_empty(self, shape: Shape, device: Device, dtype: DType) -> Any:
        return self._in.int_empty(shape, self._inner_device(device), dtype)

    def int_arange(self, start: int, end: int, step: int, device: Device, dtype: DType) -> Any:
        return self._in.int_arange(start, end, step, self._inner_device(device), dtype)

    def int_random(self, shape: Shape, distribution: Distribution, device: Device, dtype: DType) -> Any:
        return self._in.int_random(shape, distribution, self._inner_device(device), dtype)
