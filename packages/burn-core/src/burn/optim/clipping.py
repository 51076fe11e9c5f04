"""Gradient clipping: by value and by norm per param (as Burn), or by the global norm."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from burn.module.config import config
from burn.optim.grads import GradientsParams

if TYPE_CHECKING:
    from burn.tensor.tensor import Tensor

ClipMode = Literal["value", "norm", "global_norm"]

# Burn (per param) and PyTorch's ``clip_grad_norm_`` (global) add this to the norm before
# dividing, so a zero gradient stays finite.
NORM_EPSILON = 1e-6


@dataclass(frozen=True)
class GradientClipping:
    """How gradients are clipped before the update.

    - ``value``: each element clamped to ``[-threshold, threshold]`` (Burn's ``Value``).
    - ``norm``: each param's gradient multiplied by ``min(1, threshold / (norm + 1e-6))``, its
      own L2 norm (Burn's ``Norm``; computed on the gradient's device, no host round trip).
    - ``global_norm``: every gradient multiplied by the same ``threshold / (total + 1e-6)`` when
      that is below 1, ``total`` being the L2 norm of all gradients together (PyTorch's
      ``clip_grad_norm_``; Burn has no global mode), computed on the device (`clip_all`).
    """

    mode: ClipMode
    threshold: float

    @property
    def is_global(self) -> bool:
        return self.mode == "global_norm"

    def clip(self, grad: Tensor) -> Tensor:
        """Clip one param's gradient (value and norm modes)."""
        if self.mode == "value":
            return grad.clamp(-self.threshold, self.threshold)
        norm = (grad * grad).sum().sqrt()  # shape (1,)
        coef = (self.threshold / (norm + NORM_EPSILON)).clamp_max(1.0)
        # (1,) -> rank of grad, so that a rank-0 gradient keeps its shape.
        return grad * coef.reshape((1,) * grad.dims)

    def clip_global(self, grads: GradientsParams) -> GradientsParams:
        """Scale every gradient by one factor when their global L2 norm exceeds the threshold."""
        ids = list(grads)
        clipped = self.clip_all([grads.get(i) for i in ids])  # type: ignore[misc]
        return GradientsParams(dict(zip(ids, clipped, strict=True)))

    def clip_all(self, grads: list[Tensor]) -> list[Tensor]:
        """`clip_global` on a list of gradients, on their device: the norm, its factor
        ``min(1, threshold / (norm + 1e-6))`` and the products are tensor ops, with no read
        back to the host (a factor of exactly 1.0 leaves a gradient's bits as they were), so a
        compiled step runs it inside its program. The squares are summed in the first
        gradient's dtype, in the list's order."""
        if not grads:
            return grads
        total: Tensor | None = None
        for g in grads:
            squares = (g * g).sum()
            total = squares if total is None else total + squares.cast(total.dtype)
        assert total is not None
        coef = (self.threshold / (total.sqrt() + NORM_EPSILON)).clamp_max(1.0)
        return [g * coef.cast(g.dtype).reshape((1,) * g.dims) for g in grads]


@config
class GradientClippingConfig:
    """Builders for `GradientClipping` (a config, so it saves with the optimizer's config).

    `norm` clips each parameter's gradient by its own norm (Burn's ``GradientClipping::Norm``);
    PyTorch's ``clip_grad_norm_(model.parameters(), t)`` scales all gradients by their joint norm,
    which is `global_norm`. `value` is PyTorch's ``clip_grad_value_``.

    Example:
        >>> GradientClippingConfig.norm(1.0).init()
        GradientClipping(mode='norm', threshold=1.0)
    """

    mode: ClipMode
    threshold: float

    def __post_init__(self) -> None:
        if self.threshold <= 0:
            raise ValueError(f"gradient clipping threshold must be positive, got {self.threshold}")

    @classmethod
    def value(cls, threshold: float) -> GradientClippingConfig:
        return cls("value", threshold)

    @classmethod
    def norm(cls, threshold: float) -> GradientClippingConfig:
        """Each parameter's gradient clipped to L2 norm `threshold` on its own (not PyTorch's
        ``clip_grad_norm_``: that is `global_norm`)."""
        return cls("norm", threshold)

    @classmethod
    def global_norm(cls, threshold: float) -> GradientClippingConfig:
        """Every gradient scaled by ``threshold / total_norm`` when the norm of all of them together
        exceeds `threshold`: PyTorch's ``clip_grad_norm_(model.parameters(), threshold)``."""
        return cls("global_norm", threshold)

    def init(self) -> GradientClipping:
        return GradientClipping(self.mode, float(self.threshold))
