"""Seeded random tensors: one `cupy.random.Generator` on cuRAND's Philox4x32-10 per device.

`Cuda.seed(n)` replaces the backend's random state (`CudaRandom`); each device's generator is then
built from ``SeedSequence([n, i])``, so a seed reproduces every draw that follows it, per device,
and devices draw different streams. ``Cuda.seed(n, thread=True)`` gives the calling thread a state
of its own (burn-core's `Backend.current_random`), with generators of its own.
Uniform draws are kept strictly below ``high`` after scaling and rounding, as on every backend.
"""

from __future__ import annotations

import secrets
import threading
from typing import Any

import cupy as cp
import numpy as np

from burn.backend.device import Device
from burn.backend.random_state import RandomState
from burn.foundations.distribution import Bernoulli, Distribution, Normal, Uniform
from burn_cuda._dtypes import F32, F64, I64
from burn_cuda._runtime import device_id, on

Array = Any


class Generators:
    """The per-device generators of one random state, built lazily from its seed."""

    def __init__(self, seed: int | None = None) -> None:
        self._lock = threading.Lock()
        self._seed = secrets.randbits(64) if seed is None else int(seed)
        self._by_device: dict[int, Any] = {}

    def get(self, ordinal: int) -> Any:
        """The generator of device `ordinal` (call with that device current)."""
        with self._lock:
            gen = self._by_device.get(ordinal)
            if gen is None:
                bits = cp.random.Philox4x3210(np.random.SeedSequence([self._seed, ordinal]))
                gen = cp.random.Generator(bits)
                self._by_device[ordinal] = gen
            return gen


class CudaRandom(RandomState):
    """The random state of `Cuda`: the host generator of burn-core's defaults and the per-device
    Philox generators, from one seed (None: fresh entropy)."""

    __slots__ = ("generators",)

    def __init__(self, seed: int | None) -> None:
        super().__init__(seed)
        self.generators = Generators(seed)


def _draw(backend: Any, device: Device, shape: tuple[int, ...], fn: Any) -> Array:
    """Call ``fn(generator, size)`` on `device`; empty and 0-d shapes handled here."""
    size = int(np.prod(shape, dtype=np.int64))
    with on(backend, device):
        if size == 0:
            return None
        gen = backend.current_random().generators.get(device_id(device, len(backend._devices)))
        return fn(gen, (size,)).reshape(shape)


def float_random(
    backend: Any, shape: tuple[int, ...], distribution: Distribution, device: Device, target: np.dtype
) -> Array:
    work = F64 if target == F64 else F32  # cuRAND draws float32 and float64 natively
    if isinstance(distribution, Uniform):
        low, high = distribution.low, distribution.high
        values = _draw(backend, device, shape, lambda g, s: g.random(s, dtype=work))
        if values is None:
            return _empty(backend, device, shape, target)
        values = (values * work.type(high - low) + work.type(low)).astype(target, copy=False)
        if high > low:
            # Rounding (scaling, or the cast to a narrower type) may land on `high`: keep [low, high).
            values = cp.minimum(values, np.nextafter(target.type(high), target.type(low)))
        return values
    if isinstance(distribution, Normal):
        values = _draw(backend, device, shape, lambda g, s: g.standard_normal(s, dtype=work))
        if values is None:
            return _empty(backend, device, shape, target)
        values = values * work.type(distribution.std) + work.type(distribution.mean)
        return values.astype(target, copy=False)
    if isinstance(distribution, Bernoulli):
        values = _draw(backend, device, shape, lambda g, s: g.random(s, dtype=F32))
        if values is None:
            return _empty(backend, device, shape, target)
        return (values < F32.type(distribution.prob)).astype(target)
    raise TypeError(f"float_random: unknown distribution {distribution!r}")


def int_random(
    backend: Any, shape: tuple[int, ...], distribution: Distribution, device: Device, target: np.dtype
) -> Array:
    """Uniform(low, high) draws integers in ``[low, high)``; Normal rounds; Bernoulli gives 0/1."""
    if isinstance(distribution, Uniform):
        low, high = int(distribution.low), int(distribution.high)
        values = _draw(backend, device, shape, lambda g, s: g.integers(low, high, size=s, dtype=I64))
    elif isinstance(distribution, Normal):
        mean, std = distribution.mean, distribution.std
        values = _draw(
            backend, device, shape, lambda g, s: cp.rint(g.standard_normal(s, dtype=F64) * std + mean)
        )
    elif isinstance(distribution, Bernoulli):
        prob = distribution.prob
        values = _draw(backend, device, shape, lambda g, s: g.random(s, dtype=F64) < prob)
    else:
        raise TypeError(f"int_random: unknown distribution {distribution!r}")
    if values is None:
        return _empty(backend, device, shape, target)
    return values.astype(target)


def _empty(backend: Any, device: Device, shape: tuple[int, ...], dtype: np.dtype) -> Array:
    with on(backend, device):
        return cp.empty(shape, dtype)
