"""Bool ops (`burn.backend.BoolOps`) on NumPy bool arrays: the shared bodies
(`burn.backend.xp.bool`) plus a branch-free mask select."""

from __future__ import annotations

from typing import Any

import numpy as np

from burn.backend.xp.bool import BOOL_UFUNCS, XpBoolOps
from burn.backend.xp.tensor_common import bind_ufuncs
from burn_ndarray._common import CommonOps

Array = Any


@bind_ufuncs(np, BOOL_UFUNCS)
class BoolOps(CommonOps, XpBoolOps):
    """The ``bool_*`` ops of `burn_ndarray.NdArray`."""

    def bool_mask_where(self, tensor: Array, mask: Array, value: Array) -> Array:
        # Logical ops never branch (np.where does, and crawls on random masks).
        return (value & mask) | (tensor & ~mask)
