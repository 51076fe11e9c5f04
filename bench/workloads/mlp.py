"""MLP classifier (Linear + ReLU layers, cross-entropy, Adam), e.g. 784-512-512-10."""

from __future__ import annotations

from typing import Any

import numpy as np

from workloads.common import Workload, burn_trained, torch_trained, uniform_init
from workloads.numpy_adam import NumpyAdam

Weights = list[tuple[np.ndarray, np.ndarray]]  # per layer: weight [in, out] (burn's layout), bias


def init_weights(sizes: list[int], seed: int = 0) -> Weights:
    rng = np.random.default_rng(seed)
    return [
        (uniform_init(rng, (i, o), i), uniform_init(rng, (o,), i))
        for i, o in zip(sizes[:-1], sizes[1:], strict=True)
    ]


def burn_mlp(
    backend: Any, weights: Weights, x_np: np.ndarray, y_np: np.ndarray, autocast: str | None = None
) -> Workload:
    """burn: `nn.Linear` layers in a `Module`, `CrossEntropyLoss`, `AdamConfig().init()`."""
    from burn import Tensor, activation, nn
    from burn.module import Module, Param

    class Mlp(Module):
        layers: list

        def forward(self, x: Tensor) -> Tensor:
            last = len(self.layers) - 1
            for i, layer in enumerate(self.layers):
                x = layer(x)
                if i < last:
                    x = activation.relu(x)
            return x

    device = backend.default_device()

    def param(a: np.ndarray) -> Param:
        return Param.from_tensor(Tensor.from_data(a, device=device))

    model = Mlp([nn.Linear(param(w), param(b)) for w, b in weights])
    return burn_trained(backend, model, x_np, y_np, autocast=autocast)


def torch_model(torch: Any, weights: Weights) -> Any:
    """The MLP as a PyTorch `nn.Sequential` of Linear + ReLU holding `weights`."""
    layers: list[Any] = []
    for i, (w, b) in enumerate(weights):
        lin = torch.nn.Linear(*w.shape)
        with torch.no_grad():
            lin.weight.copy_(torch.from_numpy(w.T.copy()))
            lin.bias.copy_(torch.from_numpy(b))
        layers.append(lin)
        if i < len(weights) - 1:
            layers.append(torch.nn.ReLU())
    return torch.nn.Sequential(*layers)


def torch_mlp(
    torch: Any, weights: Weights, x_np: np.ndarray, y_np: np.ndarray, device: str = "cpu",
    autocast: str | None = None,
) -> Workload:
    """PyTorch eager: `nn.Sequential` of Linear + ReLU, `F.cross_entropy`, `torch.optim.Adam`."""
    return torch_trained(torch, torch_model(torch, weights), x_np, y_np, device, autocast=autocast)


def numpy_mlp(weights: Weights, x: np.ndarray, y: np.ndarray) -> Workload:
    """The floor: forward, softmax cross-entropy and backward written by hand, Adam in place."""
    params = [a.copy() for pair in weights for a in pair]
    ws, bs = params[0::2], params[1::2]
    n, batch = len(ws), x.shape[0]
    rows = np.arange(batch)
    optimizer = NumpyAdam(params)

    def forward() -> tuple[list[np.ndarray], np.ndarray, np.ndarray, float]:
        acts = [x]
        for i in range(n):
            z = acts[-1] @ ws[i]
            z += bs[i]
            if i < n - 1:
                np.maximum(z, 0.0, out=z)
            acts.append(z)
        logits = acts.pop()
        shifted = logits - logits.max(axis=1, keepdims=True)
        e = np.exp(shifted)
        s = e.sum(axis=1, keepdims=True)
        loss = float(np.mean(np.log(s[:, 0]) - shifted[rows, y]))
        return acts, e, s, loss

    def fwd_bwd() -> list[np.ndarray]:
        acts, e, s, _ = forward()
        d = e / s
        d[rows, y] -= 1.0
        d /= batch
        grads: list[np.ndarray] = [d] * (2 * n)
        for i in reversed(range(n)):
            a = acts[i]
            grads[2 * i], grads[2 * i + 1] = a.T @ d, d.sum(axis=0)
            if i > 0:
                d = d @ ws[i].T
                d *= a > 0
        return grads

    return Workload(lambda: optimizer.step(fwd_bwd()), fwd_bwd, lambda: forward()[3])
