"""CUDA devices, the device scope of ops, and synchronization.

Work is queued on each device's default CuPy stream (the legacy per-device stream). Every thread
shares it, so tensors may move between threads without events; reading a result back to the host
waits for it, and `sync` waits for everything queued on a device.

CuPy runs an op on the *current* device and refuses arrays of another one. With one GPU the
current device is always device 0 and ops run as they are. With several, `scope_ops` wraps every
op so that it runs on the device of its first array (or of its ``device`` argument).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, TypeVar

import cupy as cp

from burn.backend.contract import contract_ops
from burn.backend.device import Device
from burn.errors import DeviceError

C = TypeVar("C", bound=type)


def device_count() -> int:
    """How many CUDA devices CuPy sees (0 where none or no driver)."""
    try:
        return int(cp.cuda.runtime.getDeviceCount())
    except cp.cuda.runtime.CUDARuntimeError:
        return 0


def device_id(device: Device, count: int) -> int:
    """The CUDA ordinal of a burn device, checked."""
    if device.backend != "cuda" or not isinstance(device.id, int) or not 0 <= device.id < count:
        raise DeviceError(f"cuda: {device} is not a CUDA device here ({count} device(s): cuda:0..)")
    return device.id


def parse_device(spec: int | str | None, count: int) -> int:
    """The ordinal `spec` names: an int, ``"N"`` or ``"cuda:N"``; None is device 0."""
    if spec is None:
        return 0
    text = str(spec).strip()
    if text.startswith("cuda:"):
        text = text[5:]
    try:
        index = int(text)
    except ValueError:
        index = -1
    if not 0 <= index < count:
        raise DeviceError(f"cuda: no device {spec!r}; devices are cuda:0..cuda:{count - 1}")
    return index


def sync(ordinal: int | None, count: int) -> None:
    """Wait for the work queued on device `ordinal` (every device when None)."""
    for i in range(count) if ordinal is None else (ordinal,):
        cp.cuda.Device(i).synchronize()


def _target(args: tuple[Any, ...], kwargs: dict[str, Any]) -> int | None:
    """The device an op runs on: its first CuPy array's, else its first `Device` argument's."""
    for value in (*args, *kwargs.values()):
        if isinstance(value, cp.ndarray):
            return int(value.device.id)
        if isinstance(value, (list, tuple)) and value and isinstance(value[0], cp.ndarray):
            return int(value[0].device.id)  # cat: a list of primitives
    for value in (*args, *kwargs.values()):
        if isinstance(value, Device) and isinstance(value.id, int):
            return value.id
    return None


def _scoped(fn: Callable[..., Any], method: bool) -> Callable[..., Any]:
    """`fn` run on its operands' device; `method` False for ufuncs bound as class attributes
    (not descriptors: called without ``self``)."""

    def op(self: Any, *args: Any, **kwargs: Any) -> Any:
        call = (lambda: fn(self, *args, **kwargs)) if method else (lambda: fn(*args, **kwargs))
        target = _target(args, kwargs)
        if target is None or target == cp.cuda.runtime.getDevice():
            return call()
        with cp.cuda.Device(target):
            return call()

    op.__name__ = getattr(fn, "__name__", "op")
    op.__doc__ = getattr(fn, "__doc__", None)
    return op


def scope_ops(cls: C) -> C:
    """A subclass of `cls` whose contract ops each run on their operands' device."""
    wrapped = {
        name: _scoped(getattr(cls, name), inspect.isfunction(getattr(cls, name)))
        for name in contract_ops(cls)
        if hasattr(cls, name)
    }
    return type(cls.__name__, (cls,), {**wrapped, "__doc__": cls.__doc__})  # type: ignore[return-value]


def on(backend: Any, device: Device) -> Any:
    """Context manager making `device` (of `backend`) CuPy's current device."""
    return cp.cuda.Device(device_id(device, len(backend._devices)))
