"""Transformer encoder and decoder stacks with Burn's configs, field names and `norm_first` option.

Encoder layer (post-norm, the default): ``x = norm_1(x + drop(attn(x)))``, then
``x = norm_2(x + drop(ff(x)))``. With ``norm_first`` (pre-norm): ``x = x + drop(attn(norm_2(x)))``
then ``x = x + drop(ff(norm_1(x)))``. The norm names follow Burn's fields (so its records map one
to one).

Decoder layer, post-norm: ``x = norm_1(x + drop(self_attn(x)))``, ``x = norm_2(x +
drop(cross_attn(x, memory)))``, ``x = norm_3(x + drop(ff(x)))``; pre-norm: ``x = x +
drop(self_attn(norm_3(x)))``, ``x = x + drop(cross_attn(norm_1(x), memory))``, ``x = x +
drop(ff(norm_2(x)))``. (PyTorch's pre-norm layers number their norms in order of use.)

The feed-forward block is `PositionWiseFeedForward`: ``linear_outer(dropout(act(linear_inner(x))))``.

Defaults that differ from PyTorch's ``nn.TransformerEncoderLayer``/``DecoderLayer``: the
activation is GELU (Burn's; PyTorch's default is ReLU: pass ``activation="relu"`` to match a
stock PyTorch layer), inputs are batch-first ``[B, T, d_model]``, and the stacks have no final
norm. ``layer_norm_eps`` (1e-5) and ``dropout`` (0.1) match. Loading PyTorch weights:
`burn.record.load_pytorch_safetensors` maps ``self_attn``, ``linear1``/``linear2`` and the norms
(by `norm_first`, see above).

Autoregressive inference: `TransformerDecoder.forward_autoregressive_inference` (and the
encoder's, for decoder-only models built from an encoder with a causal mask) take the whole
sequence so far and a cache (`TransformerDecoder.new_autoregressive_cache`), and compute only the
positions the cache has not seen, reusing every layer's projected keys and values: the result is
the causal full forward's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from burn.foundations.kind import Bool
from burn.module.base import Module
from burn.module.config import config
from burn.nn._util import resolve_device
from burn.nn.attention import MhaCache, MhaInput, MultiHeadAttention, MultiHeadAttentionConfig
from burn.nn.dropout import Dropout, DropoutConfig
from burn.nn.init import DEFAULT_LAYER_INIT, Initializer
from burn.nn.linear import Linear, LinearConfig
from burn.nn.norm import LayerNorm, LayerNormConfig
from burn.tensor import activation as A
from burn.tensor.tensor import Tensor

if TYPE_CHECKING:
    from burn.backend.device import Device

__all__ = [
    "PositionWiseFeedForward",
    "PositionWiseFeedForwardConfig",
    "TransformerDecoder",
    "TransformerDecoderCache",
    "TransformerDecoderConfig",
    "TransformerDecoderInput",
    "TransformerDecoderLayer",
    "TransformerEncoder",
    "TransformerEncoderCache",
    "TransformerEncoderConfig",
    "TransformerEncoderInput",
    "TransformerEncoderLayer",
]


# -- feed-forward ---------------------------------------------------------------------------------
ACTIVATIONS: dict[str, Callable[[Tensor], Tensor]] = {
    "gelu": A.gelu,
    "relu": A.relu,
    "silu": A.silu,
    "tanh": A.tanh,
    "sigmoid": A.sigmoid,
    "mish": A.mish,
}
"""The activations a feed-forward block accepts, by name (PyTorch's names for its two)."""


def _check_activation(op: str, name: str) -> None:
    if name not in ACTIVATIONS:
        raise ValueError(f"{op}: unknown activation {name!r}; expected one of {sorted(ACTIVATIONS)}")


@config
class PositionWiseFeedForwardConfig:
    """Builds a `PositionWiseFeedForward` (``d_model -> d_ff -> d_model``); `activation` is one
    of `ACTIVATIONS` (default ``"gelu"``, Burn's).

    Example:
        >>> from burn import nn
        >>> nn.PositionWiseFeedForwardConfig(8, 32, activation="relu").activation
        'relu'
    """

    d_model: int
    d_ff: int
    dropout: float = 0.1
    initializer: Initializer = DEFAULT_LAYER_INIT
    activation: str = "gelu"

    def __post_init__(self) -> None:
        _check_activation("PositionWiseFeedForwardConfig", self.activation)

    def init(self, device: Device | None = None) -> PositionWiseFeedForward:
        device = resolve_device(device)
        return PositionWiseFeedForward(
            linear_inner=LinearConfig(self.d_model, self.d_ff, initializer=self.initializer).init(device),
            linear_outer=LinearConfig(self.d_ff, self.d_model, initializer=self.initializer).init(device),
            dropout=DropoutConfig(self.dropout).init(),
            activation=self.activation,
        )


class PositionWiseFeedForward(Module):
    """``linear_outer(dropout(act(linear_inner(x))))`` applied at every position."""

    linear_inner: Linear
    linear_outer: Linear
    dropout: Dropout
    activation: str = "gelu"

    def forward(self, x: Tensor) -> Tensor:
        _check_activation("PositionWiseFeedForward", self.activation)
        act = ACTIVATIONS[self.activation]
        return self.linear_outer(self.dropout(act(self.linear_inner(x))))


def _mha(cfg: TransformerEncoderConfig | TransformerDecoderConfig, device: Device) -> MultiHeadAttention:
    return MultiHeadAttentionConfig(
        cfg.d_model,
        cfg.n_heads,
        dropout=cfg.dropout,
        quiet_softmax=cfg.quiet_softmax,
        initializer=cfg.initializer,
    ).init(device)


def _pwff(
    cfg: TransformerEncoderConfig | TransformerDecoderConfig, device: Device
) -> PositionWiseFeedForward:
    return PositionWiseFeedForwardConfig(
        cfg.d_model, cfg.d_ff, cfg.dropout, cfg.initializer, activation=cfg.activation
    ).init(device)


def _norm(cfg: TransformerEncoderConfig | TransformerDecoderConfig, device: Device) -> LayerNorm:
    return LayerNormConfig(cfg.d_model, epsilon=cfg.layer_norm_eps).init(device)


Attend = Callable[[Tensor], Tensor]
"""A sub-block of a layer as a function of its (normed) input: full or cached attention."""


def _new_rows(x: Tensor, start: int, mask: Tensor | None, op: str) -> Tensor:
    """The attention mask rows of the positions from `start` on: the given mask's (``[B, T, S]``
    or ``[T, S]``), or a causal one ``[n, T]`` when none is given."""
    steps = x.shape[1]
    if mask is not None:
        if len(mask.shape) not in (2, 3) or mask.shape[-2] != steps:
            raise ValueError(
                f"{op}: the attention mask must be [B, {steps}, S] or [{steps}, S], got {mask.shape}"
            )
        return mask.narrow(len(mask.shape) - 2, start, steps - start)
    rows = np.arange(start, steps)[:, None] < np.arange(steps)[None, :]
    return Tensor.from_data(rows, device=x.device, kind=Bool)


def _check_growth(op: str, steps: int, seen: int) -> None:
    if steps <= seen:
        raise ValueError(
            f"{op}: the input has {steps} positions and the cache has seen {seen}; pass the whole "
            f"sequence so far, longer than before (or reset the cache for a new sequence)"
        )


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

    `activation` names the feed-forward activation (one of `ACTIVATIONS`; ``"gelu"`` as Burn,
    where PyTorch's default is ``"relu"``); `layer_norm_eps` is the norms' epsilon.

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
    activation: str = "gelu"
    layer_norm_eps: float = 1e-5

    def __post_init__(self) -> None:
        _check_activation("TransformerEncoderConfig", self.activation)

    def init(self, device: Device | None = None) -> TransformerEncoder:
        device = resolve_device(device)
        layers = [self._layer(device) for _ in range(self.n_layers)]
        return TransformerEncoder(layers=layers)

    def _layer(self, device: Device) -> TransformerEncoderLayer:
        return TransformerEncoderLayer(
            mha=_mha(self, device),
            pwff=_pwff(self, device),
            norm_1=_norm(self, device),
            norm_2=_norm(self, device),
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
        return self._run(x, lambda h: self.mha(MhaInput(h, mask_pad=mask_pad, mask_attn=mask_attn)).context)

    def _run(self, x: Tensor, attend: Attend) -> Tensor:
        if self.norm_first:
            x = x + self.dropout(attend(self.norm_2(x)))
            return x + self.dropout(self.pwff(self.norm_1(x)))
        x = self.norm_1(x + self.dropout(attend(x)))
        return self.norm_2(x + self.dropout(self.pwff(x)))


class TransformerEncoderCache:
    """What `TransformerEncoder.forward_autoregressive_inference` keeps between calls: each
    layer's self-attention `MhaCache` and the outputs so far."""

    __slots__ = ("layers", "output")

    def __init__(self, n_layers: int) -> None:
        self.layers = [MhaCache() for _ in range(n_layers)]
        self.output: Tensor | None = None

    def __len__(self) -> int:
        return 0 if self.output is None else self.output.shape[1]


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

    def new_autoregressive_cache(self) -> TransformerEncoderCache:
        """An empty cache for `forward_autoregressive_inference`."""
        return TransformerEncoderCache(len(self.layers))

    def forward_autoregressive_inference(
        self, inp: TransformerEncoderInput | Tensor, cache: TransformerEncoderCache
    ) -> Tensor:
        """The causal forward of the whole sequence so far ``[B, T, d_model]``, computing only the
        positions `cache` has not seen (a decoder-only model generating one token at a time).

        The attention mask is causal unless `inp.mask_attn` is given (it must then be causal for
        the result to equal the full forward); a padding mask covers all ``T`` positions.

        Example:
            >>> cache = enc.new_autoregressive_cache()  # doctest: +SKIP
            >>> for t in range(1, steps + 1):  # doctest: +SKIP
            ...     out = enc.forward_autoregressive_inference(x[:, :t], cache)  # new: out[:, -1]
        """
        if not isinstance(inp, TransformerEncoderInput):
            inp = TransformerEncoderInput(inp)
        op, full = "TransformerEncoder.forward_autoregressive_inference", inp.tensor
        seen = len(cache)
        _check_growth(op, full.shape[1], seen)
        rows = _new_rows(full, seen, inp.mask_attn, op)
        x = full.narrow(1, seen, full.shape[1] - seen)
        for layer, mha_cache in zip(self.layers, cache.layers, strict=True):

            def attend(h: Tensor, layer: TransformerEncoderLayer = layer, c: MhaCache = mha_cache) -> Tensor:
                return layer.mha.forward_cache(MhaInput(h, mask_pad=inp.mask_pad, mask_attn=rows), c).context

            x = layer._run(x, attend)
        cache.output = x if cache.output is None else Tensor.cat([cache.output, x], 1)
        return cache.output


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
    """Builds a `TransformerDecoder` of `n_layers` identical layers (`activation` and
    `layer_norm_eps` as in `TransformerEncoderConfig`).

    Example:
        >>> from burn import nn
        >>> dec = nn.TransformerDecoderConfig(32, 64, 4, 2, dropout=0.0).init(device)  # doctest: +SKIP
        >>> dec(nn.TransformerDecoderInput(target, memory)).shape  # doctest: +SKIP
    """

    d_model: int
    d_ff: int
    n_heads: int
    n_layers: int
    dropout: float = 0.1
    norm_first: bool = False
    quiet_softmax: bool = False
    initializer: Initializer = DEFAULT_LAYER_INIT
    activation: str = "gelu"
    layer_norm_eps: float = 1e-5

    def __post_init__(self) -> None:
        _check_activation("TransformerDecoderConfig", self.activation)

    def init(self, device: Device | None = None) -> TransformerDecoder:
        device = resolve_device(device)
        return TransformerDecoder(layers=[self._layer(device) for _ in range(self.n_layers)])

    def _layer(self, device: Device) -> TransformerDecoderLayer:
        return TransformerDecoderLayer(
            cross_attn=_mha(self, device),
            self_attn=_mha(self, device),
            pwff=_pwff(self, device),
            norm_1=_norm(self, device),
            norm_2=_norm(self, device),
            norm_3=_norm(self, device),
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
        memory = inp.memory

        def attend(h: Tensor) -> Tensor:
            return self.self_attn(
                MhaInput(h, mask_pad=inp.target_mask_pad, mask_attn=inp.target_mask_attn)
            ).context

        def cross(h: Tensor) -> Tensor:
            return self.cross_attn(
                MhaInput(h, memory, memory, inp.memory_mask_pad, inp.memory_mask_attn)
            ).context

        return self._run(x, attend, cross)

    def _run(self, x: Tensor, attend: Attend, cross: Attend) -> Tensor:
        drop = self.dropout
        pre = self.norm_first
        h = self.norm_3(x) if pre else x
        x = x + drop(attend(h))
        if pre:
            h = self.norm_1(x)
        else:
            x = h = self.norm_1(x)
        x = x + drop(cross(h))
        if pre:
            h = self.norm_2(x)
        else:
            x = h = self.norm_2(x)
        x = x + drop(self.pwff(h))
        return x if pre else self.norm_3(x)


class TransformerDecoderCache:
    """What `TransformerDecoder.forward_autoregressive_inference` keeps between calls: each
    layer's self-attention cache, its cross-attention cache (the memory's projected keys and
    values, computed once) and the outputs so far. Use a new cache (or `reset`) per sequence."""

    __slots__ = ("self_attn", "cross_attn", "output")

    def __init__(self, n_layers: int) -> None:
        self.self_attn = [MhaCache() for _ in range(n_layers)]
        self.cross_attn = [MhaCache(static=True) for _ in range(n_layers)]
        self.output: Tensor | None = None

    def __len__(self) -> int:
        return 0 if self.output is None else self.output.shape[1]

    def reset(self) -> None:
        """Forget everything (a new sequence, or a new memory)."""
        for c in (*self.self_attn, *self.cross_attn):
            c.reset()
        self.output = None


class TransformerDecoder(Module):
    """A stack of `TransformerDecoderLayer` (params at ``layers.<i>.…``)."""

    layers: list[TransformerDecoderLayer]

    def forward(self, inp: TransformerDecoderInput) -> Tensor:
        """``target [B, T, d_model]`` attending to ``memory [B, S, d_model]`` -> ``[B, T, d_model]``."""
        x = inp.target
        for layer in self.layers:
            x = layer(inp, x)
        return x

    def new_autoregressive_cache(self) -> TransformerDecoderCache:
        """An empty cache for `forward_autoregressive_inference`."""
        return TransformerDecoderCache(len(self.layers))

    def forward_autoregressive_inference(
        self, inp: TransformerDecoderInput, cache: TransformerDecoderCache
    ) -> Tensor:
        """The causal forward of the whole target so far ``[B, T, d_model]`` (as Burn's), computing
        only the positions `cache` has not seen and reusing every layer's keys and values.

        The target attention mask is causal unless `inp.target_mask_attn` is given (it must then
        be causal); padding masks and the memory masks apply as in `forward`. The memory must
        stay the same for the life of the cache.

        Example:
            >>> cache = dec.new_autoregressive_cache()  # doctest: +SKIP
            >>> for t in range(1, steps + 1):  # doctest: +SKIP
            ...     inp = nn.TransformerDecoderInput(target[:, :t], memory)
            ...     out = dec.forward_autoregressive_inference(inp, cache)  # out[:, -1]: the new position
        """
        op, full, memory = "TransformerDecoder.forward_autoregressive_inference", inp.target, inp.memory
        seen = len(cache)
        _check_growth(op, full.shape[1], seen)
        rows = _new_rows(full, seen, inp.target_mask_attn, op)
        memory_rows = inp.memory_mask_attn
        if memory_rows is not None and len(memory_rows.shape) >= 2 and memory_rows.shape[-2] == full.shape[1]:
            memory_rows = memory_rows.narrow(len(memory_rows.shape) - 2, seen, full.shape[1] - seen)
        x = full.narrow(1, seen, full.shape[1] - seen)
        for i, layer in enumerate(self.layers):
            self_cache, cross_cache = cache.self_attn[i], cache.cross_attn[i]

            def attend(h: Tensor, layer: TransformerDecoderLayer = layer, c: MhaCache = self_cache) -> Tensor:
                return layer.self_attn.forward_cache(
                    MhaInput(h, mask_pad=inp.target_mask_pad, mask_attn=rows), c
                ).context

            def cross(h: Tensor, layer: TransformerDecoderLayer = layer, c: MhaCache = cross_cache) -> Tensor:
                mha_inp = MhaInput(h, memory, memory, inp.memory_mask_pad, memory_rows)
                return layer.cross_attn.forward_cache(mha_inp, c).context

            x = layer._run(x, attend, cross)
        cache.output = x if cache.output is None else Tensor.cat([cache.output, x], 1)
        return cache.output
