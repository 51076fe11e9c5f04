"""Transformer encoder and decoder stacks with Burn's configs, field names and `norm_first` option.

Encoder layer (post-norm, the default): ``x = norm_1(x + drop(attn(x)))``, then
``x = norm_2(x + drop(ff(x)))``. With ``norm_first`` (pre-norm): ``x = x + drop(attn(norm_2(x)))``
then ``x = x + drop(ff(norm_1(x)))``. The norm names follow Burn's fields (so its records map one
to one).

Decoder layer, post-norm: ``x = norm_1(x + drop(self_attn(x)))``, ``x = norm_2(x +
drop(cross_attn(x, memory)))``, ``x = norm_3(x + drop(ff(x)))``; pre-norm: ``x = x +
drop(self_attn(norm_3(x)))``, ``x = x + drop(cross_attn(norm_1(x), memory))``, ``x = x +
drop(ff(norm_2(x)))``. (PyTorch's pre-norm layers number their norms in order of use.)

The feed-forward block is `PositionWiseFeedForward`: ``linear_outer(dropout(gelu(linear_inner(x))))``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from burn.module.base import Module
from burn.module.config import config
from burn.nn._util import resolve_device
from burn.nn.attention import MhaInput, MultiHeadAttention, MultiHeadAttentionConfig
from burn.nn.dropout import Dropout, DropoutConfig
from burn.nn.init import DEFAULT_LAYER_INIT, Initializer
from burn.nn.linear import Linear, LinearConfig
from burn.nn.norm import LayerNorm, LayerNormConfig
from burn.tensor import activation as A

if TYPE_CHECKING:
    from burn.backend.device import Device
    from burn.tensor.tensor import Tensor

__all__ = [
    "PositionWiseFeedForward",
    "PositionWiseFeedForwardConfig",
    "TransformerDecoder",
    "TransformerDecoderConfig",
    "TransformerDecoderInput",
    "TransformerDecoderLayer",
    "TransformerEncoder",
    "TransformerEncoderConfig",
    "TransformerEncoderInput",
    "TransformerEncoderLayer",
]


# -- feed-forward ---------------------------------------------------------------------------------
@config
class PositionWiseFeedForwardConfig:
    """Builds a `PositionWiseFeedForward` (``d_model -> d_ff -> d_model``)."""

    d_model: int
    d_ff: int
    dropout: float = 0.1
    initializer: Initializer = DEFAULT_LAYER_INIT

    def init(self, device: Device | None = None) -> PositionWiseFeedForward:
        device = resolve_device(device)
        return PositionWiseFeedForward(
            linear_inner=LinearConfig(self.d_model, self.d_ff, initializer=self.initializer).init(device),
            linear_outer=LinearConfig(self.d_ff, self.d_model, initializer=self.initializer).init(device),
            dropout=DropoutConfig(self.dropout).init(),
        )


class PositionWiseFeedForward(Module):
    """``linear_outer(dropout(gelu(linear_inner(x))))`` applied at every position."""

    linear_inner: Linear
    linear_outer: Linear
    dropout: Dropout

    def forward(self, x: Tensor) -> Tensor:
        return self.linear_outer(self.dropout(A.gelu(self.linear_inner(x))))


def _mha(
    d_model: int, n_heads: int, dropout: float, quiet: bool, init: Initializer, device: Device
) -> MultiHeadAttention:
    return MultiHeadAttentionConfig(
        d_model, n_heads, dropout=dropout, quiet_softmax=quiet, initializer=init
    ).init(device)


# -- encoder --------------------------------------------------------------------------------------
class TransformerEncoderInput:
    """`tensor` ``[B, T, d_model]`` with an optional padding mask ``[B, T]`` and attention mask
    ``[B, T, T]`` (Bool, True = masked)."""

    __slots__ = ("tensor", "mask_pad", "mask_attn")

    def __init__(
        self, tensor: Tensor, mask_pad: Tensor | None = None, mask_attn: Tensor | None = None
    ) -> None:
        self.tensor = tensor
        self.mask_pad = mask_pad
        self.mask_attn = mask_attn

    def with_mask_pad(self, mask_pad: Tensor | None) -> TransformerEncoderInput:
        return TransformerEncoderInput(self.tensor, mask_pad, self.mask_attn)

    def with_mask_attn(self, mask_attn: Tensor | None) -> TransformerEncoderInput:
        return TransformerEncoderInput(self.tensor, self.mask_pad, mask_attn)


@config
class TransformerEncoderConfig:
    """Builds a `TransformerEncoder` of `n_layers` identical layers.

    Example:
        >>> from burn import nn
        >>> enc = nn.TransformerEncoderConfig(32, 64, 4, 2, dropout=0.0).init(device)  # doctest: +SKIP
        >>> enc(nn.TransformerEncoderInput(x)).shape  # x: [B, T, 32]  # doctest: +SKIP
    """

    d_model: int
    d_ff: int
    n_heads: int
    n_layers: int
    dropout: float = 0.1
    norm_first: bool = False
    quiet_softmax: bool = False
    initializer: Initializer = DEFAULT_LAYER_INIT

    def init(self, device: Device | None = None) -> TransformerEncoder:
        device = resolve_device(device)
        layers = [self._layer(device) for _ in range(self.n_layers)]
        return TransformerEncoder(layers=layers)

    def _layer(self, device: Device) -> TransformerEncoderLayer:
        return TransformerEncoderLayer(
            mha=_mha(self.d_model, self.n_heads, self.dropout, self.quiet_softmax, self.initializer, device),
            pwff=PositionWiseFeedForwardConfig(self.d_model, self.d_ff, self.dropout, self.initializer).init(
                device
            ),
            norm_1=LayerNormConfig(self.d_model).init(device),
            norm_2=LayerNormConfig(self.d_model).init(device),
            dropout=DropoutConfig(self.dropout).init(),
            norm_first=self.norm_first,
        )


class TransformerEncoderLayer(Module):
    """One encoder layer: self-attention and feed-forward, each in a residual block."""

    mha: MultiHeadAttention
    pwff: PositionWiseFeedForward
    norm_1: LayerNorm
    norm_2: LayerNorm
    dropout: Dropout
    norm_first: bool = False

    def forward(self, x: Tensor, mask_pad: Tensor | None = None, mask_attn: Tensor | None = None) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(
                self.mha(MhaInput(self.norm_2(x), mask_pad=mask_pad, mask_attn=mask_attn)).context
            )
            return x + self.dropout(self.pwff(self.norm_1(x)))
        x = self.norm_1(
            x + self.dropout(self.mha(MhaInput(x, mask_pad=mask_pad, mask_attn=mask_attn)).context)
        )
        return self.norm_2(x + self.dropout(self.pwff(x)))


class TransformerEncoder(Module):
    """A stack of `TransformerEncoderLayer` (params at ``layers.<i>.…``)."""

    layers: list[TransformerEncoderLayer]

    def forward(self, inp: TransformerEncoderInput | Tensor) -> Tensor:
        """``[B, T, d_model] -> [B, T, d_model]``; pass a `TransformerEncoderInput` for masks."""
        if not isinstance(inp, TransformerEncoderInput):
            inp = TransformerEncoderInput(inp)
        x = inp.tensor
        for layer in self.layers:
            x = layer(x, inp.mask_pad, inp.mask_attn)
        return x


# -- decoder --------------------------------------------------------------------------------------
class TransformerDecoderInput:
    """`target` ``[B, T, d_model]`` and the encoder output `memory` ``[B, S, d_model]``, each with
    optional padding / attention masks (Bool, True = masked)."""

    __slots__ = (
        "target",
        "memory",
        "target_mask_pad",
        "target_mask_attn",
        "memory_mask_pad",
        "memory_mask_attn",
    )

    def __init__(
        self,
        target: Tensor,
        memory: Tensor,
        target_mask_pad: Tensor | None = None,
        target_mask_attn: Tensor | None = None,
        memory_mask_pad: Tensor | None = None,
        memory_mask_attn: Tensor | None = None,
    ) -> None:
        self.target = target
        self.memory = memory
        self.target_mask_pad = target_mask_pad
        self.target_mask_attn = target_mask_attn
        self.memory_mask_pad = memory_mask_pad
        self.memory_mask_attn = memory_mask_attn


@config
class TransformerDecoderConfig:
    """Builds a `TransformerDecoder` of `n_layers` identical layers."""

    d_model: int
    d_ff: int
    n_heads: int
    n_layers: int
    dropout: float = 0.1
    norm_first: bool = False
    quiet_softmax: bool = False
    initializer: Initializer = DEFAULT_LAYER_INIT

    def init(self, device: Device | None = None) -> TransformerDecoder:
        device = resolve_device(device)
        return TransformerDecoder(layers=[self._layer(device) for _ in range(self.n_layers)])

    def _layer(self, device: Device) -> TransformerDecoderLayer:
        def mha() -> MultiHeadAttention:
            return _mha(
                self.d_model, self.n_heads, self.dropout, self.quiet_softmax, self.initializer, device
            )

        return TransformerDecoderLayer(
            cross_attn=mha(),
            self_attn=mha(),
            pwff=PositionWiseFeedForwardConfig(self.d_model, self.d_ff, self.dropout, self.initializer).init(
                device
            ),
            norm_1=LayerNormConfig(self.d_model).init(device),
            norm_2=LayerNormConfig(self.d_model).init(device),
            norm_3=LayerNormConfig(self.d_model).init(device),
            dropout=DropoutConfig(self.dropout).init(),
            norm_first=self.norm_first,
        )


class TransformerDecoderLayer(Module):
    """One decoder layer: self-attention, cross-attention over `memory`, feed-forward."""

    cross_attn: MultiHeadAttention
    self_attn: MultiHeadAttention
    pwff: PositionWiseFeedForward
    norm_1: LayerNorm
    norm_2: LayerNorm
    norm_3: LayerNorm
    dropout: Dropout
    norm_first: bool = False

    def forward(self, inp: TransformerDecoderInput, x: Tensor) -> Tensor:
        drop = self.dropout
        pre = self.norm_first
        h = self.norm_3(x) if pre else x
        x = x + drop(
            self.self_attn(MhaInput(h, mask_pad=inp.target_mask_pad, mask_attn=inp.target_mask_attn)).context
        )
        if pre:
            h = self.norm_1(x)
        else:
            x = h = self.norm_1(x)
        memory = inp.memory
        cross = MhaInput(h, memory, memory, inp.memory_mask_pad, inp.memory_mask_attn)
        x = x + drop(self.cross_attn(cross).context)
        if pre:
            h = self.norm_2(x)
        else:
            x = h = self.norm_2(x)
        x = x + drop(self.pwff(h))
        return x if pre else self.norm_3(x)


class TransformerDecoder(Module):
    """A stack of `TransformerDecoderLayer` (params at ``layers.<i>.…``)."""

    layers: list[TransformerDecoderLayer]

    def forward(self, inp: TransformerDecoderInput) -> Tensor:
        """``target [B, T, d_model]`` attending to ``memory [B, S, d_model]`` -> ``[B, T, d_model]``."""
        x = inp.target
        for layer in self.layers:
            x = layer(inp, x)
        return x
