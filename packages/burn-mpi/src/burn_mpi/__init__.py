"""burn-mpi: the MPI collective engine of `burn.distributed`, selected with ``init(engine="mpi")``
or picked by itself under ``mpiexec``.

`MpiEngine` is imported on first access (it imports mpi4py, which initializes MPI), so that loading
the plugin entry point stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from burn_mpi._version import __version__

if TYPE_CHECKING:
    from burn_mpi.engine import MpiEngine

__all__ = ["MpiEngine", "__version__"]


def __getattr__(name: str) -> Any:
    if name == "MpiEngine":
        from burn_mpi.engine import MpiEngine

        return MpiEngine
    raise AttributeError(f"module 'burn_mpi' has no attribute {name!r}")
