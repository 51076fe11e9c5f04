"""Hyperparameters, data and the result type shared by the workloads."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

# Same Adam everywhere: burn's default epsilon (1e-5) is given to torch and to the floor too.
LR, BETA_1, BETA_2, EPS = 1e-3, 0.9, 0.999, 1e-5


@dataclass
class Workload:
    """`step()` runs one training step (forward, backward, optimizer); `fwd_bwd()` runs forward +
    backward only (gradients computed, not applied); `loss()` is the current loss as a float."""

    step: Callable[[], object]
    fwd_bwd: Callable[[], object]
    loss: Callable[[], float]
    model: Callable[[], Any] | None = None  # burn's current module (for the GPU graph probe)


def uniform_init(rng: np.random.Generator, shape: tuple[int, ...], fan_in: int) -> np.ndarray:
    """PyTorch's and burn's default layer init: U(-1/sqrt(fan_in), 1/sqrt(fan_in))."""
    bound = 1.0 / np.sqrt(fan_in)
    return rng.uniform(-bound, bound, size=shape).astype(np.float32)


def classification_batch(
    rng: np.random.Generator, shape: tuple[int, ...], classes: int = 10
) -> tuple[np.ndarray, np.ndarray]:
    """Random inputs in float32 and int64 class labels."""
    x = rng.standard_normal(shape, dtype=np.float32)
    y = rng.integers(0, classes, size=shape[0]).astype(np.int64)
    return x, y


def torch_adam(torch: Any, params: Any) -> Any:
    """``torch.optim.Adam`` with the shared hyperparameters (its default CPU implementation)."""
    return torch.optim.Adam(params, lr=LR, betas=(BETA_1, BETA_2), eps=EPS)
