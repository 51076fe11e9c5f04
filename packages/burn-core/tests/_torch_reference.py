"""What the tests that check burn against PyTorch share: `torch` when it is installed (else None:
it is optional), `needs_torch` to skip a test without it, `tensor` to make burn tensors, and a
small CNN with its PyTorch twin (the same param names and layouts)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import burn
from burn import nn

try:
    import torch
except ImportError:  # pragma: no cover - torch is optional
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")


def tensor(dev: Any, array: Any, **kw: Any) -> burn.Tensor:
    """`array` (anything `np.asarray` takes) as a burn tensor on `dev`."""
    return burn.Tensor.from_data(np.asarray(array), device=dev, **kw)


class Cnn(burn.Module):
    """``[N, 2, 6, 6]`` -> 3x3 conv (4 channels, padded) -> BatchNorm -> ReLU -> 2x2 max pool ->
    Linear(36, 5)."""

    conv: nn.Conv2d
    bn: nn.BatchNorm
    pool: nn.MaxPool2d
    fc: nn.Linear

    def forward(self, x: burn.Tensor) -> burn.Tensor:
        x = self.pool(burn.activation.relu(self.bn(self.conv(x))))
        return self.fc(x.flatten(1, 3))


def cnn(device: Any) -> Cnn:
    """A `Cnn` on `device`."""
    return Cnn(
        nn.Conv2dConfig((2, 4), (3, 3), padding=(1, 1)).init(device),
        nn.BatchNormConfig(4).init(device),
        nn.MaxPool2dConfig((2, 2), strides=(2, 2)).init(),
        nn.LinearConfig(4 * 3 * 3, 5).init(device),
    )


def torch_cnn(dtype: Any = None) -> Any:
    """`Cnn`'s twin in ``torch.nn`` (params in `dtype`, torch's default when None)."""

    class TorchCnn(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = torch.nn.Conv2d(2, 4, 3, padding=1, dtype=dtype)
            self.bn = torch.nn.BatchNorm2d(4, dtype=dtype)
            self.pool = torch.nn.MaxPool2d(2, 2)
            self.fc = torch.nn.Linear(4 * 3 * 3, 5, dtype=dtype)

        def forward(self, x: Any) -> Any:
            return self.fc(self.pool(torch.relu(self.bn(self.conv(x)))).flatten(1))

    return TorchCnn()
