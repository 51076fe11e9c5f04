"""burn.nn models of the ONNX export tests: a ResNet-style CNN with batch norm, a GPT-style
decoder and a bidirectional LSTM, with random weights, built on one backend."""

from __future__ import annotations

from typing import Any

import numpy as np

import burn
from burn import nn
from burn.module import Module
from burn.nn.attention import MhaInput
from burn.tensor import Tensor


class ResBlock(Module):
    conv1: nn.Conv2d
    bn1: nn.BatchNorm
    conv2: nn.Conv2d
    bn2: nn.BatchNorm

    def forward(self, x: Tensor) -> Tensor:
        y = burn.activation.relu(self.bn1(self.conv1(x)))
        return burn.activation.relu(self.bn2(self.conv2(y)) + x)


class ResNet(Module):
    stem: nn.Conv2d
    bn: nn.BatchNorm
    pool: nn.MaxPool2d
    blocks: list[ResBlock]
    down: nn.Conv2d
    avg: nn.AdaptiveAvgPool2d
    head: nn.Linear

    def forward(self, x: Tensor) -> Tensor:
        x = self.pool(burn.activation.relu(self.bn(self.stem(x))))
        for block in self.blocks:
            x = block(x)
        x = self.avg(self.down(x))
        return self.head(x.flatten(1, 3))


def resnet(device: Any) -> ResNet:
    def bn(c: int) -> nn.BatchNorm:
        return _randomize_stats(nn.BatchNormConfig(c).init(device))

    def block(c: int) -> ResBlock:
        return ResBlock(
            nn.Conv2dConfig((c, c), (3, 3), padding="same").init(device), bn(c),
            nn.Conv2dConfig((c, c), (3, 3), padding="same", bias=False).init(device), bn(c),
        )

    return ResNet(
        nn.Conv2dConfig((3, 8), (3, 3), padding=(1, 1)).init(device), bn(8),
        nn.MaxPool2dConfig((2, 2), strides=(2, 2)).init(),
        [block(8), block(8)],
        nn.Conv2dConfig((8, 16), (3, 3), stride=(2, 2)).init(device),
        nn.AdaptiveAvgPool2dConfig((1, 1)).init(),
        nn.LinearConfig(16, 10).init(device),
    ).eval()


def _randomize_stats(bn: nn.BatchNorm) -> nn.BatchNorm:
    """Running statistics away from (0, 1), so that eval-mode batch norm is not the identity."""
    rng = np.random.default_rng(3)

    def change(path: str, p: Any) -> Any:
        if "running_mean" in path:
            return p.with_value(Tensor.from_data(rng.normal(0, 0.5, p.shape).astype(np.float32), p.device))
        if "running_var" in path:
            return p.with_value(Tensor.from_data(rng.uniform(0.5, 2, p.shape).astype(np.float32), p.device))
        return p

    return bn.map(change)


class DecoderBlock(Module):
    ln1: nn.LayerNorm
    attn: nn.MultiHeadAttention
    ln2: nn.LayerNorm
    fc1: nn.Linear
    gelu: nn.Gelu
    fc2: nn.Linear

    def forward(self, x: Tensor, mask: Tensor) -> Tensor:
        x = x + self.attn(MhaInput.self_attn(self.ln1(x)).with_mask_attn(mask)).context
        return x + self.fc2(self.gelu(self.fc1(self.ln2(x))))


class Gpt(Module):
    tokens: nn.Embedding
    positions: nn.Embedding
    blocks: list[DecoderBlock]
    ln: nn.LayerNorm
    head: nn.Linear

    def forward(self, ids: Tensor) -> Tensor:
        t = ids.shape[1]
        pos = Tensor.arange(0, t, device=ids.device).unsqueeze()
        x = self.tokens(ids) + self.positions(pos)
        mask = nn.attention.generate_autoregressive_mask(1, t, ids.device).squeeze(0)
        for block in self.blocks:
            x = block(x, mask)
        return self.head(self.ln(x))


def gpt(device: Any, vocab: int = 50, d: int = 32, heads: int = 4, ctx: int = 16) -> Gpt:
    def block() -> DecoderBlock:
        return DecoderBlock(
            nn.LayerNormConfig(d).init(device),
            nn.MultiHeadAttentionConfig(d, heads, dropout=0.0).init(device),
            nn.LayerNormConfig(d).init(device),
            nn.LinearConfig(d, 4 * d).init(device),
            nn.GeluConfig().init(),
            nn.LinearConfig(4 * d, d).init(device),
        )

    return Gpt(
        nn.EmbeddingConfig(vocab, d).init(device),
        nn.EmbeddingConfig(ctx, d).init(device),
        [block(), block()],
        nn.LayerNormConfig(d).init(device),
        nn.LinearConfig(d, vocab).init(device),
    ).eval()


class Tagger(Module):
    lstm: nn.BiLstm
    head: nn.Linear

    def forward(self, x: Tensor) -> Tensor:
        out, _state = self.lstm(x)
        return self.head(out)


def bilstm(device: Any, d_in: int = 6, hidden: int = 8) -> Tagger:
    return Tagger(
        nn.BiLstmConfig(d_in, hidden).init(device), nn.LinearConfig(2 * hidden, 3).init(device)
    ).eval()
