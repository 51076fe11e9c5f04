"""`MultiHeadAttention` (Vaswani et al., 2017) with Burn's config, input and output types, and
the mask helpers `generate_autoregressive_mask` and `generate_padding_mask`.

Masks are Bool tensors where **True means "do not attend"**: a padding mask ``[B, S]`` marks pad
positions of the keys, an attention mask ``[B, T, S]`` (or ``[T, S]`` for every batch) marks
forbidden query/key pairs. Masked scores are set to `min_float` (Burn's -1e4 default) before the
softmax, so a fully masked row attends uniformly instead of giving NaN.

Dropout acts on the attention weights after the softmax (as PyTorch; Burn drops raw scores),
and only while training (autodiff backend), like every `Dropout`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from burn.errors import ShapeError
from burn.module.base import Module
from burn.module.config import config
from burn.nn._util import resolve_device
from burn.nn.dropout import Dropout, DropoutConfig
from burn.nn.init import DEFAULT_LAYER_INIT, Initializer
from burn.nn.linear import Linear, LinearConfig
from burn.tensor import activation as A
from burn.tensor.kind import Bool, Int
from burn.tensor.tensor import Tensor

if TYPE_CHECKING:
    from burn.backend.device import Device

__all__ = [
    "MhaInput",
    "MhaOutput",
    "MultiHeadAttention",
    "MultiHeadAttentionConfig",
    "PaddingMask",
    "generate_autoregressive_mask",
    "generate_padding_mask",
    "quiet_softmax",
]


def quiet_softmax(x: Tensor, dim: int) -> Tensor:
    """``exp(x_i) / (1 + sum_j exp(x_j))`` along `dim` ("softmax1", Miller 2023): rows may give
    (almost) no weight to anything. Computed stably by shifting by ``max(0, max(x))``."""
    shift = x.max_dim(dim).detach().clamp_min(0.0)
    e = (x - shift).exp()
    return e / (e.sum_dim(dim) + (-shift).exp())


class MhaInput:
    """The inputs of `MultiHeadAttention.forward`.

    Attributes:
        query: ``[B, T, d_model]``; key and value: ``[B, S, d_model]``.
        mask_pad: Bool ``[B, S]`` (True at key positions to ignore) or None.
        mask_attn: Bool ``[B, T, S]`` or ``[T, S]`` (True where a query must not see a key) or None.

    Example:
        >>> inp = MhaInput.self_attn(x).with_mask_pad(pad)  # doctest: +SKIP
    """

    __slots__ = ("query", "key", "value", "mask_pad", "mask_attn")

    def __init__(
        self,
        query: Tensor,
        key: Tensor | None = None,
        value: Tensor | None = None,
        mask_pad: Tensor | None = None,
        mask_attn: Tensor | None = None,
    ) -> None:
        self.query = query
        self.key = query if key is None else key
        self.value = self.key if value is None else value
        self.mask_pad = mask_pad
        self.mask_attn = mask_attn

    @classmethod
    def self_attn(cls, tensor: Tensor) -> MhaInput:
        """Query, key and value all `tensor`."""
        return cls(tensor, tensor, tensor)

    @classmethod
    def new(cls, query: Tensor, key: Tensor, value: Tensor) -> MhaInput:
        return cls(query, key, value)

    def with_mask_pad(self, mask_pad: Tensor | None) -> MhaInput:
        return MhaInput(self.query, self.key, self.value, mask_pad, self.mask_attn)

    def with_mask_attn(self, mask_attn: Tensor | None) -> MhaInput:
        return MhaInput(self.query, self.key, self.value, self.mask_pad, mask_attn)


class MhaOutput(NamedTuple):
    """`weights` ``[B, n_heads, T, S]`` (softmax output) and `context` ``[B, T, d_model]``."""

    weights: Tensor
    context: Tensor


@config
class MultiHeadAttentionConfig:
    """Builds a `MultiHeadAttention` (four ``d_model -> d_model`` `Linear` layers).

    Example:
        >>> from burn import nn
        >>> mha = nn.MultiHeadAttentionConfig(32, 4, dropout=0.0).init(device)  # doctest: +SKIP
        >>> mha(nn.MhaInput.self_attn(x)).context.shape  # x: [2, 5, 32]  # doctest: +SKIP
        (2, 5, 32)
    """

    d_model: int
    n_heads: int
    dropout: float = 0.1
    min_float: float = -1.0e4
    quiet_softmax: bool = False
    initializer: Initializer = DEFAULT_LAYER_INIT

    def init(self, device: Device | None = None) -> MultiHeadAttention:
        if self.n_heads < 1 or self.d_model % self.n_heads:
            raise ValueError(
                f"MultiHeadAttentionConfig: d_model {self.d_model} must be divisible by "
                f"n_heads {self.n_heads}"
            )
        device = resolve_device(device)
        linear = LinearConfig(self.d_model, self.d_model, initializer=self.initializer)
        return MultiHeadAttention(
            query=linear.init(device),
            key=linear.init(device),
            value=linear.init(device),
            output=linear.init(device),
            dropout=DropoutConfig(self.dropout).init(),
            n_heads=self.n_heads,
            d_k=self.d_model // self.n_heads,
            min_float=float(self.min_float),
            quiet_softmax=self.quiet_softmax,
        )


class MultiHeadAttention(Module):
    """Scaled dot-product attention over `n_heads` heads of size ``d_k = d_model / n_heads``."""

    query: Linear
    key: Linear
    value: Linear
    output: Linear
    dropout: Dropout
    n_heads: int
    d_k: int
    min_float: float = -1.0e4
    quiet_softmax: bool = False

    def forward(self, inp: MhaInput) -> MhaOutput:
        query, key, value = inp.query, inp.key, inp.value
        q_shape, k_shape = query.shape, key.shape
        d_model = self.n_heads * self.d_k
        if len(q_shape) != 3 or q_shape[2] != d_model or len(k_shape) != 3 or k_shape[2] != d_model:
            raise ShapeError(
                f"MultiHeadAttention: query and key/value must be [B, T, {d_model}], "
                f"got {q_shape} and {k_shape}"
            )
        if value.shape != k_shape:
            raise ShapeError(
                f"MultiHeadAttention: key {k_shape} and value {value.shape} must have the same shape"
            )
        batch, t_q, _ = q_shape
        t_k = k_shape[1]
        q = self._heads(self.query(query), batch, t_q)
        k = self._heads(self.key(key), batch, t_k)
        v = self._heads(self.value(value), batch, t_k)

        scores = q.matmul(k.transpose()) * (1.0 / math.sqrt(self.d_k))
        if inp.mask_pad is not None:
            scores = scores.mask_fill(self._pad(inp.mask_pad, batch, t_k), self.min_float)
        if inp.mask_attn is not None:
            scores = scores.mask_fill(self._attn(inp.mask_attn, batch, t_q, t_k), self.min_float)
        weights = quiet_softmax(scores, 3) if self.quiet_softmax else A.softmax(scores, 3)

        context = self.dropout(weights).matmul(v)  # [B, H, T, d_k]
        context = context.swap_dims(1, 2).reshape((batch, t_q, d_model))
        return MhaOutput(weights, self.output(context))

    def _heads(self, x: Tensor, batch: int, steps: int) -> Tensor:
        return x.reshape((batch, steps, self.n_heads, self.d_k)).swap_dims(1, 2)

    @staticmethod
    def _pad(mask: Tensor, batch: int, t_k: int) -> Tensor:
        if mask.kind is not Bool or mask.shape != (batch, t_k):
            raise ShapeError(
                f"MultiHeadAttention: mask_pad must be a Bool tensor of shape ({batch}, {t_k}), "
                f"got {mask.kind.name} {mask.shape}"
            )
        return mask.reshape((batch, 1, 1, t_k))

    @staticmethod
    def _attn(mask: Tensor, batch: int, t_q: int, t_k: int) -> Tensor:
        shape = mask.shape
        if mask.kind is Bool and shape == (t_q, t_k):
            return mask.reshape((1, 1, t_q, t_k))
        if mask.kind is not Bool or shape != (batch, t_q, t_k):
            raise ShapeError(
                f"MultiHeadAttention: mask_attn must be a Bool tensor of shape ({batch}, {t_q}, {t_k}) "
                f"or ({t_q}, {t_k}), got {mask.kind.name} {shape}"
            )
        return mask.reshape((batch, 1, t_q, t_k))


# -- masks ----------------------------------------------------------------------------------------
def generate_autoregressive_mask(batch_size: int, seq_length: int, device: Device | None = None) -> Tensor:
    """Bool ``[B, T, T]``, True above the diagonal: position ``t`` may not see ``t' > t``.

    Example:
        >>> generate_autoregressive_mask(1, 3, device).tolist()  # doctest: +SKIP
        [[[False, True, True], [False, False, True], [False, False, False]]]
    """
    upper = np.triu(np.ones((seq_length, seq_length), dtype=bool), k=1)
    mask = np.broadcast_to(upper, (batch_size, seq_length, seq_length))
    return Tensor.from_data(np.ascontiguousarray(mask), device=resolve_device(device), kind=Bool)


class PaddingMask(NamedTuple):
    """Tokens padded to a common length (Int ``[B, T]``) and their mask (Bool, True at pads)."""

    tensor: Tensor
    mask: Tensor


def generate_padding_mask(
    pad_token: int,
    tokens_list: Sequence[Sequence[int]],
    max_seq_length: int | None = None,
    device: Device | None = None,
) -> PaddingMask:
    """Pad the sequences in `tokens_list` with `pad_token` to the longest one (truncated to
    `max_seq_length` when given), and mark the padding.

    Example:
        >>> out = generate_padding_mask(0, [[5, 6, 7], [8]], device=device)  # doctest: +SKIP
        >>> out.tensor.tolist(), out.mask.tolist()  # doctest: +SKIP
        ([[5, 6, 7], [8, 0, 0]], [[False, False, False], [False, True, True]])
    """
    longest = max((len(t) for t in tokens_list), default=0)
    length = longest if max_seq_length is None else min(longest, max_seq_length)
    tokens = np.full((len(tokens_list), length), pad_token, dtype=np.int64)
    for row, seq in enumerate(tokens_list):
        seq = list(seq)[:length]
        tokens[row, : len(seq)] = seq
    device = resolve_device(device)
    tensor = Tensor.from_data(tokens, device=device, kind=Int)
    return PaddingMask(tensor, tensor.equal_elem(pad_token))
