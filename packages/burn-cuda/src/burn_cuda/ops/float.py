"""Float ops of the contract (`burn.backend.ops.float`) on CuPy arrays: the shared bodies
(`burn.backend.xp.float`) plus what CuPy does its own way (`burn_cuda._common`).

Ops that map 1:1 onto a CuPy ufunc are the ufunc itself, bound as a class attribute (ufuncs are
not descriptors: ``self.float_add(a, b)`` *is* ``cupy.add(a, b)``). Scalars are typed like the
tensor, so results keep its dtype. float16/bfloat16 reductions accumulate in float32 and round once.
Matmul is `_gemm.matmul`: ``cupy.matmul`` (cuBLAS, strided-batched over broadcast leading dims),
or burn-cuda's own cuBLAS call while a CUDA graph is recorded (`burn_cuda.graphs`) and for
bfloat16, both of which CuPy refuses.
"""

from __future__ import annotations

from typing import Any

import cupy as cp

from burn.backend.device import Device
from burn.backend.xp.float import FLOAT_UFUNCS, XpFloatOps
from burn.backend.xp.tensor_common import bind_ufuncs
from burn.foundations.distribution import Distribution
from burn.foundations.dtype import DType
from burn_cuda import _common as c
from burn_cuda import _gemm, _random
from burn_cuda._common import CommonOps, placed
from burn_cuda._dtypes import F32, LOW, NP_OF
from burn_cuda.kernels import float as k

Array = Any


@bind_ufuncs(cp, FLOAT_UFUNCS)
class CudaFloatOps(CommonOps, XpFloatOps):
    """The ``float_*`` ops of `burn_cuda.Cuda`."""

    float_into_data = c.into_data
    float_device = c.device
    float_to_device = c.to_device
    float_gather = c.gather
    # Sums by atomics in one kernel: float16 accumulates in float32.
    float_scatter_add = c.scatter_add
    float_select_add = c.select_add
    # One reduction, the values gathered at its indices (they agree whatever the NaN rules).
    float_max_dim_with_indices = c.max_dim_with_indices
    float_min_dim_with_indices = c.min_dim_with_indices

    # CuPy allocates on the current device: creation runs on its `device` argument's.
    float_full = placed(XpFloatOps.float_full)
    float_zeros = placed(XpFloatOps.float_zeros)
    float_ones = placed(XpFloatOps.float_ones)
    float_empty = placed(XpFloatOps.float_empty)

    float_matmul = staticmethod(_gemm.matmul)

    # Philox per device (`_random`), seeded by `Cuda.seed`.
    def float_random(
        self, shape: tuple[int, ...], distribution: Distribution, device: Device, dtype: DType
    ) -> Array:
        return _random.float_random(self, shape, distribution, device, NP_OF[dtype])

    # CuPy has no erf ufunc: a fused kernel (float32/float64; float16/bfloat16 through float32).
    def float_erf(self, tensor: Array) -> Array:
        if tensor.dtype in LOW:
            return k.erf(tensor.astype(F32)).astype(tensor.dtype)
        return k.erf(tensor)
