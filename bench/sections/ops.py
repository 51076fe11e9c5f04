"""Per-op cost without grad: burn(ndarray) vs torch vs NumPy on tiny tensors (overhead) and on
large ones (throughput)."""

from __future__ import annotations

from typing import Any

import numpy as np
from harness import Fn, Row, Settings, Table, setup_torch, timed_row


def op_table(a: np.ndarray, b: np.ndarray, backend: Any, torch: Any) -> dict[str, tuple[Fn, Fn | None, Fn]]:
    """name -> (burn, torch, numpy) closures for add, mul, matmul, sum_dim, reshape, exp."""
    import burn

    ta, tb = burn.Tensor.from_data(a, backend=backend), burn.Tensor.from_data(b, backend=backend)
    xa = torch.from_numpy(a.copy()) if torch else None
    xb = torch.from_numpy(b.copy()) if torch else None
    flat = (a.size,)

    def t(fn: Fn) -> Fn | None:
        return fn if torch else None

    return {
        "add": (lambda: ta + tb, t(lambda: xa + xb), lambda: np.add(a, b)),
        "mul": (lambda: ta * tb, t(lambda: xa * xb), lambda: np.multiply(a, b)),
        "matmul": (lambda: ta @ tb, t(lambda: xa @ xb), lambda: np.matmul(a, b)),
        "sum_dim": (
            lambda: ta.sum_dim(1),
            t(lambda: xa.sum(1, keepdim=True)),
            lambda: np.sum(a, axis=1, keepdims=True),
        ),
        "exp": (lambda: ta.exp(), t(lambda: xa.exp()), lambda: np.exp(a)),
        "reshape": (lambda: ta.reshape(flat), t(lambda: xa.reshape(flat)), lambda: a.reshape(flat)),
    }


def rows_for(size: int, settings: Settings, backend: Any, torch: Any) -> list[Row]:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((size, size)).astype(np.float32)
    b = rng.standard_normal((size, size)).astype(np.float32)
    unit = "us" if size <= 64 else "ms"
    return [
        timed_row(f"{name} {size}x{size}", {"burn": fb, "torch": ft, "numpy": fn}, settings, unit)
        for name, (fb, ft, fn) in op_table(a, b, backend, torch).items()
    ]


def run(settings: Settings) -> list[Table]:
    import burn

    backend, torch = burn.backend("ndarray"), setup_torch()
    return [
        Table(
            "per-op overhead, no grad: tiny tensors (4x4 float32), burn(ndarray)",
            rows_for(4, settings, backend, torch),
        ),
        Table(
            "per-op throughput, no grad: large tensors (float32)",
            rows_for(512 if settings.quick else 1024, settings, backend, torch),
        ),
    ]
