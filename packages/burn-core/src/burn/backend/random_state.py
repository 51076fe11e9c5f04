"""`RandomState`: one stream of a backend's random draws, shared by every thread or owned by one.

A backend holds one shared state, which `Backend.seed(n)` replaces and which every thread draws
from (draws of several threads interleave in the order they happen, as with PyTorch's global
generator). `Backend.seed(n, thread=True)` gives the calling thread a state of its own instead:
that thread's draws follow from `n` alone, whatever other threads do. Random ops reach the state
in use through `Backend.current_random()`, so the choice is made here once for every backend.
"""

from __future__ import annotations

import numpy as np

__all__ = ["RandomState"]


class RandomState:
    """The state random ops advance: the host generator `rng` (NumPy's PCG64), which burn-core's
    default random ops and host backends draw from.

    A backend whose draws come from elsewhere (device Philox generators) subclasses it with that
    state, built from the same seed, and names the subclass in `Backend.random_state`.

    Args:
        seed: the seed; None draws fresh entropy from the OS.

    Example:
        >>> a, b = RandomState(3), RandomState(3)
        >>> bool(a.rng.random() == b.rng.random())
        True
    """

    __slots__ = ("rng", "seed")

    def __init__(self, seed: int | None) -> None:
        self.seed = seed
        self.rng: np.random.Generator = np.random.default_rng(seed)
