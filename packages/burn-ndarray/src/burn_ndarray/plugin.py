"""The ``burn.backends`` entry point of burn-ndarray: registers the backend ``ndarray``.

Imports nothing heavy: the backend module is imported by the factory, on first use.
"""

from __future__ import annotations

from typing import Any

import burn.plugins as bp


def _factory(**options: Any) -> Any:
    from burn_ndarray.backend import NdArray

    return NdArray(**options)


def _probe() -> str | None:
    return None  # NumPy is a dependency: the backend runs wherever the package is installed


@bp.hookimpl
def burn_backends() -> list[bp.BackendSpec]:
    return [
        bp.BackendSpec(
            name="ndarray",
            factory=_factory,
            probe=_probe,
            description="NumPy on the CPU",
            package="burn-ndarray",
        )
    ]


@bp.hookimpl
def burn_set_num_threads(count: int) -> None:
    from burn_ndarray.runtime import threads  # its pool, numba's and NumPy's BLAS

    threads.set_num_threads(count)


@bp.hookimpl
def burn_get_num_threads() -> int:
    from burn_ndarray.runtime import threads

    return threads.get_num_threads()
