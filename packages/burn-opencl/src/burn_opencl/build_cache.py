"""Where OpenCL program binaries are cached, and whether a build just compiled (for the notice).

burn-opencl builds its programs from source through pyopencl, and a build comes from one of two
caches: pyopencl's own (binaries by source hash, in ``$XDG_CACHE_HOME/pyopencl``), or, on drivers
that cache builds themselves (pocl, NVIDIA), the driver's (pyopencl then skips its own). `BuildWatch`
tells, cheaply, when a build compiled rather than loaded, so that the first one of the process logs
`burn.backend.compile_notice` with the cache folder:

- pyopencl's cache: pyopencl records whether the binary came from it (exact);
- pocl's (``POCL_CACHE_DIR``, else ``$XDG_CACHE_HOME/pocl/kcache``) and NVIDIA's
  (``CUDA_CACHE_PATH``, else ``~/.nv/ComputeCache``): a compile adds an entry folder, so the
  cache's folders changed since the runtime started mean a compile (another process compiling
  into the same cache at that moment counts too);
- another driver's cache: unknown, and no notice.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from burn.backend.compile_notice import compile_notice

POCL_PLATFORM = "Portable Computing Language"


def _xdg_cache() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")


def pocl_cache_dir() -> Path:
    """pocl's kernel cache: ``POCL_CACHE_DIR``, else ``$XDG_CACHE_HOME/pocl/kcache``."""
    env = os.environ.get("POCL_CACHE_DIR")
    return Path(env) if env else _xdg_cache() / "pocl" / "kcache"


def nvidia_cache_dir() -> Path:
    """NVIDIA's compute cache: ``CUDA_CACHE_PATH``, else ``~/.nv/ComputeCache``."""
    env = os.environ.get("CUDA_CACHE_PATH")
    return Path(env) if env else Path.home() / ".nv" / "ComputeCache"


def pyopencl_cache_dir() -> Path:
    """The folder pyopencl keeps program binaries in (its own rule, `pyopencl.cache`)."""
    try:
        import platformdirs  # pyopencl's dependency

        base = Path(platformdirs.user_cache_dir("pyopencl", "pyopencl"))
    except ImportError:  # pragma: no cover - pyopencl requires platformdirs
        base = _xdg_cache() / "pyopencl"
    if sys.platform == "darwin" and os.environ.get("XDG_CACHE_HOME"):
        base = Path(os.environ["XDG_CACHE_HOME"]) / "pyopencl"
    version = ".".join(str(i) for i in sys.version_info)
    return base / f"pyopencl-compiler-cache-v2-py{version}"


def entry_times(folder: Path) -> dict[str, int]:
    """The modification times of the folders right inside `folder` (empty when it does not exist).

    A compile into a two-level cache (``<cache>/<hash[:2]>/<hash[2:]>``, pocl's and NVIDIA's) adds
    or changes one of them; `folder` itself is not looked at: pocl writes temporary files there on
    every build, cached or not.

    Example:
        >>> entry_times(Path("/no/such/folder"))
        {}
    """
    try:
        with os.scandir(folder) as entries:
            return {e.name: e.stat().st_mtime_ns for e in entries if e.is_dir(follow_symlinks=False)}
    except OSError:
        return {}


class BuildWatch:
    """Logs the compile notice at the first build of this device's runtime that compiled.

    Args:
        platform: the OpenCL platform's name (picks the driver's cache, whose entries it lists once
            here to compare with later: the file system's own times, whatever its clock's grain).
    """

    def __init__(self, platform: str) -> None:
        name = platform.strip()
        self.driver_cache: tuple[Path, str] | None = None
        if name == POCL_PLATFORM:
            self.driver_cache = (pocl_cache_dir(), "POCL_CACHE_DIR")
        elif "NVIDIA" in name:
            self.driver_cache = (nvidia_cache_dir(), "CUDA_CACHE_PATH")
        self.before = {} if self.driver_cache is None else entry_times(self.driver_cache[0])
        self.said = False

    def built(self, program: Any) -> bool:
        """After ``program.build()``: log the notice if this build compiled and none was logged by
        this runtime yet; returns whether it logged."""
        if self.said:
            return False
        info = getattr(program, "_build_duration_info", None)  # (description, was_cached, seconds)
        if not isinstance(info, tuple) or len(info) < 2:
            return False
        description, was_cached = str(info[0]), bool(info[1])
        if was_cached:
            return False
        if "ICD" in description:  # "uncached source build (assuming cached by ICD)": the driver's cache
            if self.driver_cache is None:
                return False
            folder, setting = self.driver_cache
            if entry_times(folder) == self.before:
                return False
        elif "cache disabled" in description:  # PYOPENCL_NO_CACHE
            folder, setting = None, ""
        else:
            folder, setting = pyopencl_cache_dir(), "XDG_CACHE_HOME"
        self.said = True
        return compile_notice("burn-opencl", "OpenCL programs", folder, setting)
