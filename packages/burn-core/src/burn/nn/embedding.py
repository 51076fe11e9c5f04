"""`Embedding`: a lookup table of `n_embedding` vectors of size `d_model`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from burn.module.base import Module
from burn.module.config import config
from burn.module.param import Param
from burn.nn._util import resolve_device
from burn.nn.init import Initializer, Normal
from burn.tensor import module as F

if TYPE_CHECKING:
    from burn.backend.device import Device
    from burn.tensor.tensor import Tensor

__all__ = ["Embedding", "EmbeddingConfig"]


@config
class EmbeddingConfig:
    """Builds an `Embedding`; weights start as ``Normal(0, 1)`` (Burn's and PyTorch's default).

    Example:
        >>> from burn import nn
        >>> emb = nn.EmbeddingConfig(100, 16).init(device)  # doctest: +SKIP
        >>> emb(token_ids).shape  # token_ids: Int [8, 12]  # doctest: +SKIP
        (8, 12, 16)
    """

    n_embedding: int
    d_model: int
    initializer: Initializer = Normal(mean=0.0, std=1.0)

    def init(self, device: Device | None = None) -> Embedding:
        device = resolve_device(device)
        shape = (self.n_embedding, self.d_model)
        return Embedding(weight=self.initializer.init_param(shape, device, self.n_embedding, self.d_model))


class Embedding(Module):
    """Maps Int indices of any shape ``[...]`` to ``[..., d_model]``.

    Attributes:
        weight: ``[n_embedding, d_model]``.
    """

    weight: Param

    def forward(self, indices: Tensor) -> Tensor:
        return F.embedding(self.weight.val(), indices)
