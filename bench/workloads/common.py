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
    model: Callable[[], Any] | None = None  # the current module (GPU graph probe, forward rows)


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


def burn_trained(
    backend: Any,
    model: Any,
    x_np: np.ndarray,
    y_np: np.ndarray,
    loss_fn: Any = None,
    optimizer: Any = None,
    lr: float = LR,
    autocast: str | None = None,
) -> Workload:
    """burn: `model` trained on one batch with `loss_fn` (default `CrossEntropyLoss`) and
    `optimizer` at `lr` (default `AdamConfig().init()` with the shared hyperparameters); with
    `autocast` (``"bfloat16"``...), forward and loss run under `burn.amp.autocast` (params and
    the optimizer stay float32)."""
    from contextlib import nullcontext

    from burn import Tensor, amp, nn, optim

    device = backend.default_device()
    state = [model]
    x = Tensor.from_data(x_np, device=device)
    y = Tensor.from_data(y_np, device=device)
    loss_fn = loss_fn or nn.CrossEntropyLossConfig().init()
    optimizer = optimizer or optim.AdamConfig(beta_1=BETA_1, beta_2=BETA_2, epsilon=EPS).init()

    region: Any = nullcontext() if autocast is None else amp.autocast(autocast)

    def grads() -> Any:
        current = state[0]
        with region:
            loss = loss_fn(current(x), y)
        return optim.GradientsParams.from_grads(loss.backward(), current)

    def step() -> None:
        state[0] = optimizer.step(lr, state[0], grads())

    return Workload(step, grads, lambda: float(loss_fn(state[0](x), y).item()), lambda: state[0])


def torch_trained(
    torch: Any,
    model: Any,
    x_np: np.ndarray,
    y_np: np.ndarray,
    device: str = "cpu",
    loss_fn: Any = None,
    make_optimizer: Callable[[Any], Any] | None = None,
    autocast: str | None = None,
) -> Workload:
    """PyTorch eager: `model` trained on one batch with `loss_fn` (default `F.cross_entropy`) and
    ``make_optimizer(params)`` (default `torch.optim.Adam` with the shared hyperparameters); with
    `autocast`, forward and loss run under ``torch.autocast(device, dtype)``."""
    from contextlib import nullcontext

    def region() -> Any:
        if autocast is None:
            return nullcontext()
        return torch.autocast(device.split(":")[0], dtype=getattr(torch, autocast))

    loss_fn = loss_fn or torch.nn.functional.cross_entropy
    model = model.to(device)
    x, y = torch.from_numpy(x_np.copy()).to(device), torch.from_numpy(y_np.copy()).to(device)
    optimizer = (make_optimizer or (lambda params: torch_adam(torch, params)))(model.parameters())

    def fwd_bwd() -> None:
        optimizer.zero_grad(set_to_none=True)
        with region():
            loss = loss_fn(model(x), y)
        loss.backward()

    def step() -> None:
        fwd_bwd()
        optimizer.step()

    def loss() -> float:
        with torch.no_grad():
            return float(loss_fn(model(x), y))

    return Workload(step, fwd_bwd, loss, lambda: model)
