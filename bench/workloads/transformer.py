"""Transformer encoder block training step (pre-norm: LayerNorm, 4-head self-attention, residual,
LayerNorm, GELU MLP 4x wide, residual; MSE to a fixed target; Adam), e.g. batch 32, seq 128,
d_model 256. burn and torch start from the same weights (no NumPy floor: the backward of
attention and layer norm by hand would be a second implementation to trust)."""

from __future__ import annotations

from typing import Any

import numpy as np

from workloads.common import Workload, burn_trained, torch_trained, uniform_init

LINEARS = ("query", "key", "value", "output", "ff_1", "ff_2")


def init_weights(d_model: int, seed: int = 0) -> dict[str, np.ndarray]:
    """Linear weights in burn's layout ``[in, out]`` with biases; LayerNorm gammas and betas."""
    rng = np.random.default_rng(seed)
    shapes = {"query": (d_model, d_model), "key": (d_model, d_model), "value": (d_model, d_model)}
    shapes |= {"output": (d_model, d_model), "ff_1": (d_model, 4 * d_model), "ff_2": (4 * d_model, d_model)}
    weights: dict[str, np.ndarray] = {}
    for name, (fan_in, fan_out) in shapes.items():
        weights[f"{name}.w"] = uniform_init(rng, (fan_in, fan_out), fan_in)
        weights[f"{name}.b"] = uniform_init(rng, (fan_out,), fan_in)
    for norm in ("norm_1", "norm_2"):
        weights[f"{norm}.gamma"] = (1.0 + 0.1 * rng.standard_normal(d_model)).astype(np.float32)
        weights[f"{norm}.beta"] = (0.1 * rng.standard_normal(d_model)).astype(np.float32)
    return weights


def burn_block(
    backend: Any, weights: dict[str, np.ndarray], x_np: np.ndarray, y_np: np.ndarray, heads: int,
    autocast: str | None = None,
) -> Workload:
    """burn: `nn.LayerNorm`, `nn.MultiHeadAttention` (dropout 0), `nn.Linear`, `activation.gelu`,
    `nn.MseLoss`, `AdamConfig().init()`."""
    from burn import Tensor, activation, nn
    from burn.module import Module, Param

    device = backend.default_device()

    def param(name: str) -> Param:
        return Param.from_tensor(Tensor.from_data(weights[name], device=device))

    def linear(name: str) -> nn.Linear:
        return nn.Linear(param(f"{name}.w"), param(f"{name}.b"))

    class Block(Module):
        norm_1: nn.LayerNorm
        attn: nn.MultiHeadAttention
        norm_2: nn.LayerNorm
        ff_1: nn.Linear
        ff_2: nn.Linear

        def forward(self, x: Tensor) -> Tensor:
            x = x + self.attn(nn.MhaInput.self_attn(self.norm_1(x))).context
            return x + self.ff_2(activation.gelu(self.ff_1(self.norm_2(x))))

    d_model = x_np.shape[-1]
    attn = nn.MultiHeadAttention(
        query=linear("query"), key=linear("key"), value=linear("value"), output=linear("output"),
        dropout=nn.Dropout(0.0), n_heads=heads, d_k=d_model // heads,
    )  # fmt: skip
    norms = [nn.LayerNorm(param(f"{n}.gamma"), param(f"{n}.beta")) for n in ("norm_1", "norm_2")]
    block = Block(norms[0], attn, norms[1], linear("ff_1"), linear("ff_2"))
    return burn_trained(backend, block, x_np, y_np, nn.MseLoss(), autocast=autocast)


def torch_block(
    torch: Any, weights: dict[str, np.ndarray], x_np: np.ndarray, y_np: np.ndarray, heads: int,
    autocast: str | None = None,
) -> Workload:
    """PyTorch eager: `nn.LayerNorm`, `nn.MultiheadAttention(batch_first=True)`, `nn.Linear`,
    `F.gelu`, `F.mse_loss`, `torch.optim.Adam`."""
    nn, F = torch.nn, torch.nn.functional
    d_model = x_np.shape[-1]

    def t(name: str, transpose: bool = False) -> Any:
        a = weights[name]
        return torch.from_numpy(np.ascontiguousarray(a.T if transpose else a))

    base: Any = nn.Module

    class Block(base):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.norm_1, self.norm_2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
            self.attn = nn.MultiheadAttention(d_model, heads, dropout=0.0, batch_first=True)
            self.ff_1, self.ff_2 = nn.Linear(d_model, 4 * d_model), nn.Linear(4 * d_model, d_model)

        def forward(self, x: Any) -> Any:
            h = self.norm_1(x)
            x = x + self.attn(h, h, h, need_weights=False)[0]
            return x + self.ff_2(F.gelu(self.ff_1(self.norm_2(x))))

    model = Block()
    with torch.no_grad():
        for norm in ("norm_1", "norm_2"):
            getattr(model, norm).weight.copy_(t(f"{norm}.gamma"))
            getattr(model, norm).bias.copy_(t(f"{norm}.beta"))
        qkv = ("query", "key", "value")
        model.attn.in_proj_weight.copy_(torch.cat([t(f"{n}.w", True) for n in qkv]))
        model.attn.in_proj_bias.copy_(torch.cat([t(f"{n}.b") for n in qkv]))
        model.attn.out_proj.weight.copy_(t("output.w", True))
        model.attn.out_proj.bias.copy_(t("output.b"))
        for name in ("ff_1", "ff_2"):
            getattr(model, name).weight.copy_(t(f"{name}.w", True))
            getattr(model, name).bias.copy_(t(f"{name}.b"))
    return torch_trained(torch, model, x_np, y_np, loss_fn=F.mse_loss, autocast=autocast)
