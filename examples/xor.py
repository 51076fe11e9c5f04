"""XOR with a two-layer perceptron and Adam: the end-to-end example of Swift for TensorFlow's
"Hierarchical parameter iteration and optimization" (hidden size 4, ReLU after both layers, Adam
with learning rate 0.02, 3000 steps of mean squared error on the four XOR points).

The optimizer walks the model's nested params by itself (`GradientsParams.from_grads` keys the
gradients by `ParamId`, `optimizer.step` maps over the module) and keeps Adam's two moments per
param: no per-layer code anywhere.

With a ReLU on its output, this tiny model ends in a dead-ReLU local minimum for many
initializations (PyTorch, same model and optimizer: 13 of 40 seeds converge). The weights are
therefore drawn on the host from a fixed NumPy seed, one that converges, so that every backend
starts from the same point; `train(seed=...)` tries others.

Run: ``python examples/xor.py`` (needs burn-ndarray and burn-autodiff; ``BURN_BACKEND=opencl``
trains on ``autodiff(opencl)``). It exits with an error if a prediction is off by 0.1 or more.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

import numpy as np

import burn
from burn import Tensor, activation, nn, optim
from burn.module import Module, Param

X = [[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]]
Y = [[0.0], [1.0], [1.0], [0.0]]


class Classifier(Module):
    """``relu(l2(relu(l1(x))))``, as the seed's ``Classifier``."""

    l1: nn.Linear
    l2: nn.Linear

    def forward(self, x: Tensor) -> Tensor:
        return activation.relu(self.l2(activation.relu(self.l1(x))))


def dense(rng: np.random.Generator, d_input: int, d_output: int, device: Any) -> nn.Linear:
    """A Linear layer with burn's (and PyTorch's) default distribution, uniform on
    ``[-1/sqrt(d_input), 1/sqrt(d_input)]`` for weight and bias, drawn on the host from `rng` so
    that every backend starts from the same point."""
    bound = 1.0 / np.sqrt(d_input)
    weight = rng.uniform(-bound, bound, size=(d_input, d_output)).astype(np.float32)
    bias = rng.uniform(-bound, bound, size=(d_output,)).astype(np.float32)
    return nn.Linear(
        Param.from_tensor(Tensor.from_data(weight, device=device)),
        Param.from_tensor(Tensor.from_data(bias, device=device)),
    )


def default_backend() -> Any:
    """``autodiff(<BURN_BACKEND or ndarray>)``."""
    name = os.environ.get("BURN_BACKEND", "ndarray")
    return burn.backend(name if name.startswith("autodiff(") else f"autodiff({name})")


def train(
    backend: Any = None,
    *,
    hidden: int = 4,
    lr: float = 0.02,
    steps: int = 3000,
    seed: int = 0,
    log: bool = True,
) -> np.ndarray:
    """Train the classifier and return its predictions for the four XOR inputs, shape ``[4, 1]``."""
    backend = backend if backend is not None else default_backend()
    device = backend.default_device()
    rng = np.random.default_rng(seed)
    model = Classifier(dense(rng, 2, hidden, device), dense(rng, hidden, 1, device))
    optimizer = optim.AdamConfig().init()
    loss_fn = nn.MseLoss()
    x = Tensor.from_data(X, device=device)
    y = Tensor.from_data(Y, device=device)

    start = time.perf_counter()
    for step in range(steps):
        loss = loss_fn(model(x), y)
        if log and step % 500 == 0:
            print(f"step {step:5d}  mse {loss.item():.6f}")
        grads = optim.GradientsParams.from_grads(loss.backward(), model)
        model = optimizer.step(lr, model, grads)
    elapsed = time.perf_counter() - start

    predictions = model.valid()(x.inner()).to_numpy()  # inference on the inner backend, no graph
    if log:
        per_step = elapsed / steps * 1e3
        print(f"trained {steps} steps in {elapsed:.2f} s ({per_step:.3f} ms/step) on {backend.name}")
        for inputs, target, got in zip(X, Y, predictions[:, 0], strict=True):
            print(f"  {inputs} -> {got:.6f} (expected {target[0]:.0f})")
    return predictions


def main() -> int:
    predictions = train()
    error = float(np.max(np.abs(predictions[:, 0] - np.array(Y)[:, 0])))
    if error >= 0.1:
        print(f"the model did not learn XOR: largest error {error:.3f} >= 0.1", file=sys.stderr)
        return 1
    print(f"largest error {error:.2e} < 0.1")
    return 0


if __name__ == "__main__":
    sys.exit(main())
