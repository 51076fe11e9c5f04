"""burn-opencl: the burn backend on PyOpenCL.

Importing this package is cheap: `OpenCL` (and pyopencl with it) loads on first access, so that
burn's plugin discovery, which imports `burn_opencl.plugin`, never pulls in pyopencl.

Example:
    >>> import burn
    >>> B = burn.backend("opencl")  # doctest: +SKIP
    >>> from burn_opencl import OpenCL
    >>> OpenCL(float_dtype="float64").name  # doctest: +SKIP
    'opencl'
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from burn._moved import register
from burn_opencl._version import __version__

if TYPE_CHECKING:
    from burn_opencl.backend import OpenCL
    from burn_opencl.runtime import DeviceMemoryError, KernelBuildError
    from burn_opencl.tensor import CLTensor

__all__ = ["CLTensor", "DeviceMemoryError", "KernelBuildError", "OpenCL", "__version__"]

_LAZY = {
    "OpenCL": "burn_opencl.backend",
    "CLTensor": "burn_opencl.tensor",
    "DeviceMemoryError": "burn_opencl.runtime",
    "KernelBuildError": "burn_opencl.runtime",
}


# Modules that moved to the op-family layout (issue 33): the old paths keep importing.
_OPS = "burn_opencl.ops."
register({
    "burn_opencl.tensor_ops": (_OPS + "float", _OPS + "int", _OPS + "bool", _OPS + "tensor_common"),
    "burn_opencl.module_ops": (
        _OPS + "conv", _OPS + "pool", _OPS + "sampling", _OPS + "embedding", _OPS + "activation",
        _OPS + "module_common", _OPS + "tensor_common",
    ),
    "burn_opencl.kernels.nn": (
        "burn_opencl.kernels.conv", "burn_opencl.kernels.pool", "burn.backend.xp.windows"
    ),
})


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'burn_opencl' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
