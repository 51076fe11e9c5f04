"""Bool ops (`burn.backend.BoolOps`) on CuPy bool arrays: the shared bodies
(`burn.backend.xp.bool`), created on their device."""

from __future__ import annotations

import cupy as cp

from burn.backend.xp.bool import BOOL_UFUNCS, XpBoolOps
from burn.backend.xp.tensor_common import bind_ufuncs
from burn_cuda._common import CommonOps, placed


@bind_ufuncs(cp, BOOL_UFUNCS)
class BoolOps(CommonOps, XpBoolOps):
    """The ``bool_*`` ops of `burn_cuda.Cuda`."""

    # CuPy allocates on the current device: creation runs on its `device` argument's.
    bool_full = placed(XpBoolOps.bool_full)
    bool_zeros = placed(XpBoolOps.bool_zeros)
    bool_ones = placed(XpBoolOps.bool_ones)
    bool_empty = placed(XpBoolOps.bool_empty)
