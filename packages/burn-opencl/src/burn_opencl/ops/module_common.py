"""What the module-op families (conv, pool, sampling, embedding) share: views of `CLTensor`
primitives, and the separable linear maps (adaptive average pooling, interpolation) applied as two
small matrix products."""

from __future__ import annotations

from typing import Any

import numpy as np

from burn.foundations.dtype import DType
from burn_opencl import layout
from burn_opencl.ops.tensor_common import matmul
from burn_opencl.tensor import CLTensor

P = CLTensor
Pair = tuple[int, int]


def swap_last(t: P) -> P:
    """View with the last two dims swapped (matmul reads any strides)."""
    s = t.strides
    return t.view(t.shape[:-2] + (t.shape[-1], t.shape[-2]), s[:-2] + (s[-1], s[-2]), t.offset)


def reshaped(t: P, shape: tuple[int, ...]) -> P:
    """`t` reshaped (copied only when it is not contiguous)."""
    return layout.reshape(t, shape)


def to2d(x: P) -> P:
    """``[N, C, L]`` as ``[N, C, 1, L]``."""
    return reshaped(x, (x.shape[0], x.shape[1], 1, x.shape[2]))


def from2d(x: P) -> P:
    return reshaped(x, (x.shape[0], x.shape[1], x.shape[3]))


class SeparableMaps:
    """Separable linear maps on the last two dims: ``out = Mh @ x @ Mw^T``, backward
    ``Mh^T @ g @ Mw``. The matrices are built on the host and kept in the backend's cache."""

    _matrix_cache: dict[Any, P]

    def _matrix(self, kind: str, size_in: int, size_out: int, dtype: DType, rt: Any, *extra: Any) -> P:
        key = (kind, size_in, size_out, dtype, rt.device, extra)
        found = self._matrix_cache.get(key)
        if found is None:
            m = np.zeros((size_out, size_in), np.float64)
            if kind == "adaptive":
                for i in range(size_out):
                    start, end = (i * size_in) // size_out, -(-((i + 1) * size_in) // size_out)
                    m[i, start:end] = 1.0 / (end - start)
            elif kind == "nearest":
                for i in range(size_out):
                    m[i, min((i * size_in) // size_out, size_in - 1)] = 1.0
            else:
                (align_corners,) = extra
                for i in range(size_out):
                    if align_corners:
                        src = i * (size_in - 1) / (size_out - 1) if size_out > 1 else 0.0
                    else:
                        src = max((i + 0.5) * size_in / size_out - 0.5, 0.0)
                    lo = min(int(np.floor(src)), size_in - 1)
                    hi = min(lo + 1, size_in - 1)
                    frac = src - lo
                    m[i, lo] += 1.0 - frac
                    m[i, hi] += frac
            found = layout.from_numpy(rt, m.astype(dtype.numpy), dtype)
            if len(self._matrix_cache) > 256:
                self._matrix_cache.clear()
            self._matrix_cache[key] = found
        return found

    def _separable(self, x: P, out_hw: Pair, kind: str, backward: bool, *extra: Any) -> P:
        """Apply (or, when `backward`, transpose-apply) the separable map on the last two dims."""
        dtype = DType.F32 if x.dtype is DType.F16 else x.dtype
        if backward:
            (H, W), (OH, OW) = out_hw, x.shape[2:]
        else:
            (H, W), (OH, OW) = x.shape[2:], out_hw
        mh = self._matrix(kind, H, OH, dtype, x.rt, *extra)
        mw = self._matrix(kind, W, OW, dtype, x.rt, *extra)
        if backward:
            out = matmul(matmul(swap_last(mh), x), mw)
        else:
            out = matmul(matmul(mh, x), swap_last(mw))
        return layout.cast(out, x.dtype)  # float16 went through float32 matrices
