"""Where the threaded paths start paying (development tool): the size thresholds of
`burn_ndarray.runtime.split` and of the ops that split or compile (activation, reductions, optim).

For each op family and a range of element counts, prints the best-of-N time of the op with the
threshold at 1 (always split / compiled) and at infinity (never), at the thread count given
(default: ``BURN_NUM_THREADS`` / every core), and their ratio; a per-thread threshold belongs where
the ratio drops below 1 (``*_MIN_SIZE``: measure those at one thread). Run it on a quiet machine,
from the repository root::

    python packages/burn-ndarray/tools/bench_thresholds.py [threads] [name filter]

The filter keeps the thresholds whose name contains it (``GELU``, ``NATIVE``...).
"""

from __future__ import annotations

import sys
import timeit
from collections.abc import Callable

import numpy as np

import burn_ndarray
from burn_ndarray import NdArray
from burn_ndarray.ops import activation, optim, reductions
from burn_ndarray.ops import float as float_ops
from burn_ndarray.runtime import split, tbb

SIZES = [1 << k for k in range(10, 23, 2)]
Op = Callable[[NdArray, np.ndarray, np.ndarray], object]


def _adam(B: NdArray, a: np.ndarray, b: np.ndarray) -> object:
    return B.float_adam_step(a, b, b * 0.5, b * b, 0.9, 0.99, 0.1, 1e-5)


FAMILIES: dict[str, tuple[object, Op]] = {  # threshold -> (its module, an op on a, b of `size` elements)
    "UFUNC_PER_THREAD": (split, lambda B, a, b: B.float_add(a, b)),
    "TRANSCENDENTAL_PER_THREAD": (split, lambda B, a, b: B.float_exp(a)),
    "ROWWISE_PER_THREAD": (split, lambda B, a, b: B.softmax(a, 1)),
    "ROW_SUM_PER_THREAD": (split, lambda B, a, b: B.float_sum_dim(a, 1)),
    "COMPILED_PER_THREAD": (optim, _adam),
    "GELU_PER_THREAD": (activation, lambda B, a, b: B.gelu(a)),  # `.PER_THREAD`
    # the same on numba's TBB pool (burn_ndarray.runtime.tbb), when it runs
    "NATIVE_UFUNC_PER_THREAD": (split, lambda B, a, b: B.float_add(a, b)),
    "NATIVE_ROW_SUM_PER_THREAD": (split, lambda B, a, b: B.float_sum_dim(a, 1)),
    "NATIVE_COMPILED_PER_THREAD": (optim, _adam),
    "NATIVE_GELU_PER_THREAD": (activation, lambda B, a, b: B.gelu(a)),  # `.NATIVE_PER_THREAD`
    "SIGMOID_NATIVE_PER_THREAD": (activation, lambda B, a, b: B.sigmoid(a)),
    # one thread: the compiled kernels against NumPy
    "GELU_COMPILED_MIN_SIZE": (activation, lambda B, a, b: B.gelu(a)),
    "SIGMOID_COMPILED_MIN_SIZE": (activation, lambda B, a, b: B.sigmoid(a)),
    "ROW_SUM_MIN_SIZE": (reductions, lambda B, a, b: B.float_sum_dim(a, 1)),
    "COMPILED_MIN_SIZE": (optim, _adam),
}


_PYTHON_POOL_ONLY = ("UFUNC_PER_THREAD", "ROW_SUM_PER_THREAD", "COMPILED_PER_THREAD", "GELU_PER_THREAD")
# Family names that differ from the attribute's name in its module.
_MODULE_NAMES = {
    "GELU_PER_THREAD": "PER_THREAD",
    "NATIVE_GELU_PER_THREAD": "NATIVE_PER_THREAD",
}


def best(fn: Callable[[], object]) -> float:
    fn()
    timer = timeit.Timer(fn)
    number, _ = timer.autorange()
    return min(timer.repeat(5, number)) / number


def main() -> None:
    if len(sys.argv) > 1:
        burn_ndarray.set_num_threads(int(sys.argv[1]))
    only = sys.argv[2] if len(sys.argv) > 2 else ""
    B = NdArray()
    rng = np.random.default_rng(0)
    print(f"threads: {burn_ndarray.get_num_threads()}")
    print("| threshold | elements | threaded (us) | single (us) | ratio |\n|---|---:|---:|---:|---:|")
    native = tbb.ready()
    print(f"TBB pool: {native}")
    for attr, (module, op) in FAMILIES.items():
        if "NATIVE_" in attr and not native:
            continue
        if attr in _PYTHON_POOL_ONLY and native:
            continue  # the TBB pool takes these ops: the Python pool's thresholds go unused
        if only not in attr:
            continue
        name = _MODULE_NAMES.get(attr, attr)  # the attribute's name in its module
        saved = getattr(module, name)
        for size in SIZES:
            shape = (size // 128, 128) if size >= 256 else (1, size)
            a, b = (rng.standard_normal(shape).astype(np.float32) for _ in range(2))
            times = []
            for threshold in (1, 1 << 62):
                setattr(module, name, threshold)
                # the binary ops skip the split below this size (set from the native threshold)
                float_ops._binary_min_size = min(threshold, 1 << 40) * 2
                times.append(best(lambda a=a, b=b, op=op: op(B, a, b)))
            setattr(module, name, saved)
            float_ops._binary_min_size = 2 * split.NATIVE_UFUNC_PER_THREAD
            threaded, single = times[0] * 1e6, times[1] * 1e6
            print(f"| {attr} | {size} | {threaded:.1f} | {single:.1f} | {threaded / single:.2f} |")


if __name__ == "__main__":
    main()
