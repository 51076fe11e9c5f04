"""`MultiHeadAttention` (Vaswani et al., 2017) with Burn's config, input and output types, and
the mask helpers `generate_autoregressive_mask` and `generate_padding_mask`.

Masks are Bool tensors where **True means "do not attend"**: a padding mask ``[B, S]`` marks pad
positions of the keys, an attention mask ``[B, T, S]`` (or ``[T, S]`` for every batch) marks
forbidden query/key pairs. Masked scores are set to `min_float` (Burn's -1e4 default) before the
softmax, so a fully masked row attends uniformly instead of giving NaN.

Dropout acts on the attention weights after the softmax (as PyTorch; Burn drops raw scores),
and only while training (autodiff backend), like every `Dropout`. Without masks, quiet softmax or
an active dropout the heads run as one attention op and the weights are computed only when read
(`MhaOutput`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from burn.errors import ShapeError
from burn.foundations.kind import Bool, Int
from burn.module.base import Module
from burn.module.config import config
from burn.nn._util import resolve_device
from burn.nn.dropout import Dropout, DropoutConfig
from burn.nn.init import DEFAULT_LAYER_INIT, Initializer
from burn.nn.linear import Linear, LinearConfig
from burn.tensor import activation as A
from burn.tensor.module.attention import attention as scaled_dot_product
from burn.tensor.tensor import Tensor

if TYPE_CHECKING:
    from burn.backend.device import Device

__all__ = [
    "MhaCache",
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


class MhaCache:
    """The projected keys and values ``[B, n_heads, S, d_k]`` of the positions seen so far, for
    `MultiHeadAttention.forward_cache` (autoregressive decoding). A ``static`` cache holds the
    projections of a fixed memory (cross-attention), computed on the first call.

    Example:
        >>> cache = MhaCache()
        >>> len(cache)
        0
    """

    __slots__ = ("key", "value", "static")

    def __init__(self, static: bool = False) -> None:
        self.key: Tensor | None = None
        self.value: Tensor | None = None
        self.static = static

    def __len__(self) -> int:
        return 0 if self.key is None else self.key.shape[2]

    def reset(self) -> None:
        """Forget every cached position (start a new sequence)."""
        self.key = self.value = None


class MhaOutput:
    """`weights` ``[B, n_heads, T, S]`` (softmax output) and `context` ``[B, T, d_model]``.

    Unpacks and indexes as the pair ``(weights, context)``. When the attention ran as one op
    (`burn.tensor.module.attention`, which never keeps the weights), `weights` is computed from
    the saved heads on first access, as the composed path computes it (differentiable too), so a
    caller that reads only `context` never pays for the ``[B, H, T, S]`` weights.

    Example:
        >>> out = mha(MhaInput.self_attn(x))  # doctest: +SKIP
        >>> out.context.shape, out.weights.shape  # doctest: +SKIP
        ((2, 5, 32), (2, 4, 5, 5))
    """

    __slots__ = ("context", "_weights", "_make")
    _fields = ("weights", "context")

    def __init__(
        self, weights: Tensor | None, context: Tensor, make: Callable[[], Tensor] | None = None
    ) -> None:
        if weights is None and make is None:
            raise ValueError("MhaOutput: give the weights or a function that computes them")
        self.context = context
        self._weights = weights
        self._make = make

    @property
    def weights(self) -> Tensor:
        if self._weights is None:
            assert self._make is not None
            self._weights, self._make = self._make(), None
        return self._weights

    def __iter__(self) -> Iterator[Tensor]:
        yield self.weights
        yield self.context

    def __getitem__(self, index: int) -> Tensor:
        return (self.weights, self.context)[index]

    def __len__(self) -> int:
        return 2

    def __repr__(self) -> str:
        weights = "<lazy>" if self._weights is None else repr(self._weights)
        return f"MhaOutput(weights={weights}, context={self.context!r})"


@config
class MultiHeadAttentionConfig:
    """Builds a `MultiHeadAttention` (four ``d_model -> d_model`` `Linear` layers).

    Defaults that differ from PyTorch's ``nn.MultiheadAttention``: ``dropout=0.1`` (Burn's;
    PyTorch 0.0) and the inputs are batch-first ``[B, T, d_model]`` (PyTorch's ``batch_first``
    default is False). `query_bias`, `key_bias`, `value_bias` and `output_bias` switch each
    projection's bias off separately (PyTorch's ``bias=False`` is all four False).

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
    query_bias: bool = True
    key_bias: bool = True
    value_bias: bool = True
    output_bias: bool = True

    def init(self, device: Device | None = None) -> MultiHeadAttention:
        if self.n_heads < 1 or self.d_model % self.n_heads:
            raise ValueError(
                f"MultiHeadAttentionConfig: d_model {self.d_model} must be divisible by "
                f"n_heads {self.n_heads}"
            )
        device = resolve_device(device)

        def linear(bias: bool) -> Linear:
            return LinearConfig(self.d_model, self.d_model, bias=bias, initializer=self.initializer).init(
                device
            )

        return MultiHeadAttention(
            query=linear(self.query_bias),
            key=linear(self.key_bias),
            value=linear(self.value_bias),
            output=linear(self.output_bias),
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
        return self._attend(q, k, v, inp.mask_pad, inp.mask_attn)

    def forward_cache(self, inp: MhaInput, cache: MhaCache) -> MhaOutput:
        """Attention for the new positions `inp.query` ``[B, n, d_model]`` over every key so far.

        For self-attention, `inp.key`/`inp.value` are the same new positions: their projections
        are appended to `cache` and the queries attend to all cached keys (masks cover them all:
        ``mask_pad [B, S]``, ``mask_attn [B, n, S]`` or ``[n, S]``, ``S`` = cached + new). A
        ``static`` cache (cross-attention over an encoder's memory) projects its keys and values
        once, on the first call, and reuses them.

        Example:
            >>> cache = MhaCache()  # doctest: +SKIP
            >>> for t in range(steps):  # doctest: +SKIP
            ...     out = mha.forward_cache(MhaInput.self_attn(x[:, t : t + 1]), cache)
        """
        query = inp.query
        q_shape = query.shape
        d_model = self.n_heads * self.d_k
        if len(q_shape) != 3 or q_shape[2] != d_model:
            raise ShapeError(f"MultiHeadAttention: query must be [B, T, {d_model}], got {q_shape}")
        batch, t_q, _ = q_shape
        q = self._heads(self.query(query), batch, t_q)
        if cache.static and cache.key is not None and cache.value is not None:
            k, v = cache.key, cache.value
        else:
            key, value = inp.key, inp.value
            if (
                len(key.shape) != 3
                or key.shape[0] != batch
                or key.shape[2] != d_model
                or value.shape != key.shape
            ):
                raise ShapeError(
                    f"MultiHeadAttention: key and value must both be [{batch}, S, {d_model}], "
                    f"got {key.shape} and {value.shape}"
                )
            k = self._heads(self.key(key), batch, key.shape[1])
            v = self._heads(self.value(value), batch, key.shape[1])
            if cache.key is not None and cache.value is not None:
                k = Tensor.cat([cache.key, k], 2)
                v = Tensor.cat([cache.value, v], 2)
            cache.key, cache.value = k, v
        return self._attend(q, k, v, inp.mask_pad, inp.mask_attn)

    def _attend(
        self, q: Tensor, k: Tensor, v: Tensor, mask_pad: Tensor | None, mask_attn: Tensor | None
    ) -> MhaOutput:
        """Heads ``q [B, H, T, d_k]`` over ``k, v [B, H, S, d_k]`` -> weights and projected context.

        Without masks, quiet softmax or an active dropout, the heads go through one attention op
        (`burn.tensor.module.attention`: no ``[B, H, T, S]`` scores kept, weights recomputed in
        backward) and `MhaOutput.weights` is computed only if read. Masks keep the composed path:
        Burn fills masked scores with `min_float`, so a fully masked row attends uniformly where
        the op gives zeros."""
        batch, _, t_q, _ = q.shape
        if mask_pad is None and mask_attn is None and not self.quiet_softmax and not self._drops(q):
            context = scaled_dot_product(q, k, v, scale=1.0 / math.sqrt(self.d_k))
            projected = self._project(context, batch, t_q)
            return MhaOutput(None, projected, lambda: self._weights(q, k, None, None))
        weights = self._weights(q, k, mask_pad, mask_attn)
        context = self.dropout(weights).matmul(v)  # [B, H, T, d_k]
        return MhaOutput(weights, self._project(context, batch, t_q))

    def _drops(self, x: Tensor) -> bool:
        """Whether the dropout on the weights is active for `x` (training, p > 0)."""
        return self.dropout.prob > 0.0 and self.dropout.is_training(x)

    def _weights(self, q: Tensor, k: Tensor, mask_pad: Tensor | None, mask_attn: Tensor | None) -> Tensor:
        batch, _, t_q, _ = q.shape
        t_k = k.shape[2]
        scores = q.matmul(k.transpose()) * (1.0 / math.sqrt(self.d_k))
        if mask_pad is not None:
            scores = scores.mask_fill(self._pad(mask_pad, batch, t_k), self.min_float)
        if mask_attn is not None:
            scores = scores.mask_fill(self._attn(mask_attn, batch, t_q, t_k), self.min_float)
        return quiet_softmax(scores, 3) if self.quiet_softmax else A.softmax(scores, 3)

    def _project(self, context: Tensor, batch: int, t_q: int) -> Tensor:
        context = context.swap_dims(1, 2).reshape((batch, t_q, self.n_heads * self.d_k))
        return self.output(context)

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
