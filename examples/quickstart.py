"""Quick start: train a tiny neural network with plain tensor ops on the default backend (ndarray).

A two-layer perceptron learns XOR on points of the plane (the label is whether x and y have the same
sign), with its gradients written by hand: everything below is burn tensor ops, so the same script
runs on any backend (``BURN_BACKEND=opencl python examples/quickstart.py``).

Run: ``python examples/quickstart.py``; it exits with an error if the model did not learn.
"""

from __future__ import annotations

import math
import sys
import time

import burn
from burn import Tensor


def main(steps: int = 1500, lr: float = 0.5, hidden: int = 16, n: int = 256) -> float:
    backend = burn.default_backend()  # BURN_BACKEND, else "ndarray"
    device = backend.default_device()
    backend.seed(0)
    print(
        f"backend {backend.name} on {device}; installed: "
        + ", ".join(f"{b.name} ({b.status})" for b in burn.backends())
    )

    # data: n points in [-1, 1)^2, label 1 where both coordinates have the same sign
    x = Tensor.random((n, 2), burn.Uniform(-1.0, 1.0), device=device)
    y = ((x[:, 0:1] * x[:, 1:2]) > 0).float()

    # parameters of  p = sigmoid(tanh(x @ w1 + b1) @ w2 + b2)
    w1 = Tensor.random((2, hidden), burn.Normal(0.0, 1.0), device=device)
    b1 = Tensor.zeros((1, hidden), device=device)
    w2 = Tensor.random((hidden, 1), burn.Normal(0.0, 1.0 / math.sqrt(hidden)), device=device)
    b2 = Tensor.zeros((1, 1), device=device)

    def report(step: int, p: Tensor) -> float:
        q = p.clamp(1e-7, 1 - 1e-7)
        loss = -(y * q.log() + (1 - y) * (1 - q).log()).mean().into_scalar()
        accuracy = ((p > 0.5).float() == y).float().mean().into_scalar()
        print(f"step {step:5d}  loss {loss:.4f}  accuracy {accuracy:.3f}")
        return float(accuracy)

    start = time.perf_counter()
    for step in range(steps):
        h = (x @ w1 + b1).tanh()
        p = burn.activation.sigmoid(h @ w2 + b2)
        if step % 300 == 0:
            report(step, p)
        # backward by hand: d loss / d logits of the binary cross-entropy is (p - y) / n
        dz2 = (p - y) / n
        dw2, db2 = h.transpose() @ dz2, dz2.sum_dim(0)
        dz1 = (dz2 @ w2.transpose()) * (1 - h * h)
        dw1, db1 = x.transpose() @ dz1, dz1.sum_dim(0)
        w1, b1, w2, b2 = w1 - lr * dw1, b1 - lr * db1, w2 - lr * dw2, b2 - lr * db2
    elapsed = time.perf_counter() - start
    accuracy = report(steps, burn.activation.sigmoid((x @ w1 + b1).tanh() @ w2 + b2))
    print(f"trained {steps} steps in {elapsed:.2f} s ({elapsed / steps * 1e3:.2f} ms/step)")
    return accuracy


if __name__ == "__main__":
    final = main()
    if final < 0.9:
        sys.exit(f"the model did not learn XOR: accuracy {final:.3f} < 0.9")
