"""Cases and references shared by the float and int reduction tests (``test_float_reduce``,
``test_int_reduce``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

Ref = Callable[[np.ndarray, int], np.ndarray]


@dataclass(frozen=True)
class DimReduce:
    op: str
    call: Callable[[Any, int], Any]
    ref: Ref
    empty_ok: bool = True  # defined on a size-0 dim


def first_arg(fn: Callable[..., np.ndarray]) -> Ref:
    return lambda x, d: fn(x, axis=d, keepdims=True)


def defined(cases: list[DimReduce], shapes: list[Any]) -> list[Any]:
    """(case, shape, dim) triples, leaving out reductions undefined over a size-0 dim."""
    return [
        pytest.param(c, shape, dim, id=f"{c.op}-{shape}-{dim}")
        for c in cases
        for shape, dim in shapes
        if c.empty_ok or shape[dim]
    ]


# Tensor methods reducing over several dims at once, with their NumPy references.
MULTI = [
    ("sum_dims", np.sum),
    ("mean_dims", np.mean),
    ("prod_dims", np.prod),
    ("max_dims", np.max),
    ("min_dims", np.min),
]
