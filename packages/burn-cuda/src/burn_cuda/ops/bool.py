"""Bool ops of the contract (`burn.backend.ops.bool`) on CuPy bool arrays: the shared bodies
(`burn.backend.xp.bool`), created on their device, plus what CuPy does its own way
(`burn_cuda._common`)."""

from __future__ import annotations

import cupy as cp

from burn.backend.xp.bool import BOOL_UFUNCS, XpBoolOps
from burn.backend.xp.tensor_common import bind_ufuncs
from burn_cuda import _common as c
from burn_cuda._common import CommonOps, placed


@bind_ufuncs(cp, BOOL_UFUNCS)
class CudaBoolOps(CommonOps, XpBoolOps):
    """The ``bool_*`` ops of `burn_cuda.Cuda`."""

    bool_into_data = c.into_data
    bool_device = c.device
    bool_to_device = c.to_device
    bool_gather = c.gather

    # CuPy allocates on the current device: creation runs on its `device` argument's.
    bool_full = placed(XpBoolOps.bool_full)
    bool_zeros = placed(XpBoolOps.bool_zeros)
    bool_ones = placed(XpBoolOps.bool_ones)
    bool_empty = placed(XpBoolOps.bool_empty)
