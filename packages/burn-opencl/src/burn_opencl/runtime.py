"""One OpenCL device in use: its context, in-order queue, memory pool and compiled kernels."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pyopencl as cl
import pyopencl.tools as cl_tools

from burn.backend.device import Device
from burn_opencl.build_cache import BuildWatch, ProgramCache, program_cache_dir
from burn_opencl.dtypes import PRELUDE


class KernelBuildError(RuntimeError):
    """An OpenCL program failed to build; the message holds the build log and the source."""


class DeviceMemoryError(MemoryError):
    """The device could not allocate a buffer; the message names the size and the device."""


def _human(nbytes: int) -> str:
    size = float(nbytes)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{nbytes} B"  # pragma: no cover


class Runtime:
    """Everything burn-opencl keeps per device.

    Kernels are built on first use from generated source and kept in `kernels` by a key naming
    the op, dtypes and layout; their program binaries are kept on disk
    (`burn_opencl.build_cache.ProgramCache`), so later processes skip the compiler. All launches
    go through `lock`: pyopencl kernel objects hold their arguments, so two threads must not set
    them at once.

    Attributes:
        device: the burn `Device` (``opencl:0``).
        cl_device: the pyopencl device.
        queue: the in-order command queue every op of this device is enqueued on.
        fp64: whether the device has ``cl_khr_fp64``.
        fp16: whether the device has ``cl_khr_fp16``.
        is_cpu: whether the device is a CPU (picks the GEMM kernel).
    """

    __slots__ = (
        "device",
        "cl_device",
        "ctx",
        "queue",
        "pool",
        "lock",
        "kernels",
        "programs",
        "fp64",
        "fp16",
        "is_cpu",
        "max_alloc",
        "max_group",
        "description",
        "watch",
        "binaries",
    )

    def __init__(self, device: Device, cl_device: Any) -> None:
        self.device = device
        self.cl_device = cl_device
        self.ctx = cl.Context([cl_device])
        self.queue = cl.CommandQueue(self.ctx)
        self.pool = cl_tools.MemoryPool(cl_tools.ImmediateAllocator(self.queue))
        self.lock = threading.RLock()
        self.kernels: dict[Any, cl.Kernel] = {}
        self.programs: dict[Any, cl.Program] = {}
        extensions = cl_device.extensions.split()
        self.fp64 = "cl_khr_fp64" in extensions
        self.fp16 = "cl_khr_fp16" in extensions
        self.is_cpu = bool(cl_device.type & cl.device_type.CPU)
        self.max_alloc = int(cl_device.max_mem_alloc_size)
        self.max_group = int(cl_device.max_work_group_size)
        self.description = f"{cl_device.platform.name.strip()} / {cl_device.name.strip()}"
        folder = program_cache_dir()
        self.binaries = None if folder is None else ProgramCache(folder, cl_device)
        self.watch = BuildWatch(cl_device.platform.name, folder)  # the first-compile notice (build_cache)

    # -- memory -------------------------------------------------------------------------------
    def alloc(self, nbytes: int, what: str = "tensor") -> Any:
        """A device buffer of at least `nbytes` bytes (never zero: OpenCL forbids empty buffers)."""
        nbytes = max(int(nbytes), 8)
        if nbytes > self.max_alloc:
            raise DeviceMemoryError(
                f"{self.device}: cannot allocate {_human(nbytes)} ({nbytes} bytes) for {what}: the largest "
                f"single allocation on {self.description} is {_human(self.max_alloc)}"
            )
        try:
            with self.lock:
                return self.pool.allocate(nbytes)
        except cl.Error as exc:
            raise DeviceMemoryError(
                f"{self.device}: out of device memory allocating {_human(nbytes)} ({nbytes} bytes) for "
                f"{what} on {self.description}: {exc}"
            ) from exc

    def upload(self, array: np.ndarray) -> Any:
        """A new buffer holding the bytes of the C-contiguous `array`."""
        buf = self.alloc(array.nbytes, f"an upload of shape {array.shape} {array.dtype}")
        if array.nbytes:
            with self.lock:
                cl.enqueue_copy(self.queue, buf, array)
        return buf

    def download(self, buf: Any, out: np.ndarray, byte_offset: int = 0) -> np.ndarray:
        """Fill `out` from `buf` starting at `byte_offset`; waits for queued work."""
        if out.nbytes:
            with self.lock:
                cl.enqueue_copy(self.queue, out, buf, src_offset=byte_offset)
        return out

    def finish(self) -> None:
        with self.lock:
            self.queue.finish()

    # -- kernels ------------------------------------------------------------------------------
    def build(
        self,
        key: Any,
        names: Sequence[str],
        source: Callable[[], str],
        options: Sequence[str] = (),
        arg_types: Callable[[str], Sequence[Any]] | None = None,
    ) -> dict[str, cl.Kernel]:
        """Build (once) the program `key`, returning its kernels `names`.

        `source()` is only called on a cache miss. `arg_types(name)` gives the scalar argument
        types of a kernel (None for buffers) so that launches convert Python numbers quickly.
        """
        with self.lock:
            program = self.programs.get(key)
            if program is None:
                src = PRELUDE + source()
                program = self._from_binary(src, tuple(options))
                if program is not None:
                    self.programs[key] = program
            if program is None:
                try:
                    program = cl.Program(self.ctx, src).build(options=list(options))
                except cl.Error as exc:
                    numbered = "\n".join(f"{i + 1:4d} {line}" for i, line in enumerate(src.splitlines()))
                    raise KernelBuildError(
                        f"burn-opencl: building kernels {', '.join(names)} for {self.device} "
                        f"({self.description}) failed.\nBuild log:\n{exc}\n--- source ---\n{numbered}"
                    ) from None
                self.programs[key] = program
                self.watch.built(program)
                if self.binaries is not None:
                    (binary,) = program.get_info(cl.program_info.BINARIES)
                    self.binaries.store(src, tuple(options), bytes(binary))
            found = {}
            for name in names:
                kernel = self.kernels.get((key, name))
                if kernel is None:
                    kernel = cl.Kernel(program, name)
                    if arg_types is not None:
                        kernel.set_scalar_arg_dtypes(list(arg_types(name)))
                    self.kernels[(key, name)] = kernel
                found[name] = kernel
            return found

    def _from_binary(self, src: str, options: tuple[str, ...]) -> cl.Program | None:
        """`src` built from its binary in `binaries`; None when absent or rejected by the driver (a
        driver update: the source build that follows replaces it)."""
        if self.binaries is None:
            return None
        binary = self.binaries.load(src, options)
        if binary is None:
            return None
        try:
            return cl.Program(self.ctx, [self.cl_device], [binary]).build(options=list(options))
        except cl.Error:
            return None

    def kernel(
        self,
        key: Any,
        name: str,
        source: Callable[[], str],
        options: Sequence[str] = (),
        arg_types: Sequence[Any] | None = None,
    ) -> cl.Kernel:
        """The kernel `name` of program `key` (a program with one kernel), built on first use."""
        kernel = self.kernels.get((key, name))
        if kernel is None:
            types = None if arg_types is None else (lambda _name: arg_types)
            kernel = self.build(key, (name,), source, options, types)[name]
        return kernel

    def launch(
        self, kernel: cl.Kernel, global_size: tuple[int, ...], local_size: tuple[int, ...] | None, *args: Any
    ) -> None:
        """Enqueue `kernel`; returns at once (the queue is asynchronous)."""
        with self.lock:
            kernel(self.queue, global_size, local_size, *args)
