"""The autodiff hooks of the contract on any backend: detach, set/is require_grad.

On a backend without autodiff, `require_grad` is refused and the rest is the identity; on an
autodiff backend, the flag is recorded and `detach` clears it. Gradients themselves are checked
by the ``test_gradients*`` modules.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from burn.testing import covers
from burn.testing.helpers import check_exact, make


@covers("float_detach", "float_set_require_grad", "float_is_require_grad")
def test_require_grad_flags(backend: Any, float_dtype: Any) -> None:
    x = np.array([[1.0, -2.0], [0.5, 4.0]])
    t = make(backend, x, float_dtype)
    assert t.is_require_grad() is False
    check_exact(t.set_require_grad(False), x, float_dtype, what="set_require_grad(False)")
    check_exact(t.detach(), x, float_dtype, what="detach")
    assert t.detach().is_require_grad() is False
    if not backend.ad_enabled:
        with pytest.raises(TypeError, match="autodiff"):
            t.require_grad()
        with pytest.raises(TypeError, match="autodiff"):
            t.set_require_grad(True)
        return
    tracked = t.require_grad()
    assert tracked.is_require_grad() is True
    assert t.is_require_grad() is False, "require_grad() returns a new tensor; the input is unchanged"
    assert tracked.set_require_grad(True).is_require_grad() is True
    assert tracked.set_require_grad(False).is_require_grad() is False
    detached = tracked.detach()
    assert detached.is_require_grad() is False
    check_exact(detached, x, float_dtype, what="detach of a tracked tensor")
    assert (tracked * 2.0).detach().is_require_grad() is False


@covers("float_set_require_grad")
def test_require_grad_on_int_or_bool_is_a_kind_error(backend: Any) -> None:
    from burn.errors import KindError

    for t in (make(backend, [1, 2], backend.int_dtype), make(backend, [True], "bool")):
        with pytest.raises(KindError):
            t.require_grad()
