"""One thread setting for every installed backend: `set_num_threads` / `get_num_threads`.

burn-core keeps no pool itself: each backend plugin with CPU pools implements the hooks
`burn_set_num_threads` / `burn_get_num_threads` (burn-ndarray: its own pool, numba's and NumPy's
BLAS). Setting one pool alone is not enough: with burn-ndarray's pool at one thread, NumPy's BLAS
still ran matmuls on every core (a ported GPT measured 3.4x torch's CPU time until
``OPENBLAS_NUM_THREADS`` was set too).
"""

from __future__ import annotations

import os

from burn.plugins.registry import REGISTRY

ENV_VAR = "BURN_NUM_THREADS"

_count: int | None = None  # set by `set_num_threads` in this process


def _env_count() -> int | None:
    raw = os.environ.get(ENV_VAR, "").split(",")[0].strip()
    return int(raw) if raw.isdigit() and int(raw) > 0 else None


def set_num_threads(count: int) -> None:
    """Use `count` threads in every installed backend's CPU pools (and the BLAS they call).

    Overrides ``BURN_NUM_THREADS`` (read by each backend when it loads) for this process. Backends
    without CPU pools (GPU backends, decorators such as autodiff) are left as they are.

    Args:
        count: a positive number of threads; 1 runs every op on the calling thread.

    Raises:
        ValueError: `count` is not a positive int.

    Example:
        >>> import burn
        >>> before = burn.get_num_threads()
        >>> burn.set_num_threads(1)
        >>> burn.get_num_threads()
        1
        >>> burn.set_num_threads(before)
    """
    global _count
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError(f"set_num_threads: count must be a positive int, got {count!r}")
    REGISTRY.snapshot(strict=False)  # discover the installed plugins first
    REGISTRY.call_hook("burn_set_num_threads", count=count)
    _count = count


def get_num_threads() -> int:
    """The thread count burn's CPU backends use.

    The first installed backend's answer (burn-ndarray: the count given to `set_num_threads`,
    else ``BURN_NUM_THREADS``, else ``OMP_NUM_THREADS``, else every core); with no CPU backend,
    the count given to `set_num_threads`, else ``BURN_NUM_THREADS``, else the number of cores.

    Example:
        >>> import burn
        >>> burn.get_num_threads() >= 1
        True
    """
    REGISTRY.snapshot(strict=False)
    answer = REGISTRY.call_hook("burn_get_num_threads")  # a backend's own setter may have run since
    if isinstance(answer, int) and answer > 0:
        return answer
    return _count or _env_count() or os.cpu_count() or 1
