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

On top of those, `ProgramCache` keeps each built program's binary (``CL_PROGRAM_BINARIES``) in
burn-opencl's own folder (``BURN_OPENCL_CACHE_DIR``, else ``$XDG_CACHE_HOME/burn-opencl``), keyed by
the platform, device, driver version, build options and source, and later processes build from the
binary. Why: a source build that pocl finds in its cache still runs clang's preprocessor over the
source and pocl's headers to hash it, 0.15-0.7 s a program (the CNN example builds 25-43 programs
before its first step: 4-6 s of a warm start), where a build from the binary takes 2-7 ms. The
first-compile notice names this folder when the cache is on.
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from burn.backend.compile_notice import compile_notice

POCL_PLATFORM = "Portable Computing Language"
CACHE_SETTING = "BURN_OPENCL_CACHE_DIR"


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


def program_cache_dir() -> Path | None:
    """burn-opencl's folder of program binaries: ``BURN_OPENCL_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/burn-opencl``; None when ``BURN_OPENCL_CACHE_DIR`` is set empty (no cache).

    Example:
        >>> os.environ["BURN_OPENCL_CACHE_DIR"] = "/tmp/burn-opencl-doc"
        >>> program_cache_dir()
        PosixPath('/tmp/burn-opencl-doc')
        >>> del os.environ["BURN_OPENCL_CACHE_DIR"]
    """
    env = os.environ.get(CACHE_SETTING)
    if env is None:
        return _xdg_cache() / "burn-opencl"
    return Path(env) if env else None


class ProgramCache:
    """Program binaries on disk, one file per (device, driver, options, source).

    Args:
        folder: where the files go (created on the first store).
        device: the pyopencl device whose identity (platform, name, versions) keys the entries.

    Example:
        >>> class Dev:
        ...     name = version = driver_version = "doc"
        ...     class platform:
        ...         name = version = "doc"
        >>> import tempfile
        >>> cache = ProgramCache(Path(tempfile.mkdtemp()), Dev())
        >>> cache.load("src", ("-O",)) is None
        True
        >>> cache.store("src", ("-O",), b"binary")
        >>> cache.load("src", ("-O",))
        b'binary'
    """

    def __init__(self, folder: Path, device: Any) -> None:
        self.folder = folder
        self._identity = "\0".join(
            str(v).strip()
            for v in (device.platform.name, device.platform.version, device.name, device.version,
                      device.driver_version)
        )  # fmt: skip

    def _path(self, source: str, options: tuple[str, ...]) -> Path:
        text = "\0".join((self._identity, " ".join(options), source))
        digest = hashlib.sha256(text.encode()).hexdigest()
        return self.folder / digest[:2] / f"{digest[2:]}.bin"

    def load(self, source: str, options: tuple[str, ...]) -> bytes | None:
        """The stored binary of `source` built with `options`, or None."""
        try:
            return self._path(source, options).read_bytes()
        except OSError:
            return None

    def store(self, source: str, options: tuple[str, ...], binary: bytes) -> None:
        """Keep `binary` (written to a temporary file, then renamed: readers never see half a file;
        a folder that cannot be written leaves the cache off for this program, silently)."""
        path = self._path(source, options)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            with os.fdopen(fd, "wb") as f:
                f.write(binary)
            os.replace(tmp, path)
        except OSError:
            return


class BuildWatch:
    """Logs the compile notice at the first build of this device's runtime that compiled.

    Args:
        platform: the OpenCL platform's name (picks the driver's cache, whose entries it lists once
            here to compare with later: the file system's own times, whatever its clock's grain).
        binaries: burn-opencl's `ProgramCache` folder, which the notice names when given (later
            runs load from it); None: the notice names the cache the build went through.
    """

    def __init__(self, platform: str, binaries: Path | None = None) -> None:
        self.binaries = binaries
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
        if self.binaries is not None:
            folder, setting = self.binaries, CACHE_SETTING
        return compile_notice("burn-opencl", "OpenCL programs", folder, setting)
