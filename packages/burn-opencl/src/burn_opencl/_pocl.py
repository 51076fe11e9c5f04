"""Work around pocl builds whose LLVM does not know the host CPU.

pocl-binary-distribution 3.0 (the newest wheel on PyPI) links LLVM 14. On CPUs newer than that
LLVM (AMD Zen 5, for example) ``llvm::sys::getHostCPUName()`` answers ``"generic"``, pocl stores it
as the device's target CPU, and clang 14 then rejects every kernel with
``error: unknown target CPU 'generic'``: no program builds at all.

pocl 3.0 reads no option or environment variable for the CPU name, so the only remedy that needs
no other install is to point the device's ``llvm_cpu`` field at a CPU name LLVM 14 knows and whose
instruction set the host has. We find that field by its neighbour (the target triple, the field
before it in pocl's ``struct _cl_device_id``), check both strings, and only then replace it. The
fix runs only when a tiny kernel fails to build with exactly that error, can be turned off with
``BURN_OPENCL_POCL_CPU=off``, and ``BURN_OPENCL_POCL_CPU=<name>`` picks the CPU name by hand.
"""

from __future__ import annotations

import ctypes
import os
from typing import Any

_PROBE_SRC = "__kernel void burn_probe(__global int* o) { o[get_global_id(0)] = 1; }"
_UNKNOWN_CPU = "unknown target CPU 'generic'"
# Names kept alive for as long as the process runs: pocl keeps the pointer.
_KEEP: list[Any] = []


def _cpu_flags() -> set[str]:
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def _best_cpu_name() -> str:
    """The newest LLVM 14 x86 CPU whose instruction set is a subset of the host's."""
    flags = _cpu_flags()
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512cd"} <= flags:
        return "skylake-avx512"
    if {"avx2", "fma", "bmi2"} <= flags:
        return "haswell"
    if "avx" in flags:
        return "sandybridge"
    return "x86-64"


def _readable_ranges() -> list[tuple[int, int]]:
    ranges = []
    with open("/proc/self/maps", encoding="ascii") as f:
        for line in f:
            parts = line.split()
            if "r" not in parts[1]:
                continue
            lo, hi = parts[0].split("-")
            ranges.append((int(lo, 16), int(hi, 16)))
    return ranges


def _find_cpu_field(device_ptr: int) -> int | None:
    """Address of the device struct's ``llvm_cpu`` pointer when it holds ``"generic"``."""
    ranges = _readable_ranges()

    def readable(addr: int, size: int) -> bool:
        return any(lo <= addr and addr + size <= hi for lo, hi in ranges)

    def string_at(addr: int) -> bytes:
        ptr = ctypes.c_uint64.from_address(addr).value
        if not ptr or not readable(ptr, 16):
            return b""
        return ctypes.string_at(ptr, 16)

    # The struct is a few KiB; the two fields sit well inside the first 4 KiB.
    for off in range(0, 4096, 8):
        if not readable(device_ptr + off, 16):
            return None
        if string_at(device_ptr + off).startswith(b"x86_64-") and string_at(device_ptr + off + 8).startswith(
            b"generic\0"
        ):
            return device_ptr + off + 8
    return None


_BUILDS: set[int] = set()  # the devices (``int_ptr``) that built the probe


def _builds(cl: Any, device: Any) -> str | None:
    """None when a tiny kernel builds on `device`, else the error text."""
    ctx = cl.Context([device])
    try:
        cl.Program(ctx, _PROBE_SRC).build()
    except cl.Error as exc:
        return str(exc)
    return None


def fix_device(cl: Any, device: Any) -> str | None:
    """Make `device` build kernels if it is a pocl CPU device hit by the unknown-CPU bug.

    Returns None when the device builds kernels (after the fix if one was needed), else the build
    error, for the probe to show. A device that built once is not probed again in this process
    (the backend's probe and its first runtime both ask; each probe is a compiler run, 0.15-0.7 s
    of a warm start on pocl).
    """
    if device.int_ptr in _BUILDS:
        return None
    error = _fix(cl, device)
    if error is None:
        _BUILDS.add(device.int_ptr)
    return error


def _fix(cl: Any, device: Any) -> str | None:
    error = _builds(cl, device)
    if error is None or _UNKNOWN_CPU not in error:
        return error
    choice = os.environ.get("BURN_OPENCL_POCL_CPU", "")
    if choice.lower() == "off" or "Portable Computing Language" not in device.platform.name:
        return error
    field = _find_cpu_field(device.int_ptr)
    if field is None:
        return error
    name = ctypes.create_string_buffer((choice or _best_cpu_name()).encode("ascii"))
    _KEEP.append(name)
    ctypes.c_uint64.from_address(field).value = ctypes.addressof(name)
    return _builds(cl, device)
