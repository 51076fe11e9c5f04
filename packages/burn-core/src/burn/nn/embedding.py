"""`Embedding`: a lookup table of `n_embedding` vectors of size `d_model`, with PyTorch's
optional `padding_idx` (a row initialized to zeros that never receives a gradient)."""

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

    Attributes:
        padding_idx: a row index (negative counts from the end, as in PyTorch) whose row starts
            as zeros and gets no gradient (its output still reads the row's current value), or
            None.

    Example:
        >>> from burn import nn
        >>> emb = nn.EmbeddingConfig(100, 16).init(device)  # doctest: +SKIP
        >>> emb(token_ids).shape  # token_ids: Int [8, 12]  # doctest: +SKIP
        (8, 12, 16)
    """

    n_embedding: int
    d_model: int
    initializer: Initializer = Normal(mean=0.0, std=1.0)
    padding_idx: int | None = None

    def init(self, device: Device | None = None) -> Embedding:
        padding_idx = self.padding_idx
        if padding_idx is not None:
            if not -self.n_embedding <= padding_idx < self.n_embedding:
                raise ValueError(
                    f"EmbeddingConfig: padding_idx {padding_idx} is out of range for "
                    f"{self.n_embedding} embeddings"
                )
            padding_idx %= self.n_embedding
        device = resolve_device(device)
        shape = (self.n_embedding, self.d_model)
        weight = self.initializer.init_param(shape, device, self.n_embedding, self.d_model)
        if padding_idx is not None:
            row = padding_idx
            # Still lazy: the row is zeroed right after the initializer's draw.
            weight = weight.map(lambda t: t.slice_assign([(row, row + 1)], 0.0))
        return Embedding(weight=weight, padding_idx=padding_idx)


class Embedding(Module):
    """Maps Int indices of any shape ``[...]`` to ``[..., d_model]``.

    Attributes:
        weight: ``[n_embedding, d_model]``.
        padding_idx: the row that gets no gradient (in ``[0, n_embedding)``), or None.
    """

    weight: Param
    padding_idx: int | None = None

    def forward(self, indices: Tensor) -> Tensor:
        weight = self.weight.val()
        out = F.embedding(weight, indices)
        if self.padding_idx is None or not weight.is_require_grad():
            return out
        # Same values, but the lookups of the padding row read a detached copy: no gradient
        # reaches that row (PyTorch's rule), whatever the loss.
        at_padding = indices.equal(self.padding_idx).unsqueeze_dim(-1)
        return out.mask_where(at_padding, out.detach())
