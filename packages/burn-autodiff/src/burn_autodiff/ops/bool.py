"""The bool ops of `Autodiff` that need wrapping: those taking a device or returning a float
primitive. Every other bool op runs on the inner backend's primitives unchanged, bound straight
to the inner's method (`burn_autodiff.backend.PASS_THROUGH`): no gradient flows through bools.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from burn_autodiff.node import ADTensor as AD

if TYPE_CHECKING:
    from burn.backend import Backend, Device
    from burn.foundations.data import TensorData
    from burn.foundations.dtype import DType

Shape = tuple[int, ...]


class AutodiffBoolOps:
    """The wrapped bool ops of `Autodiff` (mixed into it; see `burn.backend.ops.bool`)."""

    _in: Backend
    _own_device: Callable[[Device], Device]  # provided by Autodiff
    _inner_device: Callable[[Device], Device]

    def bool_into_float(self, tensor: Any, dtype: DType) -> AD:
        return AD(self._in.bool_into_float(tensor, dtype), None)

    def bool_device(self, tensor: Any) -> Device:
        return self._own_device(self._in.bool_device(tensor))

    def bool_from_data(self, data: TensorData, device: Device) -> Any:
        return self._in.bool_from_data(data, self._inner_device(device))

    def bool_to_device(self, tensor: Any, device: Device) -> Any:
        return self._in.bool_to_device(tensor, self._inner_device(device))

    def bool_full(self, shape: Shape, value: bool, device: Device) -> Any:
        return self._in.bool_full(shape, value, self._inner_device(device))

    def bool_zeros(self, shape: Shape, device: Device) -> Any:
        return self._in.bool_zeros(shape, self._inner_device(device))

    def bool_ones(self, shape: Shape, device: Device) -> Any:
        return self._in.bool_ones(shape, self._inner_device(device))

    def bool_empty(self, shape: Shape, device: Device) -> Any:
        return self._in.bool_empty(shape, self._inner_device(device))
