"""Per-op cost of the ndarray backend next to the raw NumPy it wraps (development tool).

Prints, for tiny tensors (per-op overhead) and for large ones (throughput), the best-of-N time of
each backend op and of the NumPy expression doing the same work, and their ratio. Run it on a quiet
machine, from the repository root::

    PYTHONPATH=packages/burn-core/src:packages/burn-ndarray/src \
        python packages/burn-ndarray/tools/bench_ops.py
"""

from __future__ import annotations

import timeit
from collections.abc import Callable

import numpy as np

from burn_ndarray import NdArray

Case = tuple[str, Callable[[], object], Callable[[], object]]


def _cases(B: NdArray, shape: tuple[int, ...]) -> list[Case]:
    rng = np.random.default_rng(0)
    a = rng.standard_normal(shape).astype(np.float32)
    b = rng.standard_normal(shape).astype(np.float32)
    m = a > 0
    zero = np.float32(0)
    return [
        ("float_add", lambda: B.float_add(a, b), lambda: a + b),
        ("float_mul_scalar", lambda: B.float_mul_scalar(a, 2.0), lambda: a * 2.0),
        ("float_exp", lambda: B.float_exp(a), lambda: np.exp(a)),
        ("float_matmul", lambda: B.float_matmul(a, b.T), lambda: a @ b.T),
        ("float_sum_dim", lambda: B.float_sum_dim(a, 1), lambda: a.sum(1, keepdims=True)),
        ("float_sum", lambda: B.float_sum(a), lambda: a.sum().reshape(1)),
        ("float_max_dim", lambda: B.float_max_dim(a, 1), lambda: a.max(1, keepdims=True)),
        ("float_reshape", lambda: B.float_reshape(a, (-1,)), lambda: a.reshape(-1)),
        ("float_swap_dims", lambda: B.float_swap_dims(a, 0, 1), lambda: a.swapaxes(0, 1)),
        ("float_greater_elem", lambda: B.float_greater_elem(a, 0.5), lambda: a > 0.5),
        ("float_mask_fill", lambda: B.float_mask_fill(a, m, 0.0), lambda: np.where(m, zero, a)),
        ("float_clamp", lambda: B.float_clamp(a, -1.0, 1.0), lambda: np.clip(a, -1.0, 1.0)),
        ("relu", lambda: B.relu(a), lambda: np.maximum(a, 0)),
        ("relu_backward", lambda: B.relu_backward(a, b), lambda: np.where(a > 0, b, zero)),
        ("sigmoid", lambda: B.sigmoid(a), lambda: 1 / (1 + np.exp(-a))),
        ("softmax", lambda: B.softmax(a, 1), lambda: np.exp(a) / np.exp(a).sum(1, keepdims=True)),
        ("gelu (vs tanh)", lambda: B.gelu(a), lambda: np.tanh(a)),
    ]


def _best(fn: Callable[[], object], number: int) -> float:
    return min(timeit.repeat(fn, number=number, repeat=5)) / number


def main() -> None:
    B = NdArray()
    for label, shape, number, unit, scale in (
        ("tiny [2, 3]", (2, 3), 20000, "ns", 1e9),
        ("large [1000, 1000]", (1000, 1000), 5, "ms", 1e3),
    ):
        print(f"\n{label}: backend vs raw NumPy ({unit})")
        for name, ours, raw in _cases(B, shape):
            t_ours, t_raw = _best(ours, number), _best(raw, number)
            print(f"  {name:20s} {t_ours * scale:10.1f} {t_raw * scale:10.1f}  x{t_ours / t_raw:5.2f}")


if __name__ == "__main__":
    main()
