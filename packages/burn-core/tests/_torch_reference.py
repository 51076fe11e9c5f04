"""What the tests that check burn against PyTorch share: `torch` when it is installed (else None:
it is optional), `needs_torch` to skip a test without it, and `tensor` to make burn tensors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import burn

try:
    import torch
except ImportError:  # pragma: no cover - torch is optional
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")


def tensor(dev: Any, array: Any, **kw: Any) -> burn.Tensor:
    """`array` (anything `np.asarray` takes) as a burn tensor on `dev`."""
    return burn.Tensor.from_data(np.asarray(array), device=dev, **kw)
