"""Float64 NumPy references of the activations (and the softmax the losses use)."""

from __future__ import annotations

import math

import numpy as np


def erf(x: np.ndarray) -> np.ndarray:
    return np.vectorize(math.erf, otypes=[np.float64])(x) if x.size else np.asarray(x, dtype=np.float64)


def gelu(x: np.ndarray) -> np.ndarray:
    return x * (1 + erf(x / math.sqrt(2))) / 2


def gelu_grad(x: np.ndarray) -> np.ndarray:
    return (1 + erf(x / math.sqrt(2))) / 2 + x * np.exp(-x * x / 2) / math.sqrt(2 * math.pi)


def sigmoid(x: np.ndarray) -> np.ndarray:
    return np.exp(-np.logaddexp(0.0, -x))


def conv_epilogue(name: str, x: np.ndarray) -> np.ndarray:
    """The activation `name` of `burn.backend.ops.conv.CONV_ACTIVATIONS` (PyTorch's definitions)."""
    relu6 = np.clip(x, 0.0, 6.0)
    table = {
        "none": lambda: x,
        "relu": lambda: np.maximum(x, 0.0),
        "relu6": lambda: relu6,
        "hardswish": lambda: x * np.clip(x + 3.0, 0.0, 6.0) / 6.0,
        "hardsigmoid": lambda: np.clip(x + 3.0, 0.0, 6.0) / 6.0,
        "silu": lambda: x * sigmoid(x),
        "sigmoid": lambda: sigmoid(x),
        "gelu": lambda: gelu(x),
    }
    return table[name]()  # type: ignore[no-untyped-call]


def log_sigmoid(x: np.ndarray) -> np.ndarray:
    return -np.logaddexp(0.0, -x)


def softplus(x: np.ndarray, beta: float) -> np.ndarray:
    return np.logaddexp(0.0, beta * x) / beta


def softmax(x: np.ndarray, dim: int) -> np.ndarray:
    e = np.exp(x - x.max(axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)


def log_softmax(x: np.ndarray, dim: int) -> np.ndarray:
    shifted = x - x.max(axis=dim, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=dim, keepdims=True))
