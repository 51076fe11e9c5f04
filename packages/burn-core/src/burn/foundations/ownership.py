"""Burn's ownership trick in Python: reusing the buffer of a tensor nothing else refers to.

Tensors are immutable values (DESIGN §4.3). An elementwise op on a tensor that is about to die
may still write its result into that tensor's buffer, because nobody can observe the change.
Proving "about to die" takes two levels, each checking what it alone can see:

1. **Tensor layer** (this module, `burn.tensor.tensor_ops_arith`). A method proves that its
   `Tensor` wrapper is a temporary: ``sys.getrefcount(t)`` equals `TEMP`, the count of an object
   whose only reference is the method's own argument (measured once below). Any other holder (a
   name, a list, a dict, a module, an optimizer state, a record, another thread's frame, a C
   caller's borrowed-from owner) adds at least one. The proof then *moves* the primitive out
   (``p = t._p; t._p = None``), so that the wrapper no longer refers to it, and calls one of the
   backend's ``*_owned`` ops (`burn.backend.ops.float`). Only named-method calls qualify
   (``(a * 2).add(1)``, ``x.exp()``): through a Python operator the interpreter passes the
   operand as a borrowed reference, and a temporary then has the same count as a tensor held by
   an owner that lends it without a new reference; NumPy's object-array loops do exactly that
   (``object_array + 1`` calls ``Tensor.__add__`` with count 3, like ``(a * 2) + 1``). Operators
   therefore never reuse a buffer.
2. **Backend** (e.g. ``burn_ndarray.runtime.ownership``). An ``*_owned`` op may write into an operand only
   if it proves exclusive ownership of the storage itself: for NumPy, the array's reference
   count is the minimum (held by the caller's one local and the call only: a wrapper that still
   holds it, a view of it, an exported ``to_numpy()``/``__array__``/DLPack/buffer all add one),
   ``base is None`` (not a view of another buffer), owns, writeable, C-contiguous, the result's
   dtype and shape (no broadcasting growth). Otherwise it computes out of place, as the plain op.

Contract: ``*_owned`` ops are ``@default`` ops that call the plain op, so a backend that knows
nothing about this is unaffected. A backend opts in by declaring the ``buffer_reuse`` feature and
overriding them; `Backend.__init__` sets ``_reuse`` only then (a decorator such as autodiff
inherits its inner backend's features but not these ops, and keeps the plain path: its
primitives hold the inner arrays saved for backward anyway).

The trick is switched off (`ENABLED` false) where reference counts do not separate a temporary
from a named value as measured here: free-threaded builds (deferred and biased counts), other
interpreters, CPython versions not checked (3.14 borrows stack references), or when the probe
disagrees. Set ``BURN_BUFFER_REUSE=0`` to switch it off by hand.
"""

from __future__ import annotations

import os
import platform
import sys
import sysconfig
from typing import Any

_rc = sys.getrefcount


class _Probe:
    __slots__ = ("v",)

    def count(self) -> int:
        return _rc(self)  # the same expression as the check in the Tensor layer's methods

    def count_other(self, other: Any) -> int:
        return _rc(other)


def _make() -> _Probe:
    return _Probe()


def _calibrate() -> int:
    """`TEMP`, or 0 when a temporary and a held value are not clearly apart."""
    if platform.python_implementation() != "CPython" or not (3, 10) <= sys.version_info[:2] <= (3, 13):
        return 0
    if sysconfig.get_config_var("Py_GIL_DISABLED") or not getattr(sys, "_is_gil_enabled", lambda: True)():
        return 0
    if os.environ.get("BURN_BUFFER_REUSE", "1") == "0":
        return 0
    held = _make()
    box = [_make()]
    temp = _make().count()
    temp_other = held.count_other(_make())
    named = held.count()
    named_other = held.count_other(held)  # the name plus two argument slots: at least named
    in_list = box[0].count()
    if temp != temp_other or not temp < named <= named_other or not temp < in_list:
        return 0
    return temp


TEMP: int = _calibrate()
ENABLED: bool = TEMP > 0


def _calibrate_sole() -> int:
    """`SOLE`, or 0 when the trick is off or the count does not tell a second holder apart."""
    if not ENABLED:
        return 0
    held = _make()
    alone = _rc(held)  # the same expression as the checks made on a local (e.g. burn.optim)
    box = [held]  # noqa: F841 - a second holder: the count must rise
    shared = _rc(held)
    return alone if alone < shared else 0


SOLE: int = _calibrate_sole()
"""``sys.getrefcount(x)`` for an object held by one local of the calling frame and nothing else:
how code that has just taken a tensor out of a container it owns (``state.pop(key)``) proves that
the tensor is now its alone, and hands its primitive over (see `burn.optim.transforms`)."""
