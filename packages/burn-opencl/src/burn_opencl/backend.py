"""`OpenCL`: the burn backend on PyOpenCL (CPUs through pocl, GPUs through their vendors' drivers)."""

from __future__ import annotations

import os
import secrets
import threading
from typing import Any

import pyopencl as cl

from burn.backend.base import Backend
from burn.backend.capabilities import Capabilities
from burn.backend.device import Device
from burn.backend.random_state import RandomState
from burn.errors import BackendUnavailableError, DeviceError
from burn.foundations.dtype import DType
from burn_opencl._pocl import fix_device
from burn_opencl.fusion import FusionOps
from burn_opencl.kernels import random as rnd
from burn_opencl.ops.activation import OpenCLActivationOps
from burn_opencl.ops.bool import OpenCLBoolOps
from burn_opencl.ops.conv import OpenCLConvOps
from burn_opencl.ops.embedding import OpenCLEmbeddingOps
from burn_opencl.ops.float import OpenCLFloatOps
from burn_opencl.ops.int import OpenCLIntOps
from burn_opencl.ops.pool import OpenCLPoolOps
from burn_opencl.ops.sampling import OpenCLSamplingOps
from burn_opencl.pinned import PinnedHostBuffer
from burn_opencl.runtime import Runtime

ENV_DEVICE = "BURN_OPENCL_DEVICE"
ENV_FLOAT16 = "BURN_OPENCL_FLOAT16"
_MASK64 = (1 << 64) - 1

# Runtimes are per physical device and shared by every OpenCL backend instance, so tensors of
# `opencl` and `opencl(float_dtype=float64)` on one device can meet in one op.
_RUNTIMES: dict[int, Runtime] = {}
_RUNTIMES_LOCK = threading.Lock()
_DEVICES: list[tuple[int, int, Any]] | None = None


class PhiloxRandom(RandomState):
    """The random state of `OpenCL`: the host generator of burn-core's defaults and the Philox
    key and counter its kernels draw from, both from one seed (None: fresh entropy). The counter
    advances by the blocks each draw uses, so a seed reproduces every draw that follows it."""

    __slots__ = ("counter", "key", "lock")

    def __init__(self, seed: int | None) -> None:
        super().__init__(seed)
        self.lock = threading.Lock()
        if seed is None:
            self.key = secrets.randbits(64)
        else:
            self.key = (int(seed) * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019) & _MASK64
        self.counter = 0


def cl_devices() -> list[tuple[int, int, Any]]:
    """Every OpenCL device here as ``(platform index, device index in platform, device)``."""
    global _DEVICES
    if _DEVICES is None:
        found: list[tuple[int, int, Any]] = []
        try:
            platforms = cl.get_platforms()
        except cl.Error:
            platforms = []
        for p, platform in enumerate(platforms):
            try:
                devices = platform.get_devices()
            except cl.Error:
                continue
            found.extend((p, d, device) for d, device in enumerate(devices))
        _DEVICES = found
    return _DEVICES


def resolve_device(spec: int | str | None) -> int:
    """Index (into `cl_devices()`) of the device `spec` names: an index, ``"platform:device"``, or
    None for `BURN_OPENCL_DEVICE` or else the first GPU, or else the first device."""
    devices = cl_devices()
    if not devices:
        raise BackendUnavailableError(
            "opencl: no OpenCL platform found; to run on the CPU: pip install pocl-binary-distribution"
        )
    if spec is None:
        spec = os.environ.get(ENV_DEVICE) or None
    if spec is None:
        for i, (_, _, device) in enumerate(devices):
            if device.type & cl.device_type.GPU:
                return i
        return 0
    text = str(spec).strip()
    listing = "; ".join(f"{i} = {p}:{d} {dev.name.strip()}" for i, (p, d, dev) in enumerate(devices))
    try:
        if ":" in text:
            p_s, d_s = text.split(":", 1)
            for i, (p, d, _) in enumerate(devices):
                if p == int(p_s) and d == int(d_s):
                    return i
        elif 0 <= int(text) < len(devices):
            return int(text)
    except ValueError:
        pass
    raise DeviceError(f"opencl: no device {spec!r}; devices are: {listing}")


def runtime(index: int, device: Device) -> Runtime:
    """The shared runtime of device `index` (created, and fixed up for old pocl, on first use)."""
    found = _RUNTIMES.get(index)
    if found is not None:
        return found
    with _RUNTIMES_LOCK:
        found = _RUNTIMES.get(index)
        if found is None:
            cl_device = cl_devices()[index][2]
            error = fix_device(cl, cl_device)
            if error is not None:
                raise BackendUnavailableError(
                    f"opencl: {cl_device.name.strip()} cannot build kernels:\n{error}"
                )
            found = Runtime(Device("opencl", index), cl_device)
            _RUNTIMES[index] = found
    return found


class OpenCL(
    OpenCLFloatOps,
    OpenCLIntOps,
    OpenCLBoolOps,
    OpenCLActivationOps,
    OpenCLConvOps,
    OpenCLPoolOps,
    OpenCLSamplingOps,
    OpenCLEmbeddingOps,
    FusionOps,
    Backend,
):
    """The OpenCL backend.

    Tensors live in device buffers; ops enqueue generated kernels on one in-order, asynchronous
    queue per device (`sync()` waits). Kernels are compiled per op, dtype and layout on first use
    and cached in memory and, by pyopencl and pocl, on disk.

    Args:
        float_dtype: default float type (``float32``; ``float64`` where the device has cl_khr_fp64).
        int_dtype: default int type (``int64``).
        device: the default device: its index in `devices()`, or ``"platform:device"``. None reads
            ``BURN_OPENCL_DEVICE``, else takes the first GPU, else the first device.

    Example:
        >>> import burn
        >>> B = burn.backend("opencl")  # doctest: +SKIP
        >>> B.device_names()  # doctest: +SKIP
        ['opencl:0 Portable Computing Language / pthread-AMD EPYC']
        >>> x = burn.Tensor.ones((2, 3), device=B.default_device())  # doctest: +SKIP
    """

    name = "opencl"
    random_state = PhiloxRandom

    def __init__(
        self,
        float_dtype: DType | str = DType.F32,
        int_dtype: DType | str = DType.I64,
        device: int | str | None = None,
    ) -> None:
        self._device_spec = device
        self._index = resolve_device(device)
        self._devices = [Device("opencl", i, self) for i in range(len(cl_devices()))]
        rt = runtime(self._index, self._devices[self._index])
        dtypes = {DType.F32, DType.I64, DType.I32, DType.I16, DType.I8, DType.U8, DType.BOOL}
        if rt.fp64:
            dtypes.add(DType.F64)
        # float16 is stored as half and computed in float (vload_half/vstore_half are core OpenCL), so
        # it works everywhere; it is declared where the device has cl_khr_fp16, or on request.
        if rt.fp16 or os.environ.get(ENV_FLOAT16, "") not in ("", "0"):
            dtypes.add(DType.F16)
        features = {"async", "pinned_host"} | ({"multi_device"} if len(self._devices) > 1 else set())
        self._matrix_cache: dict[Any, Any] = {}
        super().__init__(float_dtype, int_dtype, Capabilities(frozenset(dtypes), frozenset(features)))

    # -- devices ----------------------------------------------------------------------------------
    def devices(self) -> list[Device]:
        """Every OpenCL device of every platform here (see `device_names`)."""
        return list(self._devices)

    def default_device(self) -> Device:
        return self._devices[self._index]

    def device_names(self) -> list[str]:
        """``"opencl:i platform / device"`` for each device, in `devices()` order."""
        return [
            f"opencl:{i} {device.platform.name.strip()} / {device.name.strip()}"
            for i, (_, _, device) in enumerate(cl_devices())
        ]

    def _rt(self, device: Device) -> Runtime:
        if (
            device.backend != "opencl"
            or not isinstance(device.id, int)
            or not 0 <= device.id < len(self._devices)
        ):
            raise DeviceError(f"opencl: {device} is not an OpenCL device here (devices: {self._devices})")
        return _RUNTIMES.get(device.id) or runtime(device.id, self._devices[device.id])

    def sync(self, device: Device | None = None) -> None:
        """Wait until the kernels queued on `device` (every device when None) have run."""
        if device is not None:
            self._rt(device).finish()
            return
        for rt in list(_RUNTIMES.values()):
            rt.finish()

    def host_buffer(self, nbytes: int, device: Device | None = None) -> PinnedHostBuffer:
        """`nbytes` of page-locked host memory that `device` uploads from asynchronously
        (the ``"pinned_host"`` capability; see `burn_opencl.pinned`)."""
        if isinstance(nbytes, bool) or not isinstance(nbytes, int) or nbytes < 1:
            raise ValueError(f"opencl host_buffer: nbytes must be a positive int, got {nbytes!r}")
        return PinnedHostBuffer(self._rt(device or self.default_device()), nbytes)

    def runtime(self, device: Device | None = None) -> Runtime:
        """The `Runtime` (context, queue, kernel cache) of `device` (default: the default device)."""
        return self._rt(device or self.default_device())

    # -- random: `seed` replaces the `PhiloxRandom` state (the calling thread's own with thread=True)
    def _next_counter(self, n: int) -> tuple[int, int]:
        state = self.current_random()
        assert isinstance(state, PhiloxRandom)
        with state.lock:
            counter = state.counter
            state.counter += rnd.blocks(n)
            return state.key, counter

    def options(self) -> dict[str, Any]:
        options = super().options()
        if self._device_spec is not None:
            options["device"] = self._device_spec
        return options
