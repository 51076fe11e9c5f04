"""The proof behind the ``*_owned`` ops: level 2 of Burn's ownership trick (see
`burn.foundations.ownership`), on NumPy arrays.

The Tensor layer hands an operand over only after proving its tensor was a dying temporary and
moving the array out of it. That proves nothing about the array itself: another tensor may wrap
the same array (``to_device`` returns it as is), a view may share it, a ``to_numpy()`` export or
a user's array adopted by ``from_data`` may still be alive. So an op writes into an operand
(``out=``) only when `exclusive` proves, from the array alone, that nothing else can see it:

- its reference count is `OWNED`, the count of an array whose only holders are the caller's one
  local and this call (measured at import); any other holder (a tensor, a view, whose ``base``
  refers to it, an exported view, a memoryview or DLPack capsule, a list) adds one;
- ``base is None`` and it owns its data: not itself a view of memory someone else may hold;
- writeable, C-contiguous, float32 or float64, large enough for an allocation to matter;
- the result has its dtype and shape: the other operand has the same dtype and broadcasts to it.

Otherwise the op runs out of place, exactly as the plain op. Results are the same bits either way:
NumPy runs the same loop with ``out=`` (an operand exactly aliasing the output is allowed). The
ops are the float family's ``float_*_owned`` (`burn_ndarray.ops.float`) and the fused optimizer
updates (`burn_ndarray.ops.optim`).
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from burn.foundations import ownership as _ownership
from burn_ndarray.runtime.dtypes import F32, F64

Array = Any
_rc = sys.getrefcount
_ndarray = np.ndarray
# Below this, allocation is a cheap malloc; above, a fresh mmap with first-touch page faults.
MIN_BYTES = 1 << 16


class _Probe:
    def count(self, array: Array) -> int:
        return _rc(array)


def _calibrate() -> int:
    """The count seen inside an op for an array held by one caller local (0: never reuse)."""
    if not _ownership.ENABLED:
        return 0
    probe = _Probe()
    array = np.empty(1)
    alone = probe.count(array)
    view = array[:]  # noqa: F841 - a view refers to its base: the count must rise
    shared = probe.count(array)
    return alone if alone < shared else 0


OWNED: int = _calibrate()


def exclusive(buf: Array, other: Array) -> bool:
    """Whether `buf` (reference count already checked) may receive ``buf <op> other``.

    `other` is None for scalar and unary ops. Called with `buf` as a local and argument, so the
    count is checked by the caller, where it is calibrated.
    """
    if buf.__class__ is not _ndarray or buf.base is not None or buf.nbytes < MIN_BYTES:
        return False
    dtype = buf.dtype
    if dtype is not F32 and dtype is not F64:
        return False
    flags = buf.flags
    if not (flags.writeable and flags.c_contiguous and flags.owndata):
        return False
    if other is None:
        return True
    if getattr(other, "dtype", None) is not dtype:
        return False
    shape = buf.shape
    return other.shape == shape or np.broadcast_shapes(shape, other.shape) == shape
