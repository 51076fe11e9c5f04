"""The loss family (`burn.backend.ops.loss`) on NumPy arrays: cross-entropy against class indices.
float32 and float64 logits of at least `COMPILED_MIN_SIZE` elements take the compiled kernels of
`burn_ndarray.kernels.loss` (one call each way; rows split between threads for large logits as
softmax's are); smaller ones, float16 and bfloat16 the shared NumPy code (`burn.backend.xp.loss`,
float16/bfloat16 in float32), targets checked first.

Each row's loss and gradient are the same bits at any thread count. The sum and mean add the
losses in float64, per chunk of rows and then the chunks' sums in order: across thread counts
they may differ by float64 rounding before the one rounding to the result's dtype.

The composition (log-softmax, gather, mean and their backward ops) is seven forward and eight
backward calls; inside a training step each starts with caches the GEMMs have just emptied:
25-70 us apiece on an MLP step, against one or two calls here.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from burn.backend.ops.loss import LossReduction, check_reduction
from burn.backend.xp.dtypes import work
from burn.backend.xp.loss import XpLossOps, gradient_scale, reduce_losses, row_gradients, row_losses
from burn_ndarray import kernels
from burn_ndarray.runtime import split, threads
from burn_ndarray.runtime.dtypes import F32, F64

Array = Any
# Logits from this many elements take the compiled rows (a classifier batch: [64, 10] and up);
# below, the NumPy passes, and small models never load numba.
COMPILED_MIN_SIZE = 1 << 9


def _compiled(logits: Array) -> Any:
    """`burn_ndarray.kernels.loss` for float32/float64 `logits` of `COMPILED_MIN_SIZE` elements or
    more, else None (and None without numba)."""
    dtype = logits.dtype
    if (dtype is F32 or dtype is F64) and logits.__class__ is np.ndarray and logits.size >= COMPILED_MIN_SIZE:
        return kernels.load("loss")
    return None


def _out_of_range(op: str, targets: Array, row: int, classes: int) -> IndexError:
    return IndexError(f"{op}: target {targets[row]} of row {row} is out of range [0, {classes})")


def _check_targets(op: str, targets: Array, classes: int) -> None:
    """The compiled kernels' check for the NumPy path: an IndexError naming the first bad row."""
    t = targets.reshape(-1)
    if t.size and (t.min() < 0 or t.max() >= classes):  # NumPy's indexing would wrap negative ones
        raise _out_of_range(op, t, int(np.argmax((t < 0) | (t >= classes))), classes)


def _run(
    op: str, kernel: Callable[..., Any], x: Array, t: Array, g: Array | None, factor: float, out: Array
) -> float:
    """`kernel` over the rows of `x` (and of `t`, `out`, and `g` when it has one value per row),
    split between threads when large; the forward kernel's sum of losses (0.0 for the backward
    kernel); an IndexError naming `op` for a target out of range."""
    rows = x.shape[0]
    per_row = g is not None and g.shape[0] == rows

    def call(c: slice) -> tuple[int, float]:
        if g is None:
            bad, total = kernel(x[c], t[c], out[c])
            return bad, total
        return kernel(x[c], t[c], g[c] if per_row else g, factor, out[c]), 0.0

    chunks = split.chunks(x.shape, x.size, split.ROWWISE_PER_THREAD)
    if chunks is None:
        bad, total = call(slice(0, rows))
    else:
        results: dict[int, tuple[int, float]] = {}  # by a chunk's first row

        def task(c: slice) -> None:
            local, part = call(c)
            results[c.start] = (-1 if local < 0 else c.start + local, part)

        threads.run(task, chunks)
        ordered = [results[c.start] for c in chunks]  # partial sums added in row order
        bad = next((b for b, _ in ordered if b >= 0), -1)
        total = math.fsum(part for _, part in ordered)
    if bad >= 0:
        raise _out_of_range(op, t, bad, x.shape[1])
    return total


class LossOps(XpLossOps):
    """The loss ops of `burn_ndarray.NdArray`."""

    def cross_entropy(self, logits: Array, targets: Array, reduction: LossReduction) -> Array:
        check_reduction("cross_entropy", reduction)
        compiled = _compiled(logits)
        if compiled is None:
            _check_targets("cross_entropy", targets, logits.shape[1])
            return reduce_losses(np, row_losses(np, logits, targets), reduction, logits.dtype)
        x = np.ascontiguousarray(logits)
        t = np.ascontiguousarray(targets.reshape(-1))
        losses = np.empty(x.shape[0], x.dtype)
        kernel = compiled.cross_entropy_rows_float32 if x.dtype is F32 else compiled.cross_entropy_rows
        total = _run("cross_entropy", kernel, x, t, None, 1.0, losses)
        if reduction == "none" or not losses.size:
            return reduce_losses(np, losses, reduction, x.dtype)
        return np.full(1, total if reduction == "sum" else total / losses.size, x.dtype)

    def cross_entropy_backward(
        self, logits: Array, targets: Array, output_grad: Array, reduction: LossReduction
    ) -> Array:
        check_reduction("cross_entropy_backward", reduction)
        rows = logits.shape[0]
        compiled = _compiled(logits)
        if compiled is None:
            _check_targets("cross_entropy_backward", targets, logits.shape[1])
            scale = gradient_scale(np, output_grad, reduction, rows, work(logits.dtype))
            return row_gradients(np, logits, targets, scale)
        x = np.ascontiguousarray(logits)
        t = np.ascontiguousarray(targets.reshape(-1))
        g = np.ascontiguousarray(output_grad.reshape(-1), dtype=np.float64)
        factor = 1.0 / rows if reduction == "mean" and rows else 1.0
        out = np.empty(x.shape, x.dtype)
        grad_rows = compiled.cross_entropy_grad_rows
        kernel = compiled.cross_entropy_grad_rows_float32 if x.dtype is F32 else grad_rows
        _run("cross_entropy_backward", kernel, x, t, g, factor, out)
        return out
