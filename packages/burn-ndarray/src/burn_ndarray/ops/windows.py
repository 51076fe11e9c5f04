"""The shared window helpers (`burn.backend.xp.windows`) bound to NumPy, for burn-ndarray's modules."""

from __future__ import annotations

from functools import partial

import numpy as np

from burn.backend.xp import windows as _xw
from burn.backend.xp.windows import Pair, channels_last, taps, work_dtype

__all__ = ["Pair", "channels_last", "col2im", "empty_as", "pad", "taps", "windows", "work_dtype"]

empty_as = partial(_xw.empty_as, np)
pad = partial(_xw.pad, np)
windows = partial(_xw.windows, np)
col2im = partial(_xw.col2im, np)
