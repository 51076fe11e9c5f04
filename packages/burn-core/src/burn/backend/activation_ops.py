"""Activation ops of the backend contract (Burn's ``ActivationOps``), with defaults built from
float ops, plus the backward helpers the autodiff decorator uses."""

from __future__ import annotations

from typing import Any

from burn.backend.contract import default

P = Any


class ActivationOps:
    """Activation ops; every one has a default."""

    # Signatures of the contract. The bodies are filled in by the module-ops work.
    @default
    def relu(self, x: P) -> P:
        raise NotImplementedError

    @default
    def relu_backward(self, output: P, grad: P) -> P:
        """`grad` where the relu `output` is positive, else 0."""
        raise NotImplementedError

    @default
    def leaky_relu(self, x: P, negative_slope: float) -> P:
        raise NotImplementedError

    @default
    def gelu(self, x: P) -> P:
        """Exact GELU: ``x * (1 + erf(x / sqrt(2))) / 2``."""
        raise NotImplementedError

    @default
    def gelu_backward(self, x: P, grad: P) -> P:
        raise NotImplementedError

    @default
    def sigmoid(self, x: P) -> P:
        """Numerically stable for large ``|x|``."""
        raise NotImplementedError

    @default
    def sigmoid_backward(self, output: P, grad: P) -> P:
        """``grad * output * (1 - output)``."""
        raise NotImplementedError

    @default
    def log_sigmoid(self, x: P) -> P:
        raise NotImplementedError

    @default
    def silu(self, x: P) -> P:
        raise NotImplementedError

    @default
    def softplus(self, x: P, beta: float) -> P:
        """``log(1 + exp(beta * x)) / beta``, stable for large inputs."""
        raise NotImplementedError

    @default
    def hard_sigmoid(self, x: P, alpha: float, beta: float) -> P:
        """``clamp(alpha * x + beta, 0, 1)``."""
        raise NotImplementedError

    @default
    def softmax(self, x: P, dim: int) -> P:
        """Stable (max subtracted)."""
        raise NotImplementedError

    @default
    def log_softmax(self, x: P, dim: int) -> P:
        raise NotImplementedError
