"""More shape and indexing ops of the contract (Burn's full op set): movedim, roll, take,
mask_select, gather_nd/scatter_nd, unfold, pad, one_hot, tril/triu, eye, cross...

Every op here is a `@default` written with the ops of `float_ops`/`int_ops`/`bool_ops`, unless
marked otherwise; conventions are those of `burn.backend.float_ops`.
"""

from __future__ import annotations

from typing import Any

from burn.backend.contract import default, required  # noqa: F401

P = Any  # an opaque primitive
Shape = tuple[int, ...]


class LayoutOps:
    """Shape and indexing ops beyond `FloatOps`/`IntOps`/`BoolOps` (float_*, int_*, bool_*)."""
