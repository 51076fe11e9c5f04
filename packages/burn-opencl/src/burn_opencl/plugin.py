"""The ``burn.backends`` entry point of burn-opencl: registers the backend ``opencl``.

Imports nothing heavy: pyopencl is imported by the probe and the factory, when called.
"""

from __future__ import annotations

from typing import Any

import burn.plugins as bp

FIX = "pip install pocl-binary-distribution"


def _factory(**options: Any) -> Any:
    from burn_opencl.backend import OpenCL

    return OpenCL(**options)


def _probe() -> str | None:
    """None when an OpenCL device can build and run kernels here, else why not and how to fix it."""
    try:
        import pyopencl as cl
    except ImportError as exc:
        return f"pyopencl cannot be imported ({exc}): pip install pyopencl"
    from burn_opencl._pocl import fix_device
    from burn_opencl.backend import cl_devices, resolve_device

    if not cl_devices():
        return f"no OpenCL platform found (no driver or ICD registered); to run on the CPU: {FIX}"
    try:
        index = resolve_device(None)
    except Exception as exc:  # a bad BURN_OPENCL_DEVICE
        return str(exc)
    device = cl_devices()[index][2]
    error = fix_device(cl, device)
    if error is not None:
        first = " ".join(line.strip() for line in error.splitlines() if line.strip())[:300]
        return f"OpenCL device {device.name.strip()!r} cannot build kernels: {first}"
    return None


@bp.hookimpl
def burn_backends() -> list[bp.BackendSpec]:
    return [
        bp.BackendSpec(
            name="opencl",
            factory=_factory,
            probe=_probe,
            description="PyOpenCL: any OpenCL device (CPUs through pocl, GPUs through their drivers)",
            package="burn-opencl",
        )
    ]
