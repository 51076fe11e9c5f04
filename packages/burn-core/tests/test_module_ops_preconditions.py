"""The module ops' preconditions that the Tensor layer enforces are written in the contract.

Each case breaks one precondition through `burn.tensor.module`, checks that the Tensor layer
refuses it before any backend op runs, and that the contract's docstrings
(`burn.backend.ops.conv`, `burn.backend.ops.pool`) state it: a backend author can rely on exactly
what is written.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import burn.backend.ops.conv as conv_family
import burn.backend.ops.pool as pool_family
from burn import Tensor
from burn.errors import ShapeError
from burn.tensor import module

# (what the docstring says, a call that breaks it)
CASES: list[tuple[str, Callable[[Any], Any]]] = [
    ("padding <= kernel_size // 2", lambda x: module.max_pool2d(x, 3, padding=2)),
    ("padding <= kernel_size // 2", lambda x: module.avg_pool1d(x[0], 2, padding=2)),
    (
        "padding_out < max(stride, dilation)",
        lambda x: module.conv_transpose2d(x, _t(x, (2, 1, 3, 3)), stride=2, padding_out=2),
    ),
    ("divisible by `groups`", lambda x: module.conv2d(x, _t(x, (3, 1, 1, 1)), groups=2)),
    ("every convolution and pooling output size is >= 1", lambda x: module.conv2d(x, _t(x, (1, 2, 9, 9)))),
    ("`stride`", lambda x: module.conv2d(x, _t(x, (1, 2, 1, 1)), stride=0)),
    ("`padding` and `padding_out` are >= 0", lambda x: module.conv2d(x, _t(x, (1, 2, 1, 1)), padding=-1)),
    ("adaptive pooling's `output_size` are >= 1", lambda x: module.adaptive_avg_pool2d(x, 0)),
]


def _t(x: Any, shape: tuple[int, ...]) -> Any:
    return Tensor.from_data(np.ones(shape, np.float32), backend=x.backend)


@pytest.fixture(scope="module")
def x() -> Any:
    from minimal_backend import Minimal

    return Tensor.from_data(np.ones((1, 2, 4, 4), np.float32), backend=Minimal())


@pytest.mark.parametrize(("stated", "call"), CASES, ids=[c[0] for c in CASES])
def test_precondition_is_enforced_and_documented(x: Any, stated: str, call: Callable[[Any], Any]) -> None:
    with pytest.raises((ValueError, ShapeError)):
        call(x)
    doc = " ".join(((conv_family.__doc__ or "") + " " + (pool_family.__doc__ or "")).split())
    assert stated in doc, f"the contract's docstring does not state {stated!r}"
