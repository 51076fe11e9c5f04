"""The entry points of burn-cuda: the backend ``cuda`` (group ``burn.backends``, this module's
hook) and the collective engine ``nccl`` (group ``burn.collectives``, the `collectives` object).

Imports nothing heavy: CuPy and mpi4py are imported by the probes and the factories, when called.
"""

from __future__ import annotations

from typing import Any

import burn.plugins as bp
from burn.plugins.specs import EngineSpec

INSTALL = "pip install burn-cuda[cuda12] (or [cuda13])"
NO_DEVICE_FIX = (
    "run on a machine with an NVIDIA GPU and its driver (nvidia-smi must list it); if the driver "
    "is older than the CUDA major of your CuPy wheel, install the matching extra: "
    "burn-cuda[cuda12] or burn-cuda[cuda13]"
)
NO_KERNELS_FIX = (
    "CuPy found the GPU but cannot compile or run a kernel (NVRTC/cuBLAS missing?): install a CUDA "
    "toolkit, or pip install burn-cuda[cuda12-ctk] (or [cuda13-ctk]) for the CUDA libraries from PyPI"
)


def _factory(**options: Any) -> Any:
    from burn_cuda.backend import Cuda

    return Cuda(**options)


def _first_line(exc: BaseException) -> str:
    text = " ".join(line.strip() for line in str(exc).splitlines() if line.strip())
    return f"{type(exc).__name__}: {text[:300]}" if text else type(exc).__name__


def _probe() -> str | None:
    """None when CuPy is installed and can run a kernel on a CUDA device, else why not and the fix."""
    try:
        import cupy
    except ImportError:
        return f"cupy is not installed: {INSTALL}"
    except Exception as exc:  # a broken install raises other errors at import
        return f"cupy cannot be imported ({_first_line(exc)}): reinstall it with {INSTALL}"
    try:
        count = int(cupy.cuda.runtime.getDeviceCount())
    except Exception as exc:
        return f"no CUDA device: {_first_line(exc)}; {NO_DEVICE_FIX}"
    if count == 0:
        return f"no CUDA device: cupy found 0 devices; {NO_DEVICE_FIX}"
    try:
        # One tiny elementwise op: checks the driver, NVRTC (CuPy compiles kernels at run time)
        # and the memory pool together.
        with cupy.cuda.Device(0):
            value = int((cupy.arange(3, dtype=cupy.int32) + 1).sum())
        if value != 6:
            return f"CUDA device 0 computed 1+2+3 = {value}: the device or driver is broken"
    except Exception as exc:
        return f"CUDA device 0 cannot run kernels ({_first_line(exc)}): {NO_KERNELS_FIX}"
    return None


@bp.hookimpl
def burn_backends() -> list[bp.BackendSpec]:
    return [
        bp.BackendSpec(
            name="cuda",
            factory=_factory,
            probe=_probe,
            description="CuPy on NVIDIA GPUs (cuBLAS matmul, fused CUDA kernels)",
            package="burn-cuda",
        )
    ]


# -- the NCCL collective engine (entry point group ``burn.collectives``) ------------------------------
NCCL_INSTALL = "pip install 'burn-cuda[nccl]' (burn-mpi with mpi4py and MPICH from wheels)"


def _nccl_factory(**options: Any) -> Any:
    from burn_cuda.nccl import NcclEngine

    return NcclEngine(**options)


def _nccl_probe() -> str | None:
    """None when the nccl engine can run here: CuPy on a working GPU, CuPy's NCCL, burn-mpi."""
    reason = _probe()
    if reason is not None:
        return reason
    try:
        from cupy.cuda import nccl
    except Exception as exc:
        return f"cupy.cuda.nccl cannot be imported ({_first_line(exc)})"
    if not getattr(nccl, "available", False):
        return (
            "CuPy cannot load the NCCL library: pip install nvidia-nccl-cu12 (or -cu13, matching the "
            "CuPy wheel), or install NCCL from NVIDIA"
        )
    import importlib.util  # here, not at module level: discovery imports nothing it does not need

    for module in ("mpi4py", "burn_mpi"):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed: the nccl engine starts through MPI; {NCCL_INSTALL}"
    return None


class _Collectives:
    """The ``burn.collectives`` plugin object: a separate object because each entry-point group's
    plugins implement only that group's hooks."""

    @bp.hookimpl
    def burn_collective_engines(self) -> list[EngineSpec]:
        return [
            EngineSpec(
                name="nccl",
                factory=_nccl_factory,
                probe=_nccl_probe,
                description="NCCL on burn-cuda's GPU arrays (no host copies); mpiexec, init('nccl')",
                package="burn-cuda",
            )
        ]


collectives = _Collectives()
"""The engine plugin, registered as ``nccl = "burn_cuda.plugin:collectives"``."""
